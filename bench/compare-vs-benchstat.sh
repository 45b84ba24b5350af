#!/usr/bin/env bash
# Times `latkit compare` against benchstat on the same two large Go benchmark files (the second
# 3 % slower, other noise) and prints both times, peak RSS and the ratio.
#   bench/compare-vs-benchstat.sh [LINES]      (default 1000000 lines per file, about 100 MB)
set -euo pipefail
cd "$(dirname "$0")/.."
lines=${1:-1000000}
. bench/measure.sh
old=$out/gobench-$lines.txt
new=$out/gobench-$lines-slower.txt
[ -s "$old" ] || python3 bench/gen-gobench.py "$lines" > "$old"
[ -s "$new" ] || python3 bench/gen-gobench.py "$lines" 40 7 1.03 > "$new"
find_benchstat

read -r lt lr < <(measure target/release/latkit compare "$old" "$new" --format csv)
read -r bt br < <(measure "$benchstat" "$old" "$new")
awk -v lines="$lines" -v lt="$lt" -v lr="$lr" -v bt="$bt" -v br="$br" 'BEGIN {
  printf "input:     two files of %d lines\n", lines
  printf "latkit:    %.2f s  peak RSS %.1f MiB\n", lt, lr / 1024
  printf "benchstat: %.2f s  peak RSS %.1f MiB\n", bt, br / 1024
  printf "speed-up:  %.1fx (benchstat time / latkit time); RSS ratio %.2f (latkit / benchstat)\n", bt / lt, lr / br
}'
