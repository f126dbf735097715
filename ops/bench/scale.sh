#!/usr/bin/env bash
# Scale benchmark (issue 17): a corpus of millions of lines nobody here wrote
# (the sources of cargo's registry cache, which building sno fills), indexed
# once; then init time, peak RSS, disk, and cold CLI point queries and search.
# See ops/bench/scale.py for what is measured and what is not yet.
#
# Usage: ops/bench/scale.sh [--no-build] [--reuse] [--runs N]
#   --reuse   keep the corpus and index of an earlier run (ops/bench/.cache/scale)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=1 ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0 ;;
    --reuse) ARGS+=(--reuse) ;;
    --runs) ARGS+=(--runs "$2"); shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ "$BUILD" = 1 ] && (cd "$ROOT" && cargo build --release -p sno)
MODEL="${SNO_MODEL:-$ROOT/../shared/models/minilm-l6-static-256}"
[ -d "$MODEL" ] && ARGS+=(--model "$MODEL")
exec nice -n 10 python3 "$HERE/scale.py" --sno "$ROOT/target/release/sno" \
  --corpus "$HERE/.cache/scale/corpus" "${ARGS[@]}"
