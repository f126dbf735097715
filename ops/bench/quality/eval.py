#!/usr/bin/env python3
"""Retrieval quality of sno, next to a plain BM25 baseline (issue 16, item 1).

Three query sets, built from public repositories pinned to commits (or, with
--local, from any git repositories at hand):

  (a) docstring -> code: the first sentence of a function's doc comment is the
      query; the doc comments are stripped from the indexed copy, so the words
      must be matched to code.
  (b) identifiers: a name, Class.method, Type.Method, Type::method,
      module::name or pkg.Func; the target is that definition.
  (c) change localization: a real commit's message is the query; the non-test
      source files it modified are the targets; sno answers `at` the commit's
      parent (its journal holds the history), BM25 indexes the parent's files.

sno is driven over MCP (one `sno serve` per repository copy and mode, JSON-RPC
on stdio), in two modes: "hybrid" (the model in SNO_MODEL / --model) and
"lexical" (no model: SNO_MODEL=/nonexistent SNO_OFFLINE=1). BM25 is Okapi
(k1=1.2, b=0.75) over whole function/method bodies (sets a, b: one document
per definition) and over whole files at the parent commit (set c), with the
same identifier-splitting tokenizer for queries and documents.

Definitions and doc comments are read by this script's own parsers for
Python, Go, Rust, Java and JavaScript/TypeScript, and through universal-ctags
(`apt install universal-ctags`) for C, C++, C#, PHP, Kotlin and Ruby: ctags
gives the definitions, the comment above each is its doc (any comment in C
and C++, `/**`, `///` or Ruby's `#` lines elsewhere). Without ctags those
languages give no queries.

It prints R@1/5/10 and MRR@10 per set and language, latencies, the share of
the token budget each answer used, whether ranks depend on `limit`, and
writes everything (every query and its ranks too) to a JSON file.

Only the Python standard library is needed. `pip install tiktoken` makes the
budget figures exact cl100k_base counts (the BPE table is read from tiktoken's
cache or from the tiktoken-rs crate in cargo's registry, never downloaded);
without it they are bytes/4 and say so.

Usage: see ops/bench/quality/README.md, or `eval.py --help`.
"""

import argparse
import ast
import bisect
import collections
import glob
import hashlib
import inspect
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

# Bump when the query generation changes: cached stripped copies are rebuilt.
GEN_VERSION = 1

# The repositories of the full run: medium-sized (12k-60k lines), five
# languages, each pinned. None of them is flask, ripgrep or sqlalchemy.
# `exclude`: path prefixes that are neither targets nor BM25 documents.
REPOS = [
    {"name": "httpx", "repo": "encode/httpx", "commit": "ae1b9f66238f75ced3ced5e4485408435de10768", "lang": "python"},
    {"name": "attrs", "repo": "python-attrs/attrs", "commit": "c1dc5dcba16ed827aa6dcad896b41a3afedb4e32", "lang": "python"},
    {"name": "click", "repo": "pallets/click", "commit": "2c8cd3ac958a7eb316d67f2d316c27086c4c0369", "lang": "python"},
    {"name": "cobra", "repo": "spf13/cobra", "commit": "adbc8813901bba65827259daa8e22ff94ec1f30e", "lang": "go"},
    {"name": "chi", "repo": "go-chi/chi", "commit": "735ae2b87f8c733d616e809ae86e0985c1bc3350", "lang": "go"},
    {"name": "serde_json", "repo": "serde-rs/json", "commit": "827a315bf2198558f0325b07bcc1e2cd973aba2f", "lang": "rust"},
    {"name": "http", "repo": "hyperium/http", "commit": "82db5b8af1e3939678fee88f3c57b72fee7e3a7b", "lang": "rust"},
    {"name": "mocha", "repo": "mochajs/mocha", "commit": "e6b9ee773481fd739ae24caeb42f32ac0b010f95", "lang": "javascript"},
    {"name": "jsoup", "repo": "jhy/jsoup", "commit": "46b620860af930eedc193a705eaf7cea5aec89a6", "lang": "java"},
]

LANG_EXT = {
    ".py": "python",
    ".pyi": "python",
    ".go": "go",
    ".rs": "rust",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".java": "java",
    # Read through universal-ctags (`parse_ctags`): definitions from an
    # independent parser, doc comments from the lines above them.
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".cs": "csharp",
    ".php": "php",
    ".kt": "kotlin",
    ".rb": "ruby",
    # Read by `parse_braced` (universal-ctags 5.9 has no Swift or Scala).
    ".swift": "swift",
    ".scala": "scala",
}

# ctags' language names for the languages `parse_ctags` reads.
CTAGS_LANG = {"c": "C", "cpp": "C++", "csharp": "C#", "php": "PHP", "kotlin": "Kotlin", "ruby": "Ruby"}

TEST_DIRS = {
    "test", "tests", "testing", "__tests__", "spec", "specs", "testdata",
    "test-data", "fixtures", "benches", "bench", "benchmarks", "e2e",
}


def lang_of(path):
    return LANG_EXT.get(os.path.splitext(path)[1].lower())


def is_test(path):
    parts = path.lower().split("/")
    if any(p in TEST_DIRS for p in parts[:-1]):
        return True
    f = parts[-1]
    return (
        f.startswith("test_")
        or f == "conftest.py"
        or f in ("tests.rs", "test.rs")
        or f.endswith(("_test.go", "_test.py", "_tests.py", "_test.rs", "_tests.rs", "test.java", "tests.java"))
        or f.endswith(("test.cs", "tests.cs", "test.php", "test.kt", "tests.kt", "_test.rb", "_spec.rb", "_test.c", "_test.cc", "_test.cpp", "_unittest.cc"))
        or re.search(r"\.(test|spec)\.[cm]?[jt]sx?$", f) is not None
    )


# ---------------------------------------------------------------------------
# Tokenizer (BM25 and the "shares no word with the name" subset)

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def words(text):
    """Identifier-split, lowercase words of length >= 2: `parseHTTPHeader_v2`
    -> parse, http, header, v2 would need digits kept; here: parse http header."""
    return [w.lower() for w in _WORD.findall(text) if len(w) >= 2]


# ---------------------------------------------------------------------------
# Source scanning: comments and string literals of C-like languages


def mask(text, lang):
    """Returns (code, comments): `code` is `text` with comments and string and
    character literals blanked to spaces (newlines kept, so offsets and lines
    are the same), `comments` the (start, end) offsets of each comment."""
    out = list(text)
    comments = []
    n = len(text)
    i = 0
    prev = ""  # last significant code character (JS: regex or division)
    prev_word = ""

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    def scan_quoted(i, q, multiline):
        j = i + 1
        while j < n:
            c = text[j]
            if c == "\\":
                j += 2
                continue
            if c == q:
                return j + 1
            if c == "\n" and not multiline:
                return j
            j += 1
        return n

    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            comments.append((i, j))
            blank(i, j)
            i = j
            continue
        if c == "/" and nxt == "*":
            if lang == "rust":  # block comments nest
                depth, j = 1, i + 2
                while j < n and depth:
                    if text.startswith("/*", j):
                        depth += 1
                        j += 2
                    elif text.startswith("*/", j):
                        depth -= 1
                        j += 2
                    else:
                        j += 1
            else:
                j = text.find("*/", i + 2)
                j = n if j < 0 else j + 2
            comments.append((i, j))
            blank(i, j)
            i = j
            continue
        if lang == "rust" and c in "rb" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'b?r(#*)"', text[i:i + 260])
            if m:
                close = '"' + m.group(1)
                j = text.find(close, i + m.end())
                j = n if j < 0 else j + len(close)
                blank(i, j)
                i = j
                prev = '"'
                continue
        if c == '"':
            if lang == "java" and text.startswith('"""', i):
                j = text.find('"""', i + 3)
                j = n if j < 0 else j + 3
            else:
                j = scan_quoted(i, '"', multiline=(lang == "rust"))
            blank(i, j)
            i = j
            prev = '"'
            continue
        if c == "'":
            if lang in ("javascript", "typescript"):
                j = scan_quoted(i, "'", multiline=False)
            elif lang == "rust":
                if nxt == "\\":
                    j = text.find("'", i + 3)
                    j = n if j < 0 else j + 1
                elif i + 2 < n and text[i + 2] == "'":
                    j = i + 3
                else:  # a lifetime
                    i += 1
                    continue
            else:
                j = scan_quoted(i, "'", multiline=False)
            blank(i, j)
            i = j
            prev = "'"
            continue
        if c == "`" and lang in ("go", "javascript", "typescript"):
            j = i + 1
            while j < n:
                if text[j] == "\\" and lang != "go":
                    j += 2
                    continue
                if text[j] == "`":
                    break
                j += 1
            j = min(n, j + 1)
            blank(i, j)
            i = j
            prev = "`"
            continue
        if (
            c == "/"
            and lang in ("javascript", "typescript")
            and (prev in "(,=:[!&|?{};+-*%<>~^" or prev_word in ("return", "typeof", "case", "in", "of", "delete", "void", "throw"))
        ):
            # a regular expression literal
            j, in_class = i + 1, False
            while j < n and text[j] != "\n":
                ch = text[j]
                if ch == "\\":
                    j += 2
                    continue
                if ch == "[":
                    in_class = True
                elif ch == "]":
                    in_class = False
                elif ch == "/" and not in_class:
                    break
                j += 1
            if j < n and text[j] == "/":
                j += 1
                while j < n and text[j].isalpha():
                    j += 1
                blank(i, j)
                i = j
                prev = "/"
                continue
        if not c.isspace():
            if c.isalnum() or c in "_$":
                m = re.match(r"[\w$]+", text[i:i + 200])
                prev_word = m.group(0)
                prev = "a"
                i += m.end()
                continue
            prev = c
            prev_word = ""
        i += 1
    return "".join(out), comments


class Source:
    """A file's text, its masked code and comment offsets, and line maps."""

    def __init__(self, path, text, lang):
        self.path, self.text, self.lang = path, text, lang
        self.code, self.comments = mask(text, lang)
        self.starts = [0]
        for m in re.finditer("\n", text):
            self.starts.append(m.end())
        # per line: comment index covering the line (line comments or blocks)
        self.lines = text.split("\n")
        self.code_lines = self.code.split("\n")

    def line_of(self, off):
        return bisect.bisect_right(self.starts, off)  # 1-based

    def match_brace(self, off):
        """Offset just after the `}` matching the `{` at `off`."""
        depth, code, n = 0, self.code, len(self.code)
        j = off
        while j < n:
            ch = code[j]
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        return n

    def match_paren(self, off):
        depth, code, n = 0, self.code, len(self.code)
        j = off
        while j < n:
            ch = code[j]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        return n

    def body_open(self, off, stop=";", type_braces=()):
        """The offset of the `{` opening a body after `off` (at paren and
        bracket depth 0), or None if `stop` or the end comes first. A `{`
        after one of `type_braces` (Go's `interface`, `struct`) is skipped."""
        code, n = self.code, len(self.code)
        depth, j = 0, off
        while j < n:
            ch = code[j]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif depth == 0 and ch == "{":
                before = code[max(0, j - 12):j].rstrip()
                if any(before.endswith(t) for t in type_braces):
                    j = self.match_brace(j)
                    continue
                return j
            elif depth == 0 and ch in stop:
                return None
            j += 1
        return None

    def comment_lines(self):
        """line -> (start, end) of the comment occupying a comment-only line."""
        out = {}
        for a, b in self.comments:
            la, lb = self.line_of(a), self.line_of(max(a, b - 1))
            for ln in range(la, lb + 1):
                if not self.code_lines[ln - 1].strip():
                    out[ln] = (a, b)
        return out


def first_code_line_before(src, line, skip):
    """Walks up from `line - 1` over lines matching `skip` (attributes,
    annotations, decorators); returns the line number just above them."""
    ln = line - 1
    while ln >= 1:
        c = src.code_lines[ln - 1].strip()
        if c and skip is not None and skip.match(c):
            ln -= 1
            continue
        break
    return ln


def doc_block_above(src, line, cl, want, skip=None):
    """The doc comment ending just above `line` (after attribute lines):
    (first_line, last_line, [comment offsets]) or None. `want(text)` says
    whether a comment is of the doc kind."""
    ln = first_code_line_before(src, line, skip)
    if ln < 1 or ln not in cl:
        return None
    a, b = cl[ln]
    if not want(src.text[a:b]):
        return None
    if src.text[a:a + 2] == "/*":
        return (src.line_of(a), ln, [(a, b)])
    # a run of line comments
    spans, first = [], ln
    while first >= 1 and first in cl:
        a, b = cl[first]
        if src.text[a:a + 2] != "//" or not want(src.text[a:b]):
            break
        spans.append((a, b))
        first -= 1
    if not spans:
        return None
    return (first + 1, ln, spans[::-1])


