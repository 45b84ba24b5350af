#!/usr/bin/env bash
# latkit frame --op convert (NV12 → RGBA, 1280x720) against libyuv's NV12ToABGR on the same
# frame size and test pattern, RUNS times each, alternating; prints each run's median ms per
# frame and the ratio (latkit / libyuv). Needs libyuv-dev (apt-get install libyuv-dev).
#   RUNS=3 bench/frame-vs-libyuv.sh [WIDTH HEIGHT]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3} width=${1:-1280} height=${2:-720}
[ -f /usr/include/libyuv.h ] || { echo "libyuv-dev not found: apt-get install libyuv-dev"; exit 1; }
cargo build --release --quiet
out=bench/out/frame
mkdir -p "$out"
cc -O2 -o "$out/libyuv-nv12" bench/libyuv-nv12.c -lyuv
for i in $(seq "$runs"); do
  ours=$(target/release/latkit frame --op convert --pixfmt nv12 --width "$width" --height "$height" \
    --iterations 300 --format json -q | python3 -c 'import json,sys
b = json.load(sys.stdin)["runs"][0]["benchmarks"][0]
m = next(m for m in b["metrics"] if m.get("percentiles"))
print(m["percentiles"]["p50"] / 1e6)')
  theirs=$("$out/libyuv-nv12" "$width" "$height" 300 || true)
  awk -v i="$i" -v a="$ours" -v b="$theirs" \
    'BEGIN { printf "run %d: latkit %.3f ms, libyuv %.3f ms, ratio %.2fx\n", i, a, b, a / b }'
done
