#!/usr/bin/env bash
# `latkit parse` of a large google/benchmark JSON file against python's json.load of the same
# file (the floor any Python reader such as google/benchmark's tools/gbench pays before it
# looks at a row), RUNS alternating runs (3 by default): times, latkit's MB/s, peak RSS, ratio.
#   RUNS=3 bench/gbench-read.sh [MEGABYTES]      (default 200)
set -euo pipefail
cd "$(dirname "$0")/.."
megabytes=${1:-200}
. bench/measure.sh
file=$out/gbench-${megabytes}mb.json
[ -s "$file" ] || python3 bench/gen-gbench.py "$megabytes" > "$file"

bytes=$(stat -c %s "$file")
echo "input: $(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }') MB google/benchmark JSON; $(nproc) CPUs"
printf 'import json, sys\njson.load(open(sys.argv[1]))\n' > "$out/json-load.py"
versus "${RUNS:-3}" "target/release/latkit parse --input-format gbench-json --format csv $file" \
  json.load "python3 $out/json-load.py $file" "$bytes"
