# Sourced by the bench scripts (from the repository root): builds the release binary, makes
# $out (bench/out), and defines measure and the benchstat locator.
out=bench/out
mkdir -p "$out"
cargo build --release --quiet

# The benchstat binary (installed on first use), in $benchstat.
find_benchstat() {
  benchstat=$(command -v benchstat || echo "$(go env GOPATH)/bin/benchstat")
  # The newest x/perf that Debian 12's Go (1.19) builds, as .ci/setup pins it.
  [ -x "$benchstat" ] || go install golang.org/x/perf/cmd/benchstat@v0.0.0-20230227161431-f7320a6d63e8
}

# measure CMD...: prints "seconds peak_kib", the best of 3 runs.
measure() {
  local best="" rss=""
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$out/time.txt" "$@" > /dev/null
    read -r s k < "$out/time.txt"
    if [ -z "$best" ] || awk "BEGIN{exit !($s < $best)}"; then best=$s; rss=$k; fi
  done
  echo "$best $rss"
}

# once CMD...: prints "seconds peak_kib" of one run, its wall time to the microsecond.
once() {
  local start=$EPOCHREALTIME
  /usr/bin/time -f "%M" -o "$out/rss.txt" "$@" > /dev/null
  local end=$EPOCHREALTIME
  echo "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f", b - a }') $(cat "$out/rss.txt")"
}

# versus RUNS "LATKIT CMD" "PEER NAME" "PEER CMD" [BYTES]: one untimed run of each (the file
# into the page cache), then RUNS alternating runs; one line per run with both times, peak RSS
# and the ratio (peer time / latkit time), and latkit's MB/s when BYTES is given.
versus() {
  local runs=$1 ours=$2 name=$3 theirs=$4 bytes=${5:-0}
  $ours > /dev/null
  $theirs > /dev/null
  for i in $(seq "$runs"); do
    read -r lt lr < <(once $ours)
    read -r pt pr < <(once $theirs)
    awk -v i="$i" -v n="$name" -v b="$bytes" -v lt="$lt" -v lr="$lr" -v pt="$pt" -v pr="$pr" 'BEGIN {
      rate = b > 0 ? sprintf(", %.0f MB/s", b / 1e6 / lt) : ""
      printf "run %d: latkit %.3f s%s, peak RSS %.1f MiB | %s %.3f s, peak RSS %.1f MiB | %.2fx\n",
        i, lt, rate, lr / 1024, n, pt, pr / 1024, pt / lt
    }'
  done
}
