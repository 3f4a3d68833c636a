// End-to-end: Settings → Integrations → Turn note ranker against a real `cairn daemon`: the
// shipped model with no reset button; then a personal model written where
// `cairn ranker train --from-store` writes one (the shipped model's text, with figures naming
// its bar, its source and the shipped model's figures) shows as personal with its bar and
// figures, and "Use the shipped model" removes it through ranker_reset and turns sleep's
// nightly training off, which the card says.
//   CAIRN_BIN=target/debug/cairn node --test tests/browser/ranker.test.mjs
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { REPO_ROOT, cleanUp, fakeHome, openPage, rpcOk, startDaemon } from "./harness.mjs";

const STEP_TIMEOUT = 15_000;

describe("Settings → Turn note ranker against cairn daemon", { timeout: 180_000 }, () => {
  let home;
  let daemon;
  let browser;
  let page;
  let pageErrors;

  const api = (method, params = {}) => rpcOk(daemon.base, method, params, daemon.token);

  before(async () => {
    home = fakeHome();
    daemon = await startDaemon({ env: home.env, logName: "browser-ranker-daemon.log" });
    ({ browser, page, pageErrors } = await openPage({ viewport: { width: 1280, height: 900 }, timeoutMs: STEP_TIMEOUT }));
  });

  after(() => cleanUp([() => browser?.close(), () => daemon?.stop(), () => home?.remove()]));

  it("shows the shipped model, then a personal one, and goes back to the shipped one", async () => {
    const shipped = await api("ranker_status");
    assert.equal(shipped.model, "shipped");
    await page.goto(`${daemon.base}/#/settings?token=${encodeURIComponent(daemon.token)}`);
    await page.waitForSelector('[data-testid="status-indicator"][data-state="on"]');
    const card = page.getByTestId("ranker-status");
    await card.waitFor();
    await page.waitForSelector('[data-testid="ranker-model"][data-model="shipped"]');
    assert.equal(await card.getByTestId("ranker-bar").innerText(), shipped.bar.toFixed(2));
    assert.equal(await card.getByTestId("ranker-reset").count(), 0, "no reset with the shipped model");
    assert.match(await card.getByTestId("ranker-nightly").innerText(), /Sleep trains a personal model each night/);

    // A personal model where the service looks for one.
    mkdirSync(dirname(shipped.path), { recursive: true });
    const figures = {
      source: "store",
      trained_at: "2026-12-04T18:00:00Z",
      personal: { bar: 0.65, auc: 0.91, requests: 48, precision: 0.82, hit_rate: 0.6, silence: 0.93, with_note: 0.4 },
      shipped: { bar: shipped.bar, auc: 0.74, requests: 48, precision: 0.61, hit_rate: 0.5, silence: 0.9, with_note: 0.5 },
      cross_fit: { chosen: { bar: 0.65 } },
    };
    writeFileSync(shipped.path.replace(/\.txt$/, ".json"), JSON.stringify(figures));
    copyFileSync(join(REPO_ROOT, "crates", "cairn-turn", "ranker", "model.txt"), shipped.path);
    const personal = await api("ranker_status");
    assert.equal(personal.model, "personal");
    assert.equal(personal.bar, 0.65);

    await page.reload();
    await page.waitForSelector('[data-testid="ranker-model"][data-model="personal"]');
    assert.equal(await card.getByTestId("ranker-bar").innerText(), "0.65");
    assert.match(await card.getByTestId("ranker-figures").innerText(), /At bar 0\.65: precision 82%, hit rate 60%, silence 93%, AUC 0\.910/);
    assert.match(await card.getByTestId("ranker-shipped").innerText(), /precision 61%/);

    await card.getByTestId("ranker-reset").click();
    await card.getByTestId("ranker-reset-done").waitFor();
    await page.waitForSelector('[data-testid="ranker-model"][data-model="shipped"]');
    assert.equal((await api("ranker_status")).model, "shipped");
    assert.equal(existsSync(shipped.path), false, "the personal model is removed");
    assert.equal(await card.getByTestId("ranker-reset").count(), 0);
    // Going back turns sleep's nightly training off, and the card says so.
    assert.match(await card.getByTestId("ranker-nightly").innerText(), /Nightly training is off since \d{4}-\d{2}-\d{2}/);
    assert.deepEqual(pageErrors, []);
  });
});
