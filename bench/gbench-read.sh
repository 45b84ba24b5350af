#!/usr/bin/env bash
# Times `latkit parse --format csv` on a large google/benchmark JSON file against python's
# json.load of the same file (the floor any Python reader such as google/benchmark's
# tools/gbench pays before it looks at a row), and prints both times, peak RSS and the ratios.
#   bench/gbench-read.sh [MEGABYTES]      (default 200)
set -euo pipefail
cd "$(dirname "$0")/.."
megabytes=${1:-200}
. bench/measure.sh
file=$out/gbench-${megabytes}mb.json
[ -s "$file" ] || python3 bench/gen-gbench.py "$megabytes" > "$file"

bytes=$(stat -c %s "$file")
read -r lt lr < <(measure target/release/latkit parse --input-format gbench-json --format csv "$file")
read -r pt pr < <(measure python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$file")
awk -v bytes="$bytes" -v lt="$lt" -v lr="$lr" -v pt="$pt" -v pr="$pr" 'BEGIN {
  printf "input:       %.1f MB google/benchmark JSON\n", bytes / 1e6
  printf "latkit:      %.2f s  %.0f MB/s  peak RSS %.1f MiB (%.2fx the file)\n", lt, bytes / 1e6 / lt, lr / 1024, lr * 1024 / bytes
  printf "json.load:   %.2f s  %.0f MB/s  peak RSS %.1f MiB (%.2fx the file)\n", pt, bytes / 1e6 / pt, pr / 1024, pr * 1024 / bytes
  printf "speed-up:    %.2fx (json.load time / latkit time)\n", pt / lt
}'
