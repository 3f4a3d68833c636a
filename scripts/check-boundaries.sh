#!/usr/bin/env bash
# No crate under crates/ may depend on Tauri, directly or through another crate: Tauri lives
# in src-tauri/ only. (The UI's own rule, only ui/src/platform/ imports @tauri-apps, is a
# Vitest test: ui/src/platform-boundary.test.ts.) Nor may a crate's modules import each other
# in a circle.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bad=0
for manifest in crates/*/Cargo.toml; do
  pkg=$(sed -n 's/^name = "\(.*\)"/\1/p' "$manifest" | head -1)
  if cargo tree --locked -p "$pkg" -e normal,build --prefix none --format '{p}' 2>/dev/null | grep -qE '^tauri(-[a-z-]+)? v'; then
    echo "error: $pkg ($manifest) depends on Tauri; keep Tauri in src-tauri/ only" >&2
    bad=1
  fi
done
[ "$bad" = 0 ] && echo "ok: no crate under crates/ depends on Tauri"
# No import circle between a crate's modules (scripts/check-module-cycles.py says which).
python3 scripts/check-module-cycles.py || bad=1
exit "$bad"
