// The Linux package made by Tauri's bundler (`npm run bundle`; scripts/test.sh makes it from
// the debug build with `tauri bundle` and names it in CAIRN_DEB): its control fields, the files
// it installs, and that the window test (window.test.mjs) runs the binary it holds.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const deb = process.env.CAIRN_DEB;
// Outside CI, a machine without dpkg (scripts/test.sh then sets no CAIRN_DEB) skips these;
// under CI a missing package fails them.
const skip = !deb && process.env.CI !== "true" ? "CAIRN_DEB is not set (no .deb was made, or no dpkg-deb)" : false;

function requireDeb() {
  assert.ok(deb, "CAIRN_DEB must name the .deb made by `tauri bundle` (scripts/test.sh sets it)");
  return deb;
}

const run = (cmd, args) => execFileSync(cmd, args, { encoding: "utf8" });

/** The sha256 of a file inside the package, streamed (the debug binary is large). */
function shaInDeb(path) {
  const script = 'set -o pipefail; dpkg-deb --fsys-tarfile "$1" | tar -xO "$2" | sha256sum';
  return run("bash", ["-c", script, "_", requireDeb(), path]).split(" ")[0];
}

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

function workspaceVersion() {
  const toml = readFileSync(join(REPO, "Cargo.toml"), "utf8");
  const section = toml.split(/^\[workspace\.package\]$/m)[1].split(/^\[/m)[0];
  return section.match(/^version\s*=\s*"([^"]+)"/m)[1];
}

test("the .deb's control fields: name, version, architecture, dependencies, description", { skip }, () => {
  const field = (name) => run("dpkg-deb", ["-f", requireDeb(), name]).trim();
  const conf = JSON.parse(readFileSync(join(REPO, "src-tauri", "tauri.conf.json"), "utf8"));
  assert.equal(workspaceVersion(), "0.1.0");
  assert.equal(conf.version, workspaceVersion(), "tauri.conf.json's version is the workspace's");
  assert.equal(field("Package"), "cairn");
  assert.equal(field("Version"), workspaceVersion());
  const arch = { x64: "amd64", arm64: "arm64" }[process.arch];
  assert.equal(field("Architecture"), arch);
  assert.equal(field("Maintainer"), conf.bundle.publisher);
  assert.equal(field("Section"), "devel");
  const depends = field("Depends").split(/,\s*/);
  for (const lib of ["libwebkit2gtk-4.1-0", "libgtk-3-0", "libayatana-appindicator3-1"]) {
    assert.ok(depends.includes(lib), `Depends lists ${lib}: ${depends.join(", ")}`);
  }
  assert.equal(new Set(depends).size, depends.length, `no dependency twice: ${depends.join(", ")}`);
  assert.equal(field("Description").split("\n")[0], conf.bundle.shortDescription);
});

test("the .deb holds the binary, the desktop entry and the icons", { skip }, () => {
  const listing = run("dpkg-deb", ["-c", requireDeb()]);
  const entries = new Map(
    listing
      .trim()
      .split("\n")
      .map((line) => {
        const parts = line.trim().split(/\s+/);
        return [parts.at(-1).replace(/^\.\//, ""), parts[0]];
      }),
  );
  assert.match(entries.get("usr/bin/cairn-desktop") ?? "missing", /^-rwxr-xr-x$/, "an executable /usr/bin/cairn-desktop");
  assert.ok(entries.has("usr/share/applications/Cairn.desktop"), listing);

  const desktop = run("bash", [
    "-c",
    'set -o pipefail; dpkg-deb --fsys-tarfile "$1" | tar -xO usr/share/applications/Cairn.desktop',
    "_",
    deb,
  ]);
  for (const line of ["Name=Cairn", "Exec=cairn-desktop", "Icon=cairn-desktop", "Type=Application", "Categories=Development;"]) {
    assert.ok(desktop.split("\n").includes(line), `Cairn.desktop has ${line}:\n${desktop}`);
  }

  // The repository's icons (icons/), each installed as the hicolor size it is.
  for (const [size, file] of [
    ["32x32", "32x32.png"],
    ["128x128", "128x128.png"],
    ["512x512", "icon.png"],
  ]) {
    const path = `usr/share/icons/hicolor/${size}/apps/cairn-desktop.png`;
    assert.ok(entries.has(path), `${path} in:\n${listing}`);
    assert.equal(shaInDeb(path), sha256(readFileSync(join(REPO, "icons", file))), `${path} is icons/${file}`);
  }
});

test("the window test runs the binary the .deb holds", { skip }, () => {
  const app = process.env.CAIRN_DESKTOP_BIN;
  assert.ok(app, "CAIRN_DESKTOP_BIN is set");
  const onDisk = run("sha256sum", [app]).split(" ")[0];
  assert.equal(onDisk, shaInDeb("usr/bin/cairn-desktop"), `${app} is the packaged binary`);
  if (app === "/usr/bin/cairn-desktop") {
    // Installed (as root in CI): dpkg says the package owns it.
    assert.match(run("dpkg", ["-S", app]), /^cairn: \/usr\/bin\/cairn-desktop$/m);
  }
});
