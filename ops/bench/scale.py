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
  connection and the daemon's RSS after them; the first `search` answer and
  the p50/p95 of 30 more (the daemon runs with the model when --model
  names one); the daemon's RSS after 1,000 mixed
  queries (four point calls to one search); and commit-to-visible: a
  one-file commit, then the time until `search_symbols` and then `search`
  name its new function (the daemon's watcher, debounce and indexing
  included). The probe commit stays in the corpus's history.

--lines N assembles only the first files (in path order) up to N lines: the
~600k-line corpus the issue asks for beside the multi-million-line one.

Usage: scale.py --sno BIN --corpus DIR [--model DIR] [--runs N] [--reuse]
                [--lines N] [--no-model-search]
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


def assemble(dest, max_lines=None):
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    files = lines = 0
    by_crate = {}
    for reg in registry_src():
        for root, dirs, names in os.walk(reg):
            dirs.sort()
            if max_lines and lines >= max_lines:
                break
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
                    n_lines = f.read().count(b"\n")
                lines += n_lines
                crate = rel.split(os.sep)[0]
                by_crate[crate] = by_crate.get(crate, 0) + n_lines
    # The registry holds whatever builds and fetches unpacked into it (a
    # `cargo fetch` unpacks every platform's crates: windows-0.48.0 alone
    # is 2M lines of dense bindings), so the corpus differs between
    # machines: what it holds most of is printed with each run.
    top = sorted(by_crate.items(), key=lambda kv: -kv[1])[:5]
    print("largest crates: " + ", ".join(f"{c} {n / 1e6:.2f}M lines" for c, n in top))
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    subprocess.run(["git", "add", "-A"], cwd=dest, check=True)
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=b@x",
                    "commit", "-qm", "corpus"], cwd=dest, check=True)
    return files, lines


def parse_floor(sno, corpus):
    """What a bare tree-sitter parse of the corpus costs on this machine
    (`sno-parse-floor`, built beside `sno`): init's time depends on the
    machine and on what the registry holds, its ratio to this much less."""
    floor = os.path.join(os.path.dirname(sno), "sno-parse-floor")
    if not os.access(floor, os.X_OK):
        return
    wall, _, rc, _, _, used = isolated([floor, "--as-sno", "."], corpus, cpu=True)
    if rc == 0:
        print(f"tree-sitter parse floor (sno-parse-floor --as-sno): {wall:.1f} s ({used:.1f} s CPU)")


def isolated(cmd, cwd, env=None, cpu=False):
    """Runs cmd from a fresh python so its peak RSS is its own: seconds,
    peak MB, exit code, the ends of stdout and stderr, and with `cpu` the
    CPU seconds (user and system) too."""
    code = ("import json,resource,subprocess,sys,time;"
            "t=time.perf_counter();"
            "r=subprocess.run(sys.argv[1:],capture_output=True,text=True);"
            "s=time.perf_counter()-t;u=resource.getrusage(resource.RUSAGE_CHILDREN);"
            "print(json.dumps([s,u.ru_maxrss/1024,"
            "r.returncode,r.stdout[-2000:],r.stderr[-2000:],u.ru_utime+u.ru_stime]))")
    out = subprocess.run([sys.executable, "-c", code] + cmd, cwd=cwd,
                         capture_output=True, text=True, env=env)
    s, mb, rc, so, se, used = json.loads(out.stdout)
    return (s, mb, rc, so, se, used) if cpu else (s, mb, rc, so, se)


def du(path):
    """Bytes of the files under `path`: allocated on disk (what `du`
    counts; redb grows its file ahead of what it writes, as a hole), and
    their apparent size."""
    used = apparent = 0
    for root, _, names in os.walk(path):
        for n in names:
            st = os.stat(os.path.join(root, n))
            used += st.st_blocks * 512
            apparent += st.st_size
    return used, apparent


