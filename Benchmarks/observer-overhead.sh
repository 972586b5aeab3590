#!/usr/bin/env bash
# Observer overhead on a libc-only program, every pre-main boundary observed: profiled launch ÷
# bare launch (hyperfine -N), in six rounds of 60 runs where the tools take turns
# (launchprof --observer uprobe, hyperfine, launchprof --observer ptrace, hyperfine), so a slow
# spell of a shared machine falls on all of them. Each round's ratio is printed; the verdict is
# the median of the six. Goals: ≤ 1.05 with uprobes, ≤ 1.15 with ptrace. Then the cost of each
# boundary for each observer, from the phases' medians (see the README, "What an observer costs").
# Reports and warns; exits 2 only on a broken setup.
#
#   Benchmarks/observer-overhead.sh [RUNS-PER-ROUND] [ROUNDS]     (default 60 and 6)
# Environment: LAUNCHPROF_BIN (default: the .build-bench or .build release build); PIN_CPU
# (default none: both tools unpinned, as users run them; a CPU number pins both sides alike under
# `taskset -c PIN_CPU` — pinning only the bare side slows it and flatters the ratio).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
runs="${1:-60}"
rounds="${2:-6}"
. "$here/lib/launchprof-binary.sh"
find_launchprof observer-overhead
require_tools observer-overhead hyperfine
pin=()
if [ "${PIN_CPU:-none}" != none ]; then pin=(taskset -c "$PIN_CPU"); fi
unset LD_PRELOAD LD_AUDIT LAUNCHPROF_HOOK_FD

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cc -O2 -g -o "$work/libc-only" "$here/Programs/libc-only.c"

# launchprof's probes live until its exit, released by a process named lp-uprobe-free: bare runs
# wait for it (a CPU-wide probe fires in every process, hyperfine's children too).
settle() { for _ in $(seq 100); do pgrep -x lp-uprobe-free >/dev/null || return 0; sleep 0.1; done; }
profiled() { # OBSERVER ROUND → median exitNs; keeps the report
    settle
    "${pin[@]}" "$launchprof" run -r "$runs" -w 1 --observer "$1" --json "$work/$1-$2.json" "$work/libc-only" \
        >/dev/null 2>"$work/lp.err" || { echo "launchprof --observer $1 failed: $(tail -3 "$work/lp.err")" >&2; exit 2; }
    python3 -c 'import json,statistics,sys; print(int(statistics.median(r["metrics"]["exitNs"] for r in json.load(open(sys.argv[1]))["runs"])))' "$work/$1-$2.json"
}
bare() { # → median wall time in ns
    settle
    "${pin[@]}" hyperfine -N -w 1 -r "$runs" --export-json "$work/hf.json" "$work/libc-only" >/dev/null 2>&1 \
        || { echo "hyperfine failed" >&2; exit 2; }
    python3 -c 'import json,statistics,sys; print(int(statistics.median(json.load(open(sys.argv[1]))["results"][0]["times"]) * 1e9))' "$work/hf.json"
}

echo "start: $(date -u +%Y-%m-%dT%H:%M:%SZ)   load: $(cut -d' ' -f1-3 /proc/loadavg)   $rounds rounds of $runs runs   pinned: ${PIN_CPU:-none}"
printf '%-6s %12s %12s %8s   %12s %12s %8s\n' round "uprobe µs" "bare µs" ratio "ptrace µs" "bare µs" ratio
: > "$work/ratios-uprobe"
: > "$work/ratios-ptrace"
for round in $(seq "$rounds"); do
    u=$(profiled uprobe "$round"); b1=$(bare)
    p=$(profiled ptrace "$round"); b2=$(bare)
    ru=$(python3 -c "print(f'{$u/$b1:.3f}')"); rp=$(python3 -c "print(f'{$p/$b2:.3f}')")
    echo "$ru" >> "$work/ratios-uprobe"; echo "$rp" >> "$work/ratios-ptrace"
    printf '%-6s %12.1f %12.1f %8s   %12.1f %12.1f %8s\n' "$round" "$(echo "$u/1000" | bc -l)" "$(echo "$b1/1000" | bc -l)" "$ru" \
        "$(echo "$p/1000" | bc -l)" "$(echo "$b2/1000" | bc -l)" "$rp"
done
median() { python3 -c 'import statistics,sys; print(f"{statistics.median(float(l) for l in open(sys.argv[1])):.3f}")' "$1"; }
echo "median ratio: uprobe $(median "$work/ratios-uprobe") (goal <= 1.05), ptrace $(median "$work/ratios-ptrace") (goal <= 1.15)"
echo "end: $(date -u +%Y-%m-%dT%H:%M:%SZ)   load: $(cut -d' ' -f1-3 /proc/loadavg)"

# Per boundary: each phase's median duration and median observer cost under each observer,
# pooled over the rounds. A phase under ptrace minus the same phase under uprobes (plus the
# uprobe's own hit cost in it) is what ptrace's stop at its start costs the child in all; its
# observerNs is the part the tracer spends handling the stop (child held stopped).
python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
def phases(observer):
    durations, costs, pauses, exits = {}, {}, [], []
    for r in range(1, rounds + 1):
        for run in json.load(open(f"{work}/{observer}-{r}.json"))["runs"]:
            pauses.append(run.get("tracerPauseNs", 0)); exits.append(run["metrics"]["exitNs"])
            main = next((p["startNs"] for p in run["phases"] if p["name"] == "main"), None)
            for p in run["phases"]:
                key = p["name"] + (" " + p["object"].split("/")[-1] if "object" in p else "")
                if p["durationNs"] > 0:
                    durations.setdefault(key, []).append(p["durationNs"]); costs.setdefault(key, []).append(p.get("observerNs", 0))
            if main is not None:
                durations.setdefault("main → exit", []).append(run["metrics"]["exitNs"] - main)
    med = lambda v: statistics.median(v) if v else 0
    return ({k: med(v) for k, v in durations.items()}, {k: med(v) for k, v in costs.items()}, med(pauses), med(exits))
u, uc, upause, uexit = phases("uprobe")
p, pc, ppause, pexit = phases("ptrace")
print(f"{'phase (boundary at its start)':34} {'uprobe':>9} {'its hits':>9} {'ptrace':>9} {'its stop':>9} {'ptrace − uprobe':>16}")
for key in p:
    if key not in u: continue
    print(f"{key:34} {u[key]/1000:8.1f}µ {uc.get(key,0)/1000:8.1f}µ {p[key]/1000:8.1f}µ {pc.get(key,0)/1000:8.1f}µ {(p[key]-u[key])/1000:15.1f}µ")
print(f"median tracerPauseNs: uprobe {upause/1000:.1f} µs (the exec stop), ptrace {ppause/1000:.1f} µs; median exitNs: uprobe {uexit/1000:.1f} µs, ptrace {pexit/1000:.1f} µs")
PY

# Where a ptrace stop's time goes (child's loss vs the tracer's handling; same CPU and cross
# CPU), what restoring the CPU mask costs, and the reaping: see Programs/stop-costs.c.
cc -O2 -o "$work/stop-costs" "$here/Programs/stop-costs.c"
"$work/stop-costs"
