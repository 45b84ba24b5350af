#!/usr/bin/env bash
# latkit timer against cyclictest with the same period (1000 µs), SCHED_FIFO priority, mlock,
# CPU and duration, interleaved A B A B so that host noise hits both alike. Prints each run,
# the latkit/cyclictest ratios of min, median of averages and p99 (cyclictest's p99 from its
# histogram), and latkit's peak RSS for a 10 s and a 60 s run.
#   PAIRS=3 DURATION=10 CPU=0 PRIO=80 bench/timer-vs-cyclictest.sh
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${PAIRS:-3} duration=${DURATION:-10} cpu=${CPU:-0} prio=${PRIO:-80}
command -v cyclictest >/dev/null || { echo "cyclictest not found: apt-get install rt-tests"; exit 1; }
cargo build --release --quiet
out=bench/out/timer
mkdir -p "$out"
for i in $(seq "$pairs"); do
  target/release/latkit timer -T "$duration" -p 1000 -P "$prio" -c "$cpu" --format json -q --out "$out/latkit-$i.json"
  cyclictest -m -p "$prio" -i 1000 -a "$cpu" -t 1 -D "$duration" -q -h 4000 --json="$out/cyclictest-$i.json" > /dev/null
done
python3 - "$out" "$pairs" <<'PY'
import json, statistics, sys
out, pairs = sys.argv[1], int(sys.argv[2])
def latkit(i):
    run = json.load(open(f"{out}/latkit-{i}.json"))["runs"][0]
    o = run["timer"]["overall"]
    p = run["benchmarks"][0]["metrics"][0]["percentiles"]
    return o["min_ns"] / 1000, o["avg_ns"] / 1000, p["p99"] / 1000
def cyclictest(i):
    t = json.load(open(f"{out}/cyclictest-{i}.json"))["thread"]["0"]
    hist = sorted((int(k), v) for k, v in t["histogram"].items())
    need, seen, p99 = 0.99 * t["cycles"], 0, None
    for bucket, n in hist:
        seen += n
        if seen >= need:
            p99 = bucket
            break
    return t["min"], t["avg"], p99 if p99 is not None else float(t["max"])
rows = [(latkit(i), cyclictest(i)) for i in range(1, pairs + 1)]
print(f"{'pair':>4} | {'latkit min':>10} {'avg':>8} {'p99':>8} | {'cyclictest min':>14} {'avg':>8} {'p99':>8}   (µs)")
for i, (a, b) in enumerate(rows, 1):
    print(f"{i:>4} | {a[0]:>10.3f} {a[1]:>8.3f} {a[2]:>8.3f} | {b[0]:>14.3f} {b[1]:>8.3f} {b[2]:>8.3f}")
def ratio(k, agg):
    return agg([r[0][k] for r in rows]) / agg([r[1][k] for r in rows])
print(f"latkit/cyclictest: min {ratio(0, min):.3f}  median of averages {ratio(1, statistics.median):.3f}  median p99 {ratio(2, statistics.median):.3f}")
PY
for seconds in 10 60; do
  /usr/bin/time -f "%M" -o "$out/rss.txt" target/release/latkit timer -T "$seconds" -p 1000 -P "$prio" -c "$cpu" -q > /dev/null
  echo "latkit timer -T $seconds peak RSS: $(( $(cat "$out/rss.txt") / 1024 )) MiB ($(cat "$out/rss.txt") KiB)"
done
