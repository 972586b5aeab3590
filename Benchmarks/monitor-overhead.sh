#!/usr/bin/env bash
# What `launchprof monitor` costs the machine (issue 36), and whether it holds up under a flood:
#
# 1. Launch overhead, in rounds that alternate "monitor running" and "no monitor" (odd rounds
#    measure with the monitor first, even rounds without it first) so a slow spell of a shared
#    machine falls on both: hyperfine -N times a bare launch of an unwatched program (/bin/true;
#    goal ≤ 1.02× with the monitor) and of a watched one (bench-app.c, which uses the hooks, so
#    its USDT probes and main are probed; goal ≤ 1.05×). Each ratio is a round's median wall time
#    with the monitor ÷ the same round's without; the verdict is the median of the rounds, with
#    its 95% interval (distribution-free, from the rounds' order statistics): a verdict whose
#    interval straddles the goal is said to be unresolved, not met. Beside the wall time: the
#    launches' own CPU time (user + system, what the kernel's tracepoints and exit messages add
#    to them) with ÷ without; each round's 10th percentile with ÷ without (the launches least
#    disturbed by the machine's other work); and the monitor's CPU per launch made meanwhile (its
#    threads' scheduler time, /proc/PID/task/*/schedstat, over the launches made with it running).
# 2. Idle CPU: the monitor's own user+system time over IDLE seconds with nothing launched by the
#    script (the machine's other processes still exec, fork and exit; their count is shown),
#    as a share of one core. Goal ≤ 0.1%.
# 3. A flood: LAUNCHES launches of a copy of /bin/true (a copy: nobody else's true is probed) from
#    a shell loop, the copy watched. The monitor's resident memory is sampled every tenth of the
#    way; every launch is in the store or counted lost (the store's losses table, /metrics).
#
#   sudo Benchmarks/monitor-overhead.sh [ROUNDS (20)] [RUNS-PER-ROUND (100)] [LAUNCHES (100000)] [IDLE (30)]
# Environment: LAUNCHPROF_BIN (default: the .build-bench or .build release build). Needs root.
# LAUNCHES=0 or IDLE=0 skips that part.
# Exits 2 on a broken setup; otherwise reports, and exits 1 when a launch was neither recorded nor
# counted lost, or memory grew by more than 20% after the first tenth.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
rounds="${1:-20}"
runs="${2:-100}"
launches="${3:-100000}"
idle="${4:-30}"
. "$here/lib/launchprof-binary.sh"
find_launchprof monitor-overhead
require_tools monitor-overhead hyperfine cc python3
[ "$(id -u)" = 0 ] || { echo "monitor-overhead: the monitor needs root (tracefs, system-wide perf events)" >&2; exit 2; }

work="$(mktemp -d)"
monitor=
stop_monitor() {
    [ -n "$monitor" ] || return 0
    kill -TERM "$monitor" 2>/dev/null || true
    wait "$monitor" 2>/dev/null || true
    monitor=
}
trap 'stop_monitor; rm -rf "$work"' EXIT
fixtures="$root/Tests/LaunchprofTests/Fixtures"
cc -O1 -I "$fixtures" -I "$root/Sources/LaunchprofHooks/include" -o "$work/bench-app" "$fixtures/bench-app.c"
cp /bin/true "$work/true"

# Starts a monitor on STORE watching PROGRAM…; returns once it says it records (its probes and
# events are open by then), reading its stderr through a FIFO.
start_monitor() {
    local store="$1"
    shift
    local args=()
    for program in "$@"; do args+=(--program "$program"); done
    rm -f "$work/said" && mkfifo "$work/said"
    "$launchprof" monitor --store "$store" "${args[@]}" 2>"$work/said" &
    monitor=$!
    exec 4<"$work/said"
    local line
    while IFS= read -r line <&4; do
        echo "$line" >>"$work/monitor.log"
        [[ "$line" == *"recording into"* ]] && break
    done
    # Keep draining what it says, so it never blocks on a full pipe.
    cat <&4 >>"$work/monitor.log" &
    exec 4<&-
    kill -0 "$monitor" 2>/dev/null || { echo "monitor-overhead: the monitor did not start: $(tail -3 "$work/monitor.log")" >&2; exit 2; }
}

