#!/usr/bin/env bash
# A generated project's history through the real CLI: a git repository of COMMITS commits, each
# with its benchmark file stored by `latkit store add` under that commit (NAMES benchmarks, 5
# repetitions, slowdowns injected at known commits: bench/fill-history.sh). Prints the time to
# fill the store, its size, the time `latkit history` takes over all of it and how many change
# points it marks, then what `history --regressions` lists against what was injected, and the
# time, memory and size of `latkit site` over the whole store.
#   bench/history-store.sh [COMMITS] [NAMES]     (default 500 commits x 300 benchmarks)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/measure.sh
latkit=$PWD/target/release/latkit
commits=${1:-500}
names=${2:-300}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LATKIT_DB=$work/history.db
start=$EPOCHREALTIME
LATKIT=$latkit bench/fill-history.sh "$work" "$commits" "$names"
end=$EPOCHREALTIME
awk -v a="$start" -v b="$end" -v n="$commits" 'BEGIN { printf "filled: %d runs in %.1f s (%.0f ms a run, git commit included)\n", n, b - a, (b - a) * 1000 / n }'
echo "store: $(du -h "$LATKIT_DB" | cut -f1) for $commits runs x $names benchmarks"
read -r s k < <(measure "$latkit" history --last "$commits" --format json)
echo "history over all of it (--last $commits, JSON): $s s, peak RSS $((k / 1024)) MiB"
# The change points history marks, against the slowdowns injected: every other mark is a false
# alarm of the step-by-step test.
"$latkit" history --last "$commits" --format json > "$work/history.json"
python3 - "$work/history.json" "$work/results/injected.tsv" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
injected = {(int(c) + 1, b) for c, b, _ in (l.split("\t") for l in open(sys.argv[2]))}
marked = set()
for table in doc["tables"]:
    bench = table["title"].split(" ")[0]
    for run, row in enumerate(table["rows"], start=1):
        if any(c.get("text", "").startswith(("▲", "▼")) for c in row["cells"]):
            marked.add((run, bench))
print(f"change points marked: {len(marked)}; injected slowdowns: {len(injected)}, "
      f"of them marked: {len(injected & marked)}")
PY

# The changes that hold, against the injected slowdowns: (first run after, benchmark) pairs.
read -r s k < <(measure sh -c "\"$latkit\" history --regressions --format json 2> /dev/null || [ \$? -eq 1 ]")
echo "history --regressions: $s s, peak RSS $((k / 1024)) MiB"
"$latkit" history --regressions --format json > "$work/regressions.json" 2>/dev/null || [ $? -eq 1 ]
python3 - "$work/regressions.json" "$work/results/injected.tsv" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
injected = {(int(c) + 1, b) for c, b, _ in (l.split("\t") for l in open(sys.argv[2]))}
listed = set()
for table in doc["tables"]:
    for row in table["rows"]:
        run = next(c["text"] for c in row["cells"] if c.get("text", "").startswith("#"))
        listed.add((int(run[1:]), row["benchmark"]))
print(f"regressions listed: {len(listed)}; injected: {len(injected)}, of them listed: "
      f"{len(injected & listed)}")
PY
read -r s k < <(measure "$latkit" site --out "$work/site" -q)
echo "site: built in $s s, peak RSS $((k / 1024)) MiB; $(find "$work/site" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }') bytes in \
$(find "$work/site" -name '*.html' | wc -l) pages, index $(stat -c %s "$work/site/index.html") bytes, \
largest page $(find "$work/site/b" -name '*.html' -printf '%s\n' | sort -n | tail -1) bytes"
