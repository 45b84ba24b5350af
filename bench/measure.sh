# Sourced by the bench scripts. measure CMD...: prints "seconds peak_kib", the best of 3 runs
# (needs $out for its scratch file).
measure() {
  local best="" rss=""
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$out/time.txt" "$@" > /dev/null
    read -r s k < "$out/time.txt"
    if [ -z "$best" ] || awk "BEGIN{exit !($s < $best)}"; then best=$s; rss=$k; fi
  done
  echo "$best $rss"
}
