#!/usr/bin/env bash
# Times `latkit parse --format json` against benchstat on the same large Go benchmark file and
# prints the ratio, latkit's throughput and both peak RSS figures.
#   bench/parse-vs-benchstat.sh [LINES]      (default 1000000 lines, about 100 MB)
set -euo pipefail
cd "$(dirname "$0")/.."
lines=${1:-1000000}
. bench/measure.sh
file=$out/gobench-$lines.txt
[ -s "$file" ] || python3 bench/gen-gobench.py "$lines" > "$file"
find_benchstat

bytes=$(stat -c %s "$file")
read -r lt lr < <(measure target/release/latkit parse --format json "$file")
read -r bt br < <(measure "$benchstat" "$file")
awk -v lines="$lines" -v bytes="$bytes" -v lt="$lt" -v lr="$lr" -v bt="$bt" -v br="$br" 'BEGIN {
  printf "input:     %d lines, %.1f MB\n", lines, bytes / 1e6
  printf "latkit:    %.2f s  %.0f MB/s  peak RSS %.1f MiB\n", lt, bytes / 1e6 / lt, lr / 1024
  printf "benchstat: %.2f s  %.0f MB/s  peak RSS %.1f MiB\n", bt, bytes / 1e6 / bt, br / 1024
  printf "speed-up:  %.1fx (benchstat time / latkit time)\n", bt / lt
}'
