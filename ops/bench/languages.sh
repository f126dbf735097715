#!/usr/bin/env bash
# Definition recall per language against universal-ctags (issue 18), and
# `sno init` time per language against the parse floor. One public repository
# per language, nobody here wrote any of them; only that language's files are
# compared. See ops/bench/languages.py for the method.
#
# Usage: ops/bench/languages.sh [--no-build] [--only LANG[,LANG...]]
#   Repositories are cloned into ops/bench/.cache/languages/ from
#   $SNO_MIRROR/<owner>+<name>/repo when there, else from github.com.
#   Needs universal-ctags (`apt-get install universal-ctags`), and node with
#   npm for the Scala and Solidity references.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=1 ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0 ;;
    --only) ONLY="$2"; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
command -v ctags >/dev/null && ctags --version | grep -q Universal ||
  { echo "needs universal-ctags (apt-get install universal-ctags)" >&2; exit 1; }
[ "$BUILD" = 1 ] && (cd "$ROOT" && cargo build --release -p sno -p sno-parse-floor)
# language=owner/name
REPOS=(
  python=pallets/click go=go-chi/chi java=square/javapoet c=DaveGamble/cJSON
  cpp=fmtlib/fmt ruby=sinatra/sinatra javascript=expressjs/express
  typescript=sindresorhus/ky rust=BurntSushi/walkdir
  csharp=jbogard/MediatR php=guzzle/guzzle kotlin=square/kotlinpoet
  bash=nvm-sh/nvm lua=Olivine-Labs/busted elixir=elixir-plug/plug
  erlang=ninenines/cowboy haskell=jaspervdj/hakyll julia=JuliaData/DataFrames.jl
  objc=AFNetworking/AFNetworking ocaml=ocaml-community/yojson
  pascal=HashLoad/horse r=tidyverse/dplyr elm=rtfeldman/elm-spa-example
  sql=pgvector/pgvector scala=com-lihaoyi/os-lib
  solidity=OpenZeppelin/openzeppelin-contracts
)
# Scala and Solidity, which ctags 5.9 does not read, are checked against
# scalameta and the Solidity parser (languages-ref/ref.js) from npm.
NPM="$HERE/.cache/npm"
if [ ! -d "$NPM/node_modules/scalameta-parsers" ] || [ ! -d "$NPM/node_modules/@solidity-parser/parser" ]; then
  mkdir -p "$NPM"
  npm install --silent --prefix "$NPM" scalameta-parsers@4 @solidity-parser/parser@0 >/dev/null
fi
export NODE_PATH="$NPM/node_modules"
CACHE="$HERE/.cache/languages"
mkdir -p "$CACHE"
SPECS=()
for r in "${REPOS[@]}"; do
  lang=${r%%=*} spec=${r#*=}
  if [ -n "$ONLY" ] && [[ ",$ONLY," != *",$lang,"* ]]; then continue; fi
  dir="$CACHE/src-${spec/\//+}"
  if [ ! -d "$dir/.git" ]; then
    mirror="${SNO_MIRROR:-/work/.mirror}/${spec/\//+}/repo"
    if [ -d "$mirror" ]; then git clone -q "$mirror" "$dir"; else git clone -q --depth 1 "https://github.com/$spec" "$dir"; fi
  fi
  SPECS+=("$lang=$dir")
done
exec nice -n 10 python3 "$HERE/languages.py" --sno "$ROOT/target/release/sno" \
  --floor "$ROOT/target/release/sno-parse-floor" --cache "$CACHE/work" \
  --node-ref "$HERE/languages-ref/ref.js" "${SPECS[@]}"
