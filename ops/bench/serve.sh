#!/usr/bin/env bash
# MCP server benchmark for sno: cold start to the first `search` answer (no
# daemon running, and with the repository's daemon up), p50
# and p95 of 200 mixed tool calls over one connection, and the server's
# memory after them, on an indexed ~110k-line corpus nobody here wrote (the
# quick corpus of index.sh plus Django's core/).
#
# Usage: ops/bench/serve.sh [--no-build] [--rounds N] [--calls N]
#   SNO_MODEL: model2vec directory (default: ../shared/models/minilm-l6-static-256)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=1 ROUNDS=5 CALLS=200
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0 ;;
    --rounds) ROUNDS="$2"; shift ;;
    --calls) CALLS="$2"; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "serve.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
export SNO_MODEL=${SNO_MODEL:-$ROOT/../shared/models/minilm-l6-static-256}
[ -d "$SNO_MODEL" ] || { echo "serve.sh: no model at $SNO_MODEL (set SNO_MODEL)" >&2; exit 1; }
export SNO_OFFLINE=1

if [ "$BUILD" = 1 ]; then
  (cd "$ROOT" && cargo build --release -p sno)
fi
SNO="${SNO_BIN:-$ROOT/target/release/sno}"  # SNO_BIN: another build, for an A/B

"$HERE/index.sh" --quick --corpus-only >/dev/null
"$HERE/index.sh" --corpus-only >/dev/null
CACHE="$HERE/.cache"
CORPUS="$CACHE/corpus-serve"
if [ ! -f "$CACHE/corpus-serve.ok" ]; then
  rm -rf "$CORPUS"; mkdir -p "$CORPUS"
  git -c init.defaultBranch=main init -q "$CORPUS"
  (cd "$CACHE/corpus-quick" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$CORPUS"
  mkdir -p "$CORPUS/python/django"
  cp -r "$CACHE/corpus-full/python/django/core" "$CORPUS/python/django/core"
  git -C "$CORPUS" add -A
  git -C "$CORPUS" -c user.name=bench -c user.email=bench@localhost commit -qm "serve benchmark corpus"
  touch "$CACHE/corpus-serve.ok"
fi
stop_daemon() { pkill -TERM -f "sno daemon $CORPUS" 2>/dev/null || true; while [ -S "$CORPUS/.sno/sno.sock" ]; do sleep 0.05; done; }
stop_daemon
rm -rf "$CORPUS/.sno"
"$SNO" init --history 0 "$CORPUS" >/dev/null 2>&1
lines=$(cd "$CORPUS" && git ls-files -z | xargs -0 cat | wc -l)
files=$(cd "$CORPUS" && git ls-files | wc -l)

# CPU ticks: total and steal (time a VM's host gave to others; it stretches
# wall times without costing CPU time, so it is reported).
cpu_ticks() { awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print t, $9 }' /proc/stat; }
read -r t0 s0 < <(cpu_ticks)
out=$(python3 "$HERE/serve-bench.py" "$SNO" "$CORPUS" "$ROUNDS" "$CALLS")
read -r t1 s1 < <(cpu_ticks)
steal=$(awk -v a="$t0" -v b="$s0" -v c="$t1" -v d="$s1" 'BEGIN { if (c > a) printf "%.0f", 100 * (d - b) / (c - a); else print 0 }')
stop_daemon
get() { echo "$out" | awk -v k="$1" '$1 == k { print $2 }'; }

cat <<TXT
### MCP server benchmark

\`ops/bench/serve.sh\` at sno $(git -C "$ROOT" rev-parse --short HEAD), $(date -u +%F); $(nproc) cores; model $(basename "$SNO_MODEL"); CPU steal by the VM host during the runs: ${steal}%.
Corpus: $files files, $lines lines (Django db/ and core/, ESLint, Go go/*, serde, Brotli), indexed.

| measure | figure | target |
| --- | ---: | ---: |
| cold start to first \`search\` answer, no daemon running (median of $ROUNDS; best) | $(get cold_ms) ms ($(get cold_min_ms) ms) | < 150 ms |
| start to first \`search\` answer with the repository's daemon up (median of $ROUNDS) | $(get warm_start_ms) ms | |
| $(get calls) mixed tool calls, one connection: p50 | $(get p50_ms) ms | < 5 ms |
| same, p95 | $(get p95_ms) ms | < 25 ms |
| daemon memory after them (RSS; peak) | $(get rss_mb) MB ($(get hwm_mb) MB) | |

Per tool, p50: $(echo "$out" | awk '/^tool_/ { sub("tool_", "", $1); sub("_p50_ms", "", $1); printf "%s %s ms, ", $1, $2 }' | sed 's/, $//').
TXT
