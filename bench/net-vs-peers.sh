#!/usr/bin/env bash
# On loopback, interleaved: latkit udp-rtt and tcp-rtt p50 against `sockperf ping-pong
# --full-rtt` (same message size and duration), latkit tcp-throughput against iperf3 (same
# duration and write size: 128 KiB, iperf3's default; latkit's default is 64 KiB); then
# `latkit frame --op copy` bandwidth next to this machine's memcpy bandwidth.
#   PAIRS=3 DURATION=5 SIZE=64 bench/net-vs-peers.sh
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${PAIRS:-3} duration=${DURATION:-5} size=${SIZE:-64}
for tool in sockperf iperf3 cc; do
  command -v "$tool" >/dev/null || { echo "$tool not found (apt-get install sockperf iperf3 gcc)"; exit 1; }
done
cargo build --release --quiet
latkit=target/release/latkit
out=bench/out/net
mkdir -p "$out"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
$latkit net server --bind 127.0.0.1:47001 --max-bytes 1TiB --max-duration 600 2>/dev/null & pids+=($!)
sockperf server -i 127.0.0.1 -p 11111 >/dev/null 2>&1 & pids+=($!)
sockperf server -i 127.0.0.1 -p 11112 --tcp >/dev/null 2>&1 & pids+=($!)
iperf3 -s -p 5299 >/dev/null 2>&1 & pids+=($!)
sleep 1

latkit_p50() { # test -> p50 RTT in µs
  $latkit net client 127.0.0.1:47001 --test "$1" --size "$size" --duration "$duration" --warmup 1 --format json \
    | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["runs"][0]["benchmarks"][0]["metrics"][0]["percentiles"]["p50"]/1000)'
}
sockperf_p50() { # extra args -> p50 RTT in µs
  sockperf ping-pong -i 127.0.0.1 "$@" -m "$size" -t "$duration" --full-rtt 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | awk '/percentile 50.000 =/ {print $NF}'
}
latkit_mbps() {
  $latkit net client 127.0.0.1:47001 --test tcp-throughput --duration "$duration" --chunk 128KiB --format json \
    | python3 -c 'import json,sys; d=json.load(sys.stdin); m={x["name"]:x["values"][0] for x in d["runs"][0]["benchmarks"][0]["metrics"]}; print(m["throughput"]/1e6)'
}
iperf3_mbps() {
  iperf3 -c 127.0.0.1 -p 5299 -t "$duration" -l 128K -J | python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/8/1e6)'
}

printf '%4s | %10s %10s | %10s %10s | %12s %12s\n' pair "latkit udp" "sockperf" "latkit tcp" "sockperf" "latkit MB/s" "iperf3 MB/s"
: > "$out/rows.txt"
for i in $(seq "$pairs"); do
  a=$(latkit_p50 udp-rtt); b=$(sockperf_p50 -p 11111)
  c=$(latkit_p50 tcp-rtt); d=$(sockperf_p50 -p 11112 --tcp)
  e=$(latkit_mbps); f=$(iperf3_mbps)
  printf '%4s | %10.2f %10.2f | %10.2f %10.2f | %12.1f %12.1f\n' "$i" "$a" "$b" "$c" "$d" "$e" "$f"
  echo "$a $b $c $d $e $f" >> "$out/rows.txt"
done
python3 - "$out/rows.txt" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
med = lambda k: statistics.median(r[k] for r in rows)
print(f"median ratios: udp-rtt p50 latkit/sockperf {med(0)/med(1):.3f}  tcp-rtt p50 latkit/sockperf {med(2)/med(3):.3f}  "
      f"throughput latkit/iperf3 {med(4)/med(5):.3f}")
PY

cc -O2 -o "$out/memcpy" bench/memcpy.c
frame=$($latkit frame --op copy --iterations 2000 --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); m={x["name"]:x for x in d["runs"][0]["benchmarks"][0]["metrics"]}; print(m["bandwidth"]["values"][0]/1e9)')
echo "frame --op copy (nv12 1280x720, 1382400 B): ${frame} GB/s"
echo "memcpy of the same 1382400 B buffer (best of 5): $("$out/memcpy" 1382400 2000) GB/s"
echo "memcpy of a 256 MiB buffer (DRAM, best of 5):     $("$out/memcpy" 268435456 8) GB/s"
