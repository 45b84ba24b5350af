#!/usr/bin/env bash
# `latkit parse --format json` against benchstat on the same large Go benchmark file, RUNS
# alternating runs (3 by default): both times, latkit's MB/s, both peak RSS, and the ratio.
#   RUNS=3 bench/parse-vs-benchstat.sh [LINES]      (default 1000000 lines, about 130 MB)
set -euo pipefail
cd "$(dirname "$0")/.."
lines=${1:-1000000}
. bench/measure.sh
file=$out/gobench-$lines.txt
[ -s "$file" ] || python3 bench/gen-gobench.py "$lines" > "$file"
find_benchstat

bytes=$(stat -c %s "$file")
echo "input: $lines lines, $(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }') MB; $(nproc) CPUs"
versus "${RUNS:-3}" "target/release/latkit parse --format json $file" benchstat "$benchstat $file" "$bytes"
