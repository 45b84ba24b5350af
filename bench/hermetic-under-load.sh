#!/usr/bin/env bash
# The hermetic tier as issue 37 asks for it: RUNS times in a row (10 by default) while two busy
# loops hold both cores, as uid 65534, with no peer on PATH (coreutils, sh and util-linux only:
# no go, git, compilers, python, java, chromium, PostgreSQL, qemu, hyperfine or rt-tests) and an
# empty HOME. Prints each run's wall time and failures, then how many runs failed.
#   RUNS=10 bench/hermetic-under-load.sh     (as root: it drops to uid 65534 itself)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-10}

# The hermetic tier's binaries: the library's unit tests and tests/suite without `interop`.
mapfile -t binaries < <(cargo test --release --locked --no-run --message-format=json 2>/dev/null |
    python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    target = m.get("target", {})
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"] \
            and (target["name"], target["kind"]) in (("latkit", ["lib"]), ("suite", ["test"])):
        print(m["executable"])')
[ "${#binaries[@]}" -eq 2 ] || { echo "expected the unit tests and tests/suite, got: ${binaries[*]}" >&2; exit 2; }

scratch=$(mktemp -d)
bin=$scratch/bin
mkdir "$bin"
for tool in /usr/bin/* /bin/*; do
    case "${tool##*/}" in
    go* | git* | hyperfine | cyclic* | sockperf | iperf* | java* | chrom* | qemu* | python* | \
        rtla | pg_* | psql | *gcc* | *g++* | cc | c89* | c99* | clang* | cmake | make* | gmake | \
        ld* | *gold | benchstat | stress* | perf | time | tar | cargo | rustc) ;;
    *) ln -sf "$tool" "$bin/" ;;
    esac
done
mkdir "$scratch/home"
chown -R 65534:65534 "$scratch/home"
chmod 755 "$scratch"

hogs=()
for _ in 1 2; do
    (while :; do :; done) &
    hogs+=($!)
done
trap 'kill "${hogs[@]}" 2>/dev/null; rm -rf "$scratch"' EXIT

failed=0
for run in $(seq "$runs"); do
    start=$(date +%s.%N)
    log=$scratch/run$run.log
    status=0
    for test_binary in "${binaries[@]}"; do
        setpriv --reuid 65534 --regid 65534 --clear-groups \
            env -i PATH="$bin" HOME="$scratch/home" TMPDIR=/tmp "$test_binary" -q >>"$log" 2>&1 ||
            status=1
    done
    seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
    if [ "$status" -eq 0 ]; then
        echo "run $run: passed in $seconds s ($(grep -o '[0-9]* passed; [0-9]* failed; [0-9]* ignored' "$log" | tr '\n' ' '))"
    else
        failed=$((failed + 1))
        echo "run $run: FAILED in $seconds s: $(grep -E '^    [a-z_:]+$' "$log" | tr -d ' ' | tr '\n' ' ')"
        grep -A12 -- '---- ' "$log" | head -40
    fi
done
echo "$failed of $runs runs failed"
