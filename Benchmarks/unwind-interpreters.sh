#!/usr/bin/env bash
# The sampler's unwinding: launchprof's call frame interpreter in Swift (the default) against
# the C one it replaced (LAUNCHPROF_UNWINDER=c, kept for this comparison), on the same programs
# in the same rounds, interleaved. Per run: sampling.unwindNs ÷ unwoundSamples (the time to
# unwind one stack, rules computed on a cache miss and looked up by address on a hit).
#
# 1. sample-depth at 4 kHz: ~470 stacks of ~32 frames, the same frames every time (the hot
#    path: nearly all lookups hit the cache).
# 2. launchprof-demo at 1 kHz: a short launch through the loader, libc and the app, few stacks
#    of new frames (the cold path: rules computed from .eh_frame).
#
# Usage: Benchmarks/unwind-interpreters.sh [ROUNDS] [RUNS]   (needs root or perf_event_paranoid <= 1)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-10}
RUNS=${2:-3}
if [[ -z "${LAUNCHPROF:-}" ]]; then
    swift build -c release --product launchprof >&2
    swift build -c release --product launchprof-demo >&2
fi
LP=${LAUNCHPROF:-.build/release/launchprof}
DEMO=${DEMO:-.build/release/launchprof-demo}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O1 -I Sources/LaunchprofHooks/include -o "$work/sample-depth" Benchmarks/Programs/sample-depth.c

for round in $(seq "$ROUNDS"); do
    for unwinder in swift c; do
        LAUNCHPROF_UNWINDER=$unwinder "$LP" run -r "$RUNS" --env LP_ITERATIONS=100000000 --sample=4000 \
            --json "$work/depth-$unwinder-$round.json" "$work/sample-depth" >/dev/null 2>&1
        LAUNCHPROF_UNWINDER=$unwinder "$LP" run -r "$RUNS" --sample \
            --json "$work/demo-$unwinder-$round.json" "$DEMO" >/dev/null 2>&1
    done
    echo "round $round/$ROUNDS done" >&2
done

python3 - "$work" "$ROUNDS" <<'PY'
import glob, json, statistics, sys
work, rounds = sys.argv[1], sys.argv[2]
def per_stack(pattern):
    values, frames = [], []
    for path in sorted(glob.glob(f"{work}/{pattern}-*.json")):
        for run in json.load(open(path))["runs"]:
            s = run.get("sampling") or {}
            if s.get("unwoundSamples"):
                values.append(s["unwindNs"] / s["unwoundSamples"])
                frames.append(s["unwoundFrames"] / s["unwoundSamples"])
    return values, frames
print(f"## Unwinding: Swift vs C call frame interpreter ({rounds} interleaved rounds)")
print("| program | runs | frames per stack | C, ns per stack | Swift, ns per stack | Swift ÷ C |")
print("|---|---|---|---|---|---|")
for name, label in [("depth", "sample-depth, 4 kHz (hot: cached rules)"), ("demo", "launchprof-demo, 1 kHz (cold: rules computed)")]:
    c, fc = per_stack(f"{name}-c")
    s, fs = per_stack(f"{name}-swift")
    if c and s:
        print(f"| {label} | {len(c)} + {len(s)} | {statistics.median(fc):.1f} / {statistics.median(fs):.1f} | {statistics.median(c):.0f} | {statistics.median(s):.0f} | **{statistics.median(s)/statistics.median(c):.3f}** |")
PY
