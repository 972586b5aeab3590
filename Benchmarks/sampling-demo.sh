#!/usr/bin/env bash
# What sampling at 1 kHz adds to the demo's time to first frame (issue 20: ≤ 2%):
# `launchprof run -r RUNS launchprof-demo` and the same with `--sample=1000`, alternating, ROUNDS
# rounds. Prints the ratio of the medians of all runs, the median of the rounds' ratios and each
# round's ratio (the spread says how loaded the host was).
#
# Usage: Benchmarks/sampling-demo.sh [ROUNDS] [RUNS]   (needs root or perf_event_paranoid <= 1)
# Builds launchprof and the demo in release mode first unless LAUNCHPROF and DEMO are set.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-30}
RUNS=${2:-20}
. Benchmarks/lib/launchprof-binary.sh
release_launchprof_and_demo
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for round in $(seq "$ROUNDS"); do
    "$LP" run -r "$RUNS" --json "$work/plain-$round.json" "$DEMO" >/dev/null 2>&1
    "$LP" run -r "$RUNS" --sample=1000 --json "$work/sampled-$round.json" "$DEMO" >/dev/null 2>&1
done
python3 - "$work" "$ROUNDS" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
def ttff(path):
    return [r["metrics"]["timeToFirstFrameNs"] for r in json.load(open(path))["runs"] if r["metrics"].get("timeToFirstFrameNs")]
plain, sampled, ratios = [], [], []
for round in range(1, rounds + 1):
    a, b = ttff(f"{work}/plain-{round}.json"), ttff(f"{work}/sampled-{round}.json")
    plain += a
    sampled += b
    ratios.append(statistics.median(b) / statistics.median(a))
a, b = statistics.median(plain), statistics.median(sampled)
print(f"time to first frame, launchprof-demo: {len(plain)} + {len(sampled)} runs, median {a/1e6:.2f} ms without, "
      f"{b/1e6:.2f} ms with --sample=1000: **{b/a:.4f}**; median of the rounds' ratios {statistics.median(ratios):.4f}")
print("rounds: " + " ".join(f"{x:.3f}" for x in ratios))
PY
