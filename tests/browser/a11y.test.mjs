// Keyboard and accessibility: every view checked with axe-core in light and dark (no serious
// or critical violation), a screenshot of each under target/test-output/, a keyboard walk of
// each view (every control reachable by Tab, with a visible focus ring), the command palette
// (Ctrl+K) driven by keyboard alone, and the theme override.
//   CAIRN_BIN=target/debug/cairn node --test tests/browser/a11y.test.mjs
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { axeViolations, cleanUp, describeViolations, eventually, fakeAgentHome, openPage, outDir, rpcOk, startDaemon } from "./harness.mjs";

const STEP_TIMEOUT = 15_000;
const SCHEMES = ["light", "dark"];
const CODEX_SESSION = "0198c4a2-7b3e-7d21-9f00-3c5e8a1b2d4f";
const NOTE = { scope: "user", project: null, path: "conventions.md" };

/**
 * Each view with content: how to reach it and what shows it is ready. `open` runs after the
 * hash is set (e.g. opens the first note).
 */
const VIEWS = [
  { name: "search", hash: "#/search?q=cargo", ready: '[data-testid="search-hit"]' },
  { name: "conversations", hash: `#/conversations?framework=codex&session=${CODEX_SESSION}`, ready: '[data-testid="conversation-view"]' },
  {
    name: "notes",
    hash: "#/notes",
    ready: '[data-testid="note-open"]',
    open: async (page) => page.locator(`[data-testid="note-row"][data-path="${NOTE.path}"]`).click(),
  },
  { name: "profiles", hash: "#/profiles", ready: '[data-testid="view-profiles"]' },
  { name: "activity", hash: "#/activity", ready: '[data-testid="capture-card"]' },
  { name: "settings", hash: "#/settings", ready: '[data-testid="about-version"]' },
  // A memory item's page (items come from distillation, covered with a model in items.test.mjs;
  // here the page of an item that is not there).
  { name: "item", hash: "#/item?id=i_gone", ready: '[data-testid="item-missing"]' },
  // The review inbox, read (entries themselves are covered in review.test.mjs).
  { name: "review", hash: "#/review", ready: '[data-testid="review-recent"]' },
];

