#!/usr/bin/env python3
"""A pytest-benchmark `--benchmark-json` file with every round saved (`--benchmark-save-data`):
BENCHMARKS benchmarks of ROUNDS rounds each, laid out as pytest-benchmark writes it (indent 4).
  python3 bench/gen-pytest.py BENCHMARKS [ROUNDS] > file.json"""
import json
import random
import sys

benchmarks = int(sys.argv[1])
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 40
rng = random.Random(7)
out = sys.stdout
out.write('{\n    "machine_info": {"node": "gen", "machine": "x86_64", "system": "Linux",\n'
          '        "release": "6.1.0", "python_version": "3.11.2",\n'
          '        "cpu": {"brand_raw": "Generated CPU", "count": 2}},\n'
          '    "commit_info": {"id": "0123456789abcdef", "branch": "main", "dirty": false},\n'
          '    "benchmarks": [\n')
for b in range(benchmarks):
    base = 1e-5 * (1 + b % 97)
    data = [base * (1 + 0.02 * rng.random()) for _ in range(rounds)]
    data.sort()
    mean = sum(data) / rounds
    stats = {"min": data[0], "max": data[-1], "mean": mean, "stddev": 0.0,
             "rounds": rounds, "median": data[rounds // 2], "iterations": 1,
             "ops": 1 / mean, "data": data}
    row = {"group": None, "name": f"test_case_{b}", "fullname": f"tests/test_gen.py::test_case_{b}",
           "params": None, "param": None, "extra_info": {}, "options": {"disable_gc": False},
           "stats": stats}
    text = json.dumps(row, indent=4)
    out.write("        " + text.replace("\n", "\n        "))
    out.write(",\n" if b + 1 < benchmarks else "\n")
out.write('    ],\n    "datetime": "2026-11-28T00:00:00",\n    "version": "4.0.0"\n}\n')
