#!/usr/bin/env python3
"""Writes Go benchmark output with LINES result lines: NAMES benchmarks repeated `-count` style.
   gen-gobench.py [LINES] [NAMES] [SEED] [SCALE]: SEED varies the noise, SCALE multiplies every
   time (a "new" file to compare with the default one)."""
import random
import sys

lines = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
names = int(sys.argv[2]) if len(sys.argv) > 2 else 40
scale = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
rng = random.Random(14313)
stages = ["Capture", "Encode", "Send", "Decode", "Present"]
bench = [f"BenchmarkPipeline_{stages[i % 5]}/case_{i:02d}/size={64 << (i % 6)}-8" for i in range(names)]
base = [rng.uniform(200, 200_000) * scale for _ in range(names)]
if len(sys.argv) > 3:
    rng = random.Random(int(sys.argv[3]))
out = sys.stdout
out.write("goos: linux\ngoarch: amd64\npkg: example.com/latkit/generated\ncpu: Generated CPU @ 3.00GHz\n")
for i in range(lines):
    b = i % names
    ns = base[b] * rng.uniform(0.95, 1.08)
    out.write(f"{bench[b]:<60}\t{1000:>8}\t{ns:>12.1f} ns/op\t{(b * 37) % 4096:>6} B/op\t{b % 17:>4} allocs/op\t{ns / 1000:>8.2f} MB/s\n")
