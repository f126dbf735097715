#!/usr/bin/env bash
# Search benchmark for sno: warm query latency in one process (p50/p95 over
# 50 queries), the first query cold (a fresh `sno search` process), and the
# time to embed every symbol, on a real ~100k-line corpus nobody here wrote
# (the quick corpus of index.sh: Django, ESLint, Go's go/*, serde, Brotli).
#
# Usage: ops/bench/search.sh [--no-build] [--rounds N]
#   SNO_MODEL: model2vec directory (default: ../shared/models/minilm-l6-static-256)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=1 ROUNDS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0 ;;
    --rounds) ROUNDS="$2"; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "search.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
MODEL=${SNO_MODEL:-$ROOT/../shared/models/minilm-l6-static-256}
[ -d "$MODEL" ] || { echo "search.sh: no model at $MODEL (set SNO_MODEL)" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { apt-get update -qq && apt-get install -y -qq time; }

if [ "$BUILD" = 1 ]; then
  (cd "$ROOT" && cargo build --release -p sno -p sno-search-bench)
fi
SNO="$ROOT/target/release/sno"
BENCH="$ROOT/target/release/sno-search-bench"

"$HERE/index.sh" --quick --corpus-only >/dev/null
CORPUS="$HERE/.cache/corpus-quick"
rm -rf "$CORPUS/.sno"
"$SNO" init --history 0 "$CORPUS" >/dev/null 2>&1

# Cold: a new process answers the first query (state load, model load,
# indexes, ranking, packing).
timing=$(mktemp)
/usr/bin/time -o "$timing" -f "%e %M" "$SNO" search "where do we parse the config file" --repo "$CORPUS" --model "$MODEL" >/dev/null 2>&1
cold=$(tail -1 "$timing")
rm -f "$timing"

out=$("$BENCH" "$CORPUS" "$MODEL" "$HERE/search-queries.txt" "$ROUNDS")
get() { echo "$out" | awk -v k="$1" '$1 == k { print $2 }'; }

cat <<TXT
### Search benchmark

\`ops/bench/search.sh\` at sno $(git -C "$ROOT" rev-parse --short HEAD), $(date -u +%F); $(nproc) cores; model $(basename "$MODEL").
Corpus: $(get files) files, $(get lines) lines, $(get symbols) symbols (Django, ESLint, Go go/*, serde, Brotli).

| measure | figure | target |
| --- | ---: | ---: |
| warm query p50 (rank + read sources + pack 2000 tokens), $(get queries) queries | $(get p50_ms) ms | < 5 ms |
| warm query p95 | $(get p95_ms) ms | < 20 ms |
| first query, cold process (wall s, peak MB) | ${cold% *} s, $(( ${cold#* } / 1024 )) MB | |
| embed every symbol | $(get embed_all_symbols_s) s | < 1 s |
| build lexical + HNSW indexes (vectors at hand, as the embedder stores them) | $(get build_indexes_s) s | |
| model load | $(get model_load_s) s | |
TXT