def report_disk(corpus, when):
    used, apparent = du(os.path.join(corpus, ".sno"))
    print(f"disk {when}: .sno/ {used / 1e6:.0f} MB allocated ({apparent / 1e6:.0f} MB apparent)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sno", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--model")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reuse", action="store_true",
                    help="keep an assembled and indexed corpus")
    ap.add_argument("--lines", type=int, help="assemble only up to this many lines")
    ap.add_argument("--keep-corpus", action="store_true",
                    help="index the corpus of an earlier run again instead of assembling it")
    ap.add_argument("--warm", type=int, default=30,
                    help="warm MCP searches to time (30: each of the ten questions asked three times, a number apart)")
    ap.add_argument("--no-model-search", action="store_true",
                    help="skip the cold CLI search with the model (minutes on millions of lines)")
    a = ap.parse_args()
    env = dict(os.environ)
    env.pop("SNO_LOG", None)
    env_nomodel = dict(env)
    env_nomodel.pop("SNO_MODEL", None)
    if a.model:
        # Absolute: sno runs in the corpus, where a path relative to here
        # names nothing (init then indexed without the model, and the
        # daemon, started from here, embedded everything on its first search).
        env["SNO_MODEL"] = os.path.abspath(a.model)

    if not (a.reuse and os.path.isdir(os.path.join(a.corpus, ".sno"))):
        if a.keep_corpus and os.path.isdir(os.path.join(a.corpus, ".git")):
            # The same commit as the last run's, indexed again.
            shutil.rmtree(os.path.join(a.corpus, ".sno"), ignore_errors=True)
            print(f"corpus: kept ({a.corpus})")
        else:
            files, lines = assemble(a.corpus, a.lines)
            print(f"corpus: {files} files, {lines} lines ({a.corpus})")
        def timed_init(label, e):
            s, mb, rc, _, err, used = isolated([a.sno, "init", "--history", "0", "--json"],
                                               a.corpus, e, cpu=True)
            if rc != 0:
                sys.exit(f"sno init failed: {err}")
            print(f"init --history 0 ({label}): {s:.1f} s ({used:.1f} s CPU), peak RSS {mb:.0f} MB")

        timed_init("no model", env_nomodel)
        parse_floor(a.sno, a.corpus)
        report_disk(a.corpus, "after init without the model")
        if a.model:
            # As a user with a model runs it: the symbols are embedded too.
            shutil.rmtree(os.path.join(a.corpus, ".sno"))
            timed_init("model", env)
    report_disk(a.corpus, "before the queries")

    st = json.loads(subprocess.run([a.sno, "status", "--json"], cwd=a.corpus,
                                   capture_output=True, text=True,
                                   env=env_nomodel).stdout)
    print(f"indexed: {st['files']['total']} files, "
          f"{sum(v.get('symbols', 0) for v in st['languages'].values())} symbols")

    names = pick_names(a.sno, a.corpus, env_nomodel)
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
        if what == "search (model)" and (not a.model or a.no_model_search):
            continue
        times, peak = [], 0.0
        for _ in range(a.runs):
            s, mb, rc, _, err = isolated([a.sno] + cmd, a.corpus, e)
            times.append(s)
            peak = max(peak, mb)
        rows.append((what, statistics.median(times), peak, rc))
    # The daemon as users run it: with the model when there is one.
    mcp = mcp_point_queries(a.sno, a.corpus, env, names, a.warm)
    print()
    print(f"{'cold CLI query':50} {'median s':>9} {'peak MB':>8} {'exit':>5}")
    for what, s, mb, rc in rows:
        print(f"{what:50} {s:9.3f} {mb:8.0f} {rc:5}")
    print()
    for k, v in mcp.items():
        print(f"mcp {k}: {v}")
    # With the head's search parts made by the searches above.
    report_disk(a.corpus, "after the queries")


