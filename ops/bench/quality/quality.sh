#!/usr/bin/env bash
# Retrieval quality eval (issue 16): docstring -> code, identifiers and change
# localization on pinned public repositories, sno (model on and lexical-only,
# over MCP) beside a BM25 baseline. See ops/bench/quality/README.md.
#
# Usage: ops/bench/quality/quality.sh [--build] [eval.py options]
#   --build        cargo build --release -p sno first
#   --sno PATH     the sno binary (default: target/release/sno)
#   --small        a quick run (25/15/20 queries per repository and set)
#   SNO_MODEL      model2vec directory for the model-on mode
#                  (default: ../shared/models/minilm-l6-static-256 beside the clone)
# Everything else goes to eval.py (`eval.py --help`). It runs under nice -n 10.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
args=()
for a in "$@"; do
  case "$a" in
    --build) (cd "$ROOT" && cargo build --release -p sno) ;;
    -h|--help) sed -n '2,13p' "$0"; exec python3 "$HERE/eval.py" --help ;;
    *) args+=("$a") ;;
  esac
done
MODEL=${SNO_MODEL:-$ROOT/../shared/models/minilm-l6-static-256}
model=()
if [ -d "$MODEL" ]; then
  model=(--model "$MODEL")
else
  echo "quality.sh: no model at $MODEL (set SNO_MODEL): lexical-only and BM25 only" >&2
fi
python3 -c 'import tiktoken' 2>/dev/null ||
  echo "quality.sh: tiktoken is not installed (pip install tiktoken): budget figures count bytes/4" >&2
exec nice -n 10 python3 "$HERE/eval.py" "${model[@]}" "${args[@]}"
