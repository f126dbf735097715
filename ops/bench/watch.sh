#!/usr/bin/env bash
# Watch benchmark for sno: how long after `git commit` returns the index is
# at the new commit, with `sno watch` following a repository of the full
# index corpus (453k lines). Each round edits one file (a function appended
# to a Python, Go or Rust file in turn), commits, and times until `sno watch
# --json` reports the commit indexed. Prints p50, p90 and max over the rounds,
# and the idle CPU of the watcher between them.
#
# Usage: ops/bench/watch.sh [--no-build] [--rounds N]
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=1 ROUNDS=20
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0 ;;
    --rounds) ROUNDS="$2"; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "watch.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
export SNO_OFFLINE=1
if [ "$BUILD" = 1 ]; then
  (cd "$ROOT" && cargo build --release -p sno)
fi
SNO="$ROOT/target/release/sno"
"$HERE/index.sh" --corpus-only >/dev/null
CORPUS="$HERE/.cache/corpus-full"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
git clone -q "$CORPUS" "$WORK/repo"
git -C "$WORK/repo" config user.email bench@example.com
git -C "$WORK/repo" config user.name bench
echo "==> indexing the corpus once (HEAD only)" >&2
"$SNO" init --history 0 "$WORK/repo" >/dev/null 2>&1

python3 - "$SNO" "$WORK/repo" "$ROUNDS" <<'PY'
import json, os, statistics, subprocess, sys, threading, time, queue

sno, repo, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = subprocess.run(["git", "-C", repo, "ls-files", "*.py", "*.go", "*.rs"],
                       capture_output=True, text=True, check=True).stdout.split()
files = [f for f in files if os.path.getsize(os.path.join(repo, f)) > 2000][:200]
pick = [files[i * len(files) // rounds] for i in range(rounds)]
watch = subprocess.Popen([sno, "watch", "--json", repo], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
lines = queue.Queue()
threading.Thread(target=lambda: [lines.put(l) for l in watch.stdout], daemon=True).start()

def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")

time.sleep(2)  # the watcher's first look finds the index at HEAD
idle_from = cpu_seconds(watch.pid)
time.sleep(5)
idle_cpu = cpu_seconds(watch.pid) - idle_from

latencies, parsed = [], []
for i, path in enumerate(pick):
    full = os.path.join(repo, path)
    body = {".py": f"\n\ndef bench_added_{i}(x):\n    return helper_{i}(x)\n",
            ".go": f"\n\nfunc BenchAdded{i}(x int) int {{ return x + {i} }}\n",
            ".rs": f"\n\npub fn bench_added_{i}(x: u32) -> u32 {{ x + {i} }}\n"}[os.path.splitext(path)[1]]
    with open(full, "a") as f:
        f.write(body)
    subprocess.run(["git", "-C", repo, "commit", "-qam", f"bench {i}"], check=True)
    start = time.monotonic()
    head = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    while True:
        event = json.loads(lines.get(timeout=120))
        if event.get("event") == "indexed" and event.get("commit") == head:
            break
    latencies.append((time.monotonic() - start) * 1000)
    parsed.append(event.get("files_parsed", 0))
    time.sleep(0.3)

watch.send_signal(2)
watch.wait(timeout=60)
latencies.sort()
p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]
print(f"rounds {len(latencies)} (one file edited per commit, files parsed per run: {statistics.median(parsed):.0f})")
print(f"commit -> indexed: p50 {p(0.5):.0f} ms, p90 {p(0.9):.0f} ms, max {latencies[-1]:.0f} ms")
print(f"watcher idle CPU: {idle_cpu:.2f} s over 5 s")
PY