timed() { # NAME PROGRAM → RUNS bare launches timed by hyperfine, its JSON in $work/NAME.json
    hyperfine -N -w 5 -r "$runs" --export-json "$work/$1.json" "$2" >/dev/null 2>&1 || { echo "hyperfine failed on $2" >&2; exit 2; }
}
monitor_ns() { cat "/proc/$monitor"/task/*/schedstat | awk '{ ns += $1 } END { print ns }'; } # its threads' time on a CPU

echo "start: $(date -u +%Y-%m-%dT%H:%M:%SZ)   load: $(cut -d' ' -f1-3 /proc/loadavg)   $(nproc) CPUs   $launchprof"
echo "1. bare launches, $rounds rounds of $runs runs each way (hyperfine -N), the monitor watching bench-app"
: >"$work/rounds"
for round in $(seq "$rounds"); do
    # Odd rounds measure with the monitor first, even rounds without it first.
    if [ $((round % 2)) = 0 ]; then
        timed true-off /bin/true
        timed app-off "$work/bench-app"
    fi
    start_monitor "$work/store-$round" "$work/bench-app"
    before=$(monitor_ns)
    timed true-on /bin/true
    middle=$(monitor_ns)
    timed app-on "$work/bench-app"
    after=$(monitor_ns)
    stop_monitor
    if [ $((round % 2)) = 1 ]; then
        timed true-off /bin/true
        timed app-off "$work/bench-app"
    fi
    python3 - "$work" "$runs" "$before" "$middle" "$after" >>"$work/rounds" <<'PY'
import json, statistics, sys
work, runs, before, middle, after = sys.argv[1], int(sys.argv[2]), *map(int, sys.argv[3:])
def load(name):
    result = json.load(open(f"{work}/{name}.json"))["results"][0]
    times = sorted(result["times"])
    return statistics.median(times), result["user"] + result["system"], times[len(times) // 10]
row = []
for name, spent in (("true", middle - before), ("app", after - middle)):
    (on, on_cpu, on_fast), (off, off_cpu, off_fast) = load(f"{name}-on"), load(f"{name}-off")
    # hyperfine's 5 warm-up runs are launches made with the monitor running too.
    row += [on * 1e6, off * 1e6, on / off, on_cpu / off_cpu, spent / 1e3 / (runs + 5), on_fast / off_fast]
print(json.dumps(row))
PY
    python3 -c 'import json, sys; r = json.loads(sys.argv[1]); print(f"   round {sys.argv[2]:>3}: true {r[0]:7.1f} vs {r[1]:7.1f} µs  wall {r[2]:.3f}  p10 {r[5]:.3f}  cpu {r[3]:.3f}  monitor {r[4]:5.1f} µs/launch   app {r[6]:7.1f} vs {r[7]:7.1f} µs  wall {r[8]:.3f}  p10 {r[11]:.3f}  cpu {r[9]:.3f}  monitor {r[10]:5.1f} µs/launch")' \
        "$(tail -1 "$work/rounds")" "$round"
done
python3 - "$work/rounds" <<'PY'
import json, math, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
n = len(rows)
def interval(values):
    # The median's 95% interval from order statistics: the k-th smallest and k-th largest, k the
    # largest with P(Binomial(n, 1/2) < k) ≤ 2.5%. None for too few rounds.
    ordered = sorted(values)
    k, tail = 0, 0.0
    while k < n and tail + math.comb(n, k) / 2 ** n <= 0.025:
        tail += math.comb(n, k) / 2 ** n
        k += 1
    return (ordered[k - 1], ordered[n - k]) if k >= 1 else None
for name, offset, goal in (("unwatched (/bin/true)", 0, 1.02), ("watched (bench-app)", 6, 1.05)):
    wall = [row[offset + 2] for row in rows]
    cpu = [row[offset + 3] for row in rows]
    spent = [row[offset + 4] for row in rows]
    fast = [row[offset + 5] for row in rows]
    median, bounds = statistics.median(wall), interval(wall)
    if bounds is None:
        verdict = "too few rounds for an interval"
    elif bounds[1] <= goal:
        verdict = "met"
    elif bounds[0] > goal:
        verdict = "OVER"
    else:
        verdict = "unresolved: the interval holds the goal"
    shown = f"[{bounds[0]:.3f}, {bounds[1]:.3f}]" if bounds else "—"
    print(f"   {name}: wall with ÷ without, median of {n} rounds {median:.3f}, 95% interval {shown} (goal ≤ {goal}): {verdict}")
    fast_bounds = interval(fast)
    fast_shown = f"[{fast_bounds[0]:.3f}, {fast_bounds[1]:.3f}]" if fast_bounds else "—"
    print(f"      the fastest tenth (each round's 10th percentile, least disturbed by the machine's other work) with ÷ without:"
          f" median {statistics.median(fast):.3f}, 95% interval {fast_shown}")
    print(f"      launch CPU with ÷ without {statistics.median(cpu):.3f}; rounds over 1: {sum(v > 1 for v in wall)} of {n};"
          f" the monitor's CPU {statistics.mean(spent):.1f} µs per launch (mean of rounds: a round's work may fall in the next)")
PY

if [ "$idle" -gt 0 ]; then
echo "2. idle: ${idle} s with the monitor watching bench-app, nothing launched by this script"
start_monitor "$work/store-idle" "$work/bench-app"
ticks=$(getconf CLK_TCK)
cpu() { awk '{ print $14 + $15 }' "/proc/$monitor/stat"; }
forks() { awk '/^processes/ { print $2 }' /proc/stat; }
cpu_before=$(cpu) forks_before=$(forks) started=$(date +%s.%N)
# Waiting is the measurement here: the monitor is left alone for this long.
sleep "$idle"
cpu_after=$(cpu) forks_after=$(forks) ended=$(date +%s.%N)
stop_monitor
python3 -c "
cpu = ($cpu_after - $cpu_before) / $ticks; span = $ended - $started
print(f'   monitor CPU {cpu:.2f} s in {span:.1f} s: {100 * cpu / span:.3f}% of a core (goal ≤ 0.1%); '
      f'the machine forked {$forks_after - $forks_before} processes meanwhile ({($forks_after - $forks_before) / span:.0f}/s)')"
fi
status=0
if [ "$launches" -gt 0 ]; then
echo "3. flood: $launches launches of a copy of /bin/true from a shell loop, the copy watched"
store="$work/store-flood"
start_monitor "$store" "$work/true"
step=$((launches / 10))
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$monitor/status"; }
echo "   resident KiB at 0: $(rss)"
: >"$work/rss"
done_count=0
flood_started=$(date +%s.%N)
while [ "$done_count" -lt "$launches" ]; do
    T="$work/true" N="$step" bash -c 'for ((i = 0; i < N; i++)); do "$T"; done'
    done_count=$((done_count + step))
    kib=$(rss)
    echo "$kib" >>"$work/rss"
    echo "   resident KiB after $done_count: $kib"
done
flood_ended=$(date +%s.%N)
stop_monitor
python3 - "$store/launches.db" "$launches" "$work/rss" "$flood_started" "$flood_ended" <<'PY' || status=$?
import sqlite3, sys
path, launches, rss_path, started, ended = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
recorded = db.execute("SELECT count(*) FROM launches").fetchone()[0]
lost = dict(db.execute("SELECT source, sum(count) FROM losses GROUP BY source").fetchall())
by_outcome = dict(db.execute("SELECT outcome, count(*) FROM launches GROUP BY outcome").fetchall())
rss = [int(line) for line in open(rss_path)]
growth = rss[-1] / rss[0] if rss else 1.0
print(f"   {launches / (ended - started):.0f} launches/s; recorded {recorded} of {launches} ({by_outcome}); losses counted: {lost or 'none'}")
print(f"   resident memory after the first tenth {rss[0]} KiB, at the end {rss[-1]} KiB ({growth:.2f}×)")
failed = False
if recorded < launches and not any(lost.values()):
    print("   FAIL: launches missing and no loss counted"); failed = True
if growth > 1.2:
    print("   FAIL: memory grew by more than 20% after the first tenth"); failed = True
sys.exit(1 if failed else 0)
PY
fi
echo "end: $(date -u +%Y-%m-%dT%H:%M:%SZ)   load: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