class Sym:
    __slots__ = ("path", "lang", "name", "container", "kind", "line", "start", "end", "body", "doc", "module")

    def __init__(self, path, lang, name, container, kind, line, start, end, body, doc=None, module=""):
        self.path, self.lang, self.name, self.container, self.kind = path, lang, name, container, kind
        self.line, self.start, self.end, self.body, self.doc, self.module = line, start, end, body, doc, module

    def qualified(self, sep="."):
        return f"{self.container}{sep}{self.name}" if self.container else self.name

    def key(self):
        return (self.path, self.line)


# ---------------------------------------------------------------------------
# Per-language extraction: definitions (functions, methods, types) with their
# spans and doc comments, and the doc comments to strip.


def parse_python(path, text):
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return [], [], False
    lines = text.splitlines(keepends=True)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))

    def off(lineno, col):
        line = lines[lineno - 1]
        return starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8", "ignore"))

    syms, strip = [], []
    module = os.path.splitext(path)[0].replace("/", ".")

    def docnode(body):
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            return body[0]
        return None

    def add_strip(node):
        d = docnode(node.body)
        if d is not None:
            strip.append((off(d.lineno, d.col_offset), off(d.end_lineno, d.end_col_offset)))

    add_strip(tree)

    def visit(node, container, in_class):
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                is_cls = isinstance(ch, ast.ClassDef)
                kind = "type" if is_cls else ("method" if in_class else "function")
                start = min([d.lineno for d in ch.decorator_list] + [ch.lineno])
                doc = ast.get_docstring(ch, clean=True)
                syms.append(Sym(path, "python", ch.name, container, kind, ch.lineno, start, ch.end_lineno, True, doc, module))
                add_strip(ch)
                visit(ch, f"{container}.{ch.name}" if container else ch.name, is_cls)
            elif isinstance(ch, (ast.Assign, ast.AnnAssign)) and (in_class or node is tree):
                for t in ch.targets if isinstance(ch, ast.Assign) else [ch.target]:
                    for nm in ast.walk(t):
                        if isinstance(nm, ast.Name):
                            syms.append(Sym(path, "python", nm.id, container, "other", ch.lineno, ch.lineno, ch.lineno, False, None, module))
            else:
                visit(ch, container, in_class)

    visit(tree, "", False)
    return syms, strip, True


def strip_python(text, spans):
    """Replaces each docstring by `pass` (keeping its newlines, so every line
    keeps its number)."""
    out, last = [], 0
    for a, b in sorted(spans):
        out.append(text[last:a])
        out.append("pass" + "\n" * text[a:b].count("\n"))
        last = b
    out.append(text[last:])
    return "".join(out)


def blank_spans(text, spans):
    chars = list(text)
    for a, b in spans:
        for k in range(a, b):
            if chars[k] != "\n":
                chars[k] = " "
    # lines that held only a comment become empty
    return "\n".join(line.rstrip() for line in "".join(chars).split("\n"))


GO_FUNC = re.compile(r"func\s*(?:\(\s*(?:[A-Za-z_]\w*\s+)?\*?\s*([A-Za-z_]\w*)[^)]*\)\s*)?([A-Za-z_]\w*)")
GO_DECL = re.compile(r"(func|type|var|const|package)\b")
GO_TYPE = re.compile(r"type\s+([A-Za-z_]\w*)")
GO_GROUP_SPEC = re.compile(r"\t([A-Za-z_]\w*)\b")


def parse_go(path, text):
    src = Source(path, text, "go")
    cl = src.comment_lines()
    syms, strip = [], []
    pkg = ""
    m = re.search(r"(?m)^package\s+(\w+)", src.code)
    if m:
        pkg = m.group(1)
    is_go_doc = lambda t: True  # noqa: E731  any comment group directly above

    def doc_of(ln):
        doc = doc_block_above(src, ln, cl, is_go_doc)
        if doc:
            strip.extend(doc[2])
        return doc

    def type_decl(name, ln, after):
        ob = src.body_open(after, stop="\n", type_braces=())
        end = src.line_of(src.match_brace(ob) - 1) if ob is not None else ln
        syms.append(Sym(path, "go", name, "", "type", ln, ln, end, True, go_doc(src, doc_of(ln)), pkg))
        if ob is None:
            return
        # members: interface methods (declarations without bodies) and fields,
        # whose doc comments are stripped too
        kind = "interface" if src.code[max(0, ob - 12):ob].rstrip().endswith("interface") else "struct"
        for k in range(ln, end - 1):
            cline = src.code_lines[k]
            if depth_between(src, src.starts[ln - 1], src.starts[k]) != 1:
                continue
            mm = re.match(r"\s+([A-Za-z_]\w*)\s*\(", cline) if kind == "interface" else None
            if mm:
                syms.append(Sym(path, "go", mm.group(1), name, "method", k + 1, k + 1, k + 1, False, go_doc(src, doc_of(k + 1)), pkg))
                continue
            mm = re.match(r"\s+([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s+[^\s,]", cline)
            if mm:
                doc_of(k + 1)
                for nm in re.split(r"\s*,\s*", mm.group(1)):
                    syms.append(Sym(path, "go", nm, name, "other", k + 1, k + 1, k + 1, False, None, pkg))

    group = None  # inside `type (` / `const (` / `var (`
    for idx, cline in enumerate(src.code_lines):
        ln = idx + 1
        if group:
            if cline.startswith(")"):
                group = None
                continue
            gm = GO_GROUP_SPEC.match(cline)
            if gm:
                if group == "type":
                    type_decl(gm.group(1), ln, src.starts[idx] + gm.end())
                else:
                    doc_of(ln)
                    syms.append(Sym(path, "go", gm.group(1), "", "other", ln, ln, ln, False, None, pkg))
            continue
        m = GO_DECL.match(cline)
        if not m:
            continue
        kw = m.group(1)
        if kw in ("type", "const", "var") and re.match(rf"{kw}\s*\(", cline):
            group = kw
            doc_of(ln)
        elif kw == "func":
            fm = GO_FUNC.match(cline)
            if fm:
                o = src.starts[idx] + fm.end()
                ob = src.body_open(o, stop="\n", type_braces=("interface", "struct"))
                end = src.line_of(src.match_brace(ob) - 1) if ob is not None else ln
                recv = fm.group(1) or ""
                syms.append(Sym(path, "go", fm.group(2), recv, "method" if recv else "function", ln, ln, end, ob is not None, go_doc(src, doc_of(ln)), pkg))
        elif kw == "type":
            tm = GO_TYPE.match(cline)
            if tm:
                type_decl(tm.group(1), ln, src.starts[idx] + tm.end())
        elif kw in ("const", "var"):
            doc_of(ln)
            vm = re.match(rf"{kw}\s+([A-Za-z_]\w*)", cline)
            if vm:
                syms.append(Sym(path, "go", vm.group(1), "", "other", ln, ln, ln, False, None, pkg))
        else:
            doc_of(ln)
    return syms, strip, True


def depth_between(src, a, b):
    seg = src.code[a:b]
    return seg.count("{") - seg.count("}")


def go_doc(src, doc):
    if not doc:
        return None
    out = []
    for a, b in doc[2]:
        t = src.text[a:b]
        if t.startswith("//"):
            t = t[2:]
            if t.startswith("go:") or t.startswith("nolint") or t.startswith("+build"):
                continue
            out.append(t[1:] if t.startswith(" ") else t)
        else:
            out.append(t[2:-2])
    return "\n".join(out)


RS_FN = re.compile(r"\s*(?:pub(?:\s*\([^)]*\))?\s+)?(?:(?:const|async|unsafe|default|extern(?:\s+\"?\s*\"?)?)\s+)*fn\s+([A-Za-z_]\w*)")
RS_TYPE = re.compile(r"\s*(?:pub(?:\s*\([^)]*\))?\s+)?(?:unsafe\s+)?(struct|enum|trait|union|type)\s+([A-Za-z_]\w*)")
RS_IMPL = re.compile(r"\s*(?:pub(?:\s*\([^)]*\))?\s+)?(?:unsafe\s+)?(impl|trait|mod)\b")
RS_ATTR = re.compile(r"#!?\[")
RS_FIELD = re.compile(r"\s*(?:pub(?:\s*\([^)]*\))?\s+)?([A-Za-z_]\w*)\s*:(?!:)")
RS_VARIANT = re.compile(r"\s*([A-Z]\w*)\s*(?:[,({=]|$)")
RS_CONST = re.compile(r"(?m)^\s*(?:pub(?:\s*\([^)]*\))?\s+)?(?:const|static(?:\s+mut)?)\s+([A-Za-z_]\w*)\s*:|^\s*macro_rules!\s*([A-Za-z_]\w*)")


def rs_is_doc(t):
    return (t.startswith("///") and not t.startswith("////")) or t.startswith("//!") or (
        t.startswith("/**") and not t.startswith("/***") and t != "/**/"
    ) or t.startswith("/*!")


def rust_module(path):
    parts = path.split("/")
    if "src" not in parts:
        return ""
    rel = parts[len(parts) - parts[::-1].index("src"):]
    if not rel:
        return ""
    last = rel[-1][:-3]
    mods = rel[:-1] + ([] if last in ("lib", "main", "mod") else [last])
    return "::".join(mods)


def impl_type(header):
    """`impl<T: X> Trait<T> for Foo<T> where ...` -> Foo; `trait Bar` -> Bar."""
    h = header.strip()
    h = re.sub(r"^(?:pub(?:\s*\([^)]*\))?\s+)?(?:unsafe\s+)?", "", h)
    m = re.match(r"(impl|trait|mod)\b\s*", h)
    kw = m.group(1) if m else ""
    h = h[m.end():] if m else h
    if h.startswith("<"):  # generic parameters
        depth = 0
        for k, ch in enumerate(h):
            depth += ch == "<"
            depth -= ch == ">"
            if depth == 0:
                h = h[k + 1:]
                break
    h = re.split(r"\bwhere\b|\{", h)[0]
    if kw == "trait":
        h = h.split(":")[0]
    if kw == "impl" and re.search(r"\bfor\b", h):
        h = re.split(r"\bfor\b", h)[-1]
    h = re.sub(r"<.*", "", h.strip())
    h = h.replace("&", "").replace("mut ", "").replace("dyn ", "").strip()
    h = re.sub(r"'\w+\s*", "", h)
    return h.split("::")[-1].strip("() ") if h else ""


def parse_rust(path, text):
    src = Source(path, text, "rust")
    cl = src.comment_lines()
    syms, strip = [], []
    for a, b in src.comments:
        if rs_is_doc(text[a:b]):
            strip.append((a, b))
    module = rust_module(path)
    blocks = []  # (start_off, end_off, kind, name)
    for idx, cline in enumerate(src.code_lines):
        m = RS_IMPL.match(cline)
        if m:
            o = src.starts[idx]
            ob = src.body_open(o, stop=";")
            if ob is not None:
                header = src.code[o:ob]
                name = impl_type(" ".join(header.split())) if m.group(1) != "mod" else ""
                blocks.append((ob, src.match_brace(ob), m.group(1), name))
    fn_blocks = []
    for idx, cline in enumerate(src.code_lines):
        ln = idx + 1
        m = RS_FN.match(cline)
        t = RS_TYPE.match(cline) if not m else None
        if not m and not t:
            continue
        o = src.starts[idx]
        if m:
            ob = src.body_open(o + m.end(), stop=";")
            end = src.line_of(src.match_brace(ob) - 1) if ob is not None else ln
            inner = None
            for bs, be, kind, name in blocks:
                if bs < o < be and kind in ("impl", "trait") and (inner is None or bs > inner[0]):
                    inner = (bs, be, kind, name)
            in_fn = any(bs < o < be for bs, be in fn_blocks)
            container = inner[3] if inner and not in_fn else ""
            kind = "method" if container else "function"
            doc = doc_block_above(src, ln, cl, rs_is_doc, RS_ATTR)
            start = (first_code_line_before(src, ln, RS_ATTR) + 1) if doc is None else doc[1] + 1
            syms.append(Sym(path, "rust", m.group(1), container, kind, ln, min(start, ln), end, ob is not None, rust_doc(text, doc), module))
            if ob is not None:
                fn_blocks.append((ob, src.match_brace(ob)))
        else:
            ob = src.body_open(o + t.end(), stop=";")
            end = src.line_of(src.match_brace(ob) - 1) if ob is not None else ln
            doc = doc_block_above(src, ln, cl, rs_is_doc, RS_ATTR)
            syms.append(Sym(path, "rust", t.group(2), "", "type", ln, ln, end, True, rust_doc(text, doc), module))
            if ob is not None and t.group(1) in ("struct", "enum", "union"):
                pat = RS_VARIANT if t.group(1) == "enum" else RS_FIELD
                for k in range(ln, end - 1):
                    if depth_between(src, ob, src.starts[k]) != 1:
                        continue
                    fm = pat.match(src.code_lines[k])
                    if fm:
                        syms.append(Sym(path, "rust", fm.group(1), t.group(2), "other", k + 1, k + 1, k + 1, False, None, module))
    for m in RS_CONST.finditer(src.code):
        ln = src.line_of(m.start())
        syms.append(Sym(path, "rust", m.group(1) or m.group(2), "", "other", ln, ln, ln, False, None, module))
    return syms, strip, True


