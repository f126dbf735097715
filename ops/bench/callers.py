#!/usr/bin/env python3
"""Precision of sno's callers against an independent reference (issue 14).

Each language is checked against a tool nobody here wrote:
- Python: jedi. A caller sno reports is confirmed when jedi's `goto` on the
  called name at that line reaches the target's definition, and jedi's
  `get_references` on the definition gives the call sites sno should find.
- Go: the standard library's type checker (go/types), run by
  ops/bench/callers-go over the whole module: every call whose callee
  resolves to a function or method of the module, with its definition.
- Rust: rust-analyzer's LSIF dump (`rust-analyzer lsif`): every reference
  followed by `(` or `::<`, with the definition rust-analyzer resolves it to.
A caller sno reports is confirmed when the reference resolves a call of the
target's name on that line to the target.

Targets are chosen by a rule, not by hand: for Python, every top-level
function and method of a top-level class in the package's non-test sources
(no dunder methods); for Go and Rust, every function and method `sno
outline` lists in non-test sources (not in a `tests` module). They are
ordered by a hash of their name, and the first --per-repo that have a
caller on either side are kept.

Prints, per repository and over all: exact callers and how many the
reference confirms (precision, target >= 0.99), heuristic callers and their
precision, recall of all callers and of exact ones against the reference's
call sites, and every false exact caller with path:line.

Usage: ops/bench/callers.py --sno target/release/sno REPO_DIR... [--per-repo 40]
         [--go-ref ops/bench/callers-go binary]
A REPO_DIR is a git work tree; it is copied, so nothing in it changes. Its
language is read off it: go.mod for Go, Cargo.toml for Rust, else Python.
Needs: pip install jedi (Python); go (Go); rust-analyzer (Rust).
"""

import argparse
import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import jedi
except ImportError:  # pragma: no cover
    jedi = None


def sources(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(".") and x not in ("tests", "test", "docs", "examples")]
        for f in files:
            if f.endswith(".py") and not f.startswith("test_"):
                yield os.path.relpath(os.path.join(d, f), root)


def definitions(root):
    """(qualified, path, line, col of the name) of functions and methods."""
    out = []
    for rel in sources(root):
        try:
            tree = ast.parse(open(os.path.join(root, rel), encoding="utf-8").read())
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((node.name, rel, node.lineno, node))
            elif isinstance(node, ast.ClassDef):
                for m in node.body:
                    if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and not m.name.startswith("__"):
                        out.append((f"{node.name}.{m.name}", rel, m.lineno, m))
    return out


def name_column(root, rel, line, name):
    """Column (0-based) of `def name` on `line` (decorators move the def)."""
    lines = open(os.path.join(root, rel), encoding="utf-8").read().splitlines()
    for k in range(line - 1, min(line + 20, len(lines))):
        at = lines[k].find(f"def {name}")
        if at >= 0:
            return k + 1, at + 4
    return line, 0


def sno(binary, repo, *args):
    o = subprocess.run([binary, *args], cwd=repo, capture_output=True, text=True,
                       env={**os.environ, "SNO_OFFLINE": "1", "SNO_MODEL": "/nonexistent"})
    if o.returncode != 0:
        return None
    return json.loads(o.stdout)


def jedi_call_sites(project, root, rel, line, col, name):
    """(path, line) of the calls jedi finds to the definition."""
    script = jedi.Script(path=os.path.join(root, rel), project=project)
    sites = set()
    for r in script.get_references(line, col, include_builtins=False):
        if r.module_path is None:
            continue
        p = os.path.relpath(str(r.module_path), root)
        if (p, r.line) == (rel, line):
            continue
        try:
            text = open(os.path.join(root, p), encoding="utf-8").read().splitlines()[r.line - 1]
        except (OSError, IndexError, UnicodeDecodeError):
            continue
        after = text[r.column + len(name):].lstrip()
        if after.startswith("("):
            sites.add((p, r.line))
    return sites