def mcp_point_queries(sno, corpus, env, names, warm=30):
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
        pid = srv.call("session_info", {})["server_pid"]
        mem = srv.memory(pid)
        out = {
            "first search_symbols answer ms": round(first_ms, 1),
            "point calls p50 ms": round(lat[len(lat) // 2], 2),
            "point calls p95 ms": round(lat[int(len(lat) * 0.95)], 2),
            "daemon RSS MB after them": round(mem.get("VmRSS", float("nan"))),
        }
        queries = [
            "spawn a blocking task on the runtime", "parse an integer from a string",
            "serialize a struct to json", "read a file into memory", "hash map with a custom hasher",
            "decode utf8 bytes", "open a tcp connection", "walk a directory tree",
            "format a timestamp", "compress a buffer",
        ]
        mode = "hybrid" if env.get("SNO_MODEL") else "lexical"
        t = time.perf_counter()
        srv.call("search", {"query": queries[0], "max_tokens": 1500})
        out[f"first search answer ms ({mode})"] = round((time.perf_counter() - t) * 1000, 1)
        lat = []
        for i in range(warm):
            t = time.perf_counter()
            srv.call("search", {"query": queries[(i + 1) % len(queries)] + f" {i}", "max_tokens": 1500})
            lat.append((time.perf_counter() - t) * 1000)
        lat.sort()
        out[f"warm search p50 ms ({mode})"] = round(lat[len(lat) // 2], 1)
        out[f"warm search p95 ms ({mode})"] = round(lat[int(len(lat) * 0.95)], 1)
        # 1,000 mixed queries: four point calls to one search.
        for i in range(1000):
            if i % 5 == 4:
                srv.call("search", {"query": queries[i % len(queries)] + f" {i}", "max_tokens": 1500})
            else:
                srv.call(*calls[i % len(calls)])
        mem = srv.memory(pid)
        out["daemon RSS MB after 1,000 mixed queries"] = round(mem.get("VmRSS", float("nan")))
        out.update(commit_to_visible(srv, corpus, pid))
        srv.close()
        return out
    finally:
        os.environ.clear()
        os.environ.update(old_env)


def pick_names(sno, corpus, env):
    """Four function names to ask for: well-known ones of the registry's
    crates when the corpus defines them, else functions of its files."""
    def found(name):
        o = subprocess.run([sno, "symbol", name, "--json"], cwd=corpus,
                           capture_output=True, text=True, env=env)
        try:
            return bool(json.loads(o.stdout)["results"])
        except (ValueError, KeyError):
            return False
    names = [n for n in ["spawn_blocking", "from_str_radix", "serialize_struct",
                         "new_unchecked"] if found(n)]
    files = subprocess.run(["git", "ls-files", "*.rs"], cwd=corpus, capture_output=True,
                           text=True).stdout.split()
    for f in files[:: max(1, len(files) // 50)]:
        if len(names) >= 4:
            break
        o = subprocess.run([sno, "outline", f, "--json"], cwd=corpus,
                           capture_output=True, text=True, env=env)
        try:
            outline = json.loads(o.stdout)["outline"]
        except (ValueError, KeyError):
            continue
        for n in outline:
            if n["kind"] == "function" and len(n["name"]) > 6 and n["name"] not in names:
                names.append(n["name"])
                break
    return names


def commit_to_visible(srv, corpus, pid):
    """Commits one new file, then times until `search_symbols` and `search`
    name its function, and reads the daemon's peak RSS over that time (its
    high-water mark, reset just before the commit)."""
    name = f"sno_probe_{int(time.time() * 1000)}"
    rel = f"sno_probe/{name}.py"
    os.makedirs(os.path.join(corpus, "sno_probe"), exist_ok=True)
    with open(os.path.join(corpus, rel), "w") as f:
        f.write(f"def {name}(x):\n    \"\"\"A probe for the scale benchmark.\"\"\"\n    return x\n")
    git = ["git", "-c", "user.name=bench", "-c", "user.email=b@x"]
    subprocess.run(git + ["add", rel], cwd=corpus, check=True)
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS
        hwm = True
    except OSError:
        hwm = False
    subprocess.run(git + ["commit", "-qm", f"probe {name}"], cwd=corpus, check=True)
    t0 = time.perf_counter()
    out = {}
    def answer(tool, args):
        """The tool's answer text, or "" for an error answer (until the
        commit is indexed, the name is unknown)."""
        r = srv.request("tools/call", {"name": tool, "arguments": args})
        res = r.get("result") or {}
        if res.get("isError") or "error" in r:
            return ""
        return res["content"][0]["text"]

    def symbol_found():
        text = answer("search_symbols", {"name": name, "limit": 1})
        return bool(text) and any(x.get("name") == name
                                  for x in json.loads(text).get("results", []))

    for what, seen in [
        ("search_symbols", symbol_found),
        ("search", lambda: name in answer("search", {"query": name, "max_tokens": 500})),
    ]:
        while not seen():
            if time.perf_counter() - t0 > 600:
                out[f"commit-to-visible ms ({what})"] = "over 600 s"
                break
            time.sleep(0.02)
        else:
            out[f"commit-to-visible ms ({what})"] = round((time.perf_counter() - t0) * 1000)
    if hwm:
        out["daemon peak RSS MB over the commit"] = round(srv.memory(pid).get("VmHWM", float("nan")))
    return out


if __name__ == "__main__":
    main()
