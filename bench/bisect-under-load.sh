#!/usr/bin/env bash
# `latkit bisect` on a 12-commit Go repository whose 8th commit makes BenchmarkWork 40 % slower,
# TRIES times beside load that comes and goes (bench/bursty-load.sh; LOAD=none for a quiet
# machine, LOAD=N for N constant busy loops). Prints each try's answer, exit code and time.
#   TRIES=5 BISECT_OPTIONS="--max-rounds 8" bench/bisect-under-load.sh [HARNESS...]
# (default harness: go . -benchtime 100ms)
set -uo pipefail
cd "$(dirname "$0")/.."
latkit=${LATKIT:-$PWD/target/release/latkit}
harness=("$@")
[ ${#harness[@]} -gt 0 ] || harness=(go . -benchtime 100ms)
work=$(mktemp -d)
trap 'kill $load 2>/dev/null; rm -rf "$work"' EXIT
repo=$work/repo
mkdir -p "$repo" && cd "$repo"
git init -q -b main
git config user.email bench@latkit && git config user.name bench
spin() { # STEPS: a Go benchmark of STEPS multiply-adds per iteration
  cat > spin_test.go <<GO
package spin

import "testing"

var sink uint64

func spin(n int) {
	x := uint64(1)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1
	}
	sink += x
}

func BenchmarkWork(b *testing.B) {
	for i := 0; i < b.N; i++ {
		spin($1)
	}
}
GO
}
printf 'module example.com/spin\n\ngo 1.19\n' > go.mod
spin 20000
for i in $(seq 1 12); do
  echo "change $i" > notes.txt
  [ "$i" -eq 8 ] && spin 28000
  git add -A && git commit -qm "c$i: change $i"
done
culprit=$(git log --format=%h --grep '^c8:' | head -1)
echo "repository: 12 commits, c8 ($culprit) makes BenchmarkWork 40 % slower; harness: ${harness[*]}; load: ${LOAD:-bursty}"
load=
for try in $(seq 1 "${TRIES:-5}"); do
  case ${LOAD:-bursty} in
    none) ;;
    bursty) SEED=$try "$OLDPWD/bench/bursty-load.sh" 2>/dev/null & load=$! ;;
    *) (for _ in $(seq 1 "$LOAD"); do (while :; do :; done) & done; wait) & load=$! ;;
  esac
  start=$SECONDS
  "$latkit" bisect --good HEAD~11 --bad HEAD -q --format json ${BISECT_OPTIONS:-} -- "${harness[@]}" > "$work/out.json" 2> "$work/err.txt"
  code=$?
  [ -z "$load" ] || { pkill -P "$load" 2>/dev/null; kill "$load" 2>/dev/null; wait "$load" 2>/dev/null; load=; }
  summary=$(python3 - "$work/out.json" <<'PY'
import json, sys
try:
    report = json.load(open(sys.argv[1]))
except ValueError:
    sys.exit()
rows = [r["cells"] for r in report["tables"][0]["rows"]]
steps = ", ".join(f'{c[1]["text"].split(":")[0]} {c[7]["text"]} ({c[3].get("text", "")})' for c in rows)
notes = [n["message"] for n in report["notes"]]
answer = next((n for n in notes if n.startswith(("first bad commit", "undecided", "good and bad",
                                                 "stopped"))), "no answer")
busy = "busy machine said" if any("busy machine" in n for n in notes) else "no busy note"
print(f"{answer.split(';')[0][:110]}\n    steps: {steps}; {busy}")
PY
)
  echo "try $try: exit $code in $((SECONDS - start)) s: $summary"
  [ $code -eq 0 ] || [ $code -eq 3 ] || tail -3 "$work/err.txt"
done
