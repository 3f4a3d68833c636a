#!/usr/bin/env bash
# `npm run app`: install what is missing, build, and start Cairn. With a display, the
# desktop app opens; without one, the headless service runs and prints the UI's address.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

ensure_rust
ensure_system_packages app
ensure_cmake
build_ui

has_display=0
case "$(uname -s)" in
  Darwin|MINGW*|MSYS*|CYGWIN*) has_display=1 ;;
  *) if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then has_display=1; fi ;;
esac

if [ "$has_display" = 1 ] && [ "${CAIRN_HEADLESS:-0}" != 1 ]; then
  step "Building the desktop app (release; the first build takes several minutes)"
  cargo build --release -p cairn-desktop
  step "Starting Cairn"
  exec "$CARGO_TARGET_DIR/release/cairn-desktop" "$@"
else
  step "No display: building the headless service (release; the first build takes several minutes)"
  cargo build --release -p cairn-cli
  step "Starting cairn daemon (Ctrl-C stops it)"
  exec "$CARGO_TARGET_DIR/release/cairn" daemon --ui-dir "$ROOT/ui/dist" "$@"
fi