def confirms(project, root, site, name, target):
    """Whether jedi's goto on `name(` at `site` reaches `target` (path, line)."""
    p, line = site
    try:
        text = open(os.path.join(root, p), encoding="utf-8").read().splitlines()[line - 1]
    except (OSError, IndexError, UnicodeDecodeError):
        return False
    script = jedi.Script(path=os.path.join(root, p), project=project)
    start = 0
    while True:
        at = text.find(name, start)
        if at < 0:
            return False
        start = at + 1
        if not text[at + len(name):].lstrip().startswith("("):
            continue
        for d in script.goto(line, at + 1, follow_imports=True):
            if d.module_path and (os.path.relpath(str(d.module_path), root), d.line) in target:
                return True


class Jedi:
    """jedi over a Python repository."""

    def __init__(self, repo):
        if jedi is None:
            sys.exit("callers.py needs jedi for Python: pip install jedi")
        # The package's own sources first, so `from flask import x` in the
        # tests reaches this copy, not an installed one.
        roots = [os.path.join(repo, d) for d in ("src", ".") if os.path.isdir(os.path.join(repo, d))]
        self.repo, self.project = repo, jedi.Project(repo, added_sys_path=roots)

    def targets(self, binary):
        """(qualified, path, line) in hash order."""
        defs = sorted(definitions(self.repo), key=lambda d: hashlib.sha1(d[0].encode()).hexdigest())
        return [(q, rel, line) for q, rel, line, _ in defs]

    def call_sites(self, rel, line, span, short):
        dl, dc = name_column(self.repo, rel, line, short)
        return jedi_call_sites(self.project, self.repo, rel, dl, dc, short), {(rel, dl)}

    def confirms(self, site, short, target):
        return confirms(self.project, self.repo, site, short, target)

    def judges(self, site, short):
        return True


class Calls:
    """A reference given as every call it resolves: (path, line, name) ->
    the definition's (path, line)."""

    def __init__(self, repo, calls, test_file):
        self.repo, self.test_file = repo, test_file
        self.by_def, self.by_site = {}, {}
        for c in calls:
            site, d = (c["path"], c["line"]), (c["def_path"], c["def_line"])
            self.by_def.setdefault(d, set()).add((site, c["name"]))
            self.by_site.setdefault(site, set()).add((c["name"], d))

    def targets(self, binary):
        """Functions and methods `sno outline` lists in non-test files."""
        files = subprocess.run(["git", "ls-files"], cwd=self.repo, capture_output=True, text=True,
                               check=True).stdout.split()
        out = []
        for rel in files:
            if self.test_file(rel):
                continue
            o = sno(binary, self.repo, "outline", rel, "--json")
            stack = list((o or {}).get("outline", []))
            while stack:
                n = stack.pop()
                if n["name"] == "tests":
                    continue  # a Rust test module
                stack += n.get("children", [])
                if n["kind"] in ("function", "method"):
                    out.append((f"{rel}:{n['name']}", rel, n["line"], n["end_line"]))
        out.sort(key=lambda d: hashlib.sha1(f"{d[0]}:{d[2]}".encode()).hexdigest())
        return out

    def call_sites(self, rel, line, end_line, short):
        # The definition is the name's identifier, on the symbol's first
        # lines (after attributes) but never past its end.
        target = {(rel, k) for k in range(line, min(end_line, line + 5) + 1)}
        sites = {site for d in target for site, name in self.by_def.get(d, ()) if name == short}
        return sites, target

    def confirms(self, site, short, target):
        return any(name == short and d in target for name, d in self.by_site.get(site, ()))

    def judges(self, site, short):
        """Whether the reference resolved a call of `short` on that line at
        all: code compiled out for this machine (`#[cfg(windows)]`, a
        `_windows.go` file) is not analysed, and a caller there can be
        neither confirmed nor refuted."""
        return any(name == short for name, _ in self.by_site.get(site, ()))


def go_reference(repo, go_ref):
    out = subprocess.run([go_ref, repo], capture_output=True, text=True, check=True).stdout
    calls = [json.loads(l) for l in out.splitlines() if l.strip()]
    return Calls(repo, calls, lambda rel: not rel.endswith(".go") or rel.endswith("_test.go")
                 or "testdata/" in rel or rel.startswith("_"))