def rust_doc(text, doc):
    if not doc:
        return None
    out = []
    for a, b in doc[2]:
        t = text[a:b]
        if t.startswith("//"):
            t = t[3:]
            out.append(t[1:] if t.startswith(" ") else t)
        else:
            out.extend(star_block(t))
    return "\n".join(out)


def star_block(t):
    """The lines of a /** ... */ comment without its frame and leading stars."""
    t = t[3:] if t.startswith(("/**", "/*!")) else t[2:]
    if t.endswith("*/"):
        t = t[:-2]
    out = []
    for line in t.split("\n"):
        s = line.strip()
        if s.startswith("*"):
            s = s[1:]
            s = s[1:] if s.startswith(" ") else s
        out.append(s)
    return out


JAVA_CLASS = re.compile(r"(?<![\w.$@])(class|interface|enum|record|@interface)\s+([A-Za-z_$][\w$]*)")
JAVA_METHOD = re.compile(
    r"\s*(?:(?:public|protected|private|static|final|abstract|synchronized|native|default|strictfp)\s+)*"
    r"(?:<[^;{}()]*?>\s+)?"
    r"(?:([\w$.]+(?:\s*<[^;{}()]*>)?(?:\s*\[\s*\])*)\s+)?"
    r"([A-Za-z_$][\w$]*)\s*\("
)
JAVA_KEYWORDS = {
    "if", "for", "while", "switch", "return", "new", "throw", "catch", "synchronized", "else", "do", "try",
    "case", "assert", "super", "this", "yield",
}
ANNOTATION = re.compile(r"@[\w.]+")
JAVA_FIELD = re.compile(
    r"\s*(?:(?:public|protected|private|static|final|transient|volatile)\s+)*[\w$.]+(?:\s*<[^;{}()]*>)?(?:\s*\[\s*\])*\s+([A-Za-z_$][\w$]*)\s*(?:=|;|,)"
)
JAVA_CONSTANT = re.compile(r"\s*([A-Z][A-Z0-9_]*)\s*(?:[,;(]|$)")


def is_javadoc(t):
    return t.startswith("/**") and not t.startswith("/***") and t != "/**/"


def depth_at(src):
    """prefix brace depth at each line start."""
    depths, d = [], 0
    for cline in src.code_lines:
        depths.append(d)
        d += cline.count("{") - cline.count("}")
    return depths


def parse_java(path, text):
    src = Source(path, text, "java")
    cl = src.comment_lines()
    syms, strip = [], []
    for a, b in src.comments:
        if is_javadoc(text[a:b]):
            strip.append((a, b))
    classes = []  # (body_open, body_end, name, depth_inside)
    for m in JAVA_CLASS.finditer(src.code):
        ob = src.body_open(m.end(), stop=";")
        if ob is None:
            continue
        classes.append((ob, src.match_brace(ob), m.group(2)))
        ln = src.line_of(m.start())
        doc = doc_block_above(src, ln, cl, is_javadoc, ANNOTATION)
        syms.append(Sym(path, "java", m.group(2), "", "type", ln, ln, src.line_of(src.match_brace(ob) - 1), True, java_doc(text, doc)))
    depths = depth_at(src)
    for idx, cline in enumerate(src.code_lines):
        ln = idx + 1
        if not cline.strip() or cline.strip().startswith("@"):
            # annotations may precede the declaration on the same line
            pass
        line = ANNOTATION.sub(lambda mm: " " * len(mm.group(0)), cline)
        m = JAVA_METHOD.match(line)
        o = src.starts[idx]
        encl = None
        for bs, be, name in classes:
            if bs < o < be and (encl is None or bs > encl[0]):
                encl = (bs, be, name)
        if encl is None or depths[idx] != depth_at_offset(src, depths, encl[0]) + 1:
            continue
        if not m or m.group(2) in JAVA_KEYWORDS:
            fm = JAVA_FIELD.match(line) or JAVA_CONSTANT.match(line)
            if fm:
                syms.append(Sym(path, "java", fm.group(1), encl[2], "other", ln, ln, ln, False, None))
            continue
        rtype = m.group(1)
        if rtype is None and m.group(2) != encl[2]:
            syms.append(Sym(path, "java", m.group(2), encl[2], "other", ln, ln, ln, False, None))
            continue  # not a constructor: an enum constant or a call
        if rtype in ("new", "return", "throw", "else"):
            continue
        paren = o + m.end() - 1
        close = src.match_paren(paren)
        ob = src.body_open(close, stop=";")
        end = src.line_of(src.match_brace(ob) - 1) if ob is not None else ln
        doc = doc_block_above(src, ln, cl, is_javadoc, ANNOTATION)
        start = (first_code_line_before(src, ln, ANNOTATION) + 1) if doc is None else doc[1] + 1
        syms.append(Sym(path, "java", m.group(2), encl[2], "method", ln, min(start, ln), end, ob is not None, java_doc(text, doc)))
    return syms, strip, True


def depth_at_offset(src, depths, off):
    ln = src.line_of(off)
    d = depths[ln - 1]
    seg = src.code[src.starts[ln - 1]:off]
    return d + seg.count("{") - seg.count("}")


def java_doc(text, doc):
    if not doc:
        return None
    a, b = doc[2][0]
    return "\n".join(star_block(text[a:b]))


JS_FUNC = re.compile(r"\s*(?:export\s+(?:default\s+)?)?(?:declare\s+)?(?:async\s+)?function\s*\*?\s*([\w$]+)\s*[<(]")
JS_VARFN = re.compile(
    r"\s*(?:export\s+)?(?:const|let|var)\s+([\w$]+)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|(?:\([^()]*\)|[\w$]+)\s*(?::[^=]+?)?=>|\(\s*$)"
)
JS_ASSIGNFN = re.compile(r"\s*((?:[\w$]+\.)+)([\w$]+)\s*=\s*(?:async\s+)?(?:function\b|(?:\([^()]*\)|[\w$]+)\s*=>)")
JS_PROPFN = re.compile(r"\s*([\w$]+|'[^']*'|\"[^\"]*\")\s*:\s*(?:async\s+)?(?:function\b|(?:\([^()]*\)|[\w$]+)\s*=>)")
JS_METHOD = re.compile(
    r"\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:static|async|get|set|public|private|protected|readonly|override|abstract|declare)\s+)*\*?\s*(#?[\w$]+)\s*(?:<[^>]*>)?\s*\("
)
JS_FIELD = re.compile(r"\s*(?:(?:static|public|private|protected|readonly|declare)\s+)*#?([\w$]+)\s*(?:[?!]?\s*:[^=]*)?(?:=|:|;|,|$)")
JS_TOPVAR = re.compile(r"(?:export\s+)?(?:const|let|var)\s+([\w$]+)\s*[=:;]")
JS_CLASS = re.compile(r"(?<![\w.$])(?:class|interface)\s+([\w$]+)")
JS_OBJECT = re.compile(r"\s*(?:export\s+)?(?:(?:const|let|var)\s+([\w$]+)|((?:[\w$]+\.)*[\w$]+))\s*=\s*\{")
JS_KEYWORDS = {
    "if", "for", "while", "switch", "return", "catch", "function", "with", "typeof", "new", "else", "do", "try",
    "constructor_", "super", "await", "yield", "delete", "void", "in", "of", "throw",
}


def is_jsdoc(t):
    return t.startswith("/**") and not t.startswith("/***") and t != "/**/"


def js_container(lhs):
    parts = [p for p in lhs.strip(".").split(".") if p]
    parts = [p for p in parts if p != "prototype"]
    if not parts or parts[0] in ("exports", "module") or parts == ["this"]:
        return ""
    return parts[-1]


def parse_js(path, text, lang):
    src = Source(path, text, lang)
    cl = src.comment_lines()
    syms, strip = [], []
    for a, b in src.comments:
        if is_jsdoc(text[a:b]):
            strip.append((a, b))
    depths = depth_at(src)
    blocks = []  # (open, end, name, depth inside) of classes and named object literals
    for m in JS_CLASS.finditer(src.code):
        ob = src.body_open(m.end(), stop=";")
        if ob is not None:
            blocks.append((ob, src.match_brace(ob), m.group(1), depth_at_offset(src, depths, ob) + 1))
            ln = src.line_of(m.start())
            doc = doc_block_above(src, ln, cl, is_jsdoc, ANNOTATION)
            syms.append(Sym(path, lang, m.group(1), "", "type", ln, ln, src.line_of(src.match_brace(ob) - 1), True, js_doc(text, doc)))
    for idx, cline in enumerate(src.code_lines):
        m = JS_OBJECT.match(cline)
        if m:
            ob = src.starts[idx] + m.end() - 1
            name = m.group(1) or js_container(m.group(2) + ".")
            blocks.append((ob, src.match_brace(ob), name, depth_at_offset(src, depths, ob) + 1))

    def add(ln, name, container, kind, after):
        code_after = src.code[after:]
        arrow = re.match(r"[^{;]*?=>\s*", code_after)
        # the parameters, then a body
        ob = src.body_open(after, stop=";")
        if arrow and not code_after[arrow.end():arrow.end() + 1] == "{":
            # an expression body: up to the end of the statement
            j, depth, code = after + arrow.end(), 0, src.code
            while j < len(code):
                ch = code[j]
                if ch in "([{":
                    depth += 1
                elif ch in ")]}":
                    depth -= 1
                    if depth < 0:
                        break
                elif ch in ";\n" and depth == 0:
                    break
                j += 1
            end, has_body = src.line_of(j), True
        elif ob is not None:
            end, has_body = src.line_of(src.match_brace(ob) - 1), True
        else:
            end, has_body = ln, False
        doc = doc_block_above(src, ln, cl, is_jsdoc, ANNOTATION)
        start = (first_code_line_before(src, ln, ANNOTATION) + 1) if doc is None else doc[1] + 1
        syms.append(Sym(path, lang, name, container, kind, ln, min(start, ln), end, has_body, js_doc(text, doc)))

    for idx, cline in enumerate(src.code_lines):
        ln = idx + 1
        o = src.starts[idx]
        encl = None
        for bs, be, name, dep in blocks:
            if bs < o < be and (encl is None or bs > encl[0]):
                encl = (bs, be, name, dep)
        direct = encl is not None and depths[idx] == encl[3]
        m = JS_FUNC.match(cline)
        if m:
            add(ln, m.group(1), "", "function", o + m.end() - 1)
            continue
        m = JS_VARFN.match(cline)
        if m:
            add(ln, m.group(1), "", "function", o + m.end() - 1 if cline.rstrip().endswith("(") else o + len(cline.split("=")[0]) + 1)
            continue
        m = JS_ASSIGNFN.match(cline)
        if m:
            cont = js_container(m.group(1))
            add(ln, m.group(2), cont, "method" if cont else "function", o + m.end() - 1)
            continue
        if direct:
            m = JS_PROPFN.match(cline)
            if m:
                add(ln, m.group(1).strip("'\""), encl[2], "method", o + m.end() - 1)
                continue
            m = JS_METHOD.match(cline)
            if m and m.group(1) not in JS_KEYWORDS:
                paren = o + m.end() - 1
                close = src.match_paren(paren)
                rest = src.code[close:close + 200].lstrip()
                if rest.startswith("{") or rest.startswith(":"):
                    add(ln, m.group(1), encl[2], "method", close)
                    continue
            m = JS_FIELD.match(cline)
            if m:
                syms.append(Sym(path, lang, m.group(1), encl[2], "other", ln, ln, ln, False, None))
                continue
        if depths[idx] == 0:
            m = JS_TOPVAR.match(cline)
            if m:
                syms.append(Sym(path, lang, m.group(1), "", "other", ln, ln, ln, False, None))
    return syms, strip, True


def js_doc(text, doc):
    if not doc:
        return None
    a, b = doc[2][0]
    return "\n".join(star_block(text[a:b]))


CTAGS_FUNCS = {"function", "method", "singletonMethod", "func"}
CTAGS_TYPES = {"class", "struct", "interface", "enum", "trait", "object", "module", "union", "record", "typealias"}
# Attribute and annotation lines between a doc comment and its definition
# (C# `[Obsolete]`, PHP `#[Pure]`, Kotlin `@JvmStatic`, C++ `template <...>`).
CTAGS_ATTR = re.compile(r"\s*(?:@[\w.]+(?:\(.*\))?|\[[\w.: ,()\"=]+\]|#\[.*\]|template\s*<.*>)\s*$")
_CTAGS_ON = None


def ctags_available():
    global _CTAGS_ON
    if _CTAGS_ON is None:
        try:
            out = subprocess.run(["ctags", "--version"], capture_output=True, text=True).stdout
            _CTAGS_ON = "Universal Ctags" in out
        except OSError:
            _CTAGS_ON = False
        if not _CTAGS_ON:
            log("universal-ctags not found: C, C++, C#, PHP, Kotlin and Ruby sources give no definitions")
    return _CTAGS_ON


