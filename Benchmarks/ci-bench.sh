#!/usr/bin/env bash
# The project's own launch-regression gate (run by .ci/run after the tests): `launchprof bench`
# over Benchmarks/ci-suite.json (the demo app warm and cold, the bench-app fixture) against the
# baseline committed in Benchmarks/ci-baseline/.
#
#   Benchmarks/ci-bench.sh                    compare; exit 2 on a regression, 1 on a failed launch
#   Benchmarks/ci-bench.sh --update-baseline  re-record Benchmarks/ci-baseline/ (then commit it)
#
# The baseline was measured at another time, maybe on another machine, so the suite asks for a
# large effect before it calls a change (30% and 2 ms, the demo's first frame under 400 ms):
# this gate catches a launch that got much slower or a closure that grew (objects, relocations
# and initializers are compared exactly), not a 10% drift — that needs both builds measured in
# one job, interleaved (see Benchmarks/compare-trials.sh). Runs go through high-priority.sh so a
# busy machine's compilers do not stretch them. Improvements (exit 4) pass. About 15 s.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"
out="$root/.build/ci-bench"
mkdir -p "$out"
launchprof="${LAUNCHPROF:-$root/.build/debug/launchprof}"
if [ ! -x "$launchprof" ] || [ ! -x "$root/.build/debug/launchprof-demo" ]; then
    swift build --product launchprof && swift build --product launchprof-demo || exit 1
fi
cc -O1 -I Tests/LaunchprofTests/Fixtures -I Sources/LaunchprofHooks/include \
   -o "$out/bench-app" Tests/LaunchprofTests/Fixtures/bench-app.c || exit 1

if [ "${1:-}" = "--update-baseline" ]; then
    rm -rf "$out/baseline"
    bash "$here/high-priority.sh" "$launchprof" bench "$here/ci-suite.json" --output "$out/baseline" || exit 1
    rm -rf "$here/ci-baseline"
    cp -r "$out/baseline" "$here/ci-baseline"
    echo "ci-bench: baseline re-recorded in Benchmarks/ci-baseline/; commit it" >&2
    exit 0
fi

started=$(date +%s)
rm -rf "$out/new"
bash "$here/high-priority.sh" "$launchprof" bench "$here/ci-suite.json" --output "$out/new" \
    --baseline "$here/ci-baseline" --markdown "$out/summary.md"
status=$?
echo "ci-bench: $(($(date +%s) - started)) s; summary in .build/ci-bench/summary.md" >&2
case $status in
    0) echo "ci-bench: no launch regression" >&2; exit 0 ;;
    4) echo "ci-bench: launches improved; re-record the baseline with --update-baseline" >&2; exit 0 ;;
    5) echo "ci-bench: no verdict (a launch the baseline lacks, or too few runs); re-record the baseline with --update-baseline" >&2; exit 0 ;;
    *) exit $status ;;
esac
