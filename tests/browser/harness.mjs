// Shared helpers for the browser tests: start `cairn daemon` on a fresh CAIRN_HOME,
// talk to its API directly, and launch Debian's chromium through playwright-core.
import { spawn } from "node:child_process";
import { accessSync, chmodSync, constants, cpSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const UI_DIST = join(REPO_ROOT, "ui", "dist");

/** Where screenshots and the daemon log go: $CAIRN_TEST_OUT, default <repo>/target/test-output. */
export function outDir() {
  const raw = process.env.CAIRN_TEST_OUT || "target/test-output";
  const dir = isAbsolute(raw) ? raw : join(REPO_ROOT, raw);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The cairn binary from $CAIRN_BIN; throws (never skips) when it is missing. */
export function cairnBin() {
  const bin = process.env.CAIRN_BIN;
  if (!bin) {
    throw new Error(
      "CAIRN_BIN is not set. The browser tests need the cairn binary, e.g.\n" +
        "  CAIRN_BIN=$PWD/target/debug/cairn node --test tests/browser/",
    );
  }
  const path = isAbsolute(bin) ? bin : resolve(process.cwd(), bin);
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(`CAIRN_BIN=${bin} is not an executable file (resolved to ${path}).`);
  }
  return path;
}

function requireUiBuild() {
  if (!existsSync(join(UI_DIST, "index.html"))) {
    throw new Error(`${UI_DIST}/index.html is missing: build the UI first (npm --prefix ui ci && npm --prefix ui run build).`);
  }
}

const URL_RE = /(http:\/\/127\.0\.0\.1:\d+)\/?#token=([^\s"']+)/;

/**
 * Starts `CAIRN_BIN daemon --ui-dir <repo>/ui/dist` with CAIRN_HOME set to a fresh temp dir,
 * and waits for the line that prints the UI address.
 * `env` is merged over this process's environment (a value of `undefined` removes the
 * variable); `logName` names the daemon's log file in the output dir.
 * Returns { base, token, home, stop }.
 */
export async function startDaemon({
  timeoutMs = Number(process.env.CAIRN_TEST_STARTUP_MS) || 60_000,
  env = {},
  logName = "browser-daemon.log",
} = {}) {
  const bin = cairnBin();
  requireUiBuild();
  const home = mkdtempSync(join(tmpdir(), "cairn-browser-"));
  const log = createWriteStream(join(outDir(), logName));
  const childEnv = { ...process.env, CAIRN_HOME: home };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete childEnv[name];
    else childEnv[name] = value;
  }
  const child = spawn(bin, ["daemon", "--ui-dir", UI_DIST], {
    env: childEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);

  const exited = new Promise((res) => child.once("exit", (code, signal) => res({ code, signal })));
  const tail = [];
  const found = new Promise((res) => {
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on("line", (line) => {
        log.write(`${line}\n`);
        tail.push(line);
        if (tail.length > 40) tail.shift();
        if (line.includes("http://127.0.0.1:")) {
          const m = URL_RE.exec(line);
          if (m) res({ base: m[1], token: decodeURIComponent(m[2]) });
        }
      });
    }
  });

  let timer;
  const outcome = await Promise.race([
    found,
    exited.then(({ code, signal }) => ({ error: `cairn daemon exited early (code ${code}, signal ${signal})` })),
    new Promise((res) => {
      timer = setTimeout(() => res({ error: `cairn daemon printed no http://127.0.0.1: address within ${timeoutMs} ms` }), timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  if ("error" in outcome) {
    child.kill("SIGKILL");
    process.removeListener("exit", killOnExit);
    rmSync(home, { recursive: true, force: true });
    throw new Error(`${outcome.error}. Last output:\n${tail.join("\n")}`);
  }

  let stopped = false;
  async function stop({ graceMs = 15_000 } = {}) {
    if (stopped) return;
    stopped = true;
    process.removeListener("exit", killOnExit);
    let graceful = true;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      let t;
      const done = await Promise.race([
        exited.then(() => true),
        new Promise((res) => {
          t = setTimeout(() => res(false), graceMs);
        }),
      ]);
      clearTimeout(t);
      if (!done) {
        graceful = false;
        child.kill("SIGKILL");
        await exited;
      }
    }
    log.end();
    rmSync(home, { recursive: true, force: true });
    if (!graceful) throw new Error(`cairn daemon did not exit within ${graceMs} ms of SIGTERM`);
  }

  return { ...outcome, home, stop };
}

/** POST /api/rpc/<method> from Node, as a script would. Returns { status, body }. */
export async function rpc(base, method, params = {}, token = null) {
  const headers = { "Content-Type": "application/json" };
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(`${base}/api/rpc/${method}`, { method: "POST", headers, body: JSON.stringify(params) });
  const text = await res.text();
  let body;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  return { status: res.status, body };
}

/** Like rpc, but expects a 2xx answer and returns its body. */
export async function rpcOk(base, method, params, token) {
  const { status, body } = await rpc(base, method, params, token);
  if (status < 200 || status >= 300) throw new Error(`${method} answered ${status}: ${JSON.stringify(body)}`);
  return body;
}

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export async function launchBrowser() {
  const executablePath = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
  if (!existsSync(executablePath)) {
    throw new Error(`No chromium at ${executablePath} (apt-get install chromium, or set CHROMIUM_PATH).`);
  }
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}

/**
 * Launches chromium and opens the page a suite drives: a new context with `viewport` and
 * `colorScheme`, `timeoutMs` as the page's default timeout, and the page's uncaught errors
 * collected in `pageErrors` (a suite checks it is still empty at the end).
 * Returns { browser, page, pageErrors }.
 */
export async function openPage({ viewport, colorScheme = "light", timeoutMs }) {
  const browser = await launchBrowser();
  try {
    const context = await browser.newContext({ viewport, colorScheme });
    const page = await context.newPage();
    page.setDefaultTimeout(timeoutMs);
    const pageErrors = [];
    page.on("pageerror", (err) => pageErrors.push(String(err)));
    return { browser, page, pageErrors };
  } catch (err) {
    await browser.close();
    throw err;
  }
}

/** Runs every clean-up step (close the browser, stop the daemon, …) even when one fails; then throws the first failure. */
export async function cleanUp(steps) {
  const errors = [];
  for (const step of steps) {
    try {
      await step();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length > 0) throw errors[0];
}

/** Polls `fn` until it returns a truthy value or `timeoutMs` passes; returns the last value. */
export async function eventually(fn, { timeoutMs = 10_000, intervalMs = 150 } = {}) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await fn();
    if (last || Date.now() > end) return last;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** The synthetic agent session stores (made-up content in each agent's real layout). */
export function agentExamplesDir() {
  const dir = process.env.CAIRN_AGENT_EXAMPLES || join(REPO_ROOT, "tests", "fixtures", "agent-stores");
  if (!existsSync(join(dir, "claude-code"))) {
    throw new Error(`No synthetic agent stores at ${dir} (set CAIRN_AGENT_EXAMPLES to the frameworks/examples folder).`);
  }
  return dir;
}

/** Environment variables that point capture somewhere other than $HOME; removed for a fake home. */
export const AGENT_STORE_VARS = [
  "CLAUDE_CONFIG_DIR",
  "CODEX_HOME",
  "GEMINI_CLI_HOME",
  "QWEN_HOME",
  "COPILOT_HOME",
  "OPENCODE_DB",
  "CLINE_DIR",
  "CLINE_DATA_DIR",
  "CLINE_SESSION_DATA_DIR",
  "CONTINUE_GLOBAL_DIR",
  "CRUSH_GLOBAL_DATA",
  "GOOSE_PATH_ROOT",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "USERPROFILE",
];

/** Makes every file and folder under `dir` writable by its owner, so it can be removed. */
function makeWritable(dir) {
  chmodSync(dir, statSync(dir).mode | 0o700);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) makeWritable(path);
    else if (entry.isFile()) chmodSync(path, statSync(path).mode | 0o600);
  }
}

/**
 * A fake home holding copies of the synthetic Claude Code, Codex and Gemini CLI stores where
 * those agents keep them (`~/.claude`, `~/.codex/sessions`, `~/.gemini`).
 * Returns { home, env, remove }: `env` is for startDaemon.
 */
export function fakeAgentHome(examples = agentExamplesDir()) {
  const home = mkdtempSync(join(tmpdir(), "cairn-fake-home-"));
  cpSync(join(examples, "claude-code"), join(home, ".claude"), { recursive: true });
  mkdirSync(join(home, ".codex"), { recursive: true });
  cpSync(join(examples, "codex", "sessions"), join(home, ".codex", "sessions"), { recursive: true });
  mkdirSync(join(home, ".gemini"), { recursive: true });
  const gemini = join(examples, "gemini-cli", "gemini-home");
  for (const entry of readdirSync(gemini)) cpSync(join(gemini, entry), join(home, ".gemini", entry), { recursive: true });
  // The examples are read-only; the copies must not be, or the temp dir cannot be removed.
  makeWritable(home);
  const env = { HOME: home };
  for (const name of AGENT_STORE_VARS) env[name] = undefined;
  return { home, env, remove: () => rmSync(home, { recursive: true, force: true }) };
}

/**
 * An empty fake home for the daemon, holding only the folders named in `dirs` (e.g. `.codex`,
 * so that Codex counts as installed) and the files in `files` (path relative to the home →
 * content). Variables that point agents elsewhere are removed, as for fakeAgentHome.
 * Returns { home, env, remove }: `env` is for startDaemon.
 */
export function fakeHome({ dirs = [], files = {} } = {}) {
  const home = mkdtempSync(join(tmpdir(), "cairn-fake-home-"));
  for (const dir of dirs) mkdirSync(join(home, dir), { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(home, path)), { recursive: true });
    writeFileSync(join(home, path), content);
  }
  const env = { HOME: home };
  for (const name of AGENT_STORE_VARS) env[name] = undefined;
  return { home, env, remove: () => rmSync(home, { recursive: true, force: true }) };
}

/** axe-core's browser bundle, injected into pages by `axeViolations`. */
export const AXE_PATH = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

/**
 * Runs axe-core on `page` (the whole document, or the element matching `selector`) and
 * returns its violations of impact serious or critical.
 */
export async function axeViolations(page, selector = null) {
  // Evaluated, not added as a script tag: the served UI's CSP refuses inline scripts, and it
  // is tested as served.
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(readFileSync(AXE_PATH, "utf8"));
  const result = await page.evaluate(
    // eslint-disable-next-line no-undef
    (sel) => axe.run(sel === null ? document : document.querySelector(sel), { resultTypes: ["violations"] }),
    selector,
  );
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/** Each violation's rule, impact, element and fix, readably, one block per element. */
export function describeViolations(violations) {
  return violations
    .flatMap((v) =>
      v.nodes.map((n) => `  ${v.id} (${v.impact}): ${v.help}\n    element: ${n.target.join(" ")}\n    ${n.failureSummary?.replace(/\n/g, "\n    ") ?? ""}`),
    )
    .join("\n");
}

/**
 * Checks the page as it is in light and in dark (emulated `prefers-color-scheme`): saves
 * `<name>-<scheme>.png` in the output dir and throws, listing them, on any serious or
 * critical axe violation. Leaves the page in light.
 */
export async function assertAccessible(page, name) {
  const failures = [];
  for (const scheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.waitForTimeout(400); // colour transitions end
    await page.screenshot({ path: join(outDir(), `${name}-${scheme}.png`), fullPage: true });
    const violations = await axeViolations(page);
    if (violations.length > 0) failures.push(`${scheme}:\n${describeViolations(violations)}`);
  }
  await page.emulateMedia({ colorScheme: "light" });
  if (failures.length > 0) throw new Error(`axe found serious or critical violations in ${name}:\n${failures.join("\n")}`);
}
