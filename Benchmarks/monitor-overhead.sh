#!/usr/bin/env bash
# What `launchprof monitor` costs the machine (issue 36), and whether it holds up under a flood:
#
# 1. Launch overhead, in paired rounds: each round measures three conditions back to back — no
#    monitor ("off"), a monitor watching bench-app ("one"), and `monitor --all-main` watching
#    nothing ("all": every exec recorded and timed to main by one uprobe in libc that every glibc
#    process hits; plain --all adds no in-launch work to "one") — in an order
#    that cycles through all six permutations, so a slow spell of a shared machine falls on each
#    condition alike. hyperfine -N times bare launches of /bin/true and of bench-app.c (about 2 ms
#    of work, LP_BENCH_ITERATIONS; it uses the hooks, so "one" probes its main and USDT probes).
#    Goals: /bin/true with "one" ≤ 1.02× off (an unwatched launch), bench-app with "one" ≤ 1.05×
#    (a watched launch); "all" is measured against the same goals to decide whether it may be on.
#    Each ratio is a round's median wall time ÷ the same round's "off"; the verdict is the median
#    of the rounds, with its 95% interval (distribution-free, from the rounds' order statistics):
#    a verdict whose interval straddles the goal is said to be unresolved, not met. Beside it: the
#    launches' own CPU time (user + system: what the kernel's tracepoints, probes and exit
#    messages add to them), each round's 10th percentile (the launches least disturbed by the
#    machine's other work), and the monitor's CPU per launch (its threads' scheduler time,
#    /proc/PID/task/*/schedstat). CPU placement (PIN, default 1 on ≥ 2 CPUs): the launches run on
#    the last CPU, the monitor on the first, so the monitor's own work never takes the launches'
#    CPU and what is left is its cost inside the launches (the kernel's work on their CPU).
# 2. Idle CPU: the monitor's own user+system time over IDLE seconds with nothing launched by the
#    script (the machine's other processes still exec, fork and exit; their count is shown),
#    as a share of one core. Goal ≤ 0.1%.
# 3. A flood: LAUNCHES launches of a copy of /bin/true (a copy: nobody else's true is probed) from
#    a shell loop, the copy watched. The monitor's resident memory is sampled every tenth of the
#    way; every launch is in the store or counted lost (the store's losses table, /metrics).
#
#   sudo Benchmarks/monitor-overhead.sh [ROUNDS (30)] [RUNS-PER-ROUND (60)] [LAUNCHES (100000)] [IDLE (30)]
# Environment: LAUNCHPROF_BIN (default: the .build-bench or .build release build); PIN=0 leaves
# the CPUs to the scheduler. Needs root.
# LAUNCHES=0 or IDLE=0 skips that part.
# Exits 2 on a broken setup; otherwise reports, and exits 1 when a launch was neither recorded nor
# counted lost, or memory grew by more than 20% after the first tenth.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
rounds="${1:-30}"
runs="${2:-60}"
launches="${3:-100000}"
idle="${4:-30}"
. "$here/lib/launchprof-binary.sh"
find_launchprof monitor-overhead
require_tools monitor-overhead hyperfine cc python3 taskset
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
# About 2 ms of work in bench-app's didFinishLaunching on this machine's CPUs.
export LP_BENCH_ITERATIONS="${LP_BENCH_ITERATIONS:-1500000}"
cpus=$(nproc)
pin_launches=() pin_monitor=()
if [ "${PIN:-1}" = 1 ] && [ "$cpus" -ge 2 ]; then
    pin_launches=(taskset -c "$((cpus - 1))") pin_monitor=(taskset -c 0)
fi

