#!/usr/bin/env python3
"""Precision of sno's callers against an independent reference (issue 14).

For Python repositories, the reference is jedi (a static analyser nobody
here wrote): a caller sno reports is confirmed when jedi's `goto` on the
called name at that line reaches the target's definition, and jedi's
`get_references` on the definition gives the call sites sno should find.

Targets are chosen by a rule, not by hand: every top-level function and
method of a top-level class in the package's non-test sources (no dunder
methods), ordered by a hash of the qualified name, the first --per-repo
that sno can name unambiguously.

Prints, per repository and over all: exact callers and how many jedi
confirms (precision, target >= 0.99), heuristic callers and their
precision, recall of all callers and of exact ones against jedi's call
sites, and every false exact caller with path:line.

Usage: ops/bench/callers.py --sno target/release/sno REPO_DIR... [--per-repo 40]
A REPO_DIR is a git work tree; it is copied, so nothing in it changes.
Needs: pip install jedi.
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
    sys.exit("callers.py needs jedi: pip install jedi")


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


def one_repo(binary, src, per_repo, work):
    name = os.path.basename(os.path.abspath(src.rstrip("/")))
    repo = os.path.join(work, name)
    shutil.rmtree(repo, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", src, repo], check=True)
    init = subprocess.run([binary, "init", "--history", "0", "--json"], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, "SNO_OFFLINE": "1", "SNO_MODEL": "/nonexistent"})
    if init.returncode != 0:
        sys.exit(f"sno init failed on {name}: {init.stderr}")
    # The package's own sources first, so `from flask import x` in the
    # tests reaches this copy, not an installed one.
    roots = [os.path.join(repo, d) for d in ("src", ".") if os.path.isdir(os.path.join(repo, d))]
    project = jedi.Project(repo, added_sys_path=roots)
    defs = sorted(definitions(repo), key=lambda d: hashlib.sha1(d[0].encode()).hexdigest())
    stats = {"exact": 0, "exact_ok": 0, "heur": 0, "heur_ok": 0, "ref": 0, "found": 0, "found_exact": 0, "targets": 0}
    false_exact = []
    for qualified, rel, line, _ in defs:
        if stats["targets"] >= per_repo:
            break
        r = sno(binary, repo, "refs", qualified, "--callers", "--json")
        if not r or r.get("symbol", {}).get("path") != rel:
            continue
        short = qualified.split(".")[-1]
        dl, dc = name_column(repo, rel, line, short)
        target = {(rel, dl), (rel, r["symbol"]["line"]), (rel, line)}
        ref = jedi_call_sites(project, repo, rel, dl, dc, short)
        if not ref and not r["results"]:
            continue  # nothing calls it: says nothing about precision
        stats["targets"] += 1
        stats["ref"] += len(ref)
        seen = set()
        for c in r["results"]:
            site = (c["path"], c["line"])
            if site in seen:
                continue
            seen.add(site)
            ok = site in ref or confirms(project, repo, site, short, target)
            if c.get("heuristic"):
                stats["heur"] += 1
                stats["heur_ok"] += ok
            else:
                stats["exact"] += 1
                stats["exact_ok"] += ok
                if not ok:
                    false_exact.append(f"{qualified} <- {c['from']} at {c['path']}:{c['line']}")
            if site in ref:
                stats["found"] += 1
                stats["found_exact"] += not c.get("heuristic")
    return name, stats, false_exact


def ratio(a, b):
    return f"{a / b:.3f}" if b else "n/a"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sno", required=True)
    ap.add_argument("--per-repo", type=int, default=40)
    ap.add_argument("repos", nargs="+")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="sno-callers-")
    total = {}
    print(f"{'repo':<12}{'targets':>8}{'exact':>7}{'prec':>7}{'heur':>6}{'prec':>7}{'jedi':>6}{'recall':>8}{'exact rec':>10}")
    all_false = []
    for src in a.repos:
        name, s, false_exact = one_repo(a.sno, src, a.per_repo, work)
        for k, v in s.items():
            total[k] = total.get(k, 0) + v
        all_false += [f"{name}: {f}" for f in false_exact]
        print(f"{name:<12}{s['targets']:>8}{s['exact']:>7}{ratio(s['exact_ok'], s['exact']):>7}{s['heur']:>6}"
              f"{ratio(s['heur_ok'], s['heur']):>7}{s['ref']:>6}{ratio(s['found'], s['ref']):>8}{ratio(s['found_exact'], s['ref']):>10}")
    s = total
    print(f"{'all':<12}{s['targets']:>8}{s['exact']:>7}{ratio(s['exact_ok'], s['exact']):>7}{s['heur']:>6}"
          f"{ratio(s['heur_ok'], s['heur']):>7}{s['ref']:>6}{ratio(s['found'], s['ref']):>8}{ratio(s['found_exact'], s['ref']):>10}")
    print()
    print(f"exact precision {ratio(s['exact_ok'], s['exact'])} (target >= 0.99)")
    print("false exact callers (jedi does not reach the target from the call):")
    for f in all_false or ["  none"]:
        print(f"  {f}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
