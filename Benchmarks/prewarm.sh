#!/usr/bin/env bash
# Prewarm figures for docs/performance.md (issue 9), on release builds:
#   1. resume latency: launchprof's resume of a frozen process (the hold's end → the program's
#      first clock read in main) against a bare SIGCONT of the same program stopped at the same
#      point and held as long (20 ms), interleaved in rounds, medians; goal: at most 50 µs more.
#   2. PSS of a frozen demo app (launchprof-demo, launchprof-demo-swift): summary.prewarm.frozenPSSBytes.
#   3. pool refill cost: summary.prewarm.pool.refillNs (spawn → frozen) with --pool 2, beside the
#      same program's ordinary time to main.
#
#   Benchmarks/prewarm.sh [rounds (5)] [runs per round (20)]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
rounds="${1:-5}"
per="${2:-20}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$root"
swift build -c release --product launchprof >&2
swift build -c release --product launchprof-demo >&2
swift build -c release --product launchprof-demo-swift >&2
bin="$(swift build -c release --show-bin-path)"
cc -O2 -I Sources/LaunchprofHooks/include -o "$work/resume-target" "$here/Programs/resume-target.c"
cc -O2 -o "$work/resume-bare" "$here/Programs/resume-bare.c"

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit } print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
# launchprof's environment is kept small: what the child inherits is what it measures.
lp() { env -i PATH=/usr/bin:/bin HOME="$HOME" "$bin/launchprof" "$@"; }

: > "$work/bare.txt"
: > "$work/launchprof.txt"
for round in $(seq "$rounds"); do
    "$work/resume-bare" "$work/resume-target" "$per" 20000 >> "$work/bare.txt"
    rm -f "$work/log.txt"
    lp prewarm --runs "$per" --hold 20ms --no-hazard-scan --ready exit --env "RESUME_LOG=$work/log.txt" \
        --json "$work/round.json" "$work/resume-target" > /dev/null
    # Per run: optimized TTFF − (first frame − main) = main's first clock read − the resume.
    json "$work/round.json" "'\n'.join(str(r['metrics']['optimizedTimeToFirstFrameNs']) for r in d['runs'])" > "$work/ottff.txt"
    paste -d' ' "$work/ottff.txt" "$work/log.txt" | awk '{ print $1 - ($3 - $2) }' >> "$work/launchprof.txt"
done
bare=$(median < "$work/bare.txt")
traced=$(median < "$work/launchprof.txt")
echo "resume latency over $((rounds * per)) launches each, interleaved in $rounds rounds:"
echo "  bare SIGCONT         median $bare ns"
echo "  launchprof resume    median $traced ns"
echo "  difference           $((traced - bare)) ns (goal ≤ 50000)"

for demo in launchprof-demo launchprof-demo-swift; do
    lp prewarm --runs 10 --hold 100ms --no-hazard-scan --json "$work/$demo.json" "$bin/$demo" > /dev/null
    echo "$demo: frozen PSS median $(json "$work/$demo.json" "d['summary']['prewarm']['frozenPSSBytes']['median']") bytes," \
        "saving p50 $(json "$work/$demo.json" "d['summary']['prewarm']['savingNs']['median']") ns"
done

lp prewarm --runs 20 --hold 100ms --pool 2 --no-hazard-scan --json "$work/pool.json" "$bin/launchprof-demo-swift" > /dev/null
lp run --runs 20 --json "$work/ordinary.json" "$bin/launchprof-demo-swift" > /dev/null
echo "pool of 2 (launchprof-demo-swift, 20 launches 100 ms apart):" \
    "refill median $(json "$work/pool.json" "d['summary']['prewarm']['pool']['refillNs']['median']") ns" \
    "(ordinary time to main median $(json "$work/ordinary.json" "d['summary']['timeToMainNs']['median']") ns)," \
    "hits $(json "$work/pool.json" "d['summary']['prewarm']['pool']['hits']")/20," \
    "held PSS median $(json "$work/pool.json" "d['summary']['prewarm']['pool']['heldPSSBytes']['median']") bytes"
