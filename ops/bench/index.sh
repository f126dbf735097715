#!/usr/bin/env bash
# Indexing benchmark for sno: cold `sno init` on a large real corpus against
# ctags and against the tree-sitter parse floor, plus the cost of history on
# two repositories of successive releases (pip: heavy churn; Django 4.2.x: patches).
#
# Usage: ops/bench/index.sh [--quick] [--runs N] [--no-sno] [--no-history] [--history-only]
#                           [--no-build] [--corpus-only]
#   --quick        small corpus (~90k lines) and 5-version history repos
#   --runs N       time N rounds (each runs every tool once); keep each tool's fastest
#                  run and report the median of the rounds' ratios too (default 1)
#   --no-sno       skip building and timing sno (ctags and parse floor only)
#   --no-history   skip the history benchmark
#   --history-only skip the corpus (and its measurements): history benchmark only
#   --no-build     use the binaries already in target/release
#   --corpus-only  assemble (or reuse) the corpus and history repos, count lines, stop
# SNO_BIN / FLOOR_BIN override the binaries (then pass --no-build).
# Everything downloaded or assembled is cached in ops/bench/.cache/ (gitignored).
# See ops/bench/README.md.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE="$HERE/.cache"
DL="$CACHE/dl"

QUICK=0 RUNS=1 WITH_SNO=1 WITH_HISTORY=1 HISTORY_ONLY=0 BUILD=1 CORPUS_ONLY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --runs) RUNS="$2"; shift ;;
    --no-sno) WITH_SNO=0 ;;
    --no-history) WITH_HISTORY=0 ;;
    --no-build) BUILD=0 ;;
    --corpus-only) CORPUS_ONLY=1 ;;
    --history-only) HISTORY_ONLY=1 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "index.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
if [ "$HISTORY_ONLY" = 1 ]; then
  [ "$WITH_HISTORY" = 1 ] || { echo "index.sh: --history-only and --no-history exclude each other" >&2; exit 2; }
  [ "$WITH_SNO" = 1 ] || [ "$CORPUS_ONLY" = 1 ] ||
    { echo "index.sh: --history-only times sno; it cannot go with --no-sno" >&2; exit 2; }
fi

# ---- Corpus definition (bump CORPUS_REV when changing it: the cache is keyed on it)
CORPUS_REV=2
DJANGO_VERSION=4.2.16
ESLINT_VERSION=8.57.0
BROTLI_VERSION=1.1.0
GO_SRC_PKG=golang-1.19-src
RUST_CRATES_FULL=(regex-syntax serde gix)
RUST_CRATES_QUICK=(serde)
# History repositories: one commit per release, each committed over the previous
# tree with `git add -A` (deletes and renames show). The tree of a release is
# made by `history_tree_NAME DEST VERSION` (below).
#   pip:    whole sdists (~180k lines of Python each). Every release re-vendors
#           packages, so a commit touches hundreds of files: the heavy-churn case.
#   django: Django 4.2.0..4.2.20 patch releases, django/ without vendored JS (as
#           in the corpus): a few dozen files per commit, like ordinary development.
HISTORIES=(pip django)
PIP_HISTORY_FULL=(22.0 22.0.1 22.0.2 22.0.3 22.0.4 22.1 22.1.1 22.1.2 22.2 22.2.1 22.2.2
  22.3 22.3.1 23.0 23.0.1 23.1 23.1.1 23.1.2 23.2 23.2.1 23.3 23.3.1 23.3.2 24.0 24.1)
PIP_HISTORY_QUICK=(23.3 23.3.1 23.3.2 24.0 24.1)
mapfile -t DJANGO_HISTORY_FULL < <(seq -f '4.2.%g' 0 20)
DJANGO_HISTORY_QUICK=(4.2.16 4.2.17 4.2.18 4.2.19 4.2.20)

declare -A HIST_DIR HIST_VERSIONS HIST_LABEL
if [ "$QUICK" = 1 ]; then
  CORPUS="$CACHE/corpus-quick"
  RUST_CRATES=("${RUST_CRATES_QUICK[@]}")
  HIST_DIR[pip]="$CACHE/history-quick" HIST_VERSIONS[pip]="${PIP_HISTORY_QUICK[*]}"
  HIST_DIR[django]="$CACHE/history-django-quick" HIST_VERSIONS[django]="${DJANGO_HISTORY_QUICK[*]}"
