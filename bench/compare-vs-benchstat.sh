#!/usr/bin/env bash
# `latkit compare` against benchstat on the same two large Go benchmark files (the second 3 %
# slower, other noise), RUNS alternating runs (3 by default): both times, peak RSS, the ratio.
#   RUNS=3 bench/compare-vs-benchstat.sh [LINES]      (default 1000000 lines per file)
set -euo pipefail
cd "$(dirname "$0")/.."
lines=${1:-1000000}
. bench/measure.sh
old=$out/gobench-$lines.txt
new=$out/gobench-$lines-slower.txt
[ -s "$old" ] || python3 bench/gen-gobench.py "$lines" > "$old"
[ -s "$new" ] || python3 bench/gen-gobench.py "$lines" 40 7 1.03 > "$new"
find_benchstat

echo "input: two files of $lines lines; $(nproc) CPUs"
versus "${RUNS:-3}" "target/release/latkit compare $old $new --format csv" benchstat "$benchstat $old $new"