def line_doc(lines, ln, lang):
    """The doc comment ending just above line `ln` (1-based; attribute lines
    skipped): (first line, last line, text) or None. C and C++ take any
    comment there; the other languages their doc forms (`/**`, `///`, and
    Ruby's `#` lines)."""
    i = ln - 2
    while i >= 0 and CTAGS_ATTR.match(lines[i]):
        i -= 1
    if lang in ("c", "cpp") and i >= 0 and lines[i].strip() and not re.search(r"[;{}/]|\*/", lines[i]) and not lines[i].lstrip().startswith(("#", "*")):
        i -= 1  # `static int` above `name(...)`
    if i < 0:
        return None
    t = lines[i].strip()
    if lang == "ruby":
        if not t.startswith("#") or t.startswith(("#!", "# frozen_string_literal", "# rubocop", "# -*-")):
            return None
        first = i
        while first - 1 >= 0 and lines[first - 1].strip().startswith("#"):
            first -= 1
        body = [re.sub(r"^\s*#+ ?", "", x) for x in lines[first:i + 1]]
        return (first + 1, i + 1, "\n".join(body))
    if t.endswith("*/"):
        first = i
        while first >= 0 and "/*" not in lines[first]:
            first -= 1
        if first < 0 or not lines[first].strip().startswith("/*"):
            return None
        head = lines[first].strip()
        if lang not in ("c", "cpp") and not (head.startswith("/**") and not head.startswith("/***")):
            return None
        text = "\n".join(lines[first:i + 1])
        text = re.sub(r"^/\*[*!]?", "", text.strip())
        text = re.sub(r"\*/$", "", text)
        body = [re.sub(r"^\s*\*+ ?", "", x) for x in text.split("\n")]
        return (first + 1, i + 1, "\n".join(body))
    prefix = "//" if lang in ("c", "cpp") else "///"
    if t.startswith(prefix):
        first = i
        while first - 1 >= 0 and lines[first - 1].strip().startswith(prefix):
            first -= 1
        body = [re.sub(r"^\s*//[/!]? ?", "", x) for x in lines[first:i + 1]]
        return (first + 1, i + 1, "\n".join(body))
    return None


def doc_strip_span(lines, starts, doc):
    """The offsets of `doc`'s lines (from `line_doc`): what the stripped
    copy blanks."""
    return (starts[doc[0] - 1], starts[doc[1] - 1] + len(lines[doc[1] - 1]))


def doc_text(doc, lang):
    """A doc comment's prose: C#'s `<summary>`, a Doxygen `@brief`."""
    if lang == "csharp" and "<summary>" in doc:
        doc = doc.split("<summary>", 1)[1].split("</summary>", 1)[0]
    doc = re.sub(r"^\s*[@\\]brief\s+", "", doc.strip())
    return doc


def parse_ctags(path, text, lang):
    """Definitions of a C, C++, C#, PHP, Kotlin or Ruby file as universal-ctags
    reads them, with their ends (ctags' `end:` field, else the matching
    brace) and the doc comments above them."""
    if not ctags_available():
        return [], [], False
    ext = os.path.splitext(path)[1]
    with tempfile.NamedTemporaryFile("w", suffix=ext, encoding="utf-8", delete=False) as f:
        f.write(text)
        tmp = f.name
    try:
        out = subprocess.run(
            ["ctags", "-o", "-", "--output-format=json", "--fields=+neZK", f"--language-force={CTAGS_LANG[lang]}", tmp],
            capture_output=True, text=True, errors="replace",
        ).stdout
    finally:
        os.unlink(tmp)
    lines = text.split("\n")
    src = None
    syms, strip = [], []
    starts = [0]
    for m in re.finditer("\n", text):
        starts.append(m.end())
    for row in out.splitlines():
        try:
            t = json.loads(row)
        except ValueError:
            continue
        name, kind, ln = t.get("name", ""), t.get("kind", ""), t.get("line", 0)
        end = str(t.get("end", ""))
        if name.startswith("<") or not re.match(r"^[\w$]+$", name) or not 0 < ln <= len(lines):
            continue
        if re.match(r"^(?:AnonymousClass|__anon)[0-9a-f]{6,}", name):
            continue  # a name ctags makes up (from the temporary file's name)
        # A package or namespace is no container: Kotlin's and PHP's top-level
        # functions are functions.
        scoped = t.get("scopeKind") not in (None, "package", "namespace")
        container = re.split(r"::|\.|\\", t.get("scope", ""))[-1].strip() if scoped else ""
        if container and not re.search(rf"\b{re.escape(container)}\b", text.replace(t.get("scope", ""), "")):
            container = ""  # ctags' scope is a file name (`-JsonUtf8Reader.kt`), not a type
        if kind in CTAGS_FUNCS:
            k = "method" if container and lang != "c" else "function"
        elif kind in CTAGS_TYPES:
            k = "type"
        else:
            syms.append(Sym(path, lang, name, container, "other", ln, ln, ln, False, None))
            continue
        if end.isdigit():
            e = int(end)
        elif lang != "ruby":
            if src is None:
                src = Source(path, text, "java" if lang == "kotlin" else lang)
            off = starts[ln - 1] + max(0, lines[ln - 1].find(name))
            ob = src.body_open(off, stop=";=" if lang == "kotlin" else ";")
            e = src.line_of(src.match_brace(ob) - 1) if ob is not None and src.line_of(ob) <= ln + 15 else ln
        else:
            e = ln
        doc = line_doc(lines, ln, lang)
        start = ln if doc is None else doc[1] + 1
        if doc is not None:
            strip.append(doc_strip_span(lines, starts, doc))
        syms.append(Sym(path, lang, name, container, k, ln, min(start, ln), e, e > ln, doc_text(doc[2], lang) if doc else None))
    return syms, sorted(set(strip)), True


# `func name` (Swift) and `def name` (Scala) after modifiers and attributes;
# the types that contain them.
BRACED_FUNC = {
    "swift": re.compile(r"\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|private|internal|fileprivate|open|static|class|final|override|mutating|nonmutating|convenience|required|dynamic|nonisolated|isolated|async|package|@objc)\s+)*func\s+([A-Za-z_]\w*)\s*[<(]"),
    "scala": re.compile(r"\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:private|protected|override|final|implicit|inline|transparent|infix|sealed|abstract|lazy)(?:\[\w+\])?\s+)*def\s+([A-Za-z_]\w*)\s*[\[(:=]"),
}
BRACED_TYPE = {
    "swift": re.compile(r"(?<![\w.])(?:class|struct|enum|protocol|extension|actor)\s+([A-Za-z_][\w.]*)"),
    "scala": re.compile(r"(?<![\w.])(?:class|object|trait|enum)\s+([A-Za-z_]\w*)"),
}


def parse_braced(path, text, lang):
    """Functions and methods of a Swift or Scala file: a `func`/`def` line,
    its body by brace matching (an expression body `= ...` has none, and is
    no set (a) target), its container the innermost braced type around it,
    its doc the `///` or `/** */` comment above (attributes skipped)."""
    src = Source(path, text, "java")
    lines = text.split("\n")
    starts = src.starts
    types = []  # (open, close, name)
    for m in BRACED_TYPE[lang].finditer(src.code):
        ob = src.body_open(m.end(), stop=";\n=" if lang == "scala" else ";")
        if ob is not None:
            types.append((ob, src.match_brace(ob), m.group(1).split(".")[-1]))
    syms, strip = [], []
    for idx, cline in enumerate(src.code_lines):
        m = BRACED_FUNC[lang].match(cline)
        if not m:
            continue
        ln, name = idx + 1, m.group(1)
        o = starts[idx] + m.start(1)
        encl = None
        for bs, be, tname in types:
            if bs < o < be and (encl is None or bs > encl[0]):
                encl = (bs, be, tname)
        paren = starts[idx] + m.end() - 1
        after = src.match_paren(paren) if src.code[paren] == "(" else paren
        ob = src.body_open(after, stop=";=" if lang == "scala" else ";")
        if ob is not None and src.line_of(ob) > ln + 12:
            ob = None  # a protocol requirement or an abstract def: the brace is someone else's
        end = src.line_of(src.match_brace(ob) - 1) if ob is not None else ln
        doc = line_doc(lines, ln, lang)
        if doc is not None:
            strip.append(doc_strip_span(lines, starts, doc))
        start = ln if doc is None else doc[1] + 1
        syms.append(Sym(path, lang, name, encl[2] if encl else "", "method" if encl else "function", ln, min(start, ln), end,
                        ob is not None, doc[2] if doc else None))
    for bs, be, tname in types:
        ln = src.line_of(bs)
        syms.append(Sym(path, lang, tname, "", "type", ln, ln, src.line_of(be - 1), True, None))
    return syms, sorted(set(strip)), True


def parse_source(path, text):
    lang = lang_of(path)
    if lang == "c" and path.endswith(".h") and re.search(r"^\s*(?:namespace|class|template\s*<)\b|::", text, re.M):
        lang = "cpp"  # a C++ header
    if lang in CTAGS_LANG:
        return parse_ctags(path, text, lang)
    if lang in BRACED_FUNC:
        return parse_braced(path, text, lang)
    if lang == "python":
        return parse_python(path, text)
    if lang == "go":
        return parse_go(path, text)
    if lang == "rust":
        return parse_rust(path, text)
    if lang == "java":
        return parse_java(path, text)
    if lang in ("javascript", "typescript"):
        return parse_js(path, text, lang)
    return [], [], False


def strip_source(path, text, spans):
    if not spans:
        return text
    if lang_of(path) == "python":
        out = strip_python(text, spans)
        try:
            ast.parse(out)
        except (SyntaxError, ValueError):
            return None
        return out
    return blank_spans(text, spans)


# ---------------------------------------------------------------------------
# Doc comment -> query


ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|cf|approx|incl|resp|Dr|Mr|Mrs|No|no)|\b[A-Za-z])\.$")


def clean_markup(t, lang):
    t = re.sub(r"<(?:see|seealso|paramref|typeparamref)\s+(?:cref|name|langword)=\"([^\"]*)\"\s*/>", lambda m: re.sub(r"\{.*\}|\(.*\)", "", m.group(1)).split(":")[-1], t)
    t = re.sub(r"\{@(?:code|link|linkplain|literal|value)\s+([^}\s]*)(?:\s+([^}]*))?\}", lambda m: m.group(2) or m.group(1), t)
    t = re.sub(r"<[^>]{1,40}>", " ", t)  # HTML tags
    t = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", t)  # markdown links
    t = re.sub(r"\[`?([^\]`]+)`?\]", r"\1", t)  # intra-doc links
    t = t.replace("`", "").replace("**", "").replace("&nbsp;", " ").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    t = re.sub(r"(?<=\w)#(?=\w)", ".", t)  # Foo#bar -> Foo.bar
    return t


def first_paragraph(doc, lang):
    lines = inspect.cleandoc(doc).split("\n") if lang == "python" else doc.split("\n")
    para = []
    for line in lines:
        s = line.strip()
        if lang in ("java", "javascript", "typescript", "csharp", "php", "kotlin", "ruby", "c", "cpp", "swift", "scala") and s.startswith("@"):
            break
        if lang == "java" and re.match(r"<p\b", s, re.I) and para:
            break
        if not s:
            if para:
                break
            continue
        para.append(s)
    return " ".join(para)


def first_sentence(text):
    pos = 0
    for m in re.finditer(r"[.!?](?=\s|$)", text):
        head = text[: m.end()]
        if ABBREV.search(head):
            continue
        rest = text[m.end():].lstrip()
        if rest and not (rest[0].isupper() or rest[0] in "(\"'[`*" or rest[0].isdigit()):
            continue
        pos = m.end()
        break
    s = text[:pos] if pos else text
    return s.strip().rstrip(".").strip()


SKIP_START = re.compile(r"^(?:deprecated|todo|fixme|xxx|hack|see\b|nolint|copyright|spdx|internal use|>>>|:|\.\.|#|@|[-*+\u2022]\s)", re.I)


def doc_query(sym):
    """The query for set (a) from a definition's doc comment, or None."""
    if not sym.doc:
        return None
    para = first_paragraph(sym.doc, sym.lang)
    if not para or SKIP_START.match(para):
        return None
    s = first_sentence(clean_markup(para, sym.lang))
    s = " ".join(s.split())
    if re.match(rf"^{re.escape(sym.name)}\s*\(", s):  # a signature line
        return None
    toks = s.split(" ")
    w0 = toks[0].strip("`*'\"()[],:") if toks else ""
    if w0.endswith("()"):
        w0 = w0[:-2]
    if w0 and (w0 == sym.name or w0.split(".")[-1] == sym.name or w0.split("::")[-1] == sym.name):
        toks = toks[1:]
        if toks and toks[0].lower() in ("-", "--", ":"):
            toks = toks[1:]
    s = " ".join(toks).strip()
    if sum(1 for t in toks if re.search(r"[A-Za-z]", t)) < 4:
        return None
    return s


