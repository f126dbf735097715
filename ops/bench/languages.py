#!/usr/bin/env python3
"""Definition recall and precision per language against universal-ctags
(issue 18), and index time against the parse floor. For the languages ctags
5.9 does not read, the reference is another parser nobody here wrote and that
does not use tree-sitter, run through `--ref LANG=COMMAND` (see REFERENCE);
"ctags" below stands for the reference.

For each language: the files of that language from one public repository
nobody here wrote are copied into a fresh git repository (one commit), which
`sno init --history 0` indexes and `ctags` reads. Definitions compared are
functions, methods, classes, structs, interfaces, traits and modules (the
kinds both tools name); a ctags tag and a sno symbol match when their names
are equal and the tag's line lies in the symbol's span (ctags gives the
line of the name, sno the span of the whole definition).

recall    = ctags tags matched by a sno symbol / ctags tags
precision = sno symbols matched by a ctags tag / sno symbols
recall'   = the same recall over the tags that are not ctags' mistakes

A ctags mistake is recognised by a rule on the tag's own source line (see
MISTAKES): a Kotlin loop variable or lambda parameter tagged as a method, a
JavaScript object literal or call tagged as a class, a Pascal method of a
generic class tagged with the class's name, a Dart call read as a local
function by the ANTLR grammar's error recovery. The tags each rule sets aside
are counted and shown, and the target is judged on recall'.

A difference is not hidden: the first misses each way are printed with their
line, and the known cases where ctags is the one that is wrong are named
(see EXPLAIN).

Usage: languages.py --sno BIN --floor BIN --cache DIR [--ref LANG=COMMAND]... SPEC...
  SPEC is LANG=REPO_DIR (a clone); LANG is sno's language name. COMMAND is
  run as `COMMAND ROOT FILE...` in ROOT and prints one JSON object per line,
  {"path", "name", "line", "kind"}, with ctags' kind names.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

# sno language -> (ctags language, file extensions)
LANGS = {
    "python": ("Python", [".py"]),
    "go": ("Go", [".go"]),
    "java": ("Java", [".java"]),
    "c": ("C", [".c"]),
    "cpp": ("C++", [".cc", ".cpp", ".h", ".hpp"]),
    "ruby": ("Ruby", [".rb"]),
    "javascript": ("JavaScript", [".js"]),
    "typescript": ("TypeScript", [".ts"]),
    "rust": ("Rust", [".rs"]),
    "csharp": ("C#", [".cs"]),
    "php": ("PHP", [".php"]),
    "kotlin": ("Kotlin", [".kt"]),
    "bash": ("Sh", [".sh"]),
    "lua": ("Lua", [".lua"]),
    "elixir": ("Elixir", [".ex", ".exs"]),
    "erlang": ("Erlang", [".erl", ".hrl"]),
    "haskell": ("Haskell", [".hs"]),
    "julia": ("Julia", [".jl"]),
    "objc": ("ObjectiveC", [".m"]),
    "ocaml": ("OCaml", [".ml"]),
    "pascal": ("Pascal", [".pas", ".dpr"]),
    "r": ("R", [".R", ".r"]),
    "elm": ("Elm", [".elm"]),
    "sql": ("SQL", [".sql"]),
    "scala": ("Scala", [".scala"]),
    "solidity": ("Solidity", [".sol"]),
    "swift": ("Swift", [".swift"]),
    "zig": ("Zig", [".zig"]),
    "dart": ("Dart", [".dart"]),
    "hcl": ("HCL", [".tf"]),
    "groovy": ("Groovy", [".groovy", ".gradle"]),
    "gleam": ("Gleam", [".gleam"]),
    "nix": ("Nix", [".nix"]),
}

# Languages ctags 5.9 has no parser for, and the parser that stands in for
# it (the command comes from languages.sh through --ref; all under
# languages-ref/).
REFERENCE = {
    "scala": "scalameta (npm scalameta-parsers; ref.js)",
    "solidity": "the Solidity project's parser (npm @solidity-parser/parser; ref.js)",
    "zig": "the Zig compiler's std.zig.Ast (PyPI ziglang; ref-zig.zig)",
    "hcl": "python-hcl2's Lark grammar (PyPI python-hcl2; ref-hcl.py)",
    "groovy": "the Groovy 4 compiler (its jar from npm npm-groovy-lint; ref-groovy.groovy)",
    "gleam": "the Gleam compiler's parser (gleam-core; ref-gleam/)",
    "nix": "rnix (crates.io rnix; ref-nix/)",
    "dart": "grammars-v4's ANTLR grammar of the Dart 2.15 spec (RefDart.java)",
    "swift": "grammars-v4's ANTLR grammar of Swift 5 (RefSwift.java)",
}

DEEP = {"python", "go", "java", "c", "cpp", "ruby", "javascript", "typescript",
        "rust", "csharp", "php", "kotlin", "swift", "scala"}

# The compared sorts, as the issue names them: functions, methods, classes,
# structs and interfaces (with their languages' names for them). Modules,
# types, macros, constants and fields are left out on both sides.
CTAGS_KINDS = {
    "function", "method", "class", "struct", "interface", "trait",
    "procedure", "singletonMethod", "constructor", "func", "implementation",
    "protocol", "typeclass",
}
# ctags kinds left out per language, where ctags' kind means something else.
CTAGS_SKIP = {
    # Rust's "implementation" is an impl block, not a type.
    "Rust": {"implementation"},
    # Elixir's protocols and their implementations are modules.
    "Elixir": {"protocol", "implementation"},
    # Haskell's "constructor" is a data constructor, not a function.
    "Haskell": {"constructor"},
    "OCaml": {"constructor"},
    "Elm": {"constructor"},
}
# ctags kinds added per language: Python's and Ruby's "member" is a method
# (elsewhere it is a field).
CTAGS_EXTRA = {"Python": {"member"}, "SQL": {"table", "view"}}
SNO_KINDS = {"function", "method", "constructor", "class", "struct",
             "interface", "trait"}
# sno kinds added per language: HCL has no functions or types; its named
# top-level blocks are what it defines (resource/data: struct; variable,
# output, module, provider: variable), and the reference lists them all.
SNO_EXTRA = {"hcl": {"variable"}}

# Known cases where ctags and sno differ for a reason ctags' reading gives.
EXPLAIN = {
    "Sh": "ctags' Sh parser also tags `alias` and script names; sno only "
          "functions",
    "Julia": "ctags tags each method of a short-form `f(x) = ...` only when "
             "at top level",
    "R": "ctags tags every `name <- function` also inside other functions",
    "Haskell": "ctags tags each type signature and each equation; sno the "
               "function once (its first equation); ctags also takes type "
               "names of a multi-line signature for functions",
    "OCaml": "ctags tags `let` bindings inside expressions as functions",
    "C": "ctags takes macro invocations such as Unity's `TEST(group, name)` "
         "for function definitions",
    "JavaScript": "ctags also tags named function expressions passed as "
                  "arguments or returned, object-literal members and objects "
                  "assigned to variables (as classes); sno records "
                  "declarations, assigned functions and class members only",
    "Pascal": "ctags names a method of a generic class by the class "
              "(`function TGroup<T>.Route` is tagged `TGroup`), and tags the "
              "first parameter of a procedure type as a procedure",
    "Erlang": "ctags' Erlang parser takes a word at the start of a line inside "
              "a multi-line string for a function head",
}


def run(cmd, cwd=None, check=True):
    return subprocess.run(cmd, cwd=cwd, check=check, capture_output=True,
                          text=True)


def corpus(lang, src, cache):
    """A git repository holding only `lang`'s files of `src`."""
    _, exts = LANGS[lang]
    dest = os.path.join(cache, "lang-" + lang)
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    n = 0
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if d not in (".git", ".sno", "node_modules")]
        for f in files:
            if any(f.endswith(e) for e in exts):
                p = os.path.join(root, f)
                if os.path.islink(p) or os.path.getsize(p) > 1_000_000:
                    continue
                rel = os.path.relpath(p, src)
                os.makedirs(os.path.join(dest, os.path.dirname(rel)), exist_ok=True)
                shutil.copyfile(p, os.path.join(dest, rel))
                n += 1
    run(["git", "init", "-q"], cwd=dest)
    run(["git", "add", "-A"], cwd=dest)
    run(["git", "-c", "user.name=bench", "-c", "user.email=b@x", "commit",
         "-qm", "corpus"], cwd=dest)
    return dest, n