def rust_reference(repo):
    """Every call-shaped reference rust-analyzer resolves inside the repository."""
    o = subprocess.run(["rust-analyzer", "lsif", repo], capture_output=True, text=True)
    if o.returncode != 0:
        sys.exit(f"rust-analyzer lsif failed on {repo}: {o.stderr[-2000:]}")
    root = "file://" + os.path.abspath(repo).rstrip("/") + "/"
    docs, ranges, nxt, defres, items, doc_of = {}, {}, {}, {}, {}, {}
    for line in o.stdout.splitlines():
        v = json.loads(line)
        lab = v["label"]
        if v["type"] == "vertex":
            if lab == "document" and v["uri"].startswith(root):
                docs[v["id"]] = v["uri"][len(root):]
            elif lab == "range":
                ranges[v["id"]] = (v["start"]["line"], v["start"]["character"], v["end"]["character"])
        elif lab == "next":
            nxt[v["outV"]] = v["inV"]
        elif lab == "textDocument/definition":
            defres[v["outV"]] = v["inV"]
        elif lab == "item" and "property" not in v:
            items.setdefault(v["outV"], []).extend((r, v["document"]) for r in v["inVs"])
        elif lab == "contains":
            for r in v["inVs"]:
                doc_of[r] = v["outV"]
    texts = {}

    def text(doc):
        if doc not in texts:
            try:
                texts[doc] = open(os.path.join(repo, docs[doc]), encoding="utf-8").read().splitlines()
            except (OSError, UnicodeDecodeError):
                texts[doc] = []
        return texts[doc]

    calls = []
    for rid, (line, col, end) in ranges.items():
        doc = doc_of.get(rid)
        if doc not in docs:
            continue
        lines = text(doc)
        if line >= len(lines):
            continue
        name, after = lines[line][col:end], lines[line][end:].lstrip()
        if not (after.startswith("(") or after.startswith("::<")):
            continue
        rs = nxt.get(rid, rid)
        for drid, ddoc in items.get(defres.get(rs, defres.get(rid)), []):
            if drid == rid:
                continue
            # A callee outside the repository (std, a dependency) is a
            # judged call of something else.
            inside = ddoc in docs and drid in ranges
            calls.append({"path": docs[doc], "line": line + 1, "name": name,
                          "def_path": docs[ddoc] if inside else "",
                          "def_line": ranges[drid][0] + 1 if inside else 0})
    return Calls(repo, calls, lambda rel: not rel.endswith(".rs") or rel.split("/")[0] in
                 ("tests", "benches", "examples") or "/tests/" in rel or rel.endswith("/tests.rs"))


