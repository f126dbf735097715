#!/usr/bin/env bash
# Definition recall per language against universal-ctags (issue 18), and
# `sno init` time per language against the parse floor. One public repository
# per language, nobody here wrote any of them; only that language's files are
# compared. See ops/bench/languages.py for the method.
#
# Usage: ops/bench/languages.sh [--no-build] [--only LANG[,LANG...]]
#   Repositories are cloned into ops/bench/.cache/languages/ from
#   $SNO_MIRROR/<owner>+<name>/repo when there, else from github.com.
#   SNO_BIN / SNO_FLOOR name other sno / sno-parse-floor binaries (a copy
#   that a build in the tree cannot replace mid-run).
#   Needs universal-ctags (`apt-get install universal-ctags`); for the
#   languages ctags 5.9 does not read, the references in languages-ref/ need
#   node with npm (Scala, Solidity; Groovy's compiler jar, run by java),
#   python3 with pip (HCL; Zig's compiler), cargo (Nix; Gleam, whose
#   compiler is cloned from gleam-lang/gleam like the repositories), and a
#   JDK with Debian's antlr4 package (Dart, Swift: grammars from
#   antlr/grammars-v4). Each is built into ops/bench/.cache/ when its
#   language is run.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=1 ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0 ;;
    --only) ONLY="$2"; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
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
  zig=karlseguin/http.zig hcl=terraform-aws-modules/terraform-aws-vpc
  groovy=groovyfx-project/groovyfx gleam=gleam-lang/stdlib
  nix=nix-community/nixpkgs.lib dart=dart-lang/collection swift=SnapKit/SnapKit
)
CACHE="$HERE/.cache/languages"
REF="$HERE/languages-ref"
mkdir -p "$CACHE"
clone() { # owner/name dir
  local mirror="${SNO_MIRROR:-/work/.mirror}/${1/\//+}/repo"
  if [ -d "$2/.git" ]; then return; fi
  if [ -d "$mirror" ]; then git clone -q "$mirror" "$2"; else git clone -q --depth 1 "https://github.com/$1" "$2"; fi
}
wanted() { [ -z "$ONLY" ] || [[ ",$ONLY," == *",$1,"* ]]; }
SPECS=()
for r in "${REPOS[@]}"; do
  lang=${r%%=*} spec=${r#*=}
  wanted "$lang" || continue
  dir="$CACHE/src-${spec/\//+}"
  clone "$spec" "$dir"
  SPECS+=("$lang=$dir")
done
# References for the languages ctags 5.9 does not read (languages-ref/):
# none of them is tree-sitter, and nobody here wrote the parsers.
REFS=()
NPM="$HERE/.cache/npm"
npm_need() { # package@version dir-under-node_modules
  [ -d "$NPM/node_modules/$2" ] || { mkdir -p "$NPM"; npm install --silent --prefix "$NPM" "$1" >/dev/null; }
}
export NODE_PATH="$NPM/node_modules"
if wanted scala || wanted solidity; then
  npm_need scalameta-parsers@4 scalameta-parsers
  npm_need @solidity-parser/parser@0 @solidity-parser/parser
  REFS+=(--ref "scala=node $REF/ref.js scala" --ref "solidity=node $REF/ref.js solidity")
fi
VENV="$HERE/.cache/venv"
pip_need() { # package==version module
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/python" -c "import $2" 2>/dev/null || "$VENV/bin/pip" install -q "$1"
}
if wanted hcl; then
  pip_need python-hcl2==8.1.4 hcl2
  REFS+=(--ref "hcl=$VENV/bin/python $REF/ref-hcl.py")
fi
BIN="$HERE/.cache/ref-bin"
mkdir -p "$BIN"
if wanted zig; then
  pip_need ziglang==0.17.1 ziglang
  if [ ! -x "$BIN/ref-zig" ] || [ "$REF/ref-zig.zig" -nt "$BIN/ref-zig" ]; then
    "$VENV/bin/python" -m ziglang build-exe -O ReleaseSafe --cache-dir "$HERE/.cache/zig" \
      --global-cache-dir "$HERE/.cache/zig" -femit-bin="$BIN/ref-zig" "$REF/ref-zig.zig"
  fi
  REFS+=(--ref "zig=$BIN/ref-zig")
fi
if wanted groovy; then
  command -v java >/dev/null || { echo "the Groovy reference needs java" >&2; exit 1; }
  npm_need npm-groovy-lint@18 npm-groovy-lint
  JARS="$NPM/node_modules/npm-groovy-lint/lib/java/groovy/lib"
  REFS+=(--ref "groovy=java -cp $JARS/* groovy.ui.GroovyMain $REF/ref-groovy.groovy")
fi
# The Rust references build in their own workspaces into .cache, never in
# sno's target/.
if wanted nix; then
  N="$HERE/.cache/ref-nix"
  mkdir -p "$N/src"
  cp "$REF/ref-nix/Cargo.toml" "$N/Cargo.toml"
  cp "$REF/ref-nix/src/main.rs" "$N/src/main.rs"
  CARGO_TARGET_DIR="$HERE/.cache/ref-target" cargo build -q --release --manifest-path "$N/Cargo.toml"
  REFS+=(--ref "nix=$HERE/.cache/ref-target/release/sno-ref-nix")
fi
if wanted gleam; then
  GLEAM_SRC="$CACHE/gleam-compiler"
  clone gleam-lang/gleam "$GLEAM_SRC"
  (cd "$GLEAM_SRC" && git checkout -q 952c30120 2>/dev/null) ||
    echo "gleam-lang/gleam: 952c30120 not in the clone, its HEAD is used" >&2
  G="$HERE/.cache/ref-gleam"
  mkdir -p "$G/src"
  sed "s#GLEAM_SRC#$GLEAM_SRC#" "$REF/ref-gleam/Cargo.toml" > "$G/Cargo.toml"
  cp "$REF/ref-gleam/src/main.rs" "$G/src/main.rs"
  cp "$GLEAM_SRC/Cargo.lock" "$G/Cargo.lock"
  CARGO_TARGET_DIR="$HERE/.cache/ref-target" cargo build -q --release --manifest-path "$G/Cargo.toml"
  REFS+=(--ref "gleam=$HERE/.cache/ref-target/release/sno-ref-gleam")
fi
# Dart and Swift: grammars-v4's grammars, generated for Java by the ANTLR
# tool, with the walkers RefDart.java / RefSwift.java.
ANTLR_RUNTIME=${ANTLR_RUNTIME:-/usr/share/java/antlr4-runtime.jar}
G4="$CACHE/grammars-v4"
antlr_ref() { # lang grammar-dir Lexer Parser Walker
  local out="$HERE/.cache/ref-antlr/$1"
  command -v antlr4 >/dev/null && command -v javac >/dev/null && [ -f "$ANTLR_RUNTIME" ] ||
    { echo "the $1 reference needs a JDK and antlr4 (apt-get install antlr4)" >&2; exit 1; }
  if [ ! -d "$G4/$2" ]; then
    mkdir -p "$G4"
    local mirror="${SNO_MIRROR:-/work/.mirror}/antlr+grammars-v4/repo"
    local src="$mirror"
    if [ ! -d "$src" ]; then
      src="$G4/.git-src"
      [ -d "$src" ] || git clone -q --bare --filter=blob:none https://github.com/antlr/grammars-v4 "$src"
    fi
    git --git-dir="$src" archive --prefix="$2/" "aca577d9e:$2" | tar x -C "$G4"
  fi
  if [ ! -f "$out/$5.class" ] || [ "$REF/$5.java" -nt "$out/$5.class" ]; then
    rm -rf "$out" "$out.gen" && mkdir -p "$out" "$out.gen"
    cp "$G4/$2"/Java/*.java "$REF/$5.java" "$out.gen/" 2>/dev/null || cp "$REF/$5.java" "$out.gen/"
    antlr4 -Dlanguage=Java -o "$out.gen" -Xexact-output-dir "$G4/$2/$3.g4" "$G4/$2/$4.g4"
    javac -nowarn -cp "$ANTLR_RUNTIME" -d "$out" "$out.gen"/*.java
  fi
  REFS+=(--ref "$1=java -cp $ANTLR_RUNTIME:$out $5")
}
wanted dart && antlr_ref dart dart2 Dart2Lexer Dart2Parser RefDart
wanted swift && antlr_ref swift swift/swift5 Swift5Lexer Swift5Parser RefSwift
exec nice -n 10 python3 "$HERE/languages.py" --sno "${SNO_BIN:-$ROOT/target/release/sno}" \
  --floor "${SNO_FLOOR:-$ROOT/target/release/sno-parse-floor}" --cache "$CACHE/work" \
  "${REFS[@]}" "${SPECS[@]}"
