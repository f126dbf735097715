#!/usr/bin/env python3
"""Drives `sno serve` over raw JSON-RPC on stdio (stdlib only) and prints
figures as `key value` lines for ops/bench/serve.sh.

usage: serve-bench.py SNO REPO [COLD_ROUNDS] [CALLS]

- cold_ms: spawn `sno serve` -> initialize -> first `search` answered, with
  no sno daemon running (it starts, loads the state, model and indexes),
  median of rounds
- warm_start_ms: the same while the repository's daemon is up (a second
  agent, or a client restarting within the idle time)
- p50_ms / p95_ms: latency of CALLS mixed tool calls over one connection
- rss_mb / hwm_mb: the daemon's resident memory after them (VmRSS, VmHWM)
"""

import json
import os
import statistics
import subprocess
import sys
import time


class Server:
    def __init__(self, sno, repo, idle_secs):
        env = dict(os.environ, SNO_SERVE_IDLE_SECS=str(idle_secs))
        self.p = subprocess.Popen(
            [sno, "serve", repo],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.next_id = 1

    def request(self, method, params):
        i = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": i, "method": method, "params": params}
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()
        while True:
            r = json.loads(self.p.stdout.readline())
            if r.get("id") == i:
                return r

    def notify(self, method):
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "method": method}) + "\n").encode())
        self.p.stdin.flush()

    def init(self):
        r = self.request(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
        )
        self.notify("notifications/initialized")
        return r

    def call(self, tool, args):
        r = self.request("tools/call", {"name": tool, "arguments": args})
        res = r.get("result") or {}
        if res.get("isError") or "error" in r:
            raise SystemExit(f"{tool} {args} failed: {json.dumps(r)[:400]}")
        text = res["content"][0]["text"]
        # `search` answers markdown unless asked for JSON.
        return json.loads(text) if text[:1] in "{[" else text

    def memory(self, pid):
        out = {}
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "VmHWM"):
                    out[k] = int(v.split()[0]) / 1024
        return out

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def main():
    sno, repo = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    n_calls = int(sys.argv[4]) if len(sys.argv) > 4 else 200

    sock = os.path.join(repo, ".sno", "sno.sock")

    def no_daemon():
        t = time.time()
        while os.path.exists(sock):
            if time.time() - t > 30:
                raise SystemExit("the sno daemon did not exit")
            time.sleep(0.01)

    def first_answer(idle):
        t = time.perf_counter()
        s = Server(sno, repo, idle)
        s.init()
        s.call("search", {"query": "where do we parse the config file"})
        ms = (time.perf_counter() - t) * 1000
        s.close()
        return ms

    no_daemon()
    cold = []
    for _ in range(rounds):
        cold.append(first_answer(0))
        no_daemon()
    first_answer(60)  # leaves the daemon up
    warm_start = [first_answer(60) for _ in range(rounds)]

    s = Server(sno, repo, 0)
    s.init()
    daemon_pid = s.call("session_info", {})["server_pid"]
    m = s.call("repo_map", {"files": 40, "format": "json"})
    files = [f["path"] for f in m["files"]]
    syms = [x["qualified_name"] for f in m["files"] for x in f["symbols"]]
    lines = [(f["path"], x["line"]) for f in m["files"] for x in f["symbols"]]
    queries = [
        "where do we parse the config file",
        "compile a regular expression",
        "database connection pool",
        "report a lint problem",
        "decode a compressed block",
        "walk the syntax tree",
        "serialize a struct to json",
        "escape html in templates",
    ]
    mix = []
    for i in range(n_calls):
        k = i % 10
        if k in (0, 1):
            mix.append(("search", {"query": queries[i % len(queries)], "max_tokens": 1500}))
        elif k == 2:
            mix.append(("search_symbols", {"name": syms[i % len(syms)].split(".")[-1]}))
        elif k == 3:
            mix.append(("get_symbol", {"name": f"{lines[i % len(lines)][0]}:{lines[i % len(lines)][1]}"}))
        elif k == 4:
            mix.append(("file_outline", {"file": files[i % len(files)]}))
        elif k == 5:
            mix.append(("callers", {"name": f"{lines[i % len(lines)][0]}:{lines[i % len(lines)][1]}", "depth": 2}))
        elif k == 6:
            mix.append(("callees", {"name": f"{lines[i % len(lines)][0]}:{lines[i % len(lines)][1]}"}))
        elif k == 7:
            mix.append(("context_for_edit", {"file": lines[i % len(lines)][0], "line": lines[i % len(lines)][1]}))
        elif k == 8:
            mix.append(("search_text", {"pattern": "TODO|FIXME", "limit": 50}))
        else:
            mix.append(("status", {}))
    lat = []
    per_tool = {}
    for tool, args in mix:
        t = time.perf_counter()
        s.call(tool, args)
        ms = (time.perf_counter() - t) * 1000
        lat.append(ms)
        per_tool.setdefault(tool, []).append(ms)
    mem = s.memory(daemon_pid)
    s.close()

    lat.sort()
    print("cold_ms", round(statistics.median(cold), 1))
    print("cold_min_ms", round(min(cold), 1))
    print("cold_all_ms", " ".join(str(round(c)) for c in cold))
    print("warm_start_ms", round(statistics.median(warm_start), 1))
    print("calls", len(lat))
    print("p50_ms", round(lat[len(lat) // 2], 2))
    print("p95_ms", round(lat[int(len(lat) * 0.95) - 1], 2))
    print("rss_mb", round(mem.get("VmRSS", 0)))
    print("hwm_mb", round(mem.get("VmHWM", 0)))
    for tool, v in sorted(per_tool.items()):
        v.sort()
        print(f"tool_{tool}_p50_ms", round(v[len(v) // 2], 2))


if __name__ == "__main__":
    main()