# ---------------------------------------------------------------------------
# Git


def git(args, cwd=None, git_dir=None, input=None, check=True, env=None):
    cmd = ["git"]
    if git_dir:
        cmd += ["--git-dir", git_dir]
    cmd += args
    e = dict(os.environ, **(env or {}))
    r = subprocess.run(cmd, cwd=cwd, input=input, capture_output=True, env=e)
    if check and r.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {r.stderr.decode(errors='replace')}")
    return r.stdout.decode("utf-8", errors="replace")


class BlobReader:
    """`git cat-file --batch` on one repository."""

    def __init__(self, git_dir):
        self.p = subprocess.Popen(
            ["git", "--git-dir", git_dir, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )

    def read(self, obj):
        self.p.stdin.write((obj + "\n").encode())
        self.p.stdin.flush()
        header = self.p.stdout.readline().decode()
        parts = header.split()
        if len(parts) < 3 or parts[1] == "missing":
            return None
        size = int(parts[2])
        data = self.p.stdout.read(size)
        self.p.stdout.read(1)
        return data

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def tree_files(git_dir, rev):
    """path -> blob id of the regular files of `rev`."""
    out = {}
    for line in git(["ls-tree", "-r", "-z", rev], git_dir=git_dir).split("\0"):
        if not line:
            continue
        meta, path = line.split("\t", 1)
        mode, typ, oid = meta.split()
        if typ == "blob" and mode in ("100644", "100755"):
            out[path] = oid
    return out


def decode(data):
    if data is None or b"\0" in data[:8000] or len(data) > 1_000_000:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


# ---------------------------------------------------------------------------
# Repositories: sources, the copies sno indexes


def ensure_source(spec, cache, mirror):
    """A bare clone in `cache/src` holding the pinned commit."""
    os.makedirs(os.path.join(cache, "src"), exist_ok=True)
    git_dir = os.path.join(cache, "src", spec["name"] + ".git")
    commit = spec.get("commit") or "HEAD"
    if os.path.isdir(git_dir) and spec.get("local") is None:
        r = subprocess.run(["git", "--git-dir", git_dir, "cat-file", "-e", commit + "^{commit}"], capture_output=True)
        if r.returncode == 0:
            return git_dir
    if os.path.isdir(git_dir):
        shutil.rmtree(git_dir)
    if spec.get("local"):
        origin = spec["local"]
    else:
        origin = None
        for root in mirror:
            cand = os.path.join(root, spec["repo"].replace("/", "+"), "repo")
            if os.path.isdir(cand):
                origin = cand
                break
        origin = origin or f"https://github.com/{spec['repo']}.git"
    log(f"  fetching {spec.get('repo') or origin} from {origin}")
    git(["clone", "-q", "--bare", origin, git_dir])
    return git_dir


class Corpus:
    """One repository at one commit: its definitions, the query sets, and the
    two copies sno indexes (`stripped`: doc comments removed, one commit;
    `orig`: a clone with its history)."""

    def __init__(self, spec, git_dir, work, args):
        self.spec, self.name, self.git_dir, self.args = spec, spec["name"], git_dir, args
        self.commit = git(["rev-parse", (spec.get("commit") or "HEAD") + "^{commit}"], git_dir=git_dir).strip()
        self.sets = spec.get("sets", "abc")
        self.exclude = tuple(spec.get("exclude", ()))
        self.work = os.path.join(work, self.name)
        os.makedirs(self.work, exist_ok=True)
        self.files = {}  # source path -> text, at the commit
        self.stripped = {}
        self.syms = []
        self.unstrippable = set()
        self.blobs = {}  # blob id -> Counter (BM25, set c)
        self.available = {}  # candidate queries per set before the cap
        self.load()
        counts = collections.Counter(lang_of(p) for p in self.files)
        self.lang = spec.get("lang") or (counts.most_common(1)[0][0] if counts else "?")
        self.lines = sum(t.count("\n") for t in self.files.values())

    def source_path(self, p):
        return lang_of(p) is not None and not p.startswith(self.exclude)

    def load(self):
        files = tree_files(self.git_dir, self.commit)
        br = BlobReader(self.git_dir)
        for p, oid in sorted(files.items()):
            if not self.source_path(p):
                continue
            text = decode(br.read(oid))
            if text is None:
                continue
            self.files[p] = text
            syms, strip, ok = parse_source(p, text)
            self.syms.extend(syms)
            s = strip_source(p, text, strip)
            if s is None:
                self.unstrippable.add(p)
                s = text
            self.stripped[p] = s
        br.close()

    # -- the copies --------------------------------------------------------

    def stripped_dir(self):
        d = os.path.join(self.work, "stripped")
        marker = os.path.join(d, ".git", "eval-gen")
        want = f"{self.commit} {GEN_VERSION}"
        if os.path.exists(marker) and open(marker).read() == want:
            return d
        if os.path.exists(d):
            shutil.rmtree(d)
        os.makedirs(d)
        # the whole tree of the commit (excluded paths left out), sources stripped
        arch = subprocess.run(["git", "--git-dir", self.git_dir, "archive", self.commit], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", d], input=arch.stdout, check=True)
        for p in list(self._walk(d)):
            if p.startswith(self.exclude):
                os.remove(os.path.join(d, p))
        for p, text in self.stripped.items():
            # `git archive` leaves out `export-ignore` paths; the tree has them
            os.makedirs(os.path.dirname(os.path.join(d, p)), exist_ok=True)
            with open(os.path.join(d, p), "w", encoding="utf-8") as f:
                f.write(text)
        ident = {
            "GIT_AUTHOR_NAME": "eval", "GIT_AUTHOR_EMAIL": "eval@example.com", "GIT_COMMITTER_NAME": "eval",
            "GIT_COMMITTER_EMAIL": "eval@example.com", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
            "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
        }
        git(["init", "-q", "-b", "main"], cwd=d)
        git(["add", "-A", "-f"], cwd=d)
        git(["-c", "commit.gpgsign=false", "commit", "-q", "-m", f"{self.name} at {self.commit[:12]}, doc comments stripped"], cwd=d, env=ident)
        with open(marker, "w") as f:
            f.write(want)
        return d

    @staticmethod
    def _walk(d):
        for root, dirs, fs in os.walk(d):
            dirs[:] = [x for x in dirs if x != ".git"]
            for f in fs:
                yield os.path.relpath(os.path.join(root, f), d)

    def orig_dir(self):
        d = os.path.join(self.work, "orig")
        marker = os.path.join(d, ".git", "eval-gen")
        want = f"{self.commit} {GEN_VERSION}"
        if os.path.exists(marker) and open(marker).read() == want:
            return d
        if os.path.exists(d):
            shutil.rmtree(d)
        git(["clone", "-q", "--no-checkout", self.git_dir, d])
        git(["checkout", "-q", "-B", "eval", self.commit], cwd=d)
        with open(marker, "w") as f:
            f.write(want)
        return d

    # -- query sets ----------------------------------------------------------

    def set_a(self, cap):
        names = collections.Counter(s.name for s in self.syms if s.kind in ("function", "method"))
        seen, out = collections.Counter(), []
        cands = []
        for s in self.syms:
            if s.kind not in ("function", "method") or not s.body or is_test(s.path) or s.path in self.unstrippable:
                continue
            if names[s.name] != 1:
                continue  # ambiguous: several functions share the name
            q = doc_query(s)
            if q is None:
                continue
            cands.append((s, q))
            seen[q.lower()] += 1
        cands = [(s, q) for s, q in cands if seen[q.lower()] == 1]  # one sentence, one target
        self.available["a"] = len(cands)
        cands.sort(key=lambda sq: hashlib.sha1(f"{self.name}:{sq[0].path}:{sq[0].line}".encode()).hexdigest())
        for s, q in cands[:cap]:
            name_words = set(words(s.name))
            out.append({
                "set": "a", "corpus": self.name, "lang": s.lang, "query": q,
                "target": {"path": s.path, "line": s.line, "end": s.end, "name": s.name, "qualified": s.qualified()},
                "no_name_word": not (set(words(q)) & name_words),
            })
        return out

    def set_b(self, cap):
        names = collections.Counter(s.name for s in self.syms)
        quals = collections.Counter((s.container, s.name) for s in self.syms)
        bare, qual = [], []
        for s in self.syms:
            if s.kind not in ("function", "method", "type") or is_test(s.path) or len(s.name) < 3 or s.name.startswith("__"):
                continue
            sep = "::" if s.lang == "rust" else "."
            if names[s.name] == 1:
                bare.append((s, s.name))
            if s.container and quals[(s.container, s.name)] == 1 and s.kind == "method":
                qual.append((s, f"{s.container}{sep}{s.name}"))
            elif s.kind == "function" and s.lang == "rust" and s.module and names[s.name] == 1:
                qual.append((s, f"{s.module}::{s.name}"))
            elif s.kind == "function" and s.lang == "go" and s.module and s.module != "main" and names[s.name] == 1:
                qual.append((s, f"{s.module}.{s.name}"))
        h = lambda sq: hashlib.sha1(f"{self.name}:{sq[1]}:{sq[0].path}:{sq[0].line}".encode()).hexdigest()  # noqa: E731
        bare.sort(key=h)
        qual.sort(key=h)
        self.available["b"] = len({s.key() for s, _ in bare + qual})
        picked, used = [], set()
        for i in range(max(len(bare), len(qual))):
            for lst in (bare, qual):
                if i < len(lst) and lst[i][0].key() not in used and len(picked) < cap:
                    used.add(lst[i][0].key())
                    picked.append(lst[i])
        return [
            {
                "set": "b", "corpus": self.name, "lang": s.lang, "query": q, "form": "qualified" if q != s.name else "name",
                "target": {"path": s.path, "line": s.line, "end": s.end, "name": s.name, "qualified": s.qualified()},
            }
            for s, q in picked
        ]

    def set_c(self, cap, scan=3000, max_targets=20):
        """Recent non-merge first-parent commits touching non-test sources."""
        fp = git(["rev-list", "--first-parent", "-n", str(scan), self.commit], git_dir=self.git_dir).split()
        out = []
        oldest_parent = None
        log_out = git(["log", "--first-parent", "-n", str(scan), "--format=%x01%H %P%x00%B", self.commit], git_dir=self.git_dir)
        for rec in log_out.split("\x01")[1:]:
            head, _, body = rec.partition("\x00")
            ids = head.split()
            if len(ids) != 2:
                continue  # a merge or the root
            c, parent = ids
            msg = "\n".join(
                ln for ln in body.strip().split("\n")
                if not re.match(r"\s*(Signed-off-by|Co-authored-by|Reviewed-by|Acked-by|Change-Id|Cc|Reported-by|Tested-by):", ln, re.I)
            ).strip()
            if len(re.findall(r"[A-Za-z]{2,}", msg)) < 3:
                continue
            diff = git(["diff-tree", "-r", "-M", "--no-commit-id", "--name-status", "-z", parent, c], git_dir=self.git_dir).split("\0")
            targets, k = [], 0
            while k < len(diff) - 1:
                st = diff[k]
                if not st:
                    k += 1
                    continue
                if st[0] in "RC":
                    old = diff[k + 1]
                    k += 3
                else:
                    old = diff[k + 1]
                    k += 2
                if st[0] in "AC":
                    continue
                if self.source_path(old) and not is_test(old):
                    targets.append(old)
            if not targets or len(targets) > max_targets:
                continue
            out.append({
                "set": "c", "corpus": self.name, "lang": self.lang, "query": msg, "commit": c, "at": parent,
                "targets": sorted(set(targets)),
            })
            oldest_parent = parent
            if len(out) >= cap:
                break
        self.available["c"] = len(out)
        self.history = (fp.index(oldest_parent) + 1) if oldest_parent in fp else 0
        return out


# ---------------------------------------------------------------------------
# BM25


class BM25:
    """Okapi BM25 (k1=1.2, b=0.75) with postings, documents added and removed
    incrementally; each distinct query word counts once."""

    def __init__(self, k1=1.2, b=0.75):
        self.k1, self.b = k1, b
        self.post = collections.defaultdict(dict)  # word -> {doc: tf}
        self.lens = {}
        self.total = 0

    def add(self, doc, counter):
        n = sum(counter.values())
        self.lens[doc] = n
        self.total += n
        for w, tf in counter.items():
            self.post[w][doc] = tf

    def remove(self, doc, counter):
        self.total -= self.lens.pop(doc)
        for w in counter:
            p = self.post[w]
            p.pop(doc, None)
            if not p:
                del self.post[w]

    def search(self, query_words, k):
        n = len(self.lens)
        if not n:
            return []
        avg = self.total / n
        scores = collections.defaultdict(float)
        for w in set(query_words):
            p = self.post.get(w)
            if not p:
                continue
            idf = math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5))
            for doc, tf in p.items():
                dl = self.lens[doc]
                scores[doc] += idf * tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * dl / avg))
        return sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:k]


