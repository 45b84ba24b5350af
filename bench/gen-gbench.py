#!/usr/bin/env python3
"""Writes google/benchmark JSON (schema 1, as 1.7.1 writes it) of about MEGABYTES MB:
NAMES benchmarks with counters, each repeated until the file reaches the size."""
import random
import sys

megabytes = int(sys.argv[1]) if len(sys.argv) > 1 else 200
names = int(sys.argv[2]) if len(sys.argv) > 2 else 40
rng = random.Random(14313)
bench = [f"BM_Replay_{('Read', 'Write', 'Diff', 'Open')[i % 4]}/window:{1 << (i % 8)}/real_time" for i in range(names)]
base = [rng.uniform(1, 200_000) for _ in range(names)]
out = sys.stdout
out.write('{\n  "context": {\n    "date": "2026-11-22T00:00:00+00:00",\n    "host_name": "generated",\n'
          '    "executable": "./replay_bench",\n    "num_cpus": 2,\n    "mhz_per_cpu": 2596,\n'
          '    "cpu_scaling_enabled": false,\n    "load_avg": [0.4,0.2,0.1],\n'
          '    "library_build_type": "release"\n  },\n  "benchmarks": [\n')
target = megabytes * 1_000_000
written = 0
rep = 0
first = True
while written < target:
    for b in range(names):
        real = base[b] * rng.uniform(0.95, 1.08)
        entry = (
            '    {\n'
            f'      "name": "{bench[b]}",\n'
            f'      "family_index": {b},\n'
            '      "per_family_instance_index": 0,\n'
            f'      "run_name": "{bench[b]}",\n'
            '      "run_type": "iteration",\n'
            '      "repetitions": 1000000,\n'
            f'      "repetition_index": {rep},\n'
            '      "threads": 1,\n'
            f'      "iterations": {int(1e9 / real) + 1},\n'
            f'      "real_time": {real:.16e},\n'
            f'      "cpu_time": {real * rng.uniform(0.97, 1.0):.16e},\n'
            '      "time_unit": "ns",\n'
            f'      "items_per_second": {1e9 / real:.16e}\n'
            '    }'
        )
        out.write(entry if first else ",\n" + entry)
        first = False
        written += len(entry) + 2
    rep += 1
out.write("\n  ]\n}\n")
