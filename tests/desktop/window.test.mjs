// The real desktop window: the Tauri app driven through tauri-driver + WebKitWebDriver
// (run under Xvfb by scripts/test.sh). It switches memory off and on from Settings, pauses
// it and resumes it, and checks that the service hosted by the app agrees, then saves a
// screenshot of the window.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

function outDir() {
  const raw = process.env.CAIRN_TEST_OUT || "target/test-output";
  const dir = isAbsolute(raw) ? raw : join(REPO, raw);
  mkdirSync(dir, { recursive: true });
  return dir;
}

function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once("error", rej);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, fn, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await sleep(200);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ""}`);
}

let driver;
let driverUrl;
let session;
let home;
const driverLog = [];

async function wd(method, path, body) {
  const res = await fetch(`${driverUrl}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${JSON.stringify(json.value ?? json)}`);
  return json.value;
}

const find = async (testid) =>
  (await wd("POST", `/session/${session}/element`, { using: "css selector", value: `[data-testid="${testid}"]` }))[ELEMENT];
const attr = async (el, name) => wd("GET", `/session/${session}/element/${el}/attribute/${name}`);

async function click(el) {
  try {
    await wd("POST", `/session/${session}/element/${el}/click`, {});
  } catch (e) {
    // A visually hidden switch input is not "interactable" for WebDriver; its label is.
    // Dispatch the same click a person's would cause.
    await wd("POST", `/session/${session}/execute/sync`, { script: "arguments[0].click()", args: [{ [ELEMENT]: el }] });
  }
}

async function indicatorState() {
  return attr(await find("status-indicator"), "data-state");
}

/** The app's own service, through the service.json it wrote (address and token). */
async function serviceStatus() {
  const info = JSON.parse(readFileSync(join(home, "run", "service.json"), "utf8"));
  const res = await fetch(`${info.url}/api/rpc/status`, {
    method: "POST",
    headers: { authorization: `Bearer ${info.token}`, "content-type": "application/json" },
    body: "{}",
  });
  assert.equal(res.status, 200);
  return res.json();
}

before(async () => {
  const app = process.env.CAIRN_DESKTOP_BIN;
  if (!app || !existsSync(app)) {
    throw new Error(`CAIRN_DESKTOP_BIN must name the built cairn-desktop binary (got ${app ?? "nothing"})`);
  }
  if (!process.env.DISPLAY) throw new Error("no DISPLAY: run this test under xvfb-run");
  home = join(mkdtempSync(join(tmpdir(), "cairn-desktop-")), "home");
  const port = await freePort();
  const nativePort = await freePort();
  driverUrl = `http://127.0.0.1:${port}`;
  // Its own process group: teardown stops the driver, the WebKit driver and the app together,
  // so an app that outlives its session never keeps this test (and CI) waiting on its pipes.
  driver = spawn("tauri-driver", ["--port", String(port), "--native-port", String(nativePort)], {
    env: { ...process.env, CAIRN_HOME: home, CAIRN_DESKTOP_QUIT_ON_CLOSE: "1" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  for (const s of [driver.stdout, driver.stderr]) s.on("data", (d) => driverLog.push(String(d)));
  process.once("exit", () => killGroup("SIGKILL"));
  await until("tauri-driver to listen", async () => (await fetch(`${driverUrl}/status`)).ok);
  const created = await wd("POST", "/session", {
    capabilities: { alwaysMatch: { "tauri:options": { application: app } } },
  });
  session = created.sessionId;
});

/** Signals the driver's whole process group (the driver, the WebKit driver, the app). */
function killGroup(signal) {
  if (!driver?.pid) return;
  try {
    process.kill(-driver.pid, signal);
  } catch {
    // Already gone.
  }
}

after(async () => {
  writeFileSync(join(outDir(), "desktop-driver.log"), driverLog.join(""));
  // Closing the session closes the app; a driver that does not answer is not waited for.
  if (session) await Promise.race([wd("DELETE", `/session/${session}`).catch(() => {}), sleep(10_000)]);
  killGroup("SIGTERM");
  await sleep(500);
  killGroup("SIGKILL");
  for (const st of [driver?.stdout, driver?.stderr]) st?.destroy();
  if (home) rmSync(dirname(home), { recursive: true, force: true });
});

test("the window opens with the UI and the app hosts the service", async () => {
  await until("the status indicator to say on", async () => (await indicatorState()) === "on");
  const title = await wd("GET", `/session/${session}/title`);
  assert.match(title, /Cairn/);
  const status = await until("service.json", async () => existsSync(join(home, "run", "service.json")) && serviceStatus());
  assert.equal(status.service.host, "desktop");
  assert.equal(status.memory.enabled, true);
});

test("switching memory off and on from Settings, and the service agrees", async () => {
  await click(await find("nav-settings"));
  await until("the Settings view", () => find("view-settings"));
  const toggle = await until("the memory switch", () => find("memory-toggle"));

  await click(toggle);
  await until("the indicator to say off", async () => (await indicatorState()) === "off");
  assert.equal((await serviceStatus()).memory.enabled, false);

  await click(await find("memory-toggle"));
  await until("the indicator to say on", async () => (await indicatorState()) === "on");
  assert.equal((await serviceStatus()).memory.enabled, true);
});

// The tray menu (Pause memory → 15 minutes / 1 hour / until tomorrow / until resumed, and
// Resume memory) is a native menu that WebDriver cannot open, so the same actions are driven
// through the window's own controls; both call the service's memory_pause and memory_set.
test("pausing memory for an hour from the window, and resuming it from the paused banner", async () => {
  await click(await find("nav-settings"));
  const choice = await until("the Pause memory choices", () => find("pause-1h"));
  const before = Date.now();
  await click(choice);
  await until("the indicator to say paused", async () => (await indicatorState()) === "paused");
  const { memory } = await serviceStatus();
  assert.equal(memory.enabled, false);
  assert.equal(memory.paused, true);
  const end = Date.parse(memory.paused_until);
  assert.ok(end >= before + 3_600_000 - 1500 && end <= Date.now() + 3_600_000 + 1000, memory.paused_until);
  const banner = await until("the paused banner", () => find("paused-banner"));
  const text = await wd("GET", `/session/${session}/element/${banner}/text`);
  assert.match(text, /Memory is paused until /);
  const indicator = await wd("GET", `/session/${session}/element/${await find("status-indicator")}/text`);
  assert.match(indicator, /Paused until /);

  await click(await find("paused-banner-resume"));
  await until("the indicator to say on", async () => (await indicatorState()) === "on");
  const after = (await serviceStatus()).memory;
  assert.deepEqual([after.enabled, after.paused, after.paused_until], [true, false, null]);
});

test("a screenshot of the window is saved", async () => {
  const png = Buffer.from(await wd("GET", `/session/${session}/screenshot`), "base64");
  assert.ok(png.length > 10_000, `screenshot is ${png.length} bytes`);
  assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47]);
  writeFileSync(join(outDir(), "desktop-window.png"), png);
});
