#!/usr/bin/env bash
# Times the history store on SQLite and on a PostgreSQL server this script starts (initdb +
# pg_ctl on a loopback port, as nobody when run as root): storing and reading back a
# 1,000,000-line Go run and a 60 s timer run, and `latkit history` over 10,000 stored runs.
#   bench/store.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/measure.sh
latkit=$PWD/target/release/latkit

go_file=$out/gobench-1000000.txt
[ -s "$go_file" ] || python3 bench/gen-gobench.py 1000000 > "$go_file"
timer_file=$out/timer-60s.json
if [ ! -s "$timer_file" ]; then
  echo "measuring a 60 s timer run for the store to keep..."
  "$latkit" timer -T 60 -q --format json --out "$timer_file"
fi
small=$out/gobench-400.txt
[ -s "$small" ] || python3 bench/gen-gobench.py 400 > "$small"

# PostgreSQL, owned by nobody when we are root (initdb refuses root).
bin=$(dirname "$(readlink -f "$(command -v initdb || ls /usr/lib/postgresql/*/bin/initdb | tail -1)")")
pg=$(mktemp -d)
as_owner=()
if [ "$(id -u)" = 0 ]; then
  chown 65534:65534 "$pg"
  as_owner=(setpriv --reuid 65534 --regid 65534 --clear-groups)
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${as_owner[@]}" "$bin/initdb" -D "$pg/data" --auth=trust -U latkit -E UTF8 --no-sync > /dev/null
"${as_owner[@]}" "$bin/pg_ctl" -D "$pg/data" -o "-h 127.0.0.1 -p $port -k $pg" -l "$pg/log" -w start > /dev/null
trap '"${as_owner[@]}" "$bin/pg_ctl" -D "$pg/data" -m immediate -w stop > /dev/null; rm -rf "$pg"' EXIT
psql -q -h 127.0.0.1 -p "$port" -U latkit -d postgres -c 'CREATE DATABASE big' -c 'CREATE DATABASE many'

# Best of 5 wall times of CMD..., in milliseconds.
ms() {
  local best=""
  for _ in 1 2 3 4 5; do
    local t0 t1
    t0=$(date +%s%N)
    "$@" > /dev/null
    t1=$(date +%s%N)
    local t=$(( (t1 - t0) / 1000000 ))
    if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
  done
  echo "$best"
}

rm -f "$out"/store-*.db*
for backend in sqlite postgres; do
  if [ $backend = sqlite ]; then
    big=$out/store-big.db many=$out/store-many.db
  else
    big=postgres://latkit@127.0.0.1:$port/big many=postgres://latkit@127.0.0.1:$port/many
  fi
  read -r st sr < <(measure "$latkit" store add "$go_file" --db "$big")
  read -r et er < <(measure "$latkit" store export @latest --db "$big")
  read -r tt _ < <(measure "$latkit" store add "$timer_file" --db "$big")
  read -r tx _ < <(measure "$latkit" store export @latest --db "$big")
  # 10,000 runs of 40 benchmarks x 10 repetitions, 500 per process.
  files=()
  for _ in $(seq 500); do files+=("$small"); done
  for _ in $(seq 20); do
    "$latkit" store add "${files[@]}" --db "$many" > /dev/null
  done
  runs=$("$latkit" store list --db "$many" --format json | grep -c '"id"')
  one=$(ms "$latkit" history 'BenchmarkPipeline_Encode/case_01*' --db "$many")
  all=$(ms "$latkit" history --db "$many")
  printf "%-8s 1M-line Go run: store %.2f s (peak RSS %.0f MiB), read back %.2f s (%.0f MiB)\n" \
    $backend "$st" "$((sr / 1024))" "$et" "$((er / 1024))"
  printf "%-8s 60 s timer run: store %.2f s, read back %.2f s\n" $backend "$tt" "$tx"
  printf "%-8s history over %d runs: one benchmark %d ms, all 40 benchmarks %d ms\n" \
    $backend "$runs" "$one" "$all"
done
