#!/usr/bin/env bash
# Peak memory against file size, and MB/s, of `latkit parse` on large JSON documents of the
# readers that take whole files: pytest-benchmark (BENCHMARKS benchmarks of 40 rounds),
# hyperfine `--export-json` (one command of TIMES times) and latkit's own JSON (the pytest
# file's run, written by `latkit parse --format json`). The best of 3 runs each.
#   bench/json-readers-memory.sh [BENCHMARKS] [TIMES]     (defaults 100000, 10000000)
set -euo pipefail
cd "$(dirname "$0")/.."
benchmarks=${1:-100000}
times=${2:-10000000}
. bench/measure.sh
pytest=$out/pytest-$benchmarks.json
hyperfine=$out/hyperfine-$times.json
[ -s "$pytest" ] || python3 bench/gen-pytest.py "$benchmarks" > "$pytest"
[ -s "$hyperfine" ] || python3 - "$times" > "$hyperfine" <<'PY'
import random, sys
n = int(sys.argv[1]); rng = random.Random(3)
sys.stdout.write('{"results": [{"command": "sleep 0", "mean": 0.001, "stddev": 0.0001, '
                 '"median": 0.001, "user": 0.0005, "system": 0.0004, "min": 0.0009, '
                 '"max": 0.002, "times": [')
sys.stdout.write(",".join(f"{0.001 + rng.random() * 1e-4:.9f}" for _ in range(n)))
sys.stdout.write('], "exit_codes": [' + ",".join("0" for _ in range(n)) + ']}]}\n')
PY
latkit=$out/latkit-of-pytest-$benchmarks.json
[ -s "$latkit" ] || ${LATKIT:-target/release/latkit} parse --format json "$pytest" > "$latkit"
for file in "$pytest" "$hyperfine" "$latkit"; do
  bytes=$(stat -c %s "$file")
  read -r seconds kib < <(measure ${LATKIT:-target/release/latkit} parse --format csv "$file")
  awk -v f="$(basename "$file")" -v b="$bytes" -v s="$seconds" -v k="$kib" 'BEGIN {
    printf "%s: %.0f MB, %.2f s (%.0f MB/s), peak RSS %.0f MiB = %.2fx the file\n",
      f, b / 1e6, s, b / 1e6 / s, k / 1024, k * 1024 / b
  }'
done
