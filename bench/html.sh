#!/usr/bin/env bash
# Render time and size of HTML reports against the JSON report of the same input: a 60 s timer
# run at 10 kHz on every CPU (measured once and kept) and a 1,000,000-line Go benchmark file.
#   bench/html.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/measure.sh
timer=$out/timer-60s-10khz-all.json
if [ ! -s "$timer" ]; then
  echo "measuring a 60 s timer run at 10 kHz on every CPU..."
  target/release/latkit timer -T 60 -p 100 -c all -q --format json --out "$timer"
fi
go=$out/gobench-1000000.txt
[ -s "$go" ] || python3 bench/gen-gobench.py 1000000 > "$go"
for input in "$timer" "$go"; do
  read -r jt _ < <(measure target/release/latkit parse "$input" --format json)
  read -r ht hr < <(measure target/release/latkit parse "$input" --format html)
  target/release/latkit parse "$input" --format html --out "$out/report.html"
  size=$(stat -c %s "$out/report.html")
  awk -v f="$(basename "$input")" -v jt="$jt" -v ht="$ht" -v hr="$hr" -v size="$size" 'BEGIN {
    printf "%-28s json %.2f s, html %.2f s (%+.2f s), html %.0f KB, peak RSS %.0f MiB\n", f, jt, ht, ht - jt, size / 1024, hr / 1024
  }'
done
