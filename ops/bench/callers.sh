#!/usr/bin/env bash
# Callers precision (issue 14): sno's `refs --callers` on public Python, Go
# and Rust repositories nobody here wrote, checked call by call against jedi,
# go/types (ops/bench/callers-go) and rust-analyzer. Prints exact and
# heuristic precision, recall against the reference's call sites, and every
# false exact caller. See ops/bench/callers.py.
#
# Usage: ops/bench/callers.sh [--no-build] [--per-repo N] [REPO_DIR...]
#   Without REPO_DIR: flask, click, httpx, attrs, chi, cobra, walkdir and
#   ripgrep, cloned from github.com into ops/bench/.cache/callers/ (or from
#   $SNO_MIRROR/<owner>+<name>/repo).
#   Needs go (apt install golang-go) and rust-analyzer (rustup component add
#   rust-analyzer); both are installed here when missing.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=1 PER=40 REPOS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0 ;;
    --per-repo) PER="$2"; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) REPOS+=("$1") ;;
  esac
  shift
done
python3 -c 'import jedi' 2>/dev/null || python3 -m pip install -q jedi
command -v go >/dev/null || apt-get install -y -q golang-go >/dev/null
rust-analyzer --version >/dev/null 2>&1 || rustup component add rust-analyzer
[ "$BUILD" = 1 ] && (cd "$ROOT" && cargo build --release -p sno)
GO_REF="$HERE/.cache/callers-go"
mkdir -p "$HERE/.cache"
(cd "$HERE/callers-go" && go build -o "$GO_REF" .)
if [ ${#REPOS[@]} -eq 0 ]; then
  CACHE="$HERE/.cache/callers"
  mkdir -p "$CACHE"
  for spec in pallets/flask pallets/click encode/httpx python-attrs/attrs go-chi/chi spf13/cobra BurntSushi/walkdir BurntSushi/ripgrep; do
    dir="$CACHE/${spec#*/}"
    if [ ! -d "$dir/.git" ]; then
      mirror="${SNO_MIRROR:-/work/.mirror}/${spec/\//+}/repo"
      if [ -d "$mirror" ]; then git clone -q "$mirror" "$dir"; else git clone -q "https://github.com/$spec" "$dir"; fi
    fi
    REPOS+=("$dir")
  done
fi
exec nice -n 10 python3 "$HERE/callers.py" --sno "$ROOT/target/release/sno" --go-ref "$GO_REF" --per-repo "$PER" "${REPOS[@]}"