# Starts a monitor on STORE with the monitor's arguments (--program P, --all); returns once it says
# it records (its probes and events are open by then), reading its stderr through a FIFO.
start_monitor() {
    local store="$1"
    shift
    rm -f "$work/said" && mkfifo "$work/said"
    "${pin_monitor[@]}" "$launchprof" monitor --store "$store" "$@" 2>"$work/said" &
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
    "${pin_launches[@]}" hyperfine -N -w 5 -r "$runs" --export-json "$work/$1.json" "$2" >/dev/null 2>&1 || { echo "hyperfine failed on $2" >&2; exit 2; }
}
monitor_ns() { cat "/proc/$monitor"/task/*/schedstat | awk '{ ns += $1 } END { print ns }'; } # its threads' time on a CPU

echo "start: $(date -u +%Y-%m-%dT%H:%M:%SZ)   load: $(cut -d' ' -f1-3 /proc/loadavg)   $(nproc) CPUs   $launchprof"
echo "1. bare launches, $rounds rounds of $runs runs of each program in each condition (hyperfine -N; PIN=${PIN:-1}: ${pin_launches[*]:-no placement})"
: >"$work/rounds"
orders=("off one all" "one all off" "all off one" "off all one" "all one off" "one off all")
for round in $(seq "$rounds"); do
    spent_true_one=0 spent_app_one=0 spent_true_all=0 spent_app_all=0
    for condition in ${orders[$(( (round - 1) % 6 ))]}; do
        case "$condition" in
        off)
            timed true-off /bin/true
            timed app-off "$work/bench-app"
            ;;
        one | all)
            if [ "$condition" = one ]; then start_monitor "$work/store-$round-one" --program "$work/bench-app"; else start_monitor "$work/store-$round-all" --all-main; fi
            before=$(monitor_ns)
            timed "true-$condition" /bin/true
            middle=$(monitor_ns)
            timed "app-$condition" "$work/bench-app"
            after=$(monitor_ns)
            stop_monitor
            printf -v "spent_true_$condition" %s $((middle - before))
            printf -v "spent_app_$condition" %s $((after - middle))
            ;;
        esac
    done
    python3 - "$work" "$runs" "$spent_true_one" "$spent_app_one" "$spent_true_all" "$spent_app_all" >>"$work/rounds" <<'PY'
import json, statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
spent = dict(zip(["true-one", "app-one", "true-all", "app-all"], map(int, sys.argv[3:])))
def load(name):
    result = json.load(open(f"{work}/{name}.json"))["results"][0]
    times = sorted(result["times"])
    return statistics.median(times), result["user"] + result["system"], times[len(times) // 10]
row = {}
for program in ("true", "app"):
    off, off_cpu, off_fast = load(f"{program}-off")
    row[f"{program}-off"] = off * 1e6
    for condition in ("one", "all"):
        on, on_cpu, on_fast = load(f"{program}-{condition}")
        key = f"{program}-{condition}"
        # hyperfine's 5 warm-up runs are launches made with the monitor running too.
        row[key] = {"us": on * 1e6, "wall": on / off, "cpu": on_cpu / off_cpu, "p10": on_fast / off_fast,
                    "monitor_us": spent[key] / 1e3 / (runs + 5)}
print(json.dumps(row))
PY
    python3 - "$(tail -1 "$work/rounds")" "$round" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
parts = []
for p in ("true", "app"):
    text = f"{p} off {r[p + '-off']:7.1f} µs"
    for c in ("one", "all"):
        m = r[f"{p}-{c}"]
        text += f"  {c} {m['wall']:.3f} (p10 {m['p10']:.3f}, mon {m['monitor_us']:4.1f} µs)"
    parts.append(text)
print(f"   round {sys.argv[2]:>3}: " + "   ".join(parts))
PY
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
def shown(bounds):
    return f"[{bounds[0]:.3f}, {bounds[1]:.3f}]" if bounds else "—"
for key, name, goal in (("true-one", "unwatched /bin/true, monitor watching one program", 1.02),
                        ("app-one", "watched bench-app, monitor watching it", 1.05),
                        ("true-all", "/bin/true under --all-main", 1.02),
                        ("app-all", "bench-app under --all-main", 1.02)):
    wall = [row[key]["wall"] for row in rows]
    median, bounds = statistics.median(wall), interval(wall)
    if bounds is None:
        verdict = "too few rounds for an interval"
    elif bounds[1] <= goal:
        verdict = "met"
    elif bounds[0] > goal:
        verdict = "OVER"
    else:
        verdict = "unresolved: the interval holds the goal"
    fast = [row[key]["p10"] for row in rows]
    cpu = [row[key]["cpu"] for row in rows]
    print(f"   {name}: wall ÷ off, median of {n} rounds {median:.3f}, 95% interval {shown(bounds)} (goal ≤ {goal}): {verdict}")
    print(f"      10th percentiles ÷ off: median {statistics.median(fast):.3f}, 95% interval {shown(interval(fast))};"
          f" launch CPU ÷ off: median {statistics.median(cpu):.3f}, 95% interval {shown(interval(cpu))}; rounds over 1: {sum(v > 1 for v in wall)} of {n};"
          f" the monitor's CPU {statistics.mean(row[key]['monitor_us'] for row in rows):.1f} µs per launch")
print(f"   off: /bin/true median {statistics.median(row['true-off'] for row in rows):.1f} µs, bench-app {statistics.median(row['app-off'] for row in rows):.1f} µs")
PY

if [ "$idle" -gt 0 ]; then
echo "2. idle: ${idle} s with the monitor watching bench-app, nothing launched by this script"
start_monitor "$work/store-idle" --program "$work/bench-app"
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
start_monitor "$store" --program "$work/true"
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
