#!/usr/bin/env bash
# Fills the history store (LATKIT_DB, else latkit's default) with a generated project's history
# through the real CLI: bench/gen-history.py's results, one per commit of a new git repository
# DIR/repo, each stored by `latkit store add` under its commit. DIR/results/injected.tsv lists
# the slowdowns injected (commit index, benchmark, percent).
#   bench/fill-history.sh DIR [COMMITS] [NAMES]     (default 500 commits x 300 benchmarks)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
commits=${2:-500}
names=${3:-300}
latkit=${LATKIT:-latkit}
python3 "$here/gen-history.py" "$dir/results" "$commits" "$names"
git init -q -b main "$dir/repo"
for file in "$dir"/results/[0-9]*.txt; do
  git -C "$dir/repo" -c user.name=latkit -c user.email=latkit@example.invalid \
    commit -q --allow-empty -m "commit $(basename "$file" .txt)"
  (cd "$dir/repo" && "$latkit" store add -q "$file" > /dev/null)
done
