#!/usr/bin/env python3
"""Writes a generated project's benchmark history: one Go benchmark file per commit, NAMES
benchmarks with REPS repetitions each, and slowdowns injected at known commits.
   gen-history.py DIR [COMMITS] [NAMES] [REPS] [SEED] [STEP]
writes DIR/0000.txt ... and DIR/injected.tsv (commit index, benchmark, percent): from each listed
commit on, that benchmark is slower by that percent; every other change is noise (±3 %).
Slowdowns come every STEP commits (default: five times in the history)."""
import os
import random
import sys

out = sys.argv[1]
commits = int(sys.argv[2]) if len(sys.argv) > 2 else 500
names = int(sys.argv[3]) if len(sys.argv) > 3 else 300
reps = int(sys.argv[4]) if len(sys.argv) > 4 else 5
rng = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 2026)
os.makedirs(out, exist_ok=True)
stages = ["Capture", "Encode", "Send", "Decode", "Present"]
bench = [f"BenchmarkPipeline_{stages[i % 5]}/case_{i:03d}-8" for i in range(names)]
base = [rng.uniform(200, 200_000) for _ in range(names)]
# Five times in the history (every 97 commits of 500), three benchmarks slower by 10, 25 and 50 %.
step = int(sys.argv[6]) if len(sys.argv) > 6 else max(commits // 5 - 3, 1)
injected = [(c, (c * 7 + k * 101) % names, size)
            for c in range(step, commits, step) for k, size in enumerate((10, 25, 50))]
with open(os.path.join(out, "injected.tsv"), "w") as f:
    for c, b, size in injected:
        f.write(f"{c}\t{bench[b][:-2]}\t{size}\n")
factor = [1.0] * names
for c in range(commits):
    for at, b, size in injected:
        if at == c:
            factor[b] *= 1 + size / 100
    with open(os.path.join(out, f"{c:04d}.txt"), "w") as f:
        f.write("goos: linux\ngoarch: amd64\npkg: example.com/generated\n")
        for _ in range(reps):
            for b in range(names):
                ns = base[b] * factor[b] * rng.uniform(0.97, 1.03)
                f.write(f"{bench[b]}\t{1000}\t{ns:.1f} ns/op\n")