def bm25_symbols(corpus, texts, kinds):
    """One document per definition of `kinds` (its whole span, decorators and
    signature included) in `texts` (path -> text)."""
    idx, docs = BM25(), []
    for s in corpus.syms:
        if s.kind not in kinds or (s.kind != "type" and not s.body):
            continue
        t = texts.get(s.path)
        if t is None:
            continue
        lines = t.split("\n")
        body = "\n".join(lines[s.start - 1:s.end])
        docs.append(s)
        idx.add(len(docs) - 1, collections.Counter(words(body)))
    return idx, docs


# ---------------------------------------------------------------------------
# sno over MCP


class Sno:
    """One `sno serve` process speaking MCP JSON-RPC over stdio."""

    def __init__(self, sno, repo, env, log_path):
        self.repo = repo
        self.errlog = open(log_path, "ab")
        self.p = subprocess.Popen([sno, "serve", repo], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errlog, env=env)
        self.next_id = 1
        r = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "sno-quality-eval", "version": "1"}})
        if "result" not in r:
            raise RuntimeError(f"initialize failed: {r}")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def request(self, method, params):
        i = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError(f"sno serve {self.repo} closed its output (see {self.errlog.name})")
            r = json.loads(line)
            if r.get("id") == i:
                return r

    def search(self, query, limit, max_tokens, at=None, group=None, fmt="json"):
        """(answer dict or None, the answer's whole text, ms, error). The
        markdown form (what agents read by default) comes back as
        {"package": text}."""
        args = {"query": query, "limit": limit, "max_tokens": max_tokens, "format": fmt}
        if at:
            args["at"] = at
        if group:
            args["group"] = group
        t = time.perf_counter()
        r = self.request("tools/call", {"name": "search", "arguments": args})
        ms = (time.perf_counter() - t) * 1000
        res = r.get("result") or {}
        text = "".join(c.get("text", "") for c in res.get("content", []) if c.get("type") == "text")
        if "error" in r or res.get("isError"):
            return None, text, ms, (text or json.dumps(r.get("error")))[:300]
        if fmt == "markdown":
            return {"package": text, "header": {"completeness": markdown_completeness(text)}}, text, ms, None
        try:
            return json.loads(text), text, ms, None
        except ValueError:
            return None, text, ms, "answer is not JSON"

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=60)
        except Exception:
            self.p.kill()
        self.errlog.close()
        sock = os.path.join(self.repo, ".sno", "sno.sock")
        t = time.time()
        while os.path.exists(sock) and time.time() - t < 30:
            time.sleep(0.02)


def mode_env(mode, model):
    env = dict(os.environ, SNO_SERVE_IDLE_SECS="0", SNO_OFFLINE="1")
    env.pop("SNO_LOG", None)
    if mode == "hybrid":
        env["SNO_MODEL"] = model
    else:
        env["SNO_MODEL"] = "/nonexistent/sno-eval-no-model"
    return env


def sno_init(sno, repo, history, env):
    sock = os.path.join(repo, ".sno", "sno.sock")
    t = time.time()
    while os.path.exists(sock) and time.time() - t < 30:
        time.sleep(0.05)
    shutil.rmtree(os.path.join(repo, ".sno"), ignore_errors=True)
    t = time.perf_counter()
    r = subprocess.run([sno, "init", "--history", str(history), repo], capture_output=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"sno init {repo} failed: {r.stderr.decode(errors='replace')[-2000:]}")
    return time.perf_counter() - t


# ---------------------------------------------------------------------------
# Scoring


def item_name(it):
    q = it.get("qualified_name") or ""
    return re.split(r"::|\.|#", q)[-1] if q else ""


def symbol_rank(items, target, k=10):
    """1-based rank of the first item that is the target definition: same
    path, a span covering the target's declaration line, and the same name
    (an item without a name, such as a chunk, counts by its span alone)."""
    for pos, it in enumerate(items[:k]):
        if it.get("path") != target["path"]:
            continue
        line, end = it.get("line", 0), it.get("end_line", it.get("line", 0))
        if not (line <= target["line"] <= max(end, line)):
            continue
        nm = item_name(it)
        if nm and nm != target["name"]:
            continue
        return pos + 1
    return None


def ranked_files(items):
    out = []
    for it in items:
        p = it.get("path")
        if p and p not in out:
            out.append(p)
    return out


def file_rank(files, targets, k=10):
    for pos, p in enumerate(files[:k]):
        if p in targets:
            return pos + 1
    return None


def metrics(recs, system):
    ranks = [r["ranks"].get(system) for r in recs if system in r["ranks"]]
    n = len(ranks)
    if not n:
        return None
    m = {
        "n": n,
        "R@1": sum(1 for x in ranks if x and x <= 1) / n,
        "R@5": sum(1 for x in ranks if x and x <= 5) / n,
        "R@10": sum(1 for x in ranks if x and x <= 10) / n,
        "MRR@10": sum(1 / x for x in ranks if x and x <= 10) / n,
    }
    cov = [r["coverage"][system] for r in recs if "coverage" in r and system in r["coverage"]]
    if cov:
        m["files@10"] = sum(cov) / len(cov)
    ms = [r["ms"][system] for r in recs if system in r.get("ms", {})]
    if ms:
        m["p50_ms"] = pct(ms, 50)
        m["p95_ms"] = pct(ms, 95)
    return m


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return None
    k = (len(xs) - 1) * p / 100
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


# ---------------------------------------------------------------------------
# Token counting (the budget figures)


