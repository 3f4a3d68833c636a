// End-to-end: Settings → Integrations against a real `cairn daemon` whose HOME is a fake home
// holding only `~/.codex/config.toml` (so Codex is detected), to install and remove Cairn's
// MCP server there without touching the real home.
//   CAIRN_BIN=target/debug/cairn node --test tests/browser/
import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { cleanUp, fakeHome, openPage, rpcOk, startDaemon } from "./harness.mjs";

const STEP_TIMEOUT = 15_000;
/** What the user already had in their Codex config: it must survive install and remove. */
const USER_CONFIG = 'model = "o3"\n';

describe("Settings → Integrations against cairn daemon with a fake home", { timeout: 180_000 }, () => {
  let home;
  let daemon;
  let browser;
  let page;
  let pageErrors;

  const api = (method, params = {}) => rpcOk(daemon.base, method, params, daemon.token);
  const codexRow = () => page.locator('[data-testid="integration-row"][data-framework="codex"]');
  const codex = async () => {
    const found = (await api("integrations_list")).integrations.find((i) => i.framework === "codex");
    assert.ok(found, "integrations_list has a codex entry");
    return found;
  };

  before(async () => {
    home = fakeHome({ dirs: [".codex"], files: { ".codex/config.toml": USER_CONFIG } });
    daemon = await startDaemon({ env: home.env, logName: "browser-integrations-daemon.log" });
    ({ browser, page, pageErrors } = await openPage({ viewport: { width: 1280, height: 900 }, timeoutMs: STEP_TIMEOUT }));
  });

  after(() => cleanUp([() => browser?.close(), () => daemon?.stop(), () => home?.remove()]));

  it("lists Codex as detected and not installed, with its config path in the fake home", async () => {
    await page.goto(`${daemon.base}/#/settings?token=${encodeURIComponent(daemon.token)}`);
    await page.waitForSelector('[data-testid="status-indicator"][data-state="on"]');
    await page.getByTestId("integrations").waitFor();
    const row = codexRow();
    await row.waitFor();

    const listed = await codex();
    assert.equal(listed.path, join(home.home, ".codex", "config.toml"));
    assert.equal(listed.detected, true);
    assert.equal(listed.exists, true);
    assert.equal(listed.installed, false);

    assert.equal(await row.getAttribute("data-detected"), "true");
    assert.equal(await row.getAttribute("data-state"), "available");
    assert.equal(await row.getByTestId("integration-path").innerText(), listed.path);
    assert.equal(await row.getByTestId("integration-remove").count(), 0);
  });

  it("Install registers Cairn with Codex, backs up the file and keeps the user's settings", async () => {
    const row = codexRow();
    await row.getByTestId("integration-install").click();
    const result = row.getByTestId("integration-result");
    await result.waitFor();
    assert.equal(await result.getAttribute("data-action"), "installed");
    assert.match(await result.innerText(), /Installed/);
    await page.waitForSelector('[data-testid="integration-row"][data-framework="codex"][data-state="installed"]');

    const listed = await codex();
    assert.equal(listed.installed, true);
    assert.equal(listed.current, true, "the registration runs this cairn binary");
    const config = readFileSync(listed.path, "utf8");
    assert.match(config, /cairn/i, "the config mentions cairn");
    assert.ok(config.includes(USER_CONFIG.trim()), "the user's own settings are kept");

    const backup = (await row.getByTestId("integration-backup").innerText()).trim();
    assert.ok(existsSync(backup), `the backup ${backup} exists`);
    assert.equal(readFileSync(backup, "utf8"), USER_CONFIG, "the backup is the file as it was");
    assert.equal(statSync(backup).mode & 0o777, 0o600, "the backup is readable by the user only");
    assert.equal(statSync(dirname(backup)).mode & 0o777, 0o700, "in a folder only the user can enter");
    assert.equal(await row.getByTestId("integration-install").count(), 0);

    // The row lists its backups, newest first, from the service's own list.
    assert.deepEqual((await codex()).backups.map((b) => b.path), [backup]);
    const backups = row.getByTestId("integration-backups");
    await backups.waitFor();
    assert.match(await backups.innerText(), /^\s*1 backup of this file/);
    await backups.locator("summary").click();
    const items = backups.getByTestId("integration-backup-item");
    assert.equal(await items.count(), 1);
    assert.ok((await items.first().innerText()).includes(backup), "the listed backup is the one just made");
  });

  it("Remove unregisters it again", async () => {
    const row = codexRow();
    await row.getByTestId("integration-remove").click();
    await page.waitForSelector('[data-testid="integration-row"][data-framework="codex"] [data-testid="integration-result"][data-action="removed"]');
    await page.waitForSelector('[data-testid="integration-row"][data-framework="codex"][data-state="available"]');
    assert.match(await row.getByTestId("integration-result").innerText(), /Removed/);

    const listed = await codex();
    assert.equal(listed.installed, false);
    assert.ok(readFileSync(listed.path, "utf8").includes(USER_CONFIG.trim()), "the user's own settings are still there");
    assert.equal(await page.getByTestId("integration-error").count(), 0);
    assert.deepEqual(pageErrors, []);
  });

  it("The turn note deadline is set here: refused out of range, saved, published to the hooks, and reset", async () => {
    const form = page.getByTestId("hook-deadline");
    await form.waitFor();
    const input = form.getByTestId("hook-deadline-ms");
    const before = await api("hook_timing_get");
    assert.equal(before.deadline_ms, before.default_ms, "the default is in effect");
    await page.waitForFunction((ms) => document.querySelector('[data-testid="hook-deadline-ms"]')?.value === String(ms), before.default_ms);
    assert.equal(await form.getByTestId("hook-deadline-save").isDisabled(), true, "nothing to save yet");

    await input.fill("20");
    await form.getByTestId("hook-deadline-problem").waitFor();
    assert.match(await form.getByTestId("hook-deadline-problem").innerText(), new RegExp(`${before.min_ms} to ${before.max_ms}`));
    assert.equal(await form.getByTestId("hook-deadline-save").isDisabled(), true, "out of range cannot be saved");

    await input.fill("450");
    await form.getByTestId("hook-deadline-save").click();
    await form.getByTestId("hook-deadline-saved").waitFor();
    assert.match(await form.getByTestId("hook-deadline-saved").innerText(), /450 ms/);
    assert.equal((await api("hook_timing_get")).deadline_ms, 450);
    const published = JSON.parse(readFileSync(join(daemon.home, "run", "service.json"), "utf8"));
    assert.equal(published.hook_deadline_ms, 450, "the hooks read it from service.json");
    assert.match(readFileSync(before.config_file, "utf8"), /\[hook\][^[]*deadline_ms = 450/, "saved in the config file");

    await form.getByTestId("hook-deadline-reset").click();
    await page.waitForFunction((ms) => document.querySelector('[data-testid="hook-deadline-ms"]')?.value === String(ms), before.default_ms);
    assert.equal((await api("hook_timing_get")).deadline_ms, before.default_ms);
    assert.equal(await form.getByTestId("hook-deadline-reset").count(), 0, "no reset at the default");
    assert.deepEqual(pageErrors, []);
  });
});
