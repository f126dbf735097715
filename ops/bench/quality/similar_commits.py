#!/usr/bin/env python3
"""Measures a "similar past commits" signal for set (c) offline, before
building it: bug-localization work ranks the files that fixes of similar
past reports changed. For each change-localization query, the commits of
the indexed history up to its parent (first parent, as `sno init
--history` indexes them) are ranked by BM25 of their first lines against
the query's first line, and the files the best ones changed are fused
with sno's ranked files from an `eval.py` results file.

It prints, for each way of fusing, R@10 and the queries it gains and
loses against sno alone, and two ceilings: sno or BM25 (a query either
finds), and the oracle of the signal (a target among its first 10 files).

    python3 ops/bench/quality/similar_commits.py RESULTS.json [--cache DIR]
"""

import argparse
import collections
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import eval as ev  # noqa: E402

# Words every commit message has, which say nothing of where it goes.
STOP = set("the a an of to in for and or on with from by is be this that it as at fix add update use remove".split())

# Commits wider than this say nothing of a file (HistoryFacts::WIDE).
WIDE = 50


def words(text):
    return [w for w in ev.words(text) if w not in STOP]


def git(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, text=True, check=True).stdout


def history(git_dir, head, n):
    """The `n` first-parent commits up to `head`, newest first, each with
    its first line and the files it changed."""
    commits = git(git_dir, "rev-list", "--first-parent", head).split()[:n]
    out = {}
    for c in commits:
        lines = git(git_dir, "show", "--no-renames", "--name-only", "--format=%s", "-m", "--first-parent", c).strip().split("\n")
        out[c] = (lines[0], [l for l in lines[1:] if l.strip()])
    return commits, out


def similar(query, commits, info, at):
    """Past commits up to `at`, best first: (share of the query's idf
    matched, commit)."""
    if at not in commits:
        return []
    docs = [(c, set(words(info[c][0]))) for c in commits[commits.index(at):] if len(info[c][1]) <= WIDE]
    df = collections.Counter(w for _, ws in docs for w in ws)
    n = len(docs)
    qw = set(words(query.split("\n")[0]))
    idf = {w: math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5)) for w in qw}
    total = sum(idf.values()) or 1.0
    scored = [(sum(idf[w] for w in qw & ws) / total, c) for c, ws in docs]
    return sorted([s for s in scored if s[0] > 0], reverse=True)


def signal_files(sims, info, top):
    scores = collections.defaultdict(float)
    for s, c in sims[:top]:
        files = info[c][1]
        for f in files:
            scores[f] += s / math.sqrt(len(files))
    return sorted(scores, key=lambda f: -scores[f])


def hit(files, targets):
    return any(f in targets for f in files[:10])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("--cache", default=os.path.join(HERE, ".cache"))
    ap.add_argument("--system", default="hybrid")
    args = ap.parse_args()
    import json

    res = json.load(open(args.results))
    queries = [q for q in res["queries"] if q["set"] == "c" and args.system in q.get("top_files", {})]
    hist = {}
    for c in res["corpora"]:
        git_dir = os.path.join(args.cache, "src", c["name"] + ".git")
        if os.path.isdir(git_dir) and c.get("history"):
            hist[c["name"]] = history(git_dir, c["commit"], c["history"])
    queries = [q for q in queries if q["corpus"] in hist]
    n = len(queries)
    sims = [similar(q["query"], *hist[q["corpus"]], q["at"]) for q in queries]
    base = [hit(q["top_files"][args.system], set(q["targets"])) for q in queries]
    print(f"{n} queries of set (c); sno {args.system} R@10 {sum(base) / n:.3f}")
    union = sum(b or (q["ranks"].get("bm25") or 99) <= 10 for q, b in zip(queries, base))
    print(f"ceiling, sno or BM25 finds it: {union / n:.3f}")
    oracle = sum(b or hit(signal_files(s, hist[q["corpus"]][1], 10), set(q["targets"])) for q, s, b in zip(queries, sims, base))
    print(f"ceiling, sno or the signal's first 10 files: {oracle / n:.3f}")
    print("\nfusion                                   R@10   gained  lost")
    for top in (3, 10):
        for w in (0.5, 1.0):
            got = []
            for q, s in zip(queries, sims):
                own = q["top_files"][args.system]
                fused = collections.defaultdict(float)
                for r, f in enumerate(own):
                    fused[f] += 1 / (10 + r + 1)
                for r, f in enumerate(signal_files(s, hist[q["corpus"]][1], top)[:20]):
                    fused[f] += w / (10 + r + 1)
                got.append(hit(sorted(fused, key=lambda f: -fused[f]), set(q["targets"])))
            report(f"rank fusion, {top} commits, weight {w}", got, base)
    for share in (0.5, 0.6, 0.7, 0.8):
        got = []
        for q, s, b in zip(queries, sims, base):
            best = [c for m, c in s[:1] if m >= share]
            if not best:
                got.append(b)
                continue
            first = hist[q["corpus"]][1][best[0]][1][:3]
            own = q["top_files"][args.system]
            got.append(hit(first + [f for f in own if f not in first], set(q["targets"])))
        report(f"best commit's files first, share >= {share}", got, base)


def report(name, got, base):
    n = len(base)
    gained = sum(g and not b for g, b in zip(got, base))
    lost = sum(b and not g for g, b in zip(got, base))
    print(f"{name:40} {sum(got) / n:.3f}  {gained:6}  {lost:4}")


if __name__ == "__main__":
    main()
