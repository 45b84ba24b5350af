#!/usr/bin/env bash
# A 1 % longer loop, decided by counted instructions against wall time, beside LOAD constant
# busy loops (default 3; LOAD=bursty for bench/bursty-load.sh): `latkit exec --runs auto` on a C
# program of STEPS (default 20,000,000, about 20 ms) against 1 % more steps, gated at +0.5 %.
# Prints each way's verdict, exit code, runs and seconds, and the ratio of the times.
#   LOAD=3 MAX_RUNS=2000 STEPS=20000000 bench/counts-under-load.sh
set -uo pipefail
cd "$(dirname "$0")/.."
latkit=${LATKIT:-$PWD/target/release/latkit}
work=$(mktemp -d)
load=
trap '[ -z "$load" ] || { pkill -P "$load"; kill "$load"; } 2>/dev/null; rm -rf "$work"' EXIT
cat > "$work/steps.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  unsigned long long x = 1, n = strtoull(argv[1], 0, 10);
  for (unsigned long long i = 0; i < n; i++) x = x * 6364136223846793005ULL + 1;
  printf("%llu\n", x);
  return 0;
}
C
cc -O1 -o "$work/steps" "$work/steps.c"
case ${LOAD:=3} in
  bursty) "$PWD/bench/bursty-load.sh" 2>/dev/null & load=$! ;;
  *) (for _ in $(seq 1 "$LOAD"); do (while :; do :; done) & done; wait) & load=$! ;;
esac
steps=${STEPS:-20000000}
more=$((steps + steps / 100))
echo "load: $LOAD; commands: steps $steps vs steps $more (+1 % loop); gate +0.5 %"
run() { # LABEL METRIC [MEASURE]: one gated --runs auto comparison
  local label=$1 metric=$2 start code
  start=$(date +%s.%N)
  shift 2
  "$latkit" exec "$@" --runs auto --max-runs "${MAX_RUNS:-2000}" --fail-on "$metric:+0.5%" \
    --format json -q "$work/steps $steps" "$work/steps $more" > "$work/$label.json" 2> "$work/$label.err"
  code=$?
  local took
  took=$(python3 -c "import time; print(f'{time.time() - $start:.1f}')")
  python3 - "$work/$label.json" "$label" "$code" "$took" "$metric" <<'PY'
import json, sys
path, label, code, took, metric = sys.argv[1:]
try:
    doc = json.load(open(path))
except ValueError:
    print(f"{label}: exit {code} in {took} s (no report)")
    sys.exit()
runs = 0
for bench in doc["runs"][0]["benchmarks"]:
    for m in bench["metrics"]:
        if m["name"] == metric:
            runs = max(runs, len(m["values"]))
gate = next((n["message"] for n in doc["notes"] if "gate" in n["message"].lower()), "")
print(f"{label}: exit {code} in {took} s, {runs} runs a command; {gate[:120]}")
PY
  echo "$took" > "$work/$label.took"
}
run counts instructions --measure instructions
run wall time
counted=$(cat "$work/counts.took") walled=$(cat "$work/wall.took")
echo "time to verdict, wall / counts: $walled s / $counted s = $(python3 -c "print(f'{$walled / $counted:.2f}x')")"
