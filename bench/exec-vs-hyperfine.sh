#!/usr/bin/env bash
# Per-run overhead of `latkit exec` against `hyperfine -N` (both spawn without a shell) on
# `true` (pure spawn + exec + exit cost) and `sleep 0.001`, interleaved A B A B so that host
# drift hits both; prints each tool's mean per command and the latkit/hyperfine ratio.
#   bench/exec-vs-hyperfine.sh [ROUNDS] [RUNS]      (default 3 rounds of 300 runs)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
runs=${2:-300}
. bench/measure.sh
command -v hyperfine >/dev/null || { echo "needs hyperfine (apt-get install hyperfine)"; exit 1; }
mean_of() { # FILE COMMAND: mean wall time in µs from a hyperfine or latkit JSON file
  python3 - "$1" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
if "results" in doc:
    r = next(r for r in doc["results"] if r["command"] == sys.argv[2])
    print(r["mean"] * 1e6)
else:
    b = next(b for b in doc["runs"][0]["benchmarks"] if b["full_name"] == sys.argv[2])
    v = next(m for m in b["metrics"] if m["name"] == "time")["values"]
    print(sum(v) / len(v) / 1e3)
PY
}
declare -A latkit_sum hyperfine_sum
for command in "true" "sleep 0.001"; do latkit_sum[$command]=0; hyperfine_sum[$command]=0; done
for round in $(seq "$rounds"); do
  target/release/latkit exec --runs "$runs" --warmup 10 -c true -c 'sleep 0.001' -q \
    --format json --out "$out/exec.json"
  hyperfine -N --style none --runs "$runs" --warmup 10 --export-json "$out/hyperfine.json" \
    true 'sleep 0.001' > /dev/null
  for command in "true" "sleep 0.001"; do
    l=$(mean_of "$out/exec.json" "$command")
    h=$(mean_of "$out/hyperfine.json" "$command")
    printf "round %d  %-12s latkit %8.1f µs  hyperfine %8.1f µs\n" "$round" "$command" "$l" "$h"
    latkit_sum[$command]=$(awk -v a="${latkit_sum[$command]}" -v b="$l" 'BEGIN{print a+b}')
    hyperfine_sum[$command]=$(awk -v a="${hyperfine_sum[$command]}" -v b="$h" 'BEGIN{print a+b}')
  done
done
for command in "true" "sleep 0.001"; do
  awk -v c="$command" -v l="${latkit_sum[$command]}" -v h="${hyperfine_sum[$command]}" -v n="$rounds" 'BEGIN {
    printf "%-12s latkit %.1f µs, hyperfine %.1f µs per run: ratio %.3f (latkit / hyperfine)\n", c, l / n, h / n, l / h
  }'
done
echo "latkit's own spawn cost (a run of \`true\`: fork, exec, exit, wait4) is the first line's latkit figure."