def _in_lambda_params(name, line):
    """Whether `name` is a parameter of a lambda opened on `line`
    (`{ a, (b, c) -> ...`)."""
    for m in re.finditer(r"\{([^{}]*?)->", line):
        if re.search(r"(^|[\s,(])" + re.escape(name) + r"\s*[,):]", m.group(1) + ")"):
            return True
    return False


def _dart_call(name, line):
    """Whether `name` is called on `line` rather than declared: after a `.`
    or a `(`, or at the start of the line with its arguments closed and no
    body (`{`, `=>`) after them (`expect(a.equals(b), isTrue);`)."""
    m = re.search(r"(^\s*|[.(]\s*)" + re.escape(name) + r"\s*\(", line)
    if not m:
        return False
    if m.group(1).strip():
        return True
    depth, start = 0, m.end() - 1
    for j in range(start, len(line)):
        depth += (line[j] == "(") - (line[j] == ")")
        if depth == 0:
            return not re.match(r"\s*(async\*?|sync\*)?\s*(\{|=>)", line[j + 1:])
    return bool(line[start + 1:].strip())


# Rules recognising a ctags tag as ctags' mistake, from the tag's own line:
# ctags language -> [(reason, predicate(name, kind, line))].
MISTAKES = {
    "Kotlin": [
        ("a loop variable tagged as a method",
         lambda n, k, l: re.search(r"\bfor\s*\(\s*(\([^)]*\b" + re.escape(n) + r"\b[^)]*\)|"
                                   + re.escape(n) + r")\s+in\b", l) is not None),
        ("a lambda parameter tagged as a method",
         lambda n, k, l: "->" in l and _in_lambda_params(n, l)),
    ],
    "JavaScript": [
        ("an object literal or an expression tagged as a class",
         lambda n, k, l: k == "class" and not re.search(r"\b(class|function)\b|=>", l)),
        ("a call tagged as a definition",
         lambda n, k, l: k in ("method", "function") and not re.search(r"\bfunction\b|=>|\{", l)),
    ],
    # The Dart grammar (Dart 2.15) recovers from syntax it does not know
    # (super parameters) by reading the calls that follow as local functions.
    "Dart": [
        ("a call read as a local function after a syntax error",
         lambda n, k, l: k == "function" and _dart_call(n, l)),
    ],
    "Pascal": [
        ("a method of a generic class (or with an escaped name, `&Type`) tagged "
         "with its class's name",
         lambda n, k, l: re.search(re.escape(n.rstrip(".")) + r"(<[^>]*>)?\.&?", l) is not None
         and not re.search(r"\.\s*" + re.escape(n) + r"\b", l)),
    ],
}


