#!/usr/bin/env bash
# Load that comes and goes, as on a shared CI runner: every 1-4 s (random) kills the busy loops
# it started and starts 0-5 new ones, until killed. Seeded by SEED, so a run's load pattern
# can be repeated.
#   SEED=1 bench/bursty-load.sh &   ...   kill %1
set -euo pipefail
RANDOM=${SEED:-$$}
pids=()
stop() { [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true; }
trap 'stop; exit 0' TERM INT EXIT
while :; do
  stop
  pids=()
  for _ in $(seq 1 $((RANDOM % 6))); do
    (while :; do :; done) &
    pids+=($!)
  done
  sleep $((1 + RANDOM % 4))
done
