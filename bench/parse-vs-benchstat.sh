#!/usr/bin/env bash
# `latkit parse --format json` against benchstat on the same large Go benchmark file, RUNS
# alternating runs (3 by default): both times, latkit's MB/s, both peak RSS, and the ratio.
#   RUNS=3 bench/parse-vs-benchstat.sh [LINES] [SEED]   (default 1000000 lines, about 130 MB;
#   another SEED generates another file of the same shape, one latkit has not been tuned on)
set -euo pipefail
cd "$(dirname "$0")/.."
lines=${1:-1000000}
seed=${2:-}
. bench/measure.sh
file=$out/gobench-$lines${seed:+-seed$seed}.txt
[ -s "$file" ] || python3 bench/gen-gobench.py "$lines" 40 $seed > "$file"
find_benchstat

bytes=$(stat -c %s "$file")
echo "input: $file, $lines lines, $(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }') MB; $(nproc) CPUs"
versus "${RUNS:-3}" "target/release/latkit parse --format json $file" benchstat "$benchstat $file" "$bytes"
