#!/usr/bin/env bash
# `npm run bundle`: installable packages of the desktop app, made by Tauri's bundler
# (@tauri-apps/cli, pinned in ui/package.json). Installs what is missing, builds the UI and
# the app in release mode, and prints the path of each package made.
#
#   npm run bundle                     Linux: the .deb (macOS: .app and .dmg; Windows: .msi)
#   npm run bundle -- --appimage       Linux: the .deb, then the AppImage too
#   npm run bundle -- --debug          a debug build instead of release
#   npm run bundle -- --no-build       package the binary cargo already built (`tauri bundle`):
#                                      compiles nothing; with --debug, target/debug/cairn-desktop
#
# The AppImage needs linuxdeploy and appimagetool, which Tauri's bundler downloads from
# GitHub while bundling; without access to github.com that step fails. The release workflow
# (.github/workflows/release.yml) builds the AppImage, the .dmg and the .msi on GitHub's runners.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

usage() { sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

profile=release
build=1
appimage=0
for arg in "$@"; do
  case "$arg" in
    --debug) profile=debug ;;
    --no-build) build=0 ;;
    --appimage) appimage=1 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $arg" ;;
  esac
done

case "$(uname -s)" in
  Linux) bundles=deb ;;
  Darwin) bundles=app,dmg ;;
  MINGW*|MSYS*|CYGWIN*) bundles=msi ;;
  *) die "no installable bundle for $(uname -s)" ;;
esac
if [ "$appimage" = 1 ] && [ "$bundles" != deb ]; then
  die "--appimage is for Linux"
fi

# The Tauri CLI finds the app (src-tauri/tauri.conf.json) and the frontend (ui/) from these,
# and the binary through `cargo metadata`, which honours CARGO_TARGET_DIR (scripts/lib.sh).
export TAURI_APP_PATH="$ROOT/src-tauri" TAURI_FRONTEND_PATH="$ROOT/ui"
tauri=("$ROOT/ui/node_modules/.bin/tauri")
flags=()
[ "$profile" = debug ] && flags+=(--debug)
out="$CARGO_TARGET_DIR/$profile/bundle"

ensure_rust
if [ "$build" = 1 ]; then
  ensure_system_packages app
  ensure_cmake
  build_ui
else
  ensure_npm "$ROOT/ui"
  hint="cargo build -p cairn-desktop"; [ "$profile" = release ] && hint+=" --release"
  [ -x "$CARGO_TARGET_DIR/$profile/cairn-desktop" ] || [ -x "$CARGO_TARGET_DIR/$profile/cairn-desktop.exe" ] \
    || die "--no-build: $CARGO_TARGET_DIR/$profile/cairn-desktop is not built ($hint)"
fi

# Packages from an earlier run are removed so that the list printed below is this run's.
rm -rf "${out:?}/deb" "$out/appimage" "$out/dmg" "$out/macos" "$out/msi"
started=$(date +%s)
if [ "$build" = 1 ]; then
  step "Building Cairn ($profile) and bundling: $bundles (tauri build)"
  "${tauri[@]}" build "${flags[@]}" --ci --bundles "$bundles" -- --locked
else
  step "Bundling the $profile build as: $bundles (tauri bundle, nothing is compiled)"
  "${tauri[@]}" bundle "${flags[@]}" --ci --bundles "$bundles"
fi

appimage_failed=0
if [ "$appimage" = 1 ]; then
  step "Bundling the AppImage (tauri bundle; downloads linuxdeploy and appimagetool from GitHub)"
  "${tauri[@]}" bundle "${flags[@]}" --ci --bundles appimage || appimage_failed=1
fi

step "Packages made ($(( $(date +%s) - started ))s)"
made=$(find "$out" -maxdepth 2 -type f \( -name '*.deb' -o -name '*.AppImage' -o -name '*.dmg' -o -name '*.msi' \) 2>/dev/null | sort)
[ -n "$made" ] || die "the bundler made no package under $out"
printf '%s\n' "$made"
if [ "$appimage_failed" = 1 ]; then
  die "the AppImage was not made: Tauri's bundler downloads linuxdeploy and appimagetool from github.com, which must be reachable (the release workflow builds the AppImage on GitHub's runners)"
fi
