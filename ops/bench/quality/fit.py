#!/usr/bin/env python3
"""Fits the fusion of sno's search signals on the quality eval's sets (a)
and (b).

sno's JSON answer carries each item's signals (lexical, semantic,
structural, history, memory), already weighted. This script asks sno for
the whole pool (limit 200, a budget that holds every item), then re-ranks
each answer offline under other weights and other ways of fusing, and
prints R@10 and MRR@10 per set for each: the figures a change of weights
would give, before it is made. Structural and history shares depend on the
seeds the other signals pick, so a re-ranking is an estimate; a change is
confirmed by a full `eval.py` run.

    python3 ops/bench/quality/fit.py [--repos httpx,cobra] [--dump F] [--load F]
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import eval as ev  # noqa: E402

SIGNALS = ("lexical", "semantic", "structural", "history", "memory")


def collect(args):
    if args.local:
        specs = [ev.parse_local(s) for s in args.local]
    else:
        specs = ev.REPOS if not args.repos else [s for s in ev.REPOS if s["name"] in args.repos.split(",")]
    cap_a, cap_b = args.cap_a, args.cap_b
    out = []
    env = ev.mode_env("hybrid", args.model)
    for spec in specs:
        git_dir = ev.ensure_source(spec, args.cache, ["/work/.mirror"] if os.path.isdir("/work/.mirror") else [])
        args.files = True
        ns = argparse.Namespace(**vars(args))
        corpus = ev.Corpus(spec, git_dir, os.path.join(args.cache, "work"), ns)
        qa = corpus.set_a(cap_a) if "a" in corpus.sets else []
        qb = corpus.set_b(cap_b) if "b" in corpus.sets else []
        ev.log(f"{corpus.name}: {len(qa)} + {len(qb)} queries")
        for which, qs, d in (("stripped", qa, corpus.stripped_dir() if qa else None), ("orig", qb, corpus.orig_dir() if qb else None)):
            if not qs:
                continue
            ev.sno_init(args.sno, d, 0, env)
            srv = ev.Sno(args.sno, d, env, os.path.join(corpus.work, "fit.log"))
            try:
                for r in qs:
                    ans, _, _, err = srv.search(r["query"], 200, 10_000_000)
                    items = [
                        {
                            "path": it.get("path"), "line": it.get("line"), "end_line": it.get("end_line"),
                            "qualified_name": it.get("qualified_name"), "kind": it.get("kind"),
                            "signals": it.get("signals") or {},
                        }
                        for it in ev.ranked_items(ans)
                    ]
                    out.append({"set": r["set"], "lang": corpus.lang, "corpus": corpus.name, "query": r["query"],
                                "target": r["target"], "items": items, "error": err})
            finally:
                srv.close()
    return out


def rank_of(items, target):
    r = ev.symbol_rank(items, target, k=len(items))
    return r


def rescore(items, f):
    scored = [(f(it["signals"]), -i, it) for i, it in enumerate(items)]
    scored.sort(key=lambda x: (x[0], x[1]), reverse=True)
    return [it for _, _, it in scored]


def tally(by, q, r):
    """Counts a query's rank toward its set and its set's language."""
    for key in (q["set"], f"{q['set']}/{q['lang']}"):
        m = by.setdefault(key, [0, 0.0, 0])
        m[2] += 1
        if r and r <= 10:
            m[0] += 1
            m[1] += 1.0 / r


def summary(by):
    """(R@10, MRR@10, n) per group."""
    return {k: (v[0] / v[2], v[1] / v[2], v[2]) for k, v in by.items()}


def metrics(data, f):
    by = {}
    for q in data:
        items = rescore(q["items"], f)
        tally(by, q, rank_of(items, q["target"]))
    return summary(by)


def linear(ws):
    return lambda s: sum(ws[k] * s.get(k, 0.0) for k in SIGNALS)


def rrf(k, ws):
    """Reciprocal-rank fusion needs per-signal ranks: computed per answer."""
    return ("rrf", k, ws)


def metrics_rrf(data, k, ws):
    by = {}
    for q in data:
        items = q["items"]
        ranks = {}
        for sig in ("lexical", "semantic"):
            order = sorted(range(len(items)), key=lambda i: -items[i]["signals"].get(sig, 0.0))
            ranks[sig] = {i: p + 1 for p, i in enumerate(order) if items[i]["signals"].get(sig, 0.0) > 0}
        def score(i):
            s = items[i]["signals"]
            v = sum(ws[sig] / (k + ranks[sig][i]) for sig in ranks if i in ranks[sig])
            return v + 0.01 * (s.get("structural", 0) + s.get("history", 0))
        order = sorted(range(len(items)), key=lambda i: (-score(i), i))
        tally(by, q, rank_of([items[i] for i in order], q["target"]))
    return summary(by)


def show(name, m):
    a, b = m.get("a", (0, 0, 0)), m.get("b", (0, 0, 0))
    langs = " ".join(f"{k[2:]} {v[0]:.3f}" for k, v in sorted(m.items()) if k.startswith("a/"))
    print(f"{name:<44} a R@10 {a[0]:.3f} MRR {a[1]:.3f} | b R@10 {b[0]:.3f} MRR {b[1]:.3f} | {langs}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sno", default=os.path.join(ev.ROOT, "target", "release", "sno"))
    ap.add_argument("--model", default=os.environ.get("SNO_MODEL"))
    ap.add_argument("--repos", default=None)
    ap.add_argument("--local", action="append", default=[], metavar="NAME=PATH[:SETS]", help="local repositories instead of the built-in list (as eval.py's --local)")
    ap.add_argument("--cap-a", type=int, default=120)
    ap.add_argument("--cap-b", type=int, default=40)
    ap.add_argument("--cache", default=os.path.join(HERE, ".cache"))
    ap.add_argument("--dump", help="write the collected answers here")
    ap.add_argument("--load", help="re-rank answers collected before instead of asking sno")
    args = ap.parse_args()
    if args.load:
        data = json.load(open(args.load))
    else:
        if not args.model:
            sys.exit("fit.py: needs --model or SNO_MODEL (the hybrid's signals)")
        data = collect(args)
        if args.dump:
            json.dump(data, open(args.dump, "w"))
    base = {k: 1.0 for k in SIGNALS}
    show("as served", metrics(data, linear(base)))
    show("lexical only", metrics(data, linear(dict(base, semantic=0.0))))
    for sem in (0.5, 0.75, 1.25, 1.5, 2.0):
        show(f"semantic x{sem}", metrics(data, linear(dict(base, semantic=sem))))
    for st in (0.0, 0.5, 2.0):
        show(f"structural x{st}", metrics(data, linear(dict(base, structural=st))))
    for hi in (0.0, 2.0, 4.0):
        show(f"history x{hi}", metrics(data, linear(dict(base, history=hi))))
    for k in (10, 30, 60):
        for ws in ({"lexical": 1.0, "semantic": 0.5}, {"lexical": 1.0, "semantic": 1.0}):
            show(f"rrf k={k} sem {ws['semantic']}", metrics_rrf(data, k, ws))


if __name__ == "__main__":
    main()