def mistake(ctags_lang, name, kind, line):
    for reason, rule in MISTAKES.get(ctags_lang, []):
        if rule(name, kind, line):
            return reason
    return None


def ls_files(dest):
    return [f for f in run(["git", "ls-files", "-z"], cwd=dest).stdout.split("\0") if f]


def ref_tags(lang, dest, command):
    files = ls_files(dest)
    out = run(shlex.split(command) + [dest] + files, cwd=dest, check=False)
    if out.returncode != 0:
        sys.exit(f"{lang}: {command} failed: {out.stderr[-400:]}")
    # What the reference says on stderr (a file it could not read, or read
    # with syntax errors) is printed with the language's results.
    unread = [l for l in out.stderr.splitlines() if l.strip()]
    tags = [(t["path"], t["name"], t["line"], t["kind"])
            for t in map(json.loads, out.stdout.splitlines())]
    return files, tags, unread


def ctags_tags(lang, dest):
    ctags_lang, exts = LANGS[lang]
    files = ls_files(dest)
    out = run(["ctags", "--output-format=json", "--fields=+nKl", "-f", "-",
               "--languages=" + ctags_lang, "--language-force=" + ctags_lang]
              + files, cwd=dest, check=False).stdout
    skip = CTAGS_SKIP.get(ctags_lang, set())
    tags = []
    for line in out.splitlines():
        try:
            t = json.loads(line)
        except ValueError:
            continue
        kind = t.get("kind", "")
        # Anonymous functions get made-up names (`AnonymousFunction0a1b`,
        # `<lambda>`): nothing a user could look up by name.
        name = t.get("name", "")
        if name.startswith(("AnonymousFunction", "anonFunc", "__anon", "<")):
            continue
        # Operators and `let () =` are no names to look up; a keyword is
        # ctags misreading a line (`class` in a Haskell class head).
        if not any(c.isalnum() for c in name) or name in ("class", "instance"):
            continue
        name = name.strip("`")
        # ctags spells `operator ()`; sno `operator()` (but `operator bool`).
        rest = name[len("operator "):]
        if name.startswith("operator ") and rest and not rest[0].isalnum():
            name = "operator" + rest.replace(" ", "")
        wanted = kind in CTAGS_KINDS or kind in CTAGS_EXTRA.get(ctags_lang, set())
        if wanted and kind not in skip and "line" in t:
            # An Objective-C method is named by its selector
            # (`initWithURL:options:`); sno names it by the first part.
            if ctags_lang == "ObjectiveC" and ":" in name:
                name = name.split(":", 1)[0]
            tags.append((t["path"], name, t["line"], kind))
    return files, tags


