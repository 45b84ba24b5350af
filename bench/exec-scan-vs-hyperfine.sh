#!/usr/bin/env bash
# A parameter scan of N commands, each run twice and exported as JSON and CSV, by `latkit exec`
# and by `hyperfine -N`: wall time (best of 3) for each N and the latkit/hyperfine ratio. Its
# cost should grow with N, not N² (what finished is written as it goes, paced).
#   bench/exec-scan-vs-hyperfine.sh [N...]      (default 250 1000 2000)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/measure.sh
command -v hyperfine >/dev/null || { echo "needs hyperfine (apt-get install hyperfine)"; exit 1; }
[ $# -gt 0 ] || set -- 250 1000 2000
for each in "$@"; do
  read -r l lk < <(measure target/release/latkit exec -P n 1 "$each" --runs 2 --style none \
    --json "$out/scan.json" --export-csv "$out/scan.csv" -- /bin/true '{n}')
  read -r h hk < <(measure hyperfine -N -P n 1 "$each" --runs 2 --style none \
    --export-json "$out/scan-h.json" --export-csv "$out/scan-h.csv" '/bin/true {n}')
  awk -v n="$each" -v l="$l" -v h="$h" -v lk="$lk" -v hk="$hk" 'BEGIN {
    printf "%5d commands: latkit %.2f s (%d KiB), hyperfine %.2f s (%d KiB): ratio %.2f\n", n, l, lk, h, hk, l / h
  }'
done
