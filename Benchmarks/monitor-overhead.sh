#!/usr/bin/env bash
# What `launchprof monitor` costs the machine (issue 36), and whether it holds up under a flood:
#
# 1. Launch overhead, in rounds that alternate "monitor running" and "no monitor" so a slow spell
#    of a shared machine falls on both: hyperfine -N times a bare launch of an unwatched program
#    (/bin/true; goal ≤ 1.02× with the monitor) and of a watched one (bench-app.c, which uses the
#    hooks, so its USDT probes and main are probed; goal ≤ 1.05×). Each ratio is a round's median
#    with the monitor ÷ the same round's median without; the verdict is the median of the rounds.
# 2. Idle CPU: the monitor's own user+system time over IDLE seconds with nothing launched by the
#    script (the machine's other processes still exec, fork and exit; their count is shown),
#    as a share of one core. Goal ≤ 0.1%.
# 3. A flood: LAUNCHES launches of a copy of /bin/true (a copy: nobody else's true is probed) from
#    a shell loop, the copy watched. The monitor's resident memory is sampled every tenth of the
#    way; every launch is in the store or counted lost (the store's losses table, /metrics).
#
#   sudo Benchmarks/monitor-overhead.sh [ROUNDS (6)] [RUNS-PER-ROUND (200)] [LAUNCHES (100000)] [IDLE (30)]
# Environment: LAUNCHPROF_BIN (default: the .build-bench or .build release build). Needs root.
# Exits 2 on a broken setup; otherwise reports, and exits 1 when a launch was neither recorded nor
# counted lost, or memory grew by more than 20% after the first tenth.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
rounds="${1:-6}"
runs="${2:-200}"
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

median_ns() { # hyperfine's JSON → median wall time in ns
    python3 -c 'import json,statistics,sys; print(int(statistics.median(json.load(open(sys.argv[1]))["results"][0]["times"]) * 1e9))' "$1"
}
timed() { # PROGRAM → median ns over RUNS bare launches
    hyperfine -N -w 5 -r "$runs" --export-json "$work/hf.json" "$1" >/dev/null 2>&1 || { echo "hyperfine failed on $1" >&2; exit 2; }
    median_ns "$work/hf.json"
}

echo "start: $(date -u +%Y-%m-%dT%H:%M:%SZ)   load: $(cut -d' ' -f1-3 /proc/loadavg)   $(nproc) CPUs   $launchprof"
echo "1. bare launches, $rounds rounds of $runs runs each way (hyperfine -N), the monitor watching bench-app"
printf '%-6s %12s %12s %9s %12s %12s %9s\n' round "true on µs" "true off µs" ratio "app on µs" "app off µs" ratio
: >"$work/unwatched" && : >"$work/watched"
for round in $(seq "$rounds"); do
    # Odd rounds measure with the monitor first, even rounds without it first.
    if [ $((round % 2)) = 0 ]; then
        true_off=$(timed /bin/true)
        app_off=$(timed "$work/bench-app")
    fi
    start_monitor "$work/store-$round" "$work/bench-app"
    true_on=$(timed /bin/true)
    app_on=$(timed "$work/bench-app")
    stop_monitor
    if [ $((round % 2)) = 1 ]; then
        true_off=$(timed /bin/true)
        app_off=$(timed "$work/bench-app")
    fi
    read -r r1 r2 < <(python3 -c "print(f'{$true_on/$true_off:.3f} {$app_on/$app_off:.3f}')")
    echo "$r1" >>"$work/unwatched" && echo "$r2" >>"$work/watched"
    printf '%-6s %12.1f %12.1f %9s %12.1f %12.1f %9s\n' "$round" "$(echo "$true_on/1000" | bc -l)" "$(echo "$true_off/1000" | bc -l)" "$r1" \
        "$(echo "$app_on/1000" | bc -l)" "$(echo "$app_off/1000" | bc -l)" "$r2"
done
python3 - "$work" <<'PY'
import statistics, sys
work = sys.argv[1]
for name, goal in (("unwatched", 1.02), ("watched", 1.05)):
    ratios = [float(line) for line in open(f"{work}/{name}")]
    median = statistics.median(ratios)
    print(f"   {name}: median with ÷ without {median:.3f} (goal ≤ {goal}){'' if median <= goal else '  OVER'}")
PY

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
status=0
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
echo "end: $(date -u +%Y-%m-%dT%H:%M:%SZ)   load: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
