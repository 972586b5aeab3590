#!/usr/bin/env bash
# What launchprof's sampler asks of the kernel beyond `perf record --call-graph dwarf,8192`, part
# by part, in the sampled thread's CPU time per sample (Programs/sample-attributes.c): every
# configuration once per round, ROUNDS interleaved rounds, and `perf record` itself on the same
# work in the same rounds. Per configuration: (median CPU time − median without events) ÷
# median timer samples, and the ratio to perf's request.
#
# Usage: Benchmarks/sampling-attributes.sh [ROUNDS]   (root or perf_event_paranoid <= 1)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O1 -o "$work/sample-attributes" Benchmarks/Programs/sample-attributes.c
cc -O1 -I Sources/LaunchprofHooks/include -o "$work/sample-depth" Benchmarks/Programs/sample-depth.c
configurations=(none no-payload perf-dwarf launchprof launchprof-no-switch-stacks launchprof-no-switch-records
    launchprof-perf-clock launchprof-no-mmap)
for round in $(seq "$ROUNDS"); do
    for configuration in "${configurations[@]}"; do "$work/sample-attributes" "$configuration" >>"$work/runs.txt"; done
    cpu=$(LP_ITERATIONS=100000000 perf record -q -e task-clock -c 250000 --call-graph dwarf,8192 -o "$work/perf.data" \
        -- "$work/sample-depth" 2>/dev/null)
    stacks=$(perf report -i "$work/perf.data" --stats 2>/dev/null | awk '/SAMPLE events/ {print $3; exit}')
    echo "perf-record $cpu $stacks 0 0" >>"$work/runs.txt"
done
python3 - "$work/runs.txt" "$ROUNDS" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, cpu, samples, records, wakeups = line.split()
    runs[name].append((int(cpu), int(samples), int(records), int(wakeups)))
base = statistics.median(r[0] for r in runs["none"])
def per_sample(name):
    cpu = statistics.median(r[0] for r in runs[name])
    # Timer samples: the sampled CPU time over the 250 µs period (switch-out samples are charged
    # to the thread that runs next).
    return (cpu - base) / (cpu / 250000), cpu
perf = per_sample("perf-dwarf")[0]
print(f"## Sampler request, part by part ({sys.argv[2]} interleaved rounds; thread CPU time without events {base/1e6:.2f} ms)")
print("| configuration | runs | CPU time | records (samples) | wake-ups | per sample | ÷ perf's request |")
print("|---|---|---|---|---|---|---|")
for name in runs:
    if name == "none": continue
    cost, cpu = per_sample(name)
    samples = statistics.median(r[1] for r in runs[name])
    records = statistics.median(r[2] for r in runs[name])
    wakeups = statistics.median(r[3] for r in runs[name])
    print(f"| {name} | {len(runs[name])} | {cpu/1e6:.2f} ms | {records:.0f} ({samples:.0f}) | {wakeups:.0f} | {cost/1e3:.2f} µs | {cost/perf:.3f} |")
PY