else
  CORPUS="$CACHE/corpus-full"
  RUST_CRATES=("${RUST_CRATES_FULL[@]}")
  HIST_DIR[pip]="$CACHE/history-full" HIST_VERSIONS[pip]="${PIP_HISTORY_FULL[*]}"
  HIST_DIR[django]="$CACHE/history-django-full" HIST_VERSIONS[django]="${DJANGO_HISTORY_FULL[*]}"
fi
for n in "${HISTORIES[@]}"; do
  read -ra vs <<< "${HIST_VERSIONS[$n]}"
  HIST_LABEL[$n]="$n ${vs[0]}..${vs[-1]}"
done
HIST_LABEL[pip]+=" (heavy churn)" HIST_LABEL[django]+=" (patch series)"

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { echo "index.sh: $*" >&2; exit 1; }

# ---- Tools ---------------------------------------------------------------------
APT_UPDATED=0
apt_install() {
  [ "$(id -u)" = 0 ] || die "missing $*; install it (apt-get install $*)"
  if [ "$APT_UPDATED" = 0 ]; then apt-get update -qq >&2; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}
[ -x /usr/bin/time ] || apt_install time
ctags --version 2>/dev/null | grep -q 'Universal Ctags' || apt_install universal-ctags
for t in git tar pip npm cargo; do command -v "$t" >/dev/null || die "needs $t on PATH"; done
TIME=/usr/bin/time

# ---- Build -------------------------------------------------------------------------
SNO="${SNO_BIN:-$ROOT/target/release/sno}"
# Indexing is measured here, embedding in search.sh: keep sno off the network
# (this machine has none; elsewhere a first run would download a model).
export SNO_OFFLINE=1
FLOOR="${FLOOR_BIN:-$ROOT/target/release/sno-parse-floor}"
if [ "$BUILD" = 1 ] && [ "$CORPUS_ONLY" = 0 ]; then
  log "building release binaries"
  pkgs=()
  [ "$WITH_SNO" = 1 ] && pkgs+=(-p sno)
  [ "$HISTORY_ONLY" = 0 ] && pkgs+=(-p sno-parse-floor)
  (cd "$ROOT" && cargo build --release "${pkgs[@]}")
fi
if [ "$CORPUS_ONLY" = 0 ]; then
  [ "$HISTORY_ONLY" = 1 ] || [ -x "$FLOOR" ] || die "no $FLOOR"
  [ "$WITH_SNO" = 0 ] || [ -x "$SNO" ] || die "no $SNO"
fi

