#!/bin/sh
# Fuzzes launchprof's report readers (report, compare, merge, export) through the CLI with
# mutated copies of a real report: truncations, values of the wrong type, huge and negative
# numbers, NaN-like strings, deep nesting, removed keys, flipped bytes.
#   Fuzz/run-reports.sh [count] [seed]   (default 1000 mutants, seed: the time)
# Each failure names the mutation, the command, its exit status and message; rerun with the
# printed seed to replay it.
set -eu
count="${1:-1000}"
seed="${2:-$(date +%s)}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
echo "fuzzing the report readers: $count mutants, seed $seed"
swift build --build-tests -j 2 >/dev/null
LP_FUZZ_REPORTS="$count" LP_FUZZ_SEED="$seed" \
    swift test --skip-build --no-parallel --filter ReportFuzzTests
