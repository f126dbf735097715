#!/usr/bin/env bash
# Callers precision (issue 14): sno's `refs --callers` on public Python
# repositories nobody here wrote, checked call by call with jedi. Prints exact
# and heuristic precision, recall against jedi's call sites, and every false
# exact caller. See ops/bench/callers.py.
#
# Usage: ops/bench/callers.sh [--no-build] [--per-repo N] [REPO_DIR...]
#   Without REPO_DIR: flask, click, httpx and attrs, cloned from github.com
#   into ops/bench/.cache/callers/ (or from $SNO_MIRROR/<owner>+<name>/repo).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=1 PER=40 REPOS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0 ;;
    --per-repo) PER="$2"; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) REPOS+=("$1") ;;
  esac
  shift
done
python3 -c 'import jedi' 2>/dev/null || python3 -m pip install -q jedi
[ "$BUILD" = 1 ] && (cd "$ROOT" && cargo build --release -p sno)
if [ ${#REPOS[@]} -eq 0 ]; then
  CACHE="$HERE/.cache/callers"
  mkdir -p "$CACHE"
  for spec in pallets/flask pallets/click encode/httpx python-attrs/attrs; do
    dir="$CACHE/${spec#*/}"
    if [ ! -d "$dir/.git" ]; then
      mirror="${SNO_MIRROR:-/work/.mirror}/${spec/\//+}/repo"
      if [ -d "$mirror" ]; then git clone -q "$mirror" "$dir"; else git clone -q "https://github.com/$spec" "$dir"; fi
    fi
    REPOS+=("$dir")
  done
fi
exec nice -n 10 python3 "$HERE/callers.py" --sno "$ROOT/target/release/sno" --per-repo "$PER" "${REPOS[@]}"
