#!/usr/bin/env bash
# The sampler's costs (issue 10), measured against baselines taken in the same run, interleaved:
#
# 1. Time to first frame with `--sample` (1 kHz) ÷ without, on launchprof-demo (the README's
#    demo, 70–90 ms to its first frame on the project VM) and on a 300 ms launch: ROUNDS
#    alternating rounds of RUNS runs each; ratio of the medians of all runs.
# 2. Per-sample cost at ~30 frames: capture (in the kernel: how much more CPU time a fixed amount
#    of work takes when sampled, divided by the stacks taken in it; the kernel charges its
#    sampling work to the sampled thread) + unwind (launchprof's time per stack, reported as
#    sampling.unwindNs / unwoundSamples, after the launch). Baselines in the same rounds, with
#    `perf record` on the same work at the same rate: a sample with no payload (the timer
#    interrupt every sampler pays on this host) and perf's own stack sample (`--call-graph
#    dwarf,8192`, what launchprof's capture asks of the kernel). launchprof's capture ÷ perf's is
#    taken with the same estimate of timer samples for both (sampled CPU time ÷ the period), and
#    perf's own count of stacks in perf.data is printed beside it.
#    Benchmarks/sampling-attributes.sh takes the request apart, part by part.
#
# Usage: Benchmarks/sampling.sh [ROUNDS] [RUNS]   (needs root or perf_event_paranoid <= 1)
# Builds launchprof and the demo in release mode first unless LAUNCHPROF and DEMO are set.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-10}
RUNS=${2:-20}
. Benchmarks/lib/launchprof-binary.sh
release_launchprof_and_demo
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O1 -I Sources/LaunchprofHooks/include -o "$work/sample-depth" Benchmarks/Programs/sample-depth.c
cc -O1 -I Sources/LaunchprofHooks/include -I Tests/LaunchprofTests/Fixtures -o "$work/sample-work" \
    Tests/LaunchprofTests/Fixtures/sample-work.c -ldl

for round in $(seq "$ROUNDS"); do
    "$LP" run -r "$RUNS" -w 1 --json "$work/demo-plain-$round.json" "$DEMO" >/dev/null 2>&1
    "$LP" run -r "$RUNS" -w 1 --sample --json "$work/demo-sampled-$round.json" "$DEMO" >/dev/null 2>&1
    "$LP" run -r 3 --json "$work/work-plain-$round.json" "$work/sample-work" >/dev/null 2>&1
    "$LP" run -r 3 --sample --json "$work/work-sampled-$round.json" "$work/sample-work" >/dev/null 2>&1
    "$LP" run -r 3 --env LP_ITERATIONS=100000000 --output "$work/cpu-plain-$round.txt" --json "$work/depth-plain-$round.json" "$work/sample-depth" >/dev/null 2>&1
    "$LP" run -r 3 --env LP_ITERATIONS=100000000 --sample=4000 --output "$work/cpu-sampled-$round.txt" --json "$work/depth-sampled-$round.json" "$work/sample-depth" >/dev/null 2>&1
    for run in 1 2 3; do
        LP_ITERATIONS=100000000 perf record -q -e task-clock -c 250000 -o "$work/floor.data" \
            -- "$work/sample-depth" >>"$work/cpu-floor-$round.txt" 2>/dev/null
        LP_ITERATIONS=100000000 perf record -q -e task-clock -c 250000 --call-graph dwarf,8192 -o "$work/dwarf.data" \
            -- "$work/sample-depth" >>"$work/cpu-perfdwarf-$round.txt" 2>/dev/null
        perf report -i "$work/dwarf.data" --stats 2>/dev/null | awk '/SAMPLE events/ {print $3; exit}' \
            >>"$work/stacks-perfdwarf-$round.txt"
    done
    echo "round $round/$ROUNDS done" >&2
done

python3 - "$work" "$ROUNDS" <<'PY'
import glob, json, statistics, sys
work, rounds = sys.argv[1], sys.argv[2]
def runs(pattern):
    out = []
    for path in sorted(glob.glob(f"{work}/{pattern}-*.json")):
        out += json.load(open(path))["runs"]
    return out