class Tokens:
    def __init__(self):
        self.enc = None
        self.exact = False
        try:
            import tiktoken
            import tiktoken.load
        except ImportError:
            return
        paths = glob.glob(os.path.join(os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo")), "registry/src/*/tiktoken-rs-*/assets/cl100k_base.tiktoken"))
        try:
            if paths:
                ranks = tiktoken.load.load_tiktoken_bpe(sorted(paths)[-1])
                self.enc = tiktoken.Encoding(
                    name="cl100k_base",
                    pat_str=r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
                    mergeable_ranks=ranks,
                    special_tokens={"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276},
                )
            elif os.environ.get("TIKTOKEN_CACHE_DIR"):
                self.enc = tiktoken.get_encoding("cl100k_base")
            self.exact = self.enc is not None
        except Exception as e:  # noqa: BLE001
            log(f"tiktoken present but cl100k_base unavailable ({e}); counting bytes/4")
            self.enc = None

    def count(self, text):
        if self.enc is not None:
            return len(self.enc.encode(text, disallowed_special=()))
        return (len(text.encode("utf-8")) + 3) // 4


# A fence closes on a line of at least as many backticks (CommonMark): a
# quoted markdown file's own fences sit inside a longer one.
FENCE = re.compile(r"^(`{3,})[^`\n]*\n(.*?)^\1`*[ \t]*$", re.S | re.M)


def code_text(package):
    """The code a markdown package quotes: its fences' contents, less the
    lines that start a file's later pieces (`⋮ line n`)."""
    code = "".join(m.group(2) for m in FENCE.finditer(package or ""))
    return "".join(l for l in code.splitlines(keepends=True) if not l.startswith("\u22ee "))


# ---------------------------------------------------------------------------


LOG_T0 = time.time()


def log(msg):
    print(f"[{time.time() - LOG_T0:7.1f}s] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# The run


BUDGETS = (300, 500, 1000, 2000, 4000, 8000)
PROBE_LENGTHS = (2, 8, 32, 128, 512)
PROBE_ROUNDS = 3


def run_bm25(corpus, qa, qb, qc):
    t = time.perf_counter()
    if qa:
        idx, docs = bm25_symbols(corpus, corpus.stripped, ("function", "method"))
        for r in qa:
            r["ranks"]["bm25"] = rank_docs(idx.search(words(r["query"]), 10), docs, r["target"])
    if qb:
        idx, docs = bm25_symbols(corpus, corpus.files, ("function", "method", "type"))
        for r in qb:
            r["ranks"]["bm25"] = rank_docs(idx.search(words(r["query"]), 10), docs, r["target"])
    if qc:
        bm25_history(corpus, qc)
    return time.perf_counter() - t


def rank_docs(hits, docs, target):
    for pos, (d, _) in enumerate(hits):
        s = docs[d]
        if s.path == target["path"] and s.line == target["line"]:
            return pos + 1
    return None


def bm25_history(corpus, qc):
    """BM25 over the source files (path and text) at each commit's parent,
    moved from one parent to the next by their differences."""
    idx, cur = BM25(), {}
    br = BlobReader(corpus.git_dir)
    cache = corpus.blobs

    def counter(path, oid):
        key = (path, oid)
        if key not in cache:
            text = decode(br.read(oid)) or ""
            cache[key] = collections.Counter(words(path + "\n" + text))
        return cache[key]

    for r in reversed(qc):  # oldest first
        files = {p: o for p, o in tree_files(corpus.git_dir, r["at"]).items() if corpus.source_path(p)}
        for p in [p for p in cur if files.get(p) != cur[p]]:
            idx.remove(p, counter(p, cur.pop(p)))
        for p, o in files.items():
            if p not in cur:
                idx.add(p, counter(p, o))
                cur[p] = o
        hits = [p for p, _ in idx.search(words(r["query"]), 10)]
        r["ranks"]["bm25"] = file_rank(hits, set(r["targets"]))
        r["coverage"]["bm25"] = len(set(hits) & set(r["targets"])) / len(r["targets"])
    br.close()


def markdown_completeness(text):
    """The completeness of a markdown package's header, as the JSON form's:
    `full: n item(s)`, `k of n items` (something left out) or `n item(s), k
    cut` (nothing left out, an item cut to fit). (Before 2026-12-06 the
    header said `budget-limited: k of n` and `truncated: k of n`.)"""
    head = (text or "").split("\n", 1)[0]
    if re.search(r" · full: ", head):
        return {"status": "full", "omitted": 0}
    m = re.search(r" · (\d+) of (\d+) items · ", head)
    if m:
        status = "truncated" if "\u2026 [cut]" in (text or "") else "budget_limited"
        return {"status": status, "omitted": int(m.group(2)) - int(m.group(1))}
    if re.search(r" · \d+ item\(s\), \d+ cut · ", head):
        return {"status": "truncated", "omitted": 0}
    m = re.search(r" · (full|budget-limited|truncated): ", head)
    status = {"budget-limited": "budget_limited"}.get(m.group(1), m.group(1)) if m else None
    left_out = status in ("budget_limited", "truncated")
    return {"status": status, "omitted": 1 if left_out else 0}


def ranked_items(ans, key="items"):
    """Everything an answer ranked, best first: the entries in it and those
    it lists as left out for the budget."""
    ans = ans or {}
    got = list(ans.get(key, []))
    if key == "items":
        got += ans.get("omitted", [])
    else:
        got += [o for o in ans.get("omitted", []) if not o.get("qualified_name")]
    return sorted(got, key=lambda it: it.get("rank", 0))


def answer_budget(tok, ans, text, max_tokens, limit, mode, fmt="json", group="symbols"):
    comp = (ans or {}).get("header", {}).get("completeness", {})
    whole = tok.count(text)
    if (ans or {}).get("package"):
        code = tok.count(code_text(ans["package"]))
    else:
        code = tok.count("".join(it.get("source") or "" for it in (ans or {}).get("items", [])))
    more = bool(comp.get("omitted") or comp.get("truncated") or comp.get("status") not in (None, "full"))
    return {"mode": mode, "format": fmt, "max_tokens": max_tokens, "limit": limit, "whole": whole, "code": code, "more": more, "status": comp.get("status"), "group": group}


def run_sno(corpus, args, tok, qa, qb, qc, out):
    modes = args.modes
    init_env = mode_env("hybrid" if "hybrid" in modes else "lexical", args.model)
    logs = os.path.join(corpus.work, "serve.log")
    copies = []
    if qa:
        d = corpus.stripped_dir()
        out["index_s"]["stripped"] = sno_init(args.sno, d, 0, init_env)
        copies.append(("stripped", d))
    if qb or qc:
        d = corpus.orig_dir()
        hist = corpus.history if qc else 0
        out["index_s"]["orig"] = sno_init(args.sno, d, hist, init_env)
        out["history"] = hist
        copies.append(("orig", d))
    for mode in modes:
        env = mode_env(mode, args.model)
        for which, d in copies:
            srv = Sno(args.sno, d, env, logs)
            try:
                warm, _, _, err = srv.search("warm up the indexes", 10, 2000)
                if err:
                    raise RuntimeError(f"sno search failed on {d}: {err}")
                off = warm.get("header", {}).get("semantic_off_reason")
                out["semantic_off"][mode] = off
                if mode == "hybrid" and off:
                    log(f"  WARNING: {corpus.name} hybrid run has the semantic signal off: {off}")
                if which == "stripped":
                    for r in qa:
                        sym_query(srv, r, mode, args, tok, out)
                    if args.probes:
                        budget_sweep(srv, qa, mode, args, tok, out)
                else:
                    for r in qb:
                        sym_query(srv, r, mode, args, tok, out)
                    for r in qc:
                        ans, text, ms, err = srv.search(r["query"], args.limit_files, args.max_tokens, at=r["at"], group="files" if args.files else None)
                        if args.files:
                            files = [f["path"] for f in ranked_items(ans, "files")]
                        else:
                            files = ranked_files(ranked_items(ans))
                        r["ranks"][mode] = file_rank(files, set(r["targets"]))
                        r["coverage"][mode] = len(set(files[:10]) & set(r["targets"])) / len(r["targets"])
                        r["ms"][mode] = ms
                        r.setdefault("distinct_files", {})[mode] = len(files)
                        r.setdefault("top_files", {})[mode] = files[:50]
                        if err:
                            r.setdefault("errors", {})[mode] = err
                        out["budget"].append(answer_budget(tok, ans, text, args.max_tokens, args.limit_files, mode,
                                                           group="files" if args.files else "symbols"))
                    if args.probes:
                        length_probe(srv, qc or qa or qb, mode, out)
            finally:
                srv.close()


# The budget of the limit 10 vs 50 comparison: enough to list ten items.
INVARIANCE_TOKENS = 8000


def sym_query(srv, r, mode, args, tok, out):
    ans, text, ms, err = srv.search(r["query"], args.limit, args.max_tokens)
    items = ranked_items(ans)
    r["ranks"][mode] = symbol_rank(items, r["target"])
    r["ms"][mode] = ms
    r.setdefault("top", {})[mode] = [f"{it.get('qualified_name')} {it.get('path')}:{it.get('line')}" for it in items[:3]]
    if err:
        r.setdefault("errors", {})[mode] = err
    out["budget"].append(answer_budget(tok, ans, text, args.max_tokens, args.limit, mode))
    if args.invariance:
        # Ranks, not the budget: both answers get room to list their first
        # ten (an answer within a small budget lists only some of the items
        # it left out, and which depends on what fit).
        room = max(args.max_tokens, INVARIANCE_TOKENS)
        ans10, _, _, _ = srv.search(r["query"], 10, room)
        ans50, _, _, _ = srv.search(r["query"], 50, room)
        items10, items50 = ranked_items(ans10), ranked_items(ans50)
        key = lambda it: (it.get("rank"), it.get("path"), it.get("line"), it.get("qualified_name"))  # noqa: E731
        r.setdefault("same_top10_at_limit50", {})[mode] = [key(i) for i in items10[:10]] == [key(i) for i in items50[:10]]
        r.setdefault("rank_at_limit50", {})[mode] = symbol_rank(items50, r["target"])


def budget_sweep(srv, qa, mode, args, tok, out):
    for r in qa[: args.budget_queries]:
        for limit in (10, 50):
            for b in BUDGETS:
                for fmt in ("markdown", "json"):
                    ans, text, _, _ = srv.search(r["query"], limit, b, fmt=fmt)
                    out["budget"].append(dict(answer_budget(tok, ans, text, b, limit, mode, fmt), sweep=True))


def length_probe(srv, recs, mode, out):
    """Query time against query length at the indexed head: each of 20
    texts cut to each of PROBE_LENGTHS words, a text shorter than that
    going on with the words of the texts after it (not repeated: a
    repeated text has no more distinct words than its first copy, and its
    answer is one already made)."""
    texts = [r["query"].split() for r in recs]
    words = [w for t in texts for w in t]
    starts = [sum(len(t) for t in texts[:i]) for i in range(min(20, len(texts)))]
    # The lengths interleaved (each text at every length in turn) and the
    # whole asked PROBE_ROUNDS times: asked one length after another, the
    # first length met a daemon just out of the budget sweep and the VM's
    # drift over the minute fell on one length, not on all.
    for _ in range(PROBE_ROUNDS):
        for at in starts:
            for n in PROBE_LENGTHS:
                q = " ".join((words[at:] + words[:at])[:n])
                _, _, ms, _ = srv.search(q, 10, 2000)
                out["length_ms"].setdefault(mode, {}).setdefault(str(n), []).append(ms)


def summarize(queries, systems):
    summary = {}
    for st in ("a", "b", "c"):
        recs = [r for r in queries if r["set"] == st]
        if not recs:
            continue
        langs = sorted({r["lang"] for r in recs})
        groups = [(lg, [r for r in recs if r["lang"] == lg]) for lg in langs] + [("all", recs)]
        if st == "a":
            groups.append(("no-name-word", [r for r in recs if r["no_name_word"]]))
        if st == "b":
            groups.append(("form:name", [r for r in recs if r["form"] == "name"]))
            groups.append(("form:qualified", [r for r in recs if r["form"] == "qualified"]))
        for g, rs in groups:
            for sysname in systems:
                m = metrics(rs, sysname)
                if m:
                    summary.setdefault(st, {}).setdefault(g, {})[sysname] = m
    return summary


def fmt(x, w=6, d=3):
    if x is None:
        return " " * (w - 1) + "-"
    if isinstance(x, float):
        return f"{x:{w}.{d}f}"
    return f"{x:>{w}}"


SET_NAMES = {"a": "(a) docstring -> code", "b": "(b) identifiers", "c": "(c) change localization (files)"}


def print_tables(res, systems):
    out = []
    summary = res["summary"]
    for st, groups in summary.items():
        out.append("")
        out.append(SET_NAMES[st] + ("  [R@k: any target file in the top k; files@10: share of the target files in the top 10]" if st == "c" else ""))
        hdr = f"{'group':<16}{'system':<9}{'n':>5}{'R@1':>7}{'R@5':>7}{'R@10':>7}{'MRR@10':>8}"
        if st == "c":
            hdr += f"{'files@10':>9}"
        hdr += f"{'p50 ms':>8}{'p95 ms':>8}"
        out.append(hdr)
        for g, by in groups.items():
            for sysname in systems:
                m = by.get(sysname)
                if not m:
                    continue
                line = f"{g:<16}{sysname:<9}{m['n']:>5}{fmt(m['R@1'], 7)}{fmt(m['R@5'], 7)}{fmt(m['R@10'], 7)}{fmt(m['MRR@10'], 8)}"
                if st == "c":
                    line += fmt(m.get("files@10"), 9)
                line += fmt(m.get("p50_ms"), 8, 1) + fmt(m.get("p95_ms"), 8, 1)
                out.append(line)
    if res.get("c_files"):
        out.append("")
        out.append(f"Set (c): distinct files among the {res['meta']['limit_files']} items of an answer:")
        for mode, v in res["c_files"].items():
            out.append(f"  {mode:<8} median {v['median']:g}; fewer than 10 files in {v['under10']:.1%} of {v['n']} answers")
    if res.get("budget_summary"):
        out.append("")
        out.append(f"Budget (whole answer text in {res['meta']['token_counter']} tokens against max_tokens):")
        for mode, b in res["budget_summary"].items():
            out.append(
                f"  {mode:<8} answers {b['n']}: within max_tokens {b['within']:.1%} (median whole/max {b['median_ratio']:.2f}); "
                f"with more candidates than fit ({b['n_more']}): code >= 80% of max_tokens in {b['code80']:.1%}, "
                f"median code/max {b['median_code_ratio']:.2f}, no code at all in {b['no_code']:.1%}"
            )
    if res.get("invariance"):
        out.append("")
        out.append(f"Ranks against limit (sets a, b: the first 10 at limit 10 vs at limit 50, both with {INVARIANCE_TOKENS} tokens to list them):")
        for mode, v in res["invariance"].items():
            out.append(f"  {mode:<8} same top 10 in {v['same']:.1%} of {v['n']} queries; R@10 at limit 10 {v['r10_l10']:.3f}, at limit 50 {v['r10_l50']:.3f}")
    if res.get("length_summary"):
        out.append("")
        out.append("Query time against query length (p50 ms at the indexed head; the same texts cut to N words):")
        for mode, v in res["length_summary"].items():
            out.append("  " + f"{mode:<8} " + "  ".join(f"{n} words: {ms:.1f}" for n, ms in v.items()))
    if res.get("targets"):
        out.append("")
        out.append("Issue 16 targets:")
        for t in res["targets"]:
            out.append(f"  [{'met' if t['met'] else 'NOT met'}] {t['what']}: {t['figure']}")
    return "\n".join(out)


def budget_summary(budget):
    """Per mode and answer form (markdown: what agents read by default)."""
    out = {}
    for key in sorted({(b["mode"], b.get("format", "json")) for b in budget}):
        mode = f"{key[0]}/{key[1]}"
        bs = [b for b in budget if (b["mode"], b.get("format", "json")) == key]
        # The share of code is a symbol answer's: a file answer (set c)
        # lists each file's symbols and quotes no code by design.
        more = [b for b in bs if b["more"] and b.get("group", "symbols") == "symbols"]
        out[mode] = {
            "n": len(bs),
            "within": sum(1 for b in bs if b["whole"] <= b["max_tokens"]) / len(bs),
            "median_ratio": statistics.median(b["whole"] / b["max_tokens"] for b in bs),
            "n_more": len(more),
            "code80": (sum(1 for b in more if b["code"] >= 0.8 * b["max_tokens"]) / len(more)) if more else 0.0,
            "median_code_ratio": statistics.median(b["code"] / b["max_tokens"] for b in more) if more else 0.0,
            "no_code": (sum(1 for b in more if b["code"] == 0) / len(more)) if more else 0.0,
        }
    return out


def check_targets(summary, res):
    ts = []

    def get(st, g, s, k):
        return summary.get(st, {}).get(g, {}).get(s, {}).get(k)

    a10, amrr = get("a", "all", "hybrid", "R@10"), get("a", "all", "hybrid", "MRR@10")
    if a10 is not None:
        ts.append({"what": "docstring -> code R@10 >= 0.80 and MRR@10 >= 0.50 (model on)", "figure": f"R@10 {a10:.3f}, MRR@10 {amrr:.3f}", "met": a10 >= 0.8 and amrr >= 0.5})
        langs = [g for g in summary.get("a", {}) if g not in ("all", "no-name-word")]
        worst = []
        for lg in langs:
            h, b = get("a", lg, "hybrid", "R@10"), get("a", lg, "bm25", "R@10")
            if h is not None and b is not None:
                worst.append((h - b, lg, h, b))
        if worst:
            ok = all(d >= 0.15 for d, *_ in worst)
            ts.append({"what": "docstring -> code R@10 >= BM25 + 0.15 in every language", "figure": ", ".join(f"{lg} {h:.2f} vs {b:.2f}" for _, lg, h, b in sorted(worst, key=lambda x: x[1])), "met": ok})
    for s in ("hybrid", "lexical"):
        b10, b1 = get("b", "all", s, "R@10"), get("b", "all", s, "R@1")
        if b10 is not None:
            ts.append({"what": f"identifiers R@10 >= 0.98, R@1 >= 0.90 ({s})", "figure": f"R@10 {b10:.3f}, R@1 {b1:.3f}", "met": b10 >= 0.98 and b1 >= 0.9})
    c10, cb = get("c", "all", "hybrid", "R@10"), get("c", "all", "bm25", "R@10")
    if c10 is None:
        c10 = get("c", "all", "lexical", "R@10")
    if c10 is not None and cb is not None:
        ts.append({"what": "change localization file R@10 >= BM25 + 0.10", "figure": f"{c10:.3f} vs BM25 {cb:.3f}", "met": c10 >= cb + 0.10})
    for mode, b in res.get("budget_summary", {}).items():
        ts.append({"what": f"whole answer <= max_tokens in 100% of answers ({mode})", "figure": f"{b['within']:.1%}", "met": b["within"] >= 1.0})
        if mode.endswith("/json"):
            continue  # the structured form's metadata is not code by design
        ts.append({"what": f">= 80% of the budget used for code when more candidates exist ({mode})", "figure": f"{b['code80']:.1%} of {b['n_more']} answers", "met": b["n_more"] > 0 and b["code80"] >= 1.0})
    for mode, v in res.get("invariance", {}).items():
        ts.append({"what": f"ranks independent of limit ({mode})", "figure": f"same top 10 in {v['same']:.1%}", "met": v["same"] >= 1.0})
    for mode, v in res.get("length_summary", {}).items():
        if v:
            lo, hi = min(v.values()), max(v.values())
            ts.append({"what": f"query time independent of query length within 2x ({mode})", "figure": f"p50 {lo:.1f}..{hi:.1f} ms ({hi / lo:.2f}x)", "met": hi <= 2 * lo})
    return ts


def markdown(res):
    """The README's tables from a results file."""
    meta, out = res["meta"], []
    systems = [m for m in meta["modes"]] + ["bm25"]
    label = {"hybrid": "sno (model on)", "lexical": "sno --lexical-only", "bm25": "BM25"}
    out.append(f"{meta.get('sno_version') or meta['sno']}, {meta['started'][:10]}; model {os.path.basename(meta['model'] or '-')}; "
               f"limit {meta['limit']} (set c: {meta['limit_files']}), max_tokens {meta['max_tokens']}; tokens counted with {meta['token_counter']}.")
    out.append("")
    out.append("| repository | commit | language | lines | (a) | (b) | (c) | history |")
    out.append("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for c in res["corpora"]:
        q = c["queries"]
        out.append(f"| {c['repo']} | `{c['commit'][:12]}` | {c['lang']} | {c['lines']} | {q['a']} | {q['b']} | {q['c']} | {c['history']} |")
    tot = {k: sum(c["queries"][k] for c in res["corpora"]) for k in "abc"}
    out.append(f"| **all** | | | {sum(c['lines'] for c in res['corpora'])} | {tot['a']} | {tot['b']} | {tot['c']} | |")
    for st, groups in res["summary"].items():
        out.append("")
        out.append(f"**{SET_NAMES[st]}**" + (" (R@k: a target file among the first k distinct files; files@10: share of the target files in the top 10)" if st == "c" else ""))
        out.append("")
        cols = ["R@1", "R@5", "R@10", "MRR@10"] + (["files@10"] if st == "c" else [])
        out.append("| group | n | system | " + " | ".join(cols) + " | p50 ms | p95 ms |")
        out.append("| --- | ---: | --- | " + " | ".join("---:" for _ in cols) + " | ---: | ---: |")
        for g, by in groups.items():
            for s in systems:
                m = by.get(s)
                if not m:
                    continue
                vals = " | ".join(f"{m[c]:.2f}" if m.get(c) is not None else "-" for c in cols)
                lat = " | ".join(f"{m[k]:.1f}" if m.get(k) is not None else "-" for k in ("p50_ms", "p95_ms"))
                out.append(f"| {g if s == systems[0] else ''} | {m['n']} | {label[s]} | {vals} | {lat} |")
    out.append("")
    out.append(print_tables({"summary": {}, **{k: res[k] for k in ("c_files", "budget_summary", "invariance", "length_summary", "targets", "meta") if k in res}}, systems).strip())
    return "\n".join(out)


def compare(old, new):
    """R@10 and MRR@10 of two results files side by side, per set, group and
    system (queries are the same when the repositories and caps are)."""
    out = [f"old: {old['meta'].get('sno_version')} {old['meta']['sno']} ({old['meta']['started']})",
           f"new: {new['meta'].get('sno_version')} {new['meta']['sno']} ({new['meta']['started']})", ""]
    out.append(f"{'set':<4}{'group':<16}{'system':<9}{'n':>5}{'R@10 old':>10}{'new':>7}{'delta':>8}{'MRR old':>9}{'new':>7}{'delta':>8}")
    for st, groups in new["summary"].items():
        for g, by in groups.items():
            for sysname, m in by.items():
                o = old.get("summary", {}).get(st, {}).get(g, {}).get(sysname)
                if not o:
                    continue
                out.append(
                    f"{st:<4}{g:<16}{sysname:<9}{m['n']:>5}{o['R@10']:>10.3f}{m['R@10']:>7.3f}{m['R@10'] - o['R@10']:>+8.3f}"
                    f"{o['MRR@10']:>9.3f}{m['MRR@10']:>7.3f}{m['MRR@10'] - o['MRR@10']:>+8.3f}"
                    + ("" if o["n"] == m["n"] else f"  (old n {o['n']})")
                )
    return "\n".join(out)


def parse_local(spec):
    """NAME=PATH[@REV][:SETS]: the repository at REV (default HEAD)."""
    name, _, rest = spec.partition("=")
    parts = rest.split(":")
    path, _, rev = parts[0].partition("@")
    d = {"name": name, "local": os.path.abspath(path), "commit": rev or None}
    if len(parts) > 1 and parts[1]:
        d["sets"] = parts[1]
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sno", default=os.path.join(ROOT, "target", "release", "sno"), help="the sno binary (default: target/release/sno)")
    ap.add_argument("--model", default=os.environ.get("SNO_MODEL"), help="model2vec directory for the hybrid mode (default: $SNO_MODEL)")
    ap.add_argument("--modes", default=None, help="hybrid,lexical (default: both, or lexical alone without a model)")
    ap.add_argument("--repos", default=None, help="comma-separated names from the built-in list (default: all)")
    ap.add_argument("--local", action="append", default=[], metavar="NAME=PATH[@REV][:SETS]", help="a local git repository at REV (default its HEAD) instead of the built-in list, e.g. crates=/tmp/x:ab (repeatable)")
    ap.add_argument("--small", action="store_true", help="a quick run: fewer queries per repository, smaller budget sweep")
    ap.add_argument("--cap-a", type=int, default=None, help="queries of set (a) per repository (default 120; --small 25)")
    ap.add_argument("--cap-b", type=int, default=None, help="queries of set (b) per repository (default 40; --small 15)")
    ap.add_argument("--cap-c", type=int, default=None, help="commits of set (c) per repository (default 100; --small 20)")
    ap.add_argument("--limit", type=int, default=10, help="search limit for sets (a) and (b) (default 10)")
    ap.add_argument("--symbol-files", dest="files", action="store_false", help="set (c) groups sno's ranked symbols by file instead of asking for files (group: files, the default)")
    ap.add_argument("--limit-files", type=int, default=50, help="search limit for set (c) (default 50, the maximum)")
    ap.add_argument("--max-tokens", type=int, default=2000, help="max_tokens of each scored search (default 2000)")
    ap.add_argument("--budget-queries", type=int, default=None, help="queries per repository in the budget sweep (default 8; --small 3)")
    ap.add_argument("--no-invariance", dest="invariance", action="store_false", help="skip the limit 10 vs 50 comparison")
    ap.add_argument("--no-probes", dest="probes", action="store_false", help="skip the budget sweep and the query-length probe")
    ap.add_argument("--mirror", action="append", default=[], help="a directory of local mirrors, OWNER+NAME/repo (default: /work/.mirror if it exists)")
    ap.add_argument("--cache", default=os.path.join(HERE, ".cache"), help="sources and working copies (default: ops/bench/quality/.cache)")
    ap.add_argument("--out", default=None, help="results JSON (default: <cache>/results-<time>.json)")
    ap.add_argument("--queries-only", action="store_true", help="build and print the query sets, run nothing")
    ap.add_argument("--report", metavar="RESULTS", help="print the Markdown tables of a results file and exit")
    ap.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"), help="compare two results files and exit")
    args = ap.parse_args()
    if args.compare:
        print(compare(json.load(open(args.compare[0])), json.load(open(args.compare[1]))))
        return
    if args.report:
        print(markdown(json.load(open(args.report))))
        return

    small = args.small
    args.cap_a = args.cap_a or (25 if small else 120)
    args.cap_b = args.cap_b or (15 if small else 40)
    args.cap_c = args.cap_c or (20 if small else 100)
    args.budget_queries = args.budget_queries if args.budget_queries is not None else (3 if small else 8)
    if not args.mirror and os.path.isdir("/work/.mirror"):
        args.mirror = ["/work/.mirror"]
    if args.model and not os.path.isdir(args.model):
        log(f"no model directory at {args.model}: lexical mode only")
        args.model = None
    args.modes = (args.modes or ("hybrid,lexical" if args.model else "lexical")).split(",")
    if "hybrid" in args.modes and not args.model:
        sys.exit("eval.py: the hybrid mode needs --model or SNO_MODEL")
    args.sno = os.path.abspath(args.sno)
    if not args.queries_only and not os.access(args.sno, os.X_OK):
        sys.exit(f"eval.py: no sno binary at {args.sno} (--sno PATH)")

    if args.local:
        specs = [parse_local(s) for s in args.local]
    else:
        specs = REPOS
        if args.repos:
            want = args.repos.split(",")
            specs = [s for s in REPOS if s["name"] in want]
    tok = Tokens()
    systems = [m for m in args.modes] + ["bm25"]
    version = ""
    if not args.queries_only:
        version = subprocess.run([args.sno, "--version"], capture_output=True, text=True).stdout.strip()
    res = {
        "meta": {
            "sno": args.sno, "sno_version": version, "model": args.model, "modes": args.modes,
            "small": small, "caps": [args.cap_a, args.cap_b, args.cap_c], "limit": args.limit,
            "limit_files": args.limit_files, "max_tokens": args.max_tokens,
            "token_counter": "cl100k_base" if tok.exact else "bytes/4 (install tiktoken for cl100k_base)",
            "started": time.strftime("%Y-%m-%d %H:%M:%S"), "gen_version": GEN_VERSION,
        },
        "corpora": [], "queries": [],
    }
    budget, length_ms = [], {}
    for spec in specs:
        t0 = time.perf_counter()
        log(f"{spec['name']}: preparing")
        git_dir = ensure_source(spec, args.cache, args.mirror)
        corpus = Corpus(spec, git_dir, os.path.join(args.cache, "work"), args)
        qa = corpus.set_a(args.cap_a) if "a" in corpus.sets else []
        qb = corpus.set_b(args.cap_b) if "b" in corpus.sets else []
        qc = corpus.set_c(args.cap_c) if "c" in corpus.sets else []
        corpus.history = getattr(corpus, "history", 0)
        for r in qa + qb + qc:
            r["ranks"], r["ms"], r["coverage"] = {}, {}, {}
            if r["set"] != "c":
                r.pop("coverage")
        info = {
            "name": corpus.name, "repo": spec.get("repo") or spec.get("local"), "commit": corpus.commit, "lang": corpus.lang,
            "files": len(corpus.files), "lines": corpus.lines, "definitions": len(corpus.syms),
            "queries": {"a": len(qa), "b": len(qb), "c": len(qc)}, "available": corpus.available, "history": corpus.history,
            "index_s": {}, "semantic_off": {},
        }
        log(f"{corpus.name}: {len(corpus.files)} source files, {corpus.lines} lines, {len(corpus.syms)} definitions; queries a={len(qa)} b={len(qb)} c={len(qc)} (history {corpus.history})")
        if args.queries_only:
            for r in qa + qb + qc:
                tgt = r.get("target", {}).get("qualified") or ",".join(r.get("targets", []))
                print(f"{r['set']} {corpus.name} {r['lang']}: {r['query'][:150]!r} -> {tgt}")
            res["queries"].extend(qa + qb + qc)
            continue
        info["bm25_s"] = run_bm25(corpus, qa, qb, qc)
        out = {"index_s": info["index_s"], "semantic_off": info["semantic_off"], "budget": budget, "length_ms": length_ms}
        run_sno(corpus, args, tok, qa, qb, qc, out)
        info["history"] = out.get("history", 0)
        info["wall_s"] = time.perf_counter() - t0
        res["corpora"].append(info)
        res["queries"].extend(qa + qb + qc)
        part = summarize(qa + qb + qc, systems)
        log(f"{corpus.name}: done in {info['wall_s']:.0f}s; " + "; ".join(
            f"{st} R@10 " + " ".join(f"{s} {part[st]['all'][s]['R@10']:.2f}" for s in systems if s in part[st]["all"])
            for st in part
        ))
    if args.queries_only:
        return
    res["summary"] = summarize(res["queries"], systems)
    res["budget"] = budget
    res["budget_summary"] = budget_summary(budget) if budget else {}
    inv = {}
    for mode in args.modes:
        rs = [r for r in res["queries"] if mode in r.get("same_top10_at_limit50", {})]
        if rs:
            inv[mode] = {
                "n": len(rs),
                "same": sum(1 for r in rs if r["same_top10_at_limit50"][mode]) / len(rs),
                "r10_l10": sum(1 for r in rs if r["ranks"].get(mode)) / len(rs),
                "r10_l50": sum(1 for r in rs if r["rank_at_limit50"][mode] and r["rank_at_limit50"][mode] <= 10) / len(rs),
            }
    res["invariance"] = inv
    res["length_summary"] = {m: {n: pct(v, 50) for n, v in d.items()} for m, d in length_ms.items()}
    cfiles = {}
    for mode in args.modes:
        df = [r["distinct_files"][mode] for r in res["queries"] if r["set"] == "c" and mode in r.get("distinct_files", {})]
        if df:
            cfiles[mode] = {"n": len(df), "median": statistics.median(df), "under10": sum(1 for x in df if x < 10) / len(df)}
    res["c_files"] = cfiles
    res["length_ms"] = length_ms
    res["targets"] = check_targets(res["summary"], res)
    res["meta"]["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    out_path = args.out or os.path.join(args.cache, f"results-{time.strftime('%Y%m%d-%H%M%S')}.json")
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w") as f:
        json.dump(res, f, indent=1)
    print(f"sno quality eval: {version or args.sno}; modes {', '.join(args.modes)}; model {args.model or '-'}")
    print("corpora: " + ", ".join(f"{c['name']} ({c['lang']}, {c['lines']} lines, a={c['queries']['a']} b={c['queries']['b']} c={c['queries']['c']})" for c in res["corpora"]))
    print(print_tables(res, systems))
    print(f"\nresults: {out_path}")


if __name__ == "__main__":
    main()
