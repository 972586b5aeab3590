#!/usr/bin/env bash
# What recording thread states costs a launch: the demo (launchprof-demo, as Scripts/demo.sh
# profiles it) launched by launchprof with thread states on and with --no-thread-states, and bare
# (hyperfine -N), in rounds where the three take turns so a slow spell of a shared machine falls
# on all of them. Per round: profiled ÷ bare with states on and off, and on ÷ off; the verdict is
# the median of the rounds' on ÷ off. Goal: ≤ 1.02 (issue 34). The launch is measured to its exit
# on both sides (hyperfine sees nothing earlier). Reports and warns; exits 2 only on a broken setup.
#
#   Benchmarks/thread-states.sh [RUNS-PER-ROUND] [ROUNDS]     (default 20 and 6)
# Environment: LAUNCHPROF_BIN (default: the .build-bench or .build release build), DEMO_BIN (default
# launchprof-demo beside it).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
runs="${1:-20}"
rounds="${2:-6}"
. "$here/lib/launchprof-binary.sh"
find_launchprof thread-states
require_tools thread-states hyperfine
demo="${DEMO_BIN:-$(dirname "$launchprof")/launchprof-demo}"
[ -x "$demo" ] || { echo "thread-states: no launchprof-demo at $demo (set DEMO_BIN)" >&2; exit 2; }
unset LD_PRELOAD LD_AUDIT LAUNCHPROF_HOOK_FD

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

profiled() { # NAME ROUND [OPTIONS…] → median exitNs; keeps the report
    local name="$1" round="$2"
    shift 2
    "$launchprof" run -r "$runs" -w 1 "$@" --json "$work/$name-$round.json" "$demo" >/dev/null 2>"$work/lp.err" \
        || { echo "launchprof ($name) failed: $(tail -3 "$work/lp.err")" >&2; exit 2; }
    # The exit: the metric, or the `exit` instant when launchprof ended the app after its launch.
    python3 -c 'import json,statistics,sys; print(int(statistics.median(r["metrics"].get("exitNs") or next(p["startNs"] for p in r["phases"] if p["name"] == "exit") for r in json.load(open(sys.argv[1]))["runs"])))' \
        "$work/$name-$round.json"
}
bare() { # → median wall time in ns
    hyperfine -N -w 1 -r "$runs" --export-json "$work/hf.json" "$demo" >/dev/null 2>&1 || { echo "hyperfine failed" >&2; exit 2; }
    python3 -c 'import json,statistics,sys; print(int(statistics.median(json.load(open(sys.argv[1]))["results"][0]["times"]) * 1e9))' "$work/hf.json"
}

echo "start: $(date -u +%Y-%m-%dT%H:%M:%SZ)   load: $(cut -d' ' -f1-3 /proc/loadavg)   $rounds rounds of $runs runs of $demo"
printf '%-6s %10s %10s %10s %9s %9s %9s\n' round "on ms" "off ms" "bare ms" "on÷bare" "off÷bare" "on÷off"
: > "$work/ratios"
for round in $(seq "$rounds"); do
    on=$(profiled on "$round")
    off=$(profiled off "$round" --no-thread-states)
    b=$(bare)
    read -r ron roff rstates < <(python3 -c "print(f'{$on/$b:.3f} {$off/$b:.3f} {$on/$off:.3f}')")
    echo "$rstates" >> "$work/ratios"
    printf '%-6s %10.2f %10.2f %10.2f %9s %9s %9s\n' "$round" "$(echo "$on/1000000" | bc -l)" "$(echo "$off/1000000" | bc -l)" \
        "$(echo "$b/1000000" | bc -l)" "$ron" "$roff" "$rstates"
done
python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
ratios = [float(line) for line in open(f"{work}/ratios")]
print(f"median on÷off: {statistics.median(ratios):.3f} (goal <= 1.02)")
# Every run with states on has them, adding up to each phase.
runs = [run for r in range(1, rounds + 1) for run in json.load(open(f"{work}/on-{r}.json"))["runs"]]
with_states = [run for run in runs if "threadStates" in run]
print(f"runs with thread states: {len(with_states)} of {len(runs)}")
bad = [(p["name"], p["durationNs"], sum(p["threadState"].values())) for run in with_states for p in run["phases"]
       if "threadState" in p and sum(p["threadState"].values()) != p["durationNs"]]
print("phases whose states do not add up:", bad[:5] if bad else "none")
PY
echo "end: $(date -u +%Y-%m-%dT%H:%M:%SZ)   load: $(cut -d' ' -f1-3 /proc/loadavg)"
