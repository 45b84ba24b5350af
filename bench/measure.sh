# Sourced by the bench scripts (from the repository root): builds the release binary, makes
# $out (bench/out), and defines measure and the benchstat locator.
out=bench/out
mkdir -p "$out"
cargo build --release --quiet

# The benchstat binary (installed on first use), in $benchstat.
find_benchstat() {
  benchstat=$(command -v benchstat || echo "$(go env GOPATH)/bin/benchstat")
  [ -x "$benchstat" ] || go install golang.org/x/perf/cmd/benchstat@latest
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
