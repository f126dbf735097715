#!/usr/bin/env python3
"""Scale benchmark (issue 17): what a query costs on a large repository.

Assembles a corpus of sources nobody here wrote (every .rs/.c/.h/.py/.go/
.js/.ts file under 1 MB of cargo's registry cache, one commit), indexes it
with `sno init --history 0`, and measures with wall clock and peak RSS
(getrusage of each child):

- init time, peak RSS, and the size of `.sno/`;
- cold CLI point queries (`symbol`, `outline`, `show`, `refs --callers`),
  each a new process, for names picked from the index;
- cold CLI `search --lexical-only` and `search` with the model.

- MCP over stdio (`sno serve`, no daemon running before): time from spawn
  to the first `search_symbols` answer, then p50/p95 of 200 point calls
  (`search_symbols`, `get_symbol`, `callers`, `file_outline`) over the
  connection and the daemon's RSS after them.

Not measured yet (the issue asks for them): MCP `search` warm p50,
commit-to-visible latency under the daemon, daemon RSS after 1,000 mixed
queries including search.

Usage: scale.py --sno BIN --corpus DIR [--model DIR] [--runs N] [--reuse]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

EXTS = (".rs", ".c", ".h", ".py", ".go", ".js", ".ts")


def registry_src():
    home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
    base = os.path.join(home, "registry", "src")
    return [os.path.join(base, d) for d in sorted(os.listdir(base))]


def assemble(dest):
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    files = lines = 0
    for reg in registry_src():
        for root, dirs, names in os.walk(reg):
            dirs.sort()
            for n in sorted(names):
                if not n.endswith(EXTS):
                    continue
                p = os.path.join(root, n)
                if os.path.islink(p) or os.path.getsize(p) >= 1_000_000:
                    continue
                rel = os.path.relpath(p, reg)
                d = os.path.join(dest, rel)
                os.makedirs(os.path.dirname(d), exist_ok=True)
                shutil.copyfile(p, d)
                files += 1
                with open(p, "rb") as f:
                    lines += f.read().count(b"\n")
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    subprocess.run(["git", "add", "-A"], cwd=dest, check=True)
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=b@x",
                    "commit", "-qm", "corpus"], cwd=dest, check=True)
    return files, lines


def isolated(cmd, cwd, env=None):
    """Runs cmd from a fresh python so its peak RSS is its own."""
    code = ("import json,resource,subprocess,sys,time;"
            "t=time.perf_counter();"
            "r=subprocess.run(sys.argv[1:],capture_output=True,text=True);"
            "s=time.perf_counter()-t;"
            "print(json.dumps([s,resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024,"
            "r.returncode,r.stdout[-2000:],r.stderr[-2000:]]))")
    out = subprocess.run([sys.executable, "-c", code] + cmd, cwd=cwd,
                         capture_output=True, text=True, env=env)
    s, mb, rc, so, se = json.loads(out.stdout)
    return s, mb, rc, so, se


def du(path):
    total = 0
    for root, _, names in os.walk(path):
        for n in names:
            total += os.path.getsize(os.path.join(root, n))
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sno", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--model")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reuse", action="store_true",
                    help="keep an assembled and indexed corpus")
    a = ap.parse_args()
    env = dict(os.environ)
    env.pop("SNO_LOG", None)
    env_nomodel = dict(env)
    env_nomodel.pop("SNO_MODEL", None)
    if a.model:
        env["SNO_MODEL"] = a.model

    if not (a.reuse and os.path.isdir(os.path.join(a.corpus, ".sno"))):
        files, lines = assemble(a.corpus)
        print(f"corpus: {files} files, {lines} lines ({a.corpus})")
        s, mb, rc, _, err = isolated([a.sno, "init", "--history", "0", "--json"],
                                     a.corpus, env_nomodel)
        if rc != 0:
            sys.exit(f"sno init failed: {err}")
        print(f"init --history 0 (no model): {s:.1f} s, peak RSS {mb:.0f} MB")
    print(f"disk: .sno/ {du(os.path.join(a.corpus, '.sno')) / 1e6:.0f} MB")

    st = json.loads(subprocess.run([a.sno, "status", "--json"], cwd=a.corpus,
                                   capture_output=True, text=True,
                                   env=env_nomodel).stdout)
    print(f"indexed: {st['files']['total']} files, "
          f"{sum(v.get('symbols', 0) for v in st['languages'].values())} symbols")

    # Names to ask for: well-known functions of the registry's crates.
    names = ["spawn_blocking", "from_str_radix", "serialize_struct", "new_unchecked"]
    rows = []
    for name in names:
        # The name is defined in many crates (an ambiguous name is refused):
        # `show` and `refs` are also asked for by the first definition's
        # `path:line`.
        o = subprocess.run([a.sno, "symbol", name, "--json"], cwd=a.corpus,
                           capture_output=True, text=True, env=env_nomodel)
        try:
            r0 = json.loads(o.stdout)["results"][0]
            at = f"{r0['path']}:{r0['line']}"
        except (ValueError, KeyError, IndexError):
            at = name
        for what, cmd in [
            ("show by path:line", ["show", at, "--json"]),
            ("refs --callers by path:line", ["refs", at, "--callers", "--json"]),
            ("symbol", ["symbol", name, "--json"]),
            ("refs --callers", ["refs", name, "--callers", "--json"]),
            ("show", ["show", name, "--json"]),
        ]:
            times, peak, rc = [], 0.0, 0
            for _ in range(a.runs):
                s, mb, rc, _, _ = isolated([a.sno] + cmd, a.corpus, env_nomodel)
                times.append(s)
                peak = max(peak, mb)
            rows.append((f"{what} {name}", statistics.median(times), peak, rc))
    # An outline of the largest-symbol file the first symbol answer names.
    o = subprocess.run([a.sno, "symbol", names[0], "--json"], cwd=a.corpus,
                       capture_output=True, text=True, env=env_nomodel)
    try:
        path = json.loads(o.stdout)["results"][0]["path"]
        times, peak = [], 0.0
        for _ in range(a.runs):
            s, mb, rc, _, _ = isolated([a.sno, "outline", path, "--json"],
                                       a.corpus, env_nomodel)
            times.append(s)
            peak = max(peak, mb)
        rows.append((f"outline {path[-40:]}", statistics.median(times), peak, rc))
    except (ValueError, KeyError, IndexError):
        pass
    for what, cmd, e in [
        ("search --lexical-only", ["search", "spawn a blocking task on the runtime",
                                   "--lexical-only", "--json"], env_nomodel),
        ("search (model)", ["search", "spawn a blocking task on the runtime",
                            "--json"], env),
    ]:
        if what == "search (model)" and not a.model:
            continue
        s, mb, rc, _, err = isolated([a.sno] + cmd, a.corpus, e)
        rows.append((what, s, mb, rc))
    mcp = mcp_point_queries(a.sno, a.corpus, env_nomodel, names)
    print()
    print(f"{'cold CLI query':50} {'median s':>9} {'peak MB':>8} {'exit':>5}")
    for what, s, mb, rc in rows:
        print(f"{what:50} {s:9.3f} {mb:8.0f} {rc:5}")
    print()
    for k, v in mcp.items():
        print(f"mcp {k}: {v}")


def mcp_point_queries(sno, corpus, env, names):
    """First answer and warm point-query latency over MCP, and the
    daemon's RSS after them."""
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        "serve_bench", os.path.join(here, "serve-bench.py"))
    sb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sb)
    sock = os.path.join(corpus, ".sno", "sno.sock")
    t = time.time()
    while os.path.exists(sock):  # an earlier daemon, until its idle exit
        if time.time() - t > 120:
            raise SystemExit("the sno daemon did not exit")
        time.sleep(0.1)
    old_env = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        t = time.perf_counter()
        srv = sb.Server(sno, corpus, 60)
        srv.init()
        first = srv.call("search_symbols", {"name": names[0], "limit": 5})
        first_ms = (time.perf_counter() - t) * 1000
        path = first["results"][0]["path"]
        at = f"{path}:{first['results'][0]['line']}"
        calls = []
        for i in range(200):
            n = names[i % len(names)]
            calls.append([("search_symbols", {"name": n, "limit": 5}),
                          ("get_symbol", {"name": at}),
                          ("callers", {"name": at}),
                          ("file_outline", {"file": path})][i % 4])
        lat = []
        for tool, args in calls:
            t = time.perf_counter()
            srv.call(tool, args)
            lat.append((time.perf_counter() - t) * 1000)
        lat.sort()
        mem = srv.memory(srv.call("session_info", {})["server_pid"])
        srv.close()
        return {
            "first search_symbols answer ms": round(first_ms, 1),
            "point calls p50 ms": round(lat[len(lat) // 2], 2),
            "point calls p95 ms": round(lat[int(len(lat) * 0.95)], 2),
            "daemon RSS MB after them": round(mem.get("VmRSS", float("nan"))),
        }
    finally:
        os.environ.clear()
        os.environ.update(old_env)


if __name__ == "__main__":
    main()
