#!/usr/bin/env bash
# Scale benchmark (issue 17): corpora nobody here wrote (the sources of
# cargo's registry cache, which building sno fills): all of it (millions of
# lines) and its first ~600k lines, each indexed once; then init time, peak
# RSS, disk, cold CLI point queries and search, and over MCP the first and
# warm answers, commit-to-visible and the daemon's RSS. See ops/bench/scale.py.
#
# Usage: ops/bench/scale.sh [--no-build] [--reuse|--keep-corpus] [--runs N] [--only 600k|full]
#                           [--no-model-search] [--warm N]
# SNO_BIN=path runs another sno binary (an A/B against an older build).
#   --reuse            keep the corpora and indexes of an earlier run (ops/bench/.cache/scale)
#   --keep-corpus      keep the corpora of an earlier run, index them again
#   --only             one corpus: the ~600k-line one, or the full registry
#   --no-model-search  skip the cold CLI search with the model (minutes on the full corpus)
#   --warm N           warm MCP searches timed (default 30; 400 gives a steadier p50)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=1 ARGS=() ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0 ;;
    --reuse) ARGS+=(--reuse) ;;
    --keep-corpus) ARGS+=(--keep-corpus) ;;
    --runs) ARGS+=(--runs "$2"); shift ;;
    --warm) ARGS+=(--warm "$2"); shift ;;
    --only) ONLY="$2"; shift ;;
    --no-model-search) ARGS+=(--no-model-search) ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ "$BUILD" = 1 ] && (cd "$ROOT" && cargo build --release -p sno -p sno-search-bench -p sno-parse-floor)
MODEL="${SNO_MODEL:-$ROOT/../shared/models/minilm-l6-static-256}"
[ -d "$MODEL" ] && ARGS+=(--model "$MODEL")
run() {
  nice -n 10 python3 "$HERE/scale.py" --sno "${SNO_BIN:-$ROOT/target/release/sno}" "${ARGS[@]}" "$@"
}
if [ "$ONLY" != full ]; then
  echo "== ~600k lines"
  run --corpus "$HERE/.cache/scale/corpus-600k" --lines 600000
fi
if [ "$ONLY" != 600k ]; then
  echo "== the whole registry"
  run --corpus "$HERE/.cache/scale/corpus"
  # The sign-bit scan against the exact one on the head's stored vectors.
  VECS=$(ls "$HERE"/.cache/scale/corpus/.sno/cache/*/vectors-*.i8 2>/dev/null | head -1 || true)
  SIGNS="$ROOT/target/release/sno-signs-bench"
  if [ -n "$VECS" ] && [ -x "$SIGNS" ] && [ -d "$MODEL" ]; then
    echo "== semantic scan: sign bits first against exact"
    "$SIGNS" "$VECS" "$MODEL" "$HERE/search-queries.txt"
  fi
fi