def one_repo(binary, src, per_repo, work, go_ref):
    name = os.path.basename(os.path.abspath(src.rstrip("/")))
    repo = os.path.join(work, name)
    shutil.rmtree(repo, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", src, repo], check=True)
    init = subprocess.run([binary, "init", "--history", "0", "--json"], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, "SNO_OFFLINE": "1", "SNO_MODEL": "/nonexistent"})
    if init.returncode != 0:
        sys.exit(f"sno init failed on {name}: {init.stderr}")
    if os.path.exists(os.path.join(repo, "go.mod")):
        lang, ref = "go", go_reference(repo, go_ref)
        targets = ref.targets(binary)
    elif os.path.exists(os.path.join(repo, "Cargo.toml")):
        lang, ref = "rust", rust_reference(repo)
        targets = ref.targets(binary)
    else:
        lang, ref = "python", Jedi(repo)
        targets = [(q, rel, line, None) for q, rel, line in ref.targets(binary)]
    stats = {"exact": 0, "exact_ok": 0, "heur": 0, "heur_ok": 0, "ref": 0, "found": 0, "found_exact": 0, "targets": 0,
             "unjudged": 0, "unjudged_exact": 0}
    missed = []
    false_exact = []
    for qualified, rel, line, end_line in targets:
        if stats["targets"] >= per_repo:
            break
        # Python targets are named (the name must be unambiguous); the
        # others by their place, as outline gave them.
        r = sno(binary, repo, "refs", qualified if lang == "python" else f"{rel}:{line}", "--callers", "--json")
        # A name that answers with another symbol (an `@overload` stub's
        # name is its implementation's) is that symbol's target, once.
        if not r or r.get("symbol", {}).get("path") != rel or r["symbol"].get("line") != line:
            continue
        short = r["symbol"]["name"].split(".")[-1]
        ref_sites, target = ref.call_sites(rel, line, end_line or r["symbol"]["end_line"], short)
        target |= {(rel, r["symbol"]["line"]), (rel, line)}
        if not ref_sites and not r["results"]:
            continue  # nothing calls it: says nothing about precision
        stats["targets"] += 1
        stats["ref"] += len(ref_sites)
        seen = set()
        for c in r["results"]:
            site = (c["path"], c["line"])
            if site in seen:
                continue
            seen.add(site)
            if not ref.judges(site, short):
                stats["unjudged"] += 1
                stats["unjudged_exact"] += not c.get("heuristic")
                continue
            ok = site in ref_sites or ref.confirms(site, short, target)
            if c.get("heuristic"):
                stats["heur"] += 1
                stats["heur_ok"] += ok
            else:
                stats["exact"] += 1
                stats["exact_ok"] += ok
                if not ok:
                    false_exact.append(f"{qualified} <- {c['from']} at {c['path']}:{c['line']}")
            if site in ref_sites:
                stats["found"] += 1
                stats["found_exact"] += not c.get("heuristic")
        missed += [f"{qualified} <- {p}:{l}" for p, l in sorted(ref_sites - seen)]
    return f"{name} ({lang})", stats, false_exact, missed


def ratio(a, b):
    return f"{a / b:.3f}" if b else "n/a"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sno", required=True)
    ap.add_argument("--per-repo", type=int, default=40)
    ap.add_argument("--show-missed", type=int, default=5, help="missed call sites to print per repository")
    ap.add_argument("--go-ref", help="the built ops/bench/callers-go (for Go repositories)")
    ap.add_argument("repos", nargs="+")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="sno-callers-")
    total = {}
    print(f"{'repo':<20}{'targets':>8}{'exact':>7}{'prec':>7}{'heur':>6}{'prec':>7}{'ref':>6}{'recall':>8}{'exact rec':>10}{'unjudged':>9}")
    all_false, all_missed = [], []
    for src in a.repos:
        name, s, false_exact, missed = one_repo(a.sno, src, a.per_repo, work, a.go_ref)
        all_missed += [f"{name}: {m}" for m in missed[:a.show_missed]]
        for k, v in s.items():
            total[k] = total.get(k, 0) + v
        all_false += [f"{name}: {f}" for f in false_exact]
        print(f"{name:<20}{s['targets']:>8}{s['exact']:>7}{ratio(s['exact_ok'], s['exact']):>7}{s['heur']:>6}"
              f"{ratio(s['heur_ok'], s['heur']):>7}{s['ref']:>6}{ratio(s['found'], s['ref']):>8}{ratio(s['found_exact'], s['ref']):>10}{s['unjudged']:>9}")
    s = total
    print(f"{'all':<20}{s['targets']:>8}{s['exact']:>7}{ratio(s['exact_ok'], s['exact']):>7}{s['heur']:>6}"
          f"{ratio(s['heur_ok'], s['heur']):>7}{s['ref']:>6}{ratio(s['found'], s['ref']):>8}{ratio(s['found_exact'], s['ref']):>10}{s['unjudged']:>9}")
    print()
    print(f"exact precision {ratio(s['exact_ok'], s['exact'])} (target >= 0.99)")
    print("unjudged: callers sno lists at a line where the reference resolved no call of the name (code compiled\n"
          "out for this machine, such as #[cfg(windows)] items); they count in neither precision nor recall.")
    print("false exact callers (the reference does not reach the target from the call):")
    for f in all_false or ["  none"]:
        print(f"  {f}")
    print(f"unjudged exact callers: {s['unjudged_exact']} of {s['unjudged']}")
    print("call sites the reference finds and sno does not list (first of each repository):")
    for m in all_missed or ["  none"]:
        print(f"  {m}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