def flatten(nodes, path, out):
    for n in nodes:
        out.append((path, n["name"], n["line"], n.get("end_line", n["line"]),
                    n["kind"]))
        flatten(n.get("children", []), path, out)


def sno_symbols(sno, dest, files):
    syms = []
    for f in files:
        r = run([sno, "outline", f, "--json"], cwd=dest, check=False)
        if r.returncode != 0:
            continue
        v = json.loads(r.stdout)
        flatten(v.get("symbols", v.get("outline", [])), f, syms)
    return syms


def timed(cmd, cwd):
    t = time.perf_counter()
    r = run(cmd, cwd=cwd, check=False)
    return time.perf_counter() - t, r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sno", required=True)
    ap.add_argument("--floor", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--ref", action="append", default=[],
                    help="LANG=COMMAND: the reference for a language ctags does not read")
    ap.add_argument("--show", type=int, default=int(os.environ.get("SHOW", "4")))
    ap.add_argument("specs", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.cache, exist_ok=True)
    refs = dict(r.split("=", 1) for r in a.ref)
    rows = []
    for spec in a.specs:
        lang, src = spec.split("=", 1)
        dest, nfiles = corpus(lang, src, a.cache)
        if nfiles == 0:
            print(f"{lang}: no files in {src}", file=sys.stderr)
            continue
        init_s, r = timed([a.sno, "init", "--history", "0", "--json"], dest)
        if r.returncode != 0:
            print(f"{lang}: sno init failed: {r.stderr[-400:]}", file=sys.stderr)
            continue
        floor_s, fl = timed([a.floor, "--as-sno", dest], dest)
        lines = sum(1 for f in ls_files(dest)
                    for _ in open(os.path.join(dest, f), "rb"))
        unread = []
        if lang in REFERENCE:
            if lang not in refs:
                print(f"{lang}: no --ref {lang}=COMMAND given", file=sys.stderr)
                continue
            files, tags, unread = ref_tags(lang, dest, refs[lang])
        else:
            files, tags = ctags_tags(lang, dest)
        syms = sno_symbols(a.sno, dest, files)
        by_name = {}
        for s in syms:
            by_name.setdefault((s[0], s[1]), []).append(s)
        tags_by_name = {}
        for t in tags:
            tags_by_name.setdefault((t[0], t[1]), []).append(t)
        matched_syms = set()
        missed = []
        hit = by_unique = 0
        set_aside, hit_kept = {}, 0
        texts = {}
        for (path, name, line, kind) in tags:
            if path not in texts:
                with open(os.path.join(dest, path), encoding="utf-8", errors="replace") as fh:
                    texts[path] = fh.read().split("\n")
            src_line = texts[path][line - 1] if 0 < line <= len(texts[path]) else ""
            why_not = mistake(LANGS[lang][0], name, kind, src_line)
            if why_not:
                set_aside.setdefault(why_not, [0, 0])[0] += 1
            cands = by_name.get((path, name), [])
            if not cands:
                # ctags qualifies some names (`block.execAll` in Lua,
                # `TFoo.Bar` in Pascal); sno names the last segment.
                last = name.replace(":", ".").rsplit(".", 1)[-1]
                cands = by_name.get((path, last), [])
            m = [s for s in cands if s[2] <= line <= s[3]]
            if not m and len(cands) == 1:
                # One definition of the name in the file, on another line
                # than ctags gives: a Haskell type signature above its
                # equations, each equation of it, a line ctags starts at.
                m = cands
                by_unique += 1
            if m:
                hit += 1
                hit_kept += not why_not
                if why_not:
                    set_aside[why_not][1] += 1
                matched_syms.update(m)
            elif not why_not:
                missed.append((path, line, name, kind))
        # Recall counts a ctags definition found whatever sno calls its kind
        # (`enum class` is a class to ctags, an enum to sno); precision is
        # over sno's functions, methods, constructors and types.
        compared = [s for s in syms if s[4] in SNO_KINDS | SNO_EXTRA.get(lang, set())]
        extra = [s for s in compared if s not in matched_syms]
        recall = hit / len(tags) if tags else float("nan")
        kept = len(tags) - sum(n for n, _ in set_aside.values())
        recall_kept = hit_kept / kept if kept else float("nan")
        precision = (len(compared) - len(extra)) / len(compared) if compared else float("nan")
        rows.append((lang, nfiles, lines, len(tags), len(compared), recall,
                     recall_kept, precision, init_s, floor_s))
        print(f"\n== {lang} ({src}): {nfiles} files, {lines} lines; "
              f"ctags {len(tags)} tags, sno {len(compared)} symbols; {by_unique} "
              "matched by a name unique in its file on both sides")
        if lang in REFERENCE:
            print(f"   reference: {REFERENCE[lang]}")
        for msg in unread[:a.show]:
            print(f"   reference reports: {msg}")
        if len(unread) > a.show:
            print(f"   reference reports: ... {len(unread)} messages in all")
        for reason, (count, found) in sorted(set_aside.items()):
            print(f"   set aside as ctags' mistake: {count} x {reason} "
                  f"(sno has a definition there for {found})")
        for (path, line, name, kind) in missed[:a.show]:
            print(f"   ctags only: {path}:{line} {kind} {name}")
        for s in extra[:a.show]:
            print(f"   sno only:   {s[0]}:{s[2]} {s[4]} {s[1]}")
        why = EXPLAIN.get(LANGS[lang][0])
        if why and (missed or extra):
            print(f"   known: {why}")
    print()
    print(f"{'language':11} {'tier':8} {'files':>6} {'lines':>8} {'ctags':>6} "
          f"{'sno':>6} {'recall':>7} {'recall`':>7} {'prec':>6} {'target':>6} "
          f"{'init s':>7} {'floor s':>7}")
    for (lang, nf, nl, nt, ns, rec, rec_kept, prec, init_s, floor_s) in rows:
        tier = "deep" if lang in DEEP else "generic"
        target = 0.95 if tier == "deep" else 0.90
        mark = "ok" if rec_kept >= target else "BELOW"
        print(f"{lang:11} {tier:8} {nf:6} {nl:8} {nt:6} {ns:6} {rec:7.3f} "
              f"{rec_kept:7.3f} {prec:6.3f} {mark:>6} {init_s:7.2f} {floor_s:7.2f}")
    print("\nrecall`: recall over the ctags tags not set aside as ctags' mistakes "
          "(the rules are MISTAKES in languages.py; each run prints what they set aside).")
    print("\ninit s: `sno init --history 0` wall time (process start, model "
          "load, parse, extract, store); floor s: sno-parse-floor --as-sno "
          "(parse only) on the same files.")


if __name__ == "__main__":
    main()