# ---- Downloads (cached) -----------------------------------------------------------
# pip_sdist NAME VERSION: path of the cached sdist, downloaded with pip if missing.
pip_sdist() {
  local dir="$DL/pypi/$1-$2" f
  f=$(ls "$dir"/*.tar.gz 2>/dev/null | head -1 || true)
  if [ -z "$f" ]; then
    mkdir -p "$dir"
    log "pip download $1==$2 (sdist)"
    pip download -q --no-deps --no-binary "$1" -d "$dir" "$1==$2" >&2
    f=$(ls "$dir"/*.tar.gz | head -1)
  fi
  echo "$f"
}
npm_tarball() {
  local dir="$DL/npm/$1-$2"
  if ! ls "$dir"/*.tgz >/dev/null 2>&1; then
    mkdir -p "$dir"
    log "npm pack $1@$2"
    (cd "$dir" && npm pack -q "$1@$2" >/dev/null)
  fi
  ls "$dir"/*.tgz | head -1
}
deb_file() {
  local dir="$DL/deb/$1"
  if ! ls "$dir"/*.deb >/dev/null 2>&1; then
    mkdir -p "$dir"
    log "apt-get download $1"
    (cd "$dir" && { apt-get download -q "$1" >&2 2>/dev/null ||
      { apt-get update -qq >&2 && apt-get download -q "$1" >&2; }; })
  fi
  ls "$dir"/*.deb | head -1
}

# copy_code SRC DEST [find predicates...]: copy the source files under SRC
# (.py .js .go .rs .c .h; no *.min.js, nothing under testdata/) to DEST.
copy_code() {
  local src="$1" dest="$2"; shift 2
  mkdir -p "$dest"
  (cd "$src" && find . -type d -name testdata -prune -o -type f \
      \( -name '*.py' -o -name '*.js' -o -name '*.go' -o -name '*.rs' -o -name '*.c' -o -name '*.h' \) \
      ! -name '*.min.js' "$@" -print0 |
    tar --null -T - -cf -) | tar -xf - -C "$dest"
}

# commit_all DIR MESSAGE INDEX: commit the whole tree with a fixed identity and date.
commit_all() {
  local date=$((1600000000 + $3 * 86400))
  git -C "$1" add -A
  GIT_AUTHOR_DATE="@$date +0000" GIT_COMMITTER_DATE="@$date +0000" \
    git -C "$1" -c user.name=bench -c user.email=bench@localhost -c commit.gpgsign=false \
    commit -q --allow-empty -m "$2"
}
git_init() {
  rm -rf "$1"; mkdir -p "$1"
  git -c init.defaultBranch=main init -q "$1"
  printf '.sno/\n' >> "$1/.git/info/exclude"
}

# ---- Corpus ------------------------------------------------------------------------
build_corpus() {
  local tmp="$CACHE/tmp" c="$CORPUS.new" f
  rm -rf "$tmp" "$c"; mkdir -p "$tmp"
  git_init "$c"
  {
    echo "sno indexing benchmark corpus (rev $CORPUS_REV, quick=$QUICK): source files only, taken from"
  } > "$c/SOURCES.txt"

  # Python (+ its own JS): Django's package directory, from the PyPI sdist.
  f=$(pip_sdist django "$DJANGO_VERSION")
  tar -xzf "$f" -C "$tmp"
  if [ "$QUICK" = 1 ]; then
    copy_code "$tmp/Django-$DJANGO_VERSION/django/db" "$c/python/django/db"
  else
    copy_code "$tmp/Django-$DJANGO_VERSION/django" "$c/python/django" ! -path '*/vendor/*'
  fi
  echo "  python/  Django $DJANGO_VERSION sdist (PyPI), django/ without vendored JS" >> "$c/SOURCES.txt"

  # JavaScript: ESLint's lib/ from the npm tarball.
  f=$(npm_tarball eslint "$ESLINT_VERSION")
  mkdir -p "$tmp/eslint" && tar -xzf "$f" -C "$tmp/eslint"
  if [ "$QUICK" = 1 ]; then
    copy_code "$tmp/eslint/package/lib/linter" "$c/js/eslint/lib/linter"
  else
    for d in linter rules source-code; do
      copy_code "$tmp/eslint/package/lib/$d" "$c/js/eslint/lib/$d"
    done
  fi
  echo "  js/      ESLint $ESLINT_VERSION (npm), lib/" >> "$c/SOURCES.txt"

  # Go: part of the standard library, from Debian's source package.
  f=$(deb_file "$GO_SRC_PKG")
  mkdir -p "$tmp/go" && dpkg-deb -x "$f" "$tmp/go"
  local gosrc; gosrc=$(ls -d "$tmp"/go/usr/share/go-*/src | head -1)
  local godirs=(go regexp); [ "$QUICK" = 1 ] && godirs=(go/ast go/parser go/scanner go/token)
  for d in "${godirs[@]}"; do copy_code "$gosrc/$d" "$c/go/src/$d"; done
  echo "  go/      Go standard library ($GO_SRC_PKG, Debian): ${godirs[*]} (no testdata)" >> "$c/SOURCES.txt"

  # Rust: crates from cargo's registry cache (fetched by sno's own Cargo.lock).
  (cd "$ROOT" && cargo fetch -q) || true
  local reg crate dir
  for crate in "${RUST_CRATES[@]}"; do
    dir=""
    for reg in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do
      dir=$(ls -d "$reg$crate"-[0-9]* 2>/dev/null | sort -V | tail -1 || true)
      [ -n "$dir" ] && break
    done
    [ -n "$dir" ] || die "crate $crate not in cargo's registry cache (run cargo fetch)"
    copy_code "$dir" "$c/rust/$(basename "$dir")"
    echo "  rust/    crate $(basename "$dir") (crates.io, cargo registry cache)" >> "$c/SOURCES.txt"
  done

  # C: the Brotli library vendored in the Brotli PyPI sdist.
  f=$(pip_sdist brotli "$BROTLI_VERSION")
  tar -xzf "$f" -C "$tmp"
  if [ "$QUICK" = 1 ]; then
    copy_code "$tmp/Brotli-$BROTLI_VERSION/c/dec" "$c/c/brotli/dec"
  else
    copy_code "$tmp/Brotli-$BROTLI_VERSION/c" "$c/c/brotli"
  fi
  echo "  c/       Brotli $BROTLI_VERSION sdist (PyPI), c/" >> "$c/SOURCES.txt"

  commit_all "$c" "benchmark corpus rev $CORPUS_REV" 0
  rm -rf "$tmp" "$CORPUS"
  mv "$c" "$CORPUS"
  echo "$CORPUS_REV" > "$CORPUS.ok"
}