describe("Keyboard and accessibility", { timeout: 300_000 }, () => {
  let fake;
  let daemon;
  let browser;
  let page;
  let pageErrors;

  const byTestId = (id) => page.getByTestId(id);
  const api = (method, params = {}) => rpcOk(daemon.base, method, params, daemon.token);
  const hash = () => new URL(page.url()).hash;

  const axe = (selector = null) => axeViolations(page, selector);

  async function openView(view) {
    await page.goto(`${daemon.base}/${view.hash}`);
    await byTestId(`view-${view.name}`).waitFor();
    if (view.open) await view.open(page);
    await page.waitForSelector(view.ready);
    // Let polling, fades and lazy loads settle before checking colours.
    await page.waitForLoadState("networkidle").catch(() => {});
    await page.waitForTimeout(300);
    // No focus left over from an earlier step in the screenshots.
    await page.evaluate(() => document.activeElement instanceof HTMLElement && document.activeElement.blur());
  }

  before(async () => {
    fake = fakeAgentHome();
    daemon = await startDaemon({ env: fake.env, logName: "browser-a11y-daemon.log" });
    const report = await api("capture_run");
    assert.ok(report.frameworks.some((f) => f.added > 0), JSON.stringify(report));
    await api("note_save", {
      note: NOTE,
      content: "# Conventions\n\nUse **tabs**, run `cargo test` before pushing.\n\n- one\n- two\n",
      expected_sha256: null,
      create_only: true,
    });
    ({ browser, page, pageErrors } = await openPage({ viewport: { width: 1280, height: 900 }, timeoutMs: STEP_TIMEOUT }));
    await page.goto(`${daemon.base}/#token=${encodeURIComponent(daemon.token)}`);
    await page.waitForSelector('[data-testid="status-indicator"][data-state="on"]');
  });

  after(() => cleanUp([() => browser?.close(), () => daemon?.stop(), () => fake?.remove()]));

  for (const view of VIEWS) {
    it(`${view.name}: no serious or critical axe violation in light and dark; screenshots`, async () => {
      const failures = [];
      for (const scheme of SCHEMES) {
        await page.emulateMedia({ colorScheme: scheme });
        await openView(view);
        assert.equal(
          await page.evaluate(() => matchMedia("(prefers-color-scheme: dark)").matches),
          scheme === "dark",
          "the page sees the emulated colour scheme",
        );
        await page.screenshot({ path: join(outDir(), `a11y-${view.name}-${scheme}.png`), fullPage: true });
        const violations = await axe();
        if (violations.length > 0) failures.push(`${scheme}:\n${describeViolations(violations)}`);
      }
      assert.equal(failures.length, 0, `axe found serious or critical violations in ${view.name}:\n${failures.join("\n")}`);
    });
  }

  for (const view of VIEWS) {
    it(`${view.name}: Tab reaches every control, each with a visible focus ring`, async () => {
      await page.emulateMedia({ colorScheme: "light" });
      await openView(view);
      await page.evaluate(() => {
        for (const el of document.querySelectorAll("[data-a11y-seen]")) el.removeAttribute("data-a11y-seen");
      });
      const noRing = [];
      let missed = [];
      // A control that was briefly disabled (reloading) as the walk passed gets a second walk.
      for (let walk = 0; walk < 2; walk++) {
        // Start from the top of the document: the skip link.
        await page.evaluate(() => {
          const skip = document.querySelector('[data-testid="skip-link"]');
          skip?.removeAttribute("data-a11y-seen");
          skip?.focus();
        });
        for (let i = 0; i < 400; i++) {
          const step = await page.evaluate(() => {
            const el = document.activeElement;
            if (!(el instanceof HTMLElement) || el === document.body) return { done: true };
            // Back at the skip link: the walk went round the whole page. (A date input's fields
            // are Tab stops of one element, so an element seen before does not end the walk.)
            const first = el.hasAttribute("data-a11y-seen");
            if (first && el.dataset.testid === "skip-link") return { done: true };
            el.setAttribute("data-a11y-seen", "");
            const own = getComputedStyle(el);
            const ring = (s) => (s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== "none";
            // A visually hidden input (a switch's or a segmented control's) shows focus on its label.
            const label = el.closest("label") ?? (el.id ? document.querySelector(`label[for="${CSS.escape(el.id)}"]`) : null);
            const visible = ring(own) || (label !== null && ring(getComputedStyle(label))) || (el.parentElement !== null && ring(getComputedStyle(el.parentElement)));
            const name = `${el.tagName.toLowerCase()}${el.dataset.testid ? `[data-testid=${el.dataset.testid}]` : ""} "${(el.getAttribute("aria-label") ?? el.textContent ?? "").trim().slice(0, 40)}"`;
            return { done: false, first, visible, name };
          });
          if (step.done) break;
          if (!step.visible && !step.first) noRing.push(step.name);
          await page.keyboard.press("Tab");
        }
        missed = await page.evaluate(() => {
          const sel = 'a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])';
          const shown = (el) => {
            const r = el.getBoundingClientRect();
            const s = getComputedStyle(el);
            return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && !el.closest("[inert]");
          };
          return [...document.querySelectorAll(sel)]
            .filter((el) => !el.matches(":disabled") && !el.hasAttribute("data-a11y-seen") && shown(el))
            .filter((el) => !(el instanceof HTMLInputElement && el.type === "radio" && document.querySelector(`input[type=radio][name="${CSS.escape(el.name)}"][data-a11y-seen]`)))
            .map((el) => `${el.tagName.toLowerCase()}${el.dataset.testid ? `[data-testid=${el.dataset.testid}]` : ""} "${(el.getAttribute("aria-label") ?? el.textContent ?? "").trim().slice(0, 40)}"`);
        });
        if (missed.length === 0) break;
      }
      assert.deepEqual(missed, [], `controls in ${view.name} that Tab never reaches`);
      assert.deepEqual(noRing, [], `controls in ${view.name} focused without a visible focus ring`);
    });
  }

  it("a narrow window (icons-only sidebar): no serious or critical axe violation in light and dark", async () => {
    await page.setViewportSize({ width: 640, height: 900 });
    try {
      const failures = [];
      for (const view of VIEWS) {
        for (const scheme of SCHEMES) {
          await page.emulateMedia({ colorScheme: scheme });
          await openView(view);
          if (view.name === "search" || view.name === "settings") {
            const label = await byTestId("palette-open").locator(".palette-label").boundingBox();
            assert.ok(label !== null && label.width <= 1, `only the shortcut shows: ${JSON.stringify(label)}`);
            assert.equal(await byTestId("palette-open").evaluate((b) => b.textContent.replace(/\s+/g, " ").trim()), "Commands Ctrl+K", "the button keeps its name");
            await page.screenshot({ path: join(outDir(), `a11y-narrow-${view.name}-${scheme}.png`), fullPage: true });
          }
          const violations = await axe();
          if (violations.length > 0) failures.push(`${view.name}, ${scheme}:\n${describeViolations(violations)}`);
        }
      }
      assert.equal(failures.length, 0, `axe found serious or critical violations in a narrow window:\n${failures.join("\n")}`);
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it("the skip link is the first Tab stop and moves focus to the main content", async () => {
    await openView(VIEWS[5]);
    await page.reload();
    await byTestId("view-settings").waitFor();
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("data-testid")), "skip-link", "Tab first lands on the skip link");
    assert.ok(await byTestId("skip-link").isVisible(), "the skip link shows when focused");
    await page.keyboard.press("Enter");
    assert.equal(await page.evaluate(() => document.activeElement?.id), "main");
    assert.equal(hash(), "#/settings", "the skip link does not change the route");
  });

  it("the command palette: Ctrl+K opens a modal listbox; arrows, Enter and Escape drive it; focus returns", async () => {
    await page.emulateMedia({ colorScheme: "light" });
    await openView(VIEWS[4]);
    const opener = byTestId("palette-open");
    assert.match(await opener.innerText(), /Commands\s*Ctrl\+K/);
    await opener.focus();
    await page.keyboard.press("Control+k");
    const dialog = byTestId("palette");
    await dialog.waitFor();
    assert.equal(await dialog.evaluate((d) => d.open && d.matches(":modal")), true, "a modal dialog");
    assert.equal(await dialog.getAttribute("aria-modal"), "true");
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("role")), "combobox", "focus is in the search box");
    assert.equal(await byTestId("palette-list").getAttribute("role"), "listbox");
    await page.screenshot({ path: join(outDir(), "a11y-palette-light.png") });
    const violations = await axe('[data-testid="palette"]');
    assert.equal(violations.length, 0, describeViolations(violations));

    // Tab stays in the dialog.
    await page.keyboard.press("Tab");
    await page.keyboard.press("Shift+Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("data-testid")), "palette-input", "focus is trapped");

    // Every view and the actions are listed.
    const options = await page.locator('[data-testid="palette-list"] [role="option"]').allInnerTexts();
    for (const title of ["Go to Search", "Go to Conversations", "Go to Notes", "Go to Profiles", "Go to Review", "Go to Activity", "Go to Settings", "Settings: Privacy", "Settings: Appearance", "Settings: Skills for agents", "Pause memory for 15 minutes", "Pause memory for 1 hour", "Capture now", "Distil now", "New note", "Theme: dark", "Turn memory off"]) {
      assert.ok(options.some((o) => o.includes(title)), `the palette offers "${title}": ${options.join(" | ")}`);
    }

    // The active option stays put while the status is polled (every 3 s) and the list remade.
    const input = byTestId("palette-input");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowDown");
    assert.equal(await input.getAttribute("aria-activedescendant"), "palette-opt-go-notes");
    await page.waitForTimeout(3500);
    assert.equal(await input.getAttribute("aria-activedescendant"), "palette-opt-go-notes", "a status poll does not move the active option");

    // Typing filters; the arrows move the active option (aria-activedescendant); Enter runs it.
    await page.keyboard.type("go to no");
    await eventually(async () => (await input.getAttribute("aria-activedescendant")) === "palette-opt-go-notes");
    assert.equal(await input.getAttribute("aria-activedescendant"), "palette-opt-go-notes");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowUp");
    assert.equal(await page.locator("#palette-opt-go-notes").getAttribute("aria-selected"), "true");
    await page.keyboard.press("Enter");
    await byTestId("view-notes").waitFor();
    assert.equal(hash(), "#/notes");
    assert.equal(await dialog.count(), 0, "the palette closes after running a command");
    assert.equal(await page.evaluate(() => document.activeElement?.id), "main", "focus moves to the view");

    // Escape closes and returns focus to where it was.
    await opener.focus();
    await page.keyboard.press("Control+k");
    await dialog.waitFor();
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("data-testid")), "palette-open", "focus returns on Escape");

    // The header button opens it too; text that matches no command offers a search (after
    // any command it matches).
    await opener.press("Enter");
    await dialog.waitFor();
    await page.keyboard.type("cargo");
    await page.waitForSelector('[data-testid="palette-opt-search-text"][aria-selected="true"]');
    await page.keyboard.press("Enter");
    await byTestId("search-hit").first().waitFor();
    assert.equal(hash(), "#/search?q=cargo");
    assert.deepEqual(pageErrors, []);
  });

  /** Opens the palette, types `text`, checks the first option is `id`, and runs it. */
  async function runCommand(text, id) {
    assert.equal(await byTestId("palette").count(), 0, "the palette is closed before Ctrl+K");
    await page.keyboard.press("Control+k");
    await byTestId("palette").waitFor();
    await page.keyboard.type(text);
    await page.waitForSelector(`[data-testid="palette-opt-${id}"][aria-selected="true"]`);
    await page.keyboard.press("Enter");
    await byTestId("palette").waitFor({ state: "detached" });
  }

  it("the palette's actions: pause 15 minutes, resume, new note, settings section", async () => {
    await runCommand("pause 15", "pause-15m");
    const paused = await eventually(async () => {
      const m = (await api("status")).memory;
      return !m.enabled && m.paused ? m : null;
    });
    assert.ok(paused?.paused_until, "memory_pause with 15m, as the API reports");
    const minutes = (Date.parse(paused.paused_until) - Date.now()) / 60_000;
    assert.ok(minutes > 13 && minutes <= 15.1, `pause ends in ~15 minutes, not ${minutes}`);
    await page.waitForSelector('[data-testid="status-indicator"][data-state="paused"]');
    await page.waitForSelector('[data-testid="palette-notice"]:has-text("Memory paused")');

    await runCommand("resume", "memory-on");
    await eventually(async () => (await api("status")).memory.enabled);
    await page.waitForSelector('[data-testid="status-indicator"][data-state="on"]');

    await runCommand("new note", "new-note");
    await byTestId("note-create-form").waitFor();
    const focused = await eventually(() => page.evaluate(() => document.activeElement?.getAttribute("data-testid") === "note-new-path"), { timeoutMs: 3000 });
    assert.ok(focused, `focus is in the new note's path, not ${await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 120))}`);
    await page.keyboard.press("Escape");

    await runCommand("appearance", "settings-appearance");
    await byTestId("appearance").waitFor();
    // The card shows as soon as Settings renders; focus moves to its heading right after.
    const onHeading = await eventually(() => page.evaluate(() => document.activeElement?.textContent === "Appearance"), { timeoutMs: 3000 });
    assert.ok(onHeading, `focus is on the section's heading, not ${await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 120))}`);
    assert.deepEqual(pageErrors, []);
  });

  it("themes follow the system by default; the palette and Settings override it, and it persists", async () => {
    const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await page.emulateMedia({ colorScheme: "light" });
    await page.goto(`${daemon.base}/#/settings`);
    await byTestId("view-settings").waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme ?? null), null);
    assert.equal(await byTestId("theme-system").isChecked(), true);
    const light = await bg();
    await page.emulateMedia({ colorScheme: "dark" });
    const dark = await bg();
    assert.notEqual(light, dark, "the system's dark scheme darkens the page");

    // Pinned light while the system is dark, from the palette.
    await runCommand("theme light", "theme-light");
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), "light");
    assert.equal(await bg(), light);
    assert.equal(await byTestId("theme-light").isChecked(), true, "Settings shows the palette's choice");
    await page.reload();
    await byTestId("view-settings").waitFor();
    assert.equal(await bg(), light, "the choice survives a reload");
    await page.screenshot({ path: join(outDir(), "a11y-settings-pinned-light-on-dark-system.png") });

    // Pinned dark while the system is light, from Settings by keyboard.
    await page.emulateMedia({ colorScheme: "light" });
    await byTestId("theme-dark").focus();
    await page.keyboard.press("Space");
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), "dark");
    assert.equal(await bg(), dark);
    await page.waitForTimeout(400); // colour transitions end
    const violations = await axe();
    assert.equal(violations.length, 0, describeViolations(violations));

    // Back to the system.
    await byTestId("theme-system").check();
    assert.equal(await page.evaluate(() => localStorage.getItem("cairn.theme")), null);
    assert.equal(await bg(), light);
    assert.deepEqual(pageErrors, []);
  });
});
