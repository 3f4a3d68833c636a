// End-to-end: the built UI served by a real `cairn daemon`, driven in chromium.
//   CAIRN_BIN=target/debug/cairn node --test tests/browser/
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { cairnBin, cleanUp, eventually, openPage, outDir, rpc, rpcOk, startDaemon } from "./harness.mjs";

const VIEWS = ["search", "conversations", "notes", "profiles", "activity", "settings"];
const STEP_TIMEOUT = 10_000;

// Not a skip: without the binary this suite fails, and says why.
it("CAIRN_BIN names the cairn binary to test against", () => {
  assert.ok(cairnBin());
});

describe("Cairn UI in a browser against cairn daemon", { timeout: 180_000 }, () => {
  let daemon;
  let browser;
  let page;
  let pageErrors;

  const byTestId = (id) => page.getByTestId(id);
  const indicator = () => byTestId("status-indicator");
  const status = () => rpcOk(daemon.base, "status", {}, daemon.token);

  async function waitForState(state) {
    await page.waitForSelector(`[data-testid="status-indicator"][data-state="${state}"]`, { timeout: STEP_TIMEOUT });
  }

  before(async () => {
    daemon = await startDaemon();
    ({ browser, page, pageErrors } = await openPage({ viewport: { width: 1280, height: 860 }, timeoutMs: STEP_TIMEOUT }));
  });

  after(() => cleanUp([() => browser?.close(), () => daemon?.stop()]));

  it("loads with the token, cleans the address, navigates, and shows memory on", async () => {
    await page.goto(`${daemon.base}/#token=${encodeURIComponent(daemon.token)}`);
    await waitForState("on");
    assert.equal(await indicator().textContent().then((t) => t?.trim()), "Memory on");

    const url = new URL(page.url());
    assert.equal(url.hash, "#/search", "the token is replaced by a route");
    assert.ok(!page.url().includes(daemon.token), "the token must not linger in the address bar");
    assert.equal(await page.evaluate(() => sessionStorage.getItem("cairn.token")), daemon.token);
    await byTestId("view-search").waitFor();

    for (const view of VIEWS) {
      await byTestId(`nav-${view}`).click();
      await byTestId(`view-${view}`).waitFor();
      assert.equal(new URL(page.url()).hash, `#/${view}`);
      assert.equal(await byTestId(`nav-${view}`).getAttribute("aria-current"), "page");
    }

    // Direct hash navigation works, and a reload keeps the session via sessionStorage.
    await page.goto(`${daemon.base}/#/activity`);
    await byTestId("view-activity").waitFor();
    await page.reload();
    await waitForState("on");
    await byTestId("view-activity").waitFor();

    // With no memory items yet, Profiles says how profiles come to be instead of showing fake data.
    await byTestId("nav-profiles").click();
    await byTestId("profiles-empty").waitFor();
    assert.match(await byTestId("view-profiles").innerText(), /nightly tidy-up once memory items exist/i);

    assert.equal(await byTestId("error-banner").count(), 0, "no error banner with a valid token");
    assert.deepEqual(pageErrors, []);
  });

  it("Settings: the memory switch turns memory off and on, and the API agrees", async () => {
    await byTestId("nav-settings").click();
    await byTestId("view-settings").waitFor();
    const toggle = byTestId("memory-toggle");
    assert.equal(await toggle.getAttribute("role"), "switch");
    await assert.doesNotReject(toggle.waitFor());
    await eventually(() => toggle.isEnabled());
    assert.equal(await toggle.isChecked(), true);
    assert.match(await byTestId("view-settings").innerText(), /When memory is off, Cairn captures nothing and its search service stops/);

    await toggle.click();
    await waitForState("off");
    assert.equal(await toggle.isChecked(), false);
    assert.equal(await indicator().textContent().then((t) => t?.trim()), "Memory off");
    assert.equal((await status()).memory.enabled, false, "status.memory.enabled after switching off");

    await eventually(() => toggle.isEnabled());
    await toggle.click();
    await waitForState("on");
    assert.equal(await toggle.isChecked(), true);
    assert.equal((await status()).memory.enabled, true, "status.memory.enabled after switching on");
  });

  it("the indicator follows a change made outside the page (polling)", async () => {
    await rpcOk(daemon.base, "memory_set", { enabled: false }, daemon.token);
    await waitForState("off");
    await rpcOk(daemon.base, "memory_set", { enabled: true }, daemon.token);
    await waitForState("on");
  });

  it("Clear memory: cancel changes nothing; confirm clears and reports counts", async () => {
    await byTestId("nav-settings").click();
    assert.equal((await status()).last_clear, null, "a fresh CAIRN_HOME has never been cleared");

    await byTestId("clear-button").click();
    await byTestId("clear-dialog").waitFor({ state: "visible" });
    assert.equal(await byTestId("clear-include-notes").isChecked(), false, "notes are kept by default");
    await byTestId("clear-cancel").click();
    await byTestId("clear-dialog").waitFor({ state: "detached" });
    assert.equal(await byTestId("clear-result").count(), 0);
    assert.equal((await status()).last_clear, null, "cancel must not clear");

    await byTestId("clear-button").click();
    await byTestId("clear-dialog").waitFor({ state: "visible" });
    await byTestId("clear-include-notes").check();
    await byTestId("clear-confirm").click();
    await byTestId("clear-result").waitFor({ state: "visible" });
    await byTestId("clear-dialog").waitFor({ state: "detached" });
    assert.match(await byTestId("clear-result").innerText(), /Memory cleared[\s\S]*\d+ records?/);

    const after = await status();
    assert.notEqual(after.last_clear, null, "status.last_clear is set after clearing");
    assert.ok(!Number.isNaN(Date.parse(after.last_clear)), `last_clear is a timestamp: ${after.last_clear}`);
  });

  it("Settings shows About details and a disabled Launch at login in the browser", async () => {
    await byTestId("nav-settings").click();
    const st = await status();
    await page.waitForSelector(`[data-testid="about-version"]:has-text("${st.version}")`);
    assert.equal(await byTestId("about-data-dir").textContent(), st.data_dir);
    await byTestId("config-effective").waitFor();
    assert.equal(await byTestId("autostart-toggle").isDisabled(), true, "autostart is desktop-only");
  });

  it("without the token the page shows the error banner and the API answers 401", async () => {
    const fresh = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const anon = await fresh.newPage();
      await anon.goto(`${daemon.base}/`);
      const banner = anon.getByTestId("error-banner");
      await banner.waitFor({ state: "visible", timeout: STEP_TIMEOUT });
      assert.match(await banner.innerText(), /cairn daemon/);
      await anon.waitForSelector('[data-testid="status-indicator"][data-state="unreachable"]', { timeout: STEP_TIMEOUT });
    } finally {
      await fresh.close();
    }

    const none = await rpc(daemon.base, "status");
    assert.equal(none.status, 401);
    assert.equal(none.body?.code, "unauthorized");
    const wrong = await rpc(daemon.base, "status", {}, `${daemon.token}x`);
    assert.equal(wrong.status, 401);
  });

  it("desktop mode (simulated Tauri IPC): Launch at login updates the OS and the service", async () => {
    // Stand-in for the Tauri runtime: `rpc` is forwarded to the daemon over HTTP, and the
    // autostart plugin's commands are recorded. Exercises the UI's Tauri code path in chromium.
    const desktop = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      await desktop.addInitScript(
        ({ token }) => {
          const calls = [];
          let autostart = false;
          window.__autostartCalls = calls;
          window.__TAURI_INTERNALS__ = {
            async invoke(cmd, args) {
              if (cmd === "rpc") {
                const res = await fetch(`/api/rpc/${args.method}`, {
                  method: "POST",
                  headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
                  body: JSON.stringify(args.params),
                });
                const body = await res.json();
                if (!res.ok) throw body;
                return body;
              }
              calls.push(cmd);
              if (cmd === "plugin:autostart|is_enabled") return autostart;
              if (cmd === "plugin:autostart|enable") return void (autostart = true);
              if (cmd === "plugin:autostart|disable") return void (autostart = false);
              throw { code: "not_found", message: `unknown command ${cmd}` };
            },
            transformCallback: () => 0,
            unregisterCallback: () => {},
          };
        },
        { token: daemon.token },
      );
      const p = await desktop.newPage();
      p.setDefaultTimeout(STEP_TIMEOUT);
      await p.goto(`${daemon.base}/#/settings`);
      await p.waitForSelector('[data-testid="status-indicator"][data-state="on"]');
      assert.equal(await p.getByTestId("error-banner").count(), 0);
      assert.equal(await p.getByTestId("autostart-hint").count(), 0, "no browser-only hint in the desktop app");

      const toggle = p.getByTestId("autostart-toggle");
      await eventually(() => toggle.isEnabled());
      assert.equal(await toggle.isEnabled(), true, "autostart is enabled in the desktop app");
      assert.equal(await toggle.isChecked(), false);

      await toggle.click();
      await eventually(async () => (await toggle.isChecked()) && (await toggle.isEnabled()));
      assert.ok((await p.evaluate(() => window.__autostartCalls)).includes("plugin:autostart|enable"));
      assert.equal((await rpcOk(daemon.base, "preferences_get", {}, daemon.token)).autostart, true);

      await toggle.click();
      await eventually(async () => !(await toggle.isChecked()) && (await toggle.isEnabled()));
      assert.ok((await p.evaluate(() => window.__autostartCalls)).includes("plugin:autostart|disable"));
      assert.equal((await rpcOk(daemon.base, "preferences_get", {}, daemon.token)).autostart, false);
    } finally {
      await desktop.close();
    }
  });

  it("screenshots Settings", async () => {
    await byTestId("nav-settings").click();
    await byTestId("config-effective").waitFor();
    await waitForState("on");
    const file = join(outDir(), "browser-settings.png");
    await page.screenshot({ path: file, fullPage: true });
    assert.ok(statSync(file).size > 10_000, `${file} looks empty`);

    const dark = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: "dark" });
    try {
      const p = await dark.newPage();
      await p.goto(`${daemon.base}/#/settings?token=${encodeURIComponent(daemon.token)}`);
      await p.waitForSelector('[data-testid="status-indicator"][data-state="on"]', { timeout: STEP_TIMEOUT });
      await p.getByTestId("config-effective").waitFor({ timeout: STEP_TIMEOUT });
      await p.screenshot({ path: join(outDir(), "browser-settings-dark.png"), fullPage: true });
    } finally {
      await dark.close();
    }
  });
});