def ttff(pattern):
    return [r["metrics"]["timeToFirstFrameNs"] for r in runs(pattern) if r["metrics"].get("timeToFirstFrameNs")]
print(f"## Sampler ({rounds} interleaved rounds)")
print("| measure | runs | median without | median with --sample | ratio |")
print("|---|---|---|---|---|")
for name, label in [("demo", "time to first frame, launchprof-demo, 1 kHz"), ("work", "time to first frame, sample-work (~300 ms), 1 kHz")]:
    plain, sampled = ttff(f"{name}-plain"), ttff(f"{name}-sampled")
    a, b = statistics.median(plain), statistics.median(sampled)
    print(f"| {label} | {len(plain)} + {len(sampled)} | {a/1e6:.2f} ms | {b/1e6:.2f} ms | **{b/a:.4f}** |")
def cpu(pattern):
    values = []
    for path in sorted(glob.glob(f"{work}/{pattern}-*.txt")):
        values += [int(line) for line in open(path) if line.strip().isdigit()]
    return values
plain, sampled = runs("depth-plain"), runs("depth-sampled")
base = statistics.median(cpu("cpu-plain"))
slow = statistics.median(cpu("cpu-sampled"))
samples = statistics.median(r["sampling"]["sampleCount"] for r in sampled)
capture = (slow - base) / samples
per_unwind = [r["sampling"]["unwindNs"] / r["sampling"]["unwoundSamples"] for r in sampled]
frames = [r["sampling"]["unwoundFrames"] / r["sampling"]["unwoundSamples"] for r in sampled]
unwind = statistics.median(per_unwind)
print()
print("| per-sample cost, sample-depth at 4 kHz | runs | median |")
print("|---|---|---|")
print(f"| the work's thread CPU time without / with sampling | {len(cpu('cpu-plain'))} + {len(cpu('cpu-sampled'))} | {base/1e6:.2f} ms / {slow/1e6:.2f} ms ({samples:.0f} stacks) |")
print(f"| capture (kernel: registers + the top of the stack per sample) | | {capture/1e3:.2f} µs |")
# The same estimate for both tools: timer samples = sampled CPU time ÷ the 250 µs period (a
# switch-out stack is charged to the thread that runs next, not to the sampled one).
per_timer_sample = (slow - base) / (slow / 250000)
print(f"| capture, stacks estimated as CPU time ÷ period (as for perf below) | | {per_timer_sample/1e3:.2f} µs |")
# perf's runs: stacks estimated as the sampled CPU time over the 250 µs period.
baselines = {}
for name, label in [("floor", "baseline: `perf record -e task-clock` at 4 kHz, no payload (the host's timer interrupt)"),
                    ("perfdwarf", "baseline: `perf record --call-graph dwarf,8192` at 4 kHz (perf's stack sample)")]:
    values = cpu(f"cpu-{name}")
    if values:
        baselines[name] = (statistics.median(values) - base) / (statistics.median(values) / 250000)
        print(f"| {label} | {len(values)} | {baselines[name]/1e3:.2f} µs |")
perf_stacks = cpu("stacks-perfdwarf")
if perf_stacks and "perfdwarf" in baselines:
    counted = (statistics.median(cpu("cpu-perfdwarf")) - base) / statistics.median(perf_stacks)
    print(f"| perf's stack sample, per stack counted in perf.data ({statistics.median(perf_stacks):.0f}) | {len(perf_stacks)} | {counted/1e3:.2f} µs |")
    print(f"| **launchprof's capture ÷ perf's (both per CPU time ÷ period)** | | **{per_timer_sample / baselines['perfdwarf']:.3f}** |")
print(f"| unwind (cached call frame rules, libunwind for the rest; {statistics.median(frames):.1f} frames per stack) | {len(per_unwind)} | {unwind/1e3:.2f} µs |")
print(f"| **capture + unwind** | | **{(capture + unwind)/1e3:.2f} µs** |")
if "floor" in baselines:
    own = capture - baselines["floor"] + unwind
    print(f"| **launchprof's own: capture above the no-payload sample, + unwind** | | **{own/1e3:.2f} µs** |")
PY