# ---- History repositories -----------------------------------------------------------
# history_tree_pip DEST VERSION: the whole pip sdist.
history_tree_pip() {
  local f; f=$(pip_sdist pip "$2")
  tar -xzf "$f" -C "$1" --strip-components=1
}
# history_tree_django DEST VERSION: the sdist's django/ without vendored JS, as
# in the corpus (source files only). Django 4.2.0 is on PyPI as 4.2. The 4.2.12
# sdist (yanked for it) has CRLF line ends in most files; they are made LF again
# (no other release has a CR in these files), so that release does not show as
# two whole-tree rewrites.
history_tree_django() {
  local f tmp="$CACHE/tmp-history" src
  f=$(pip_sdist django "$2")
  rm -rf "$tmp"; mkdir -p "$tmp"
  tar -xzf "$f" -C "$tmp"
  src=("$tmp"/*/django)
  [ "${#src[@]}" = 1 ] && [ -d "${src[0]}" ] || die "no single django/ in $f"
  copy_code "${src[0]}" "$1/django" ! -path '*/vendor/*'
  { grep -rlIZ $'\r' "$1/django" || true; } | xargs -0 -r sed -i 's/\r$//'
  rm -rf "$tmp"
}
# build_history NAME: one commit per version of history NAME, in ${HIST_DIR[NAME]}.
build_history() {
  local name="$1" dir="${HIST_DIR[$1]}" h="${HIST_DIR[$1]}.new" i=0 v vs
  read -ra vs <<< "${HIST_VERSIONS[$name]}"
  git_init "$h"
  for v in "${vs[@]}"; do
    find "$h" -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
    "history_tree_$name" "$h" "$v"
    i=$((i + 1))
    commit_all "$h" "$name $v" "$i"
  done
  rm -rf "$dir"; mv "$h" "$dir"
  echo "$CORPUS_REV ${vs[*]}" > "$dir.ok"
}
# head_lines DIR: lines in the source files (as copy_code selects them) at HEAD.
# The source files the corpora hold (what line and byte counts count).
SOURCE_EXTS=(py js go rs c h)
head_lines() {
  (cd "$1" && git ls-files -z -- "${SOURCE_EXTS[@]/#/*.}" | xargs -0 -r cat | wc -l)
}
# history_bounds DIR: two ratios against HEAD's source, "BYTES LINES".
# BYTES: the bytes of source a full history index must parse (the first
# commit's tree, then each commit's added or modified files); parse time
# follows bytes more than file counts. LINES: the first commit's source
# lines plus the lines each later first-parent commit adds (numstat, renames
# followed): what even an indexer that parsed only changed lines would read.
history_bounds() {
  (cd "$1" && EXTS="${SOURCE_EXTS[*]}" python3 - <<'PY'
import os, subprocess
EXTS = tuple('.' + e for e in os.environ['EXTS'].split())
def git(*a):
    return subprocess.run(('git',) + a, capture_output=True, text=True, check=True).stdout
def size(objs):
    if not objs:
        return 0
    out = subprocess.run(['git', 'cat-file', '--batch-check=%(objectsize)'], input='\n'.join(objs) + '\n',
                         capture_output=True, text=True, check=True).stdout
    return sum(int(x) for x in out.split())
def tree(rev):
    return [l.split('\t', 1) for l in git('ls-tree', '-r', rev).splitlines() if l.endswith(EXTS)]
def lines(rev):
    return sum(git('show', f'{rev}:{path}').count('\n') for _, path in tree(rev))
commits = git('rev-list', '--reverse', '--first-parent', 'HEAD').split()
total_bytes = size([meta.split()[2] for meta, _ in tree(commits[0])])
total_lines = lines(commits[0])
for c in commits[1:]:
    rows = [l.split() for l in git('diff-tree', '-r', '--no-commit-id', '--diff-filter=AMR', c).splitlines()]
    total_bytes += size([r[3] for r in rows if r[-1].endswith(EXTS)])
    for row in git('diff', '--numstat', '-M', f'{c}^', c).splitlines():
        added, _, path = row.split('\t', 2)
        if added != '-' and path.rstrip('}').endswith(EXTS):
            total_lines += int(added)
head_bytes = size([meta.split()[2] for meta, _ in tree('HEAD')])
print('%.2f %.2f' % (total_bytes / max(1, head_bytes), total_lines / max(1, lines('HEAD'))))
PY
  )
}

mkdir -p "$CACHE"
if [ "$HISTORY_ONLY" = 0 ] && [ "$(cat "$CORPUS.ok" 2>/dev/null)" != "$CORPUS_REV" ]; then
  log "assembling corpus in $CORPUS"
  build_corpus
fi
if [ "$WITH_HISTORY" = 1 ]; then
  for n in "${HISTORIES[@]}"; do
    if [ "$(cat "${HIST_DIR[$n]}.ok" 2>/dev/null)" != "$CORPUS_REV ${HIST_VERSIONS[$n]}" ]; then
      log "assembling history repository $n in ${HIST_DIR[$n]}"
      build_history "$n"
    fi
  done
fi

if [ "$CORPUS_ONLY" = 1 ]; then
  if [ "$HISTORY_ONLY" = 0 ]; then
    echo "Corpus: $CORPUS"
    for ext in "${SOURCE_EXTS[@]}"; do
      printf '  *.%-3s %6d files %9d lines\n' "$ext" "$(git -C "$CORPUS" ls-files -- "*.$ext" | wc -l)" \
        "$(cd "$CORPUS" && git ls-files -z -- "*.$ext" | xargs -0 -r cat | wc -l)"
    done
    printf '  total %6d files %9d lines\n' "$(git -C "$CORPUS" ls-files | wc -l)" \
      "$(cd "$CORPUS" && git ls-files -z | xargs -0 cat | wc -l)"
  fi
  if [ "$WITH_HISTORY" = 1 ]; then
    for n in "${HISTORIES[@]}"; do
      h="${HIST_DIR[$n]}"
      echo "History ${HIST_LABEL[$n]}: $h, $(git -C "$h" rev-list --count HEAD) commits," \
        "$(git -C "$h" ls-files | wc -l) files and $(head_lines "$h") source lines at HEAD"
      git -C "$h" log --shortstat --format='  %s' | paste - - - | sed 's/\t\+/ /g'
    done
  fi
  exit 0
fi

# ---- Measurement -------------------------------------------------------------------
# The tools are timed in rounds (each round runs every tool once) rather than
# all runs of one tool and then the next: this VM's speed drifts over minutes,
# and back-to-back blocks compared one period with another.
declare -A WALL CPU RSS ROUND_WALL
ROUND=0
# measure [--fresh DIR] NAME CMD...: one timed run of CMD (deleting DIR/.sno first
# with --fresh); keeps the fastest run's WALL/CPU/RSS[NAME] and its stdout in
# $CACHE/out-NAME.txt, and this round's wall in ROUND_WALL[NAME:ROUND].
measure() {
  local fresh=""
  if [ "$1" = --fresh ]; then fresh="$2"; shift 2; fi
  local name="$1"; shift
  local tf="$CACHE/time-$name.txt" out="$CACHE/out-$name.txt"
  # The deleted database's blocks are synced before the clock starts: freeing
  # them is not the next run's work (it cost the run's first sync ~50 ms).
  [ -z "$fresh" ] || { rm -rf "$fresh/.sno"; sync; }
  log "$name (round $ROUND/$RUNS): $*"
  if ! "$TIME" -f "%e %U %S %M" -o "$tf" "$@" > "$out.run" 2> "$CACHE/err-$name.txt"; then
    cat "$CACHE/err-$name.txt" >&2; die "$name failed"
  fi
  read -r wall user sys rss < <(tail -1 "$tf")
  ROUND_WALL[$name:$ROUND]=$wall
  if [ -z "${WALL[$name]:-}" ] || awk -v a="$wall" -v b="${WALL[$name]}" 'BEGIN { exit !(a < b) }'; then
    WALL[$name]=$wall
    CPU[$name]=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    RSS[$name]=$(awk -v k="$rss" 'BEGIN { printf "%.0f", k / 1024 }')
    mv "$out.run" "$out"
  fi
  rm -f "$out.run"
}
# round_ratio A B: the median over rounds of A's wall / B's wall in the same round.
round_ratio() {
  local r
  for ((r = 1; r <= RUNS; r++)); do
    awk -v a="${ROUND_WALL[$1:$r]}" -v b="${ROUND_WALL[$2:$r]}" 'BEGIN { if (b > 0) printf "%.4f\n", a / b }'
  done | sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) printf "%.2f", v[(NR + 1) / 2]; else printf "%.2f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# CPU ticks of the machine: total and steal (time a VM's host gave to others;
# it stretches wall times without costing CPU time, so it is reported).
cpu_ticks() { awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print t, $9 }' /proc/stat; }
steal_since() { read -r t1 s1 < <(cpu_ticks); awk -v t0="$1" -v s0="$2" -v t1="$t1" -v s1="$s1" 'BEGIN { if (t1 > t0) printf "%.0f", 100 * (s1 - s0) / (t1 - t0); else print 0 }'; }
read -r TICKS0 STEAL0 < <(cpu_ticks)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
floor_get() { awk -v k="$1" '$1 == k { print $2 }' "$CACHE/out-floor.txt"; }
# json_get KEY FILE: a top-level number from the pretty-printed `sno init --json` output.
json_get() {
  local v; v=$(sed -n "s/^  \"$1\": \([0-9.]*\),\{0,1\}\$/\1/p" "$2" | head -1)
  echo "${v:-?}"
}
# warm DIR: read the work tree and the git objects once, so no run pays for the first read.
warm() {
  (cd "$1" && git ls-files -z | xargs -0 -r cat > /dev/null)
  find "$1/.git" -type f -print0 | xargs -0 -r cat > /dev/null
}

if [ "$HISTORY_ONLY" = 0 ]; then
  warm "$CORPUS"
  CTAGS_OUT="$CACHE/tags"
  for ((ROUND = 1; ROUND <= RUNS; ROUND++)); do
    measure floor "$FLOOR" "$CORPUS"
    measure assno "$FLOOR" --as-sno "$CORPUS"
    measure ctags ctags -R --exclude=.git --exclude=.sno -f "$CTAGS_OUT" "$CORPUS"
    if [ "$WITH_SNO" = 1 ]; then
      measure --fresh "$CORPUS" sno "$SNO" init --history 0 "$CORPUS"
    fi
  done
  # Leaving literal tables out of parsing must change no fact of any file.
  "$FLOOR" --check-tables "$CORPUS" > "$CACHE/out-tables.txt" ||
    die "facts differ with literal tables left out (see above)"
  TABLES_MSG="$(awk '$1 == "files_with_tables" { n = $2 } $1 == "bytes_left_out" { b = $2 } END { printf "%d files with literal tables (%d KB left out of parsing), the same facts as parsed whole", n, b / 1024 }' "$CACHE/out-tables.txt")"
  FILES=$(floor_get files) LINES=$(floor_get lines) BYTES=$(floor_get bytes)
  PARSE_WALL=$(floor_get parse_wall_s) FAILS=$(floor_get parse_failures)
  CTAGS_TAGS=$(grep -vc '^!_TAG_' "$CTAGS_OUT" || true)

  # ---- Report (corpus) -----------------------------------------------------------------
  row() { printf '| %-28s | %7s | %9s | %8s | %8s | %8s |\n' "$@"; }
  TABLE="$CACHE/table.md"
  {
    row "tool" "files" "lines" "wall s" "CPU s" "peak MB"
    row "---" "---:" "---:" "---:" "---:" "---:"
    [ "$WITH_SNO" = 1 ] && row "sno init --history 0" "$FILES" "$LINES" "${WALL[sno]}" "${CPU[sno]}" "${RSS[sno]}"
    row "ctags -R (universal-ctags)" "$FILES" "$LINES" "${WALL[ctags]}" "${CPU[ctags]}" "${RSS[ctags]}"
    row "parse floor (tree-sitter)" "$FILES" "$LINES" "${WALL[floor]}" "${CPU[floor]}" "${RSS[floor]}"
    row "parsing as sno parses" "$FILES" "$LINES" "${WALL[assno]}" "${CPU[assno]}" "${RSS[assno]}"
  } > "$TABLE"

  echo
  echo "Corpus: $CORPUS ($FILES files, $LINES lines, $((BYTES / 1024 / 1024)) MiB)"
  awk '$1 ~ /^lang\./ { sub("lang.", "", $1); printf "  %-12s %6d files %9d lines\n", $1, $2, $3 }' "$CACHE/out-floor.txt"
  echo "Parse floor: parse-only wall ${PARSE_WALL}s on $(floor_get threads) threads, $FAILS parse failures"
  echo "ctags: $CTAGS_TAGS tags"
  echo "Literal tables: $TABLES_MSG"
  echo
  cat "$TABLE"
  echo
  RATIOS=""
  if [ "$WITH_SNO" = 1 ]; then
    RATIOS=$(
      echo "- sno / parse floor: $(ratio "${WALL[sno]}" "${WALL[floor]}")x wall, $(ratio "${CPU[sno]}" "${CPU[floor]}")x CPU (best runs); median of the $RUNS rounds' wall ratios: $(round_ratio sno floor)x"
      echo "- sno / ctags: $(ratio "${WALL[sno]}" "${WALL[ctags]}")x wall, $(ratio "${CPU[sno]}" "${CPU[ctags]}")x CPU (best runs); median of the rounds' wall ratios: $(round_ratio sno ctags)x"
      echo "- sno / parsing as sno parses (tables left out, scratch trees; what sno spends beyond is extraction, resolution and storage): $(ratio "${WALL[sno]}" "${WALL[assno]}")x wall (best runs); median of the rounds' wall ratios: $(round_ratio sno assno)x"
      echo "- sno peak RSS per 500k lines: $(awk -v m="${RSS[sno]}" -v l="$LINES" 'BEGIN { printf "%.0f", m * 500000 / l }') MB"
    )
  else
    RATIOS=$(
      echo "- parse floor / ctags: $(ratio "${WALL[floor]}" "${WALL[ctags]}")x wall, $(ratio "${CPU[floor]}" "${CPU[ctags]}")x CPU"
      echo "- parsing as sno parses / ctags: $(ratio "${WALL[assno]}" "${WALL[ctags]}")x wall"
      echo "- parse floor peak RSS per 500k lines: $(awk -v m="${RSS[floor]}" -v l="$LINES" 'BEGIN { printf "%.0f", m * 500000 / l }') MB"
    )
  fi
  echo "$RATIOS"
fi

# ---- History: `sno init --history 0` against `sno init`, on each history repository ----
HIST=""
if [ "$WITH_HISTORY" = 1 ]; then
  echo
  declare -A NCOMMITS HLINES PARSED0 PARSEDH REPARSED SAME
  status_digest() { "$SNO" status --json "$1" | sed -n 's/^  "views_digest": "\([0-9a-f]*\)",\{0,1\}$/\1/p'; }
  for n in "${HISTORIES[@]}"; do
    h="${HIST_DIR[$n]}"
    NCOMMITS[$n]=$(git -C "$h" rev-list --count HEAD)
    HLINES[$n]=$(head_lines "$h")
    echo "History repository ${HIST_LABEL[$n]}: $h (${NCOMMITS[$n]} commits, ${HLINES[$n]} source lines at HEAD)"
  done
  if [ "$WITH_SNO" = 1 ]; then
    # Timed with --json (summary format only) to read files_parsed and commits_indexed.
    for n in "${HISTORIES[@]}"; do
      h="${HIST_DIR[$n]}"
      warm "$h"
      oldest=$(git -C "$h" rev-list --first-parent --max-count=200 HEAD | tail -1)
      for ((ROUND = 1; ROUND <= RUNS; ROUND++)); do
        measure --fresh "$h" "h0-$n" "$SNO" init --json --history 0 "$h"
        measure --fresh "$h" "h0old-$n" "$SNO" init --json --history 0 --rev "$oldest" "$h"
        measure --fresh "$h" "hdef-$n" "$SNO" init --json "$h"
      done
      # The history run reparses edited files from their previous trees; its
      # views at HEAD must equal a fresh index of HEAD.
      DIGEST_HIST=$(status_digest "$h")
      rm -rf "$h/.sno"
      "$SNO" init --history 0 "$h" > /dev/null 2>&1 || die "sno init --history 0 $h failed"
      if [ "$DIGEST_HIST" = "$(status_digest "$h")" ] && [ -n "$DIGEST_HIST" ]; then SAME[$n]=yes; else
        SAME[$n]=NO; echo "WARNING: on $n, HEAD's views after the history differ from a fresh index" >&2
      fi
      PARSED0[$n]=$(json_get files_parsed "$CACHE/out-h0-$n.txt")
      PARSEDH[$n]=$(json_get files_parsed "$CACHE/out-hdef-$n.txt")
      REPARSED[$n]=$(json_get files_reparsed "$CACHE/out-hdef-$n.txt")
      c=$(json_get commits_indexed "$CACHE/out-hdef-$n.txt")
      [ "$c" = "${NCOMMITS[$n]}" ] ||
        echo "WARNING: sno init indexed $c of the ${NCOMMITS[$n]} commits of $n" >&2
    done
    hrow() { printf '| %-36s | %7s | %10s | %8s | %10s | %7s | %9s | %7s | %8s | %5s | %7s | %7s |\n' "$@"; }
    MET=()
    HIST=$(
      hrow "history repository" "commits" "HEAD lines" "files h0" "files hist" "wall h0" "wall hist" \
        "CPU h0" "CPU hist" "MB h0" "MB hist" "hist/h0"
      hrow "---" "---:" "---:" "---:" "---:" "---:" "---:" "---:" "---:" "---:" "---:" "---:"
      for n in "${HISTORIES[@]}"; do
        hrow "${HIST_LABEL[$n]}" "${NCOMMITS[$n]}" "${HLINES[$n]}" "${PARSED0[$n]}" "${PARSEDH[$n]}" \
          "${WALL[h0-$n]}" "${WALL[hdef-$n]}" "${CPU[h0-$n]}" "${CPU[hdef-$n]}" \
          "${RSS[h0-$n]}" "${RSS[hdef-$n]}" "$(ratio "${WALL[hdef-$n]}" "${WALL[h0-$n]}")x"
      done
      echo
      echo "h0: \`sno init --history 0\` (HEAD only); hist: \`sno init\` (default: the last 200" \
        "first-parent commits, here all of them). files: files parsed; wall and CPU (user + sys)" \
        "in s; peak RSS in MB; hist/h0: wall ratio, target < 2x."
      echo
      for n in "${HISTORIES[@]}"; do
        r=$(ratio "${WALL[hdef-$n]}" "${WALL[h0-$n]}")
        if awk -v r="$r" 'BEGIN { exit !(r < 2) }'; then verdict="meets the target"; else verdict="misses the target"; fi
        read -r bytes_r lines_r < <(history_bounds "${HIST_DIR[$n]}")
        echo "- ${HIST_LABEL[$n]}: history parses $(ratio "${PARSEDH[$n]}" "${PARSED0[$n]}")x the files of HEAD" \
          "(${bytes_r}x the bytes), ${REPARSED[$n]} of them from their previous tree;" \
          "even parsing only the lines each commit changes would read ${lines_r}x HEAD's lines;" \
          "the oldest commit alone costs $(ratio "${WALL[h0old-$n]}" "${WALL[h0-$n]}")x HEAD;" \
          "HEAD's views after the history equal a fresh index: ${SAME[$n]};" \
          "costs ${r}x wall (median of rounds $(round_ratio "hdef-$n" "h0-$n")x), $(ratio "${CPU[hdef-$n]}" "${CPU[h0-$n]}")x CPU, $(ratio "${RSS[hdef-$n]}" "${RSS[h0-$n]}")x peak RSS: $verdict (< 2x)"
      done
    )
    for n in "${HISTORIES[@]}"; do
      r=$(ratio "${WALL[hdef-$n]}" "${WALL[h0-$n]}")
      if awk -v r="$r" 'BEGIN { exit !(r < 2) }'; then MET+=("$n"); else
        echo "WARNING: history costs ${r}x on $n (target < 2x)" >&2
      fi
    done
    HIST+=$'\n'"- target < 2x met by ${#MET[@]} of ${#HISTORIES[@]}: ${MET[*]:-none}"
    echo
    echo "$HIST"
  fi
fi

# ---- Markdown for a README ------------------------------------------------------------
STEAL=$(steal_since "$TICKS0" "$STEAL0")
CPU_MODEL=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
MD="$CACHE/last-index.md"
{
  echo "### Indexing benchmark"
  echo
  echo "\`ops/bench/index.sh$([ "$QUICK" = 1 ] && echo " --quick")$([ "$HISTORY_ONLY" = 1 ] && echo " --history-only")\`" \
    "at sno $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%Y-%m-%d);" \
    "$(nproc) cores ($CPU_MODEL), $(awk '/MemTotal/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo) GiB; best of $RUNS interleaved round(s), warm page cache;" \
    "CPU steal by the VM host during the runs: ${STEAL}%."
  if [ "$HISTORY_ONLY" = 0 ]; then
    echo "Corpus: $FILES files, $LINES lines of real code nobody here wrote:" \
      "$(awk '$1 ~ /^lang\./ { sub("lang.", "", $1); printf "%s%s %dk", sep, $1, $3 / 1000; sep = ", " }' "$CACHE/out-floor.txt")."
    echo
    cat "$TABLE"
    echo
    echo "$RATIOS"
  fi
  if [ -n "$HIST" ]; then echo; echo "$HIST"; fi
} > "$MD"
echo
echo "---- Markdown (also in $MD) ----"
cat "$MD"
