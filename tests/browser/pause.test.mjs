// Pausing memory from the UI: the Settings choices (by keyboard and by click), the paused
// banner and indicator with the pause's end, Resume from the banner and from Settings, and a
// pause that ends by itself (an explicit end two seconds ahead, set through the API).
//   CAIRN_BIN=target/debug/cairn node --test tests/browser/pause.test.mjs
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { cairnBin, cleanUp, eventually, openPage, rpc, rpcOk, startDaemon } from "./harness.mjs";

const STEP_TIMEOUT = 10_000;

// Not a skip: without the binary this suite fails, and says why.
it("CAIRN_BIN names the cairn binary to test against", () => {
  assert.ok(cairnBin());
});

describe("Pause memory in the browser against cairn daemon", { timeout: 120_000 }, () => {
  let daemon;
  let browser;
  let page;
  let pageErrors;

  const byTestId = (id) => page.getByTestId(id);
  const memory = async () => (await rpcOk(daemon.base, "status", {}, daemon.token)).memory;
  const waitForState = (state) =>
    page.waitForSelector(`[data-testid="status-indicator"][data-state="${state}"]`, { timeout: STEP_TIMEOUT });
  const indicatorText = () => byTestId("status-indicator").innerText().then((t) => t.trim());
  // The browser's own rendering of a time, as the UI shows it.
  // How the window words a pause's end: its time, after "tomorrow, " when it falls on the
  // next day (a pause of 15 minutes begun at 23:50 ends tomorrow).
  const shownUntil = (iso) =>
    page.evaluate((at) => {
      const end = new Date(at);
      const time = end.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
      return end.toDateString() === new Date().toDateString() ? time : `tomorrow, ${time}`;
    }, iso);

  before(async () => {
    daemon = await startDaemon({ logName: "browser-pause-daemon.log" });
    ({ browser, page, pageErrors } = await openPage({ viewport: { width: 1280, height: 860 }, timeoutMs: STEP_TIMEOUT }));
    await page.goto(`${daemon.base}/#token=${encodeURIComponent(daemon.token)}`);
    await waitForState("on");
  });

  after(() => cleanUp([() => browser?.close(), () => daemon?.stop()]));

  it("pauses for 15 minutes from Settings by keyboard; the banner and the indicator say until when", async () => {
    await byTestId("nav-settings").click();
    await byTestId("view-settings").waitFor();
    assert.equal(await byTestId("paused-banner").count(), 0, "no banner while memory is on");
    const choices = page.getByRole("group", { name: "Pause memory for" });
    assert.deepEqual(
      (await choices.getByRole("button").allInnerTexts()).map((t) => t.trim()),
      ["15 minutes", "1 hour", "Until tomorrow", "Until resumed"],
    );
    const before = Date.now();
    await eventually(() => byTestId("pause-15m").isEnabled());
    await byTestId("pause-15m").focus();
    await page.keyboard.press("Enter");
    await waitForState("paused");

    const m = await memory();
    assert.equal(m.enabled, false);
    assert.equal(m.paused, true);
    const until = Date.parse(m.paused_until);
    assert.ok(until >= before + 15 * 60_000 - 1500 && until <= Date.now() + 15 * 60_000 + 1000, m.paused_until);

    const time = await shownUntil(m.paused_until);
    await byTestId("paused-banner").waitFor({ state: "visible" });
    const banner = await byTestId("paused-banner").innerText();
    assert.ok(banner.includes(`Memory is paused until ${time}`), banner);
    assert.match(banner, /never captured/);
    assert.ok((await indicatorText()).startsWith("Paused until"), await indicatorText());
    assert.ok((await indicatorText()).includes(time), await indicatorText());
    assert.ok((await byTestId("pause-state").innerText()).includes(`Paused until ${time}`));
    assert.equal(await byTestId("memory-toggle").isChecked(), false, "the switch shows memory off while paused");

    // The banner shows on every view.
    await byTestId("nav-search").click();
    await byTestId("view-search").waitFor();
    await byTestId("paused-banner").waitFor({ state: "visible" });
  });

  it("resumes from the banner", async () => {
    await byTestId("paused-banner-resume").click();
    await waitForState("on");
    await byTestId("paused-banner").waitFor({ state: "detached" });
    const m = await memory();
    assert.deepEqual([m.enabled, m.paused, m.paused_until], [true, false, null]);
  });

  it("pauses until resumed and until tomorrow, and resumes from Settings", async () => {
    await byTestId("nav-settings").click();
    await eventually(() => byTestId("pause-until_resumed").isEnabled());
    await byTestId("pause-until_resumed").click();
    await waitForState("paused");
    await eventually(async () => (await byTestId("paused-banner").count()) === 1);
    assert.match(await byTestId("paused-banner").innerText(), /Memory is paused until resumed/);
    assert.equal(await indicatorText(), "Paused until resumed");
    assert.equal((await memory()).paused_until, null);

    // Pausing again while paused moves the end: until the next local midnight.
    await eventually(() => byTestId("pause-tomorrow").isEnabled());
    await byTestId("pause-tomorrow").click();
    await eventually(async () => (await memory()).paused_until !== null);
    const m = await memory();
    const localMidnight = await page.evaluate((at) => {
      const d = new Date(at);
      return d.getHours() === 0 && d.getMinutes() === 0;
    }, m.paused_until);
    assert.ok(localMidnight, `tomorrow ends at midnight: ${m.paused_until}`);
    await eventually(async () => /until tomorrow/.test(await byTestId("paused-banner").innerText()));

    await byTestId("pause-resume").focus();
    await page.keyboard.press("Space");
    await waitForState("on");
    await byTestId("pause-state").waitFor({ state: "detached" });
    assert.equal((await memory()).enabled, true);
  });

  it("a pause ends by itself: the window goes back to memory on", async () => {
    // Longer than two status polls (every 3 s), so the window sees the pause before it ends.
    const end = new Date(Date.now() + 7000).toISOString();
    const m = await rpcOk(daemon.base, "memory_pause", { until: end }, daemon.token);
    assert.equal(m.paused, true);
    assert.equal(Date.parse(m.paused_until), Math.floor(Date.parse(end) / 1000) * 1000);
    await waitForState("paused");
    await byTestId("paused-banner").waitFor({ state: "visible" });
    // No page action: the service ends the pause and the status poll shows it.
    await page.waitForSelector('[data-testid="status-indicator"][data-state="on"]', { timeout: 20_000 });
    await byTestId("paused-banner").waitFor({ state: "detached" });
    const after = await memory();
    assert.deepEqual([after.enabled, after.paused], [true, false]);
    assert.ok(Date.now() >= Date.parse(end));
  });

  it("a bad pause is refused with a clear message and changes nothing", async () => {
    const { status, body } = await rpc(daemon.base, "memory_pause", { for: "2d" }, daemon.token);
    assert.equal(status, 400);
    assert.match(JSON.stringify(body), /cannot read the pause length/);
    assert.equal((await memory()).enabled, true);
    assert.deepEqual(pageErrors, []);
  });
});
