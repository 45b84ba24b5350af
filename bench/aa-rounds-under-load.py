#!/usr/bin/python3
"""Why interleaved rounds mislead under load that comes and goes: one Go benchmark binary run
as three "commits" that are the same code (A/A/A), ROUNDS rounds of three runs, beside
bench/bursty-load.sh. For each run: its place in the round, Go's iteration count (b.N) and
ns/op. Then, over windows of 8 rounds: how often each test calls two identical commits
different at one-sided 0.025 -- the U test on the rounds as two samples (what bisect did) and
the signed-rank test on the rounds' ratios (what it does now) -- with the places fixed
(good, commit, bad) and drawn per round.

    bench/aa-rounds-under-load.py [ROUNDS] [BENCHTIME]   (default 120 rounds, 100ms)
"""
import os, random, re, statistics, subprocess, sys, tempfile
from scipy.stats import mannwhitneyu, wilcoxon

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 120
benchtime = sys.argv[2] if len(sys.argv) > 2 else "100ms"
here = os.path.dirname(os.path.abspath(__file__))
work = tempfile.mkdtemp()
with open(os.path.join(work, "go.mod"), "w") as f:
    f.write("module example.com/spin\n\ngo 1.19\n")
with open(os.path.join(work, "spin_test.go"), "w") as f:
    f.write("""package spin

import "testing"

var sink uint64

func spin(n int) {
	x := uint64(1)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1
	}
	sink += x
}

func BenchmarkWork(b *testing.B) {
	for i := 0; i < b.N; i++ {
		spin(20000)
	}
}
""")
binary = os.path.join(work, "spin.test")
subprocess.run(["go", "test", "-c", "-o", binary, "."], cwd=work, check=True)
line = re.compile(r"^BenchmarkWork\S*\s+(\d+)\s+([\d.]+) ns/op", re.M)

def run():
    out = subprocess.run([binary, "-test.run", "^$", "-test.bench", ".", "-test.benchtime",
                          benchtime], capture_output=True, text=True, check=True).stdout
    n, ns = line.search(out).groups()
    return int(n), float(ns)

load = subprocess.Popen(["bash", os.path.join(here, "bursty-load.sh")], env={**os.environ, "SEED": "1"})
runs = []  # (round, place, n, ns)
try:
    for r in range(rounds):
        for place in range(3):
            n, ns = run()
            runs.append((r, place, n, ns))
finally:
    load.terminate()
    load.wait()

by_place = [[ns for (_, p, _, ns) in runs if p == place] for place in range(3)]
print(f"{rounds} rounds of 3 runs of the same binary, -benchtime {benchtime}, beside bursty load")
for place, values in enumerate(by_place):
    print(f"  place {place}: median {statistics.median(values):.0f} ns/op, "
          f"min {min(values):.0f}, max {max(values):.0f}")
ns_all = [ns for (_, _, _, ns) in runs]
n_all = [n for (_, _, n, _) in runs]
slow = statistics.median(ns_all) * 1.3
print(f"  b.N: {min(n_all)}..{max(n_all)}; runs 30 % above the median: {sum(v > slow for v in ns_all)} "
      f"of {len(ns_all)}; median b.N of those {statistics.median([n for (_, _, n, ns) in runs if ns > slow] or [0]):.0f}, "
      f"of the rest {statistics.median([n for (_, _, n, ns) in runs if ns <= slow]):.0f}")
# Consecutive runs' load persists: the correlation of each run's log ns/op with the next one's.
logs = [__import__("math").log(v) for v in ns_all]
m = statistics.mean(logs)
num = sum((a - m) * (b - m) for a, b in zip(logs, logs[1:]))
den = sum((a - m) ** 2 for a in logs)
print(f"  lag-1 autocorrelation of log ns/op: {num / den:.2f}")

table = [[None] * 3 for _ in range(rounds)]
iterations = [[None] * 3 for _ in range(rounds)]
for (r, p, n, ns) in runs:
    table[r][p] = ns
    iterations[r][p] = n
log = __import__("math").log
def spread(values):  # a standard deviation from the median absolute deviation
    centre = statistics.median(values)
    return 1.4826 * statistics.median([abs(v - centre) for v in values])
across = spread([log(v) for v in ns_all])
within = spread([log(row[1] / row[0]) for row in table])
print(f"  spread of log ns/op across all runs: {across:.3f}; of each round's second/first: "
      f"{within:.3f} (pairing within rounds removes {100 * (1 - (within / across) ** 2):.0f} % "
      f"of the variance)")
wrecked = sum(abs(log(row[1] / row[0])) > log(1.3) for row in table)
print(f"  rounds whose two runs differ by more than 30 %: {wrecked} of {rounds}")
dn = [log(it[1] / it[0]) for it in iterations]
dv = [log(row[1] / row[0]) for row in table]
mn, mv = statistics.mean(dn), statistics.mean(dv)
cov = sum((a - mn) * (b - mv) for a, b in zip(dn, dv))
corr = cov / ((sum((a - mn) ** 2 for a in dn) * sum((b - mv) ** 2 for b in dv)) ** 0.5 or 1)
print(f"  correlation of a round's b.N ratio with its ns/op ratio: {corr:.2f}")
rng = random.Random(7)
windows = rounds // 8
tally = {"U test, fixed places": 0, "signed rank, fixed places": 0,
         "U test, drawn places": 0, "signed rank, drawn places": 0}
for w in range(windows):
    rows = table[8 * w: 8 * w + 8]
    for drawn in (False, True):
        good, mid = [], []
        for row in rows:
            places = rng.sample(range(3), 3) if drawn else [0, 1, 2]
            good.append(row[places[0]]); mid.append(row[places[1]])
        kind = "drawn" if drawn else "fixed"
        u = mannwhitneyu(mid, good, alternative="greater").pvalue
        s = wilcoxon([__import__("math").log(a / b) for a, b in zip(mid, good)], alternative="greater").pvalue
        tally[f"U test, {kind} places"] += u <= 0.025
        tally[f"signed rank, {kind} places"] += s <= 0.025
print(f"  identical commits called worse at one-sided 0.025, over {windows} windows of 8 rounds:")
for name, count in tally.items():
    print(f"    {name}: {count} ({count / windows:.3f})")
