#!/usr/bin/env bash
# Trials of `launchprof compare` as a CI gate (issues 12 and 32): does it catch a real 10% change
# on a busy machine, and stay quiet on identical binaries?
#
#   Benchmarks/compare-trials.sh [TRIALS=20] [RUNS=20]            the documented CI recipe
#   MODE=legacy Benchmarks/compare-trials.sh [TRIALS=10] [RUNS=20] [SLOWDOWN=10]
#
# The recipe (docs/ci-regressions.md, "The CI recipe"): base and head listed in one bench suite
# and measured in turns (`launchprof bench suite.json --rounds RUNS`: each round one run of every
# launch, every other round in the reverse order), then `launchprof compare` of each pair. Each
# trial is five bench sessions, one per pair:
#   git, true, demo   identical binaries (base and head are copies of one file): no regression
#                     or improvement verdict allowed (exit 0, or 5 "no verdict")
#   slow-dfl          the bench-app fixture, head with LP_BENCH_SLOWDOWN_PERCENT=10: a
#                     didFinishLaunching 10% slower, to be caught (exit 2, phase:didFinishLaunching)
#   slow-main         the bench-app fixture, head linked with one more library (400 symbol
#                     relocations and an initializer doing fixed work), the work calibrated before
#                     the trials to a time to main 10% longer: to be caught (exit 2, timeToMainNs)
# LOAD=N adds N compile loops (cc -O2, nice 0) for the trials' length, on top of whatever else
# the machine runs; each trial's line shows the 1-minute load average. The runs go through
# high-priority.sh, as the recipe says (as root; PRIORITY=0 measures at the default priority).
# KEEP=1 keeps the work folder (suites, each trial's bench folder bench-N, comparisons).
# Each trial is judged twice, on the same reports: with `compare`'s default statistic
# (`--statistic independent`: the two sides as independent samples) and with `--statistic
# paired` (the runs of the one session matched round by round, issue 32); the table shows the
# first, the last lines count both. REPORTS=DIR judges a kept work folder
# again without measuring (e.g. with another launchprof: LAUNCHPROF=…).
set -euo pipefail
if [ "${MODE:-recipe}" = recipe ]; then
recipe() {
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
trials="${1:-20}"
runs="${2:-20}"
launchprof="${LAUNCHPROF:-$root/.build/debug/launchprof}"
demo="${DEMO:-$root/.build/debug/launchprof-demo}"
[ -x "$launchprof" ] && [ -x "$demo" ] || { echo "build launchprof and launchprof-demo first, or set LAUNCHPROF and DEMO" >&2; exit 1; }
loaders=()
if [ -n "${REPORTS:-}" ]; then
    work="$REPORTS"
    trials=$(find "$work" -maxdepth 1 -name 'bench-*' -type d | wc -l)
    [ "$trials" -gt 0 ] || { echo "$work has no bench-N folders (a work folder kept with KEEP=1)" >&2; exit 1; }
else
work="$(mktemp -d "${TMPDIR:-/tmp}/recipe-trials.XXXXXX")"
cleanup() {
    for pid in "${loaders[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${loaders[@]}"; do wait "$pid" 2>/dev/null || true; done
    [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
echo "work: $work" >&2
fixtures="$root/Tests/LaunchprofTests/Fixtures"
cflags=(-O1 -I "$fixtures" -I "$root/Sources/LaunchprofHooks/include")
mkdir -p "$work/base" "$work/head" "$work/main"
for side in base head; do
    cp /usr/bin/git "$work/$side/git"
    cp /bin/true "$work/$side/true"
    cp "$demo" "$work/$side/launchprof-demo"
done

# The app of the time-to-main trial links six libraries (libfill0-5: 100 exported functions
# each, taken by address through a table), like an app with a few dependencies; its head links
# one more, libextra: 100 more such symbol relocations and an initializer doing
# LP_EXTRA_ITERATIONS steps of fixed work (the steps are calibrated below). A library alone costs
# 0.1-0.2 ms to map and relocate here, so a bare fixture with one more would be 15% slower.
library() { # name count [initializer]
    python3 - "$work/$1.c" "$1" "$2" "${3:-}" <<'PY'
import sys
path, name, count, initializer = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
with open(path, "w") as out:
    out.write("#include <stdint.h>\n#include <stdlib.h>\n")
    for i in range(count):
        out.write("int lp_%s_%d(void) { return %d; }\n" % (name, i, i))
    out.write("int (*const lp_%s_table[])(void) = {%s};\n" % (name, ", ".join("lp_%s_%d" % (name, i) for i in range(count))))
    if initializer:
        out.write("""volatile uint64_t lp_extra_result;
__attribute__((constructor)) static void lp_extra_init(void) {
    const char *text = getenv("LP_EXTRA_ITERATIONS");
    uint64_t n = text ? strtoull(text, NULL, 10) : 0, x = 88172645463325252ull;
    for (uint64_t i = 0; i < n; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; }
    lp_extra_result = x;
}
""")
PY
    cc -O1 -fPIC -shared -o "$work/lib/lib$1.so" "$work/$1.c"
}
mkdir -p "$work/lib"
fill=()
for i in 0 1 2 3 4 5; do
    library "fill$i" 100
    fill+=("-lfill$i")
done
library extra 100 initializer
for side in base main; do
    cp "$work"/lib/libfill*.so "$work/$side/"
done
cp "$work/lib/libextra.so" "$work/main/"
link() { # side libraries…
    local side="$1"
    shift
    cc "${cflags[@]}" -o "$work/$side/bench-app" "$fixtures/bench-app.c" \
        -L "$work/lib" -Wl,--no-as-needed "$@" -Wl,-rpath,'$ORIGIN'
}
mkdir -p "$work/dfl"
cc "${cflags[@]}" -o "$work/dfl/bench-app" "$fixtures/bench-app.c"
link base "${fill[@]}"
link main "${fill[@]}" -lextra

priority=(bash "$here/high-priority.sh")
launch() { # name program [arguments-json] [environment-json]
    local arguments="${3:-[]}" environment="${4:-}"
    [ -n "$environment" ] || environment='{}'
    printf '{"name": "%s", "program": "%s", "arguments": %s, "environment": %s, "runs": %d, "warmup": 2}' \
        "$1" "$2" "$arguments" "$environment" "$runs"
}
median_of() { # report quantity
    python3 - "$1" "$2" <<'PY'
import json, statistics, sys
report = json.load(open(sys.argv[1]))
values = [r["metrics"][sys.argv[2]] for r in report["runs"] if r["metrics"].get(sys.argv[2]) is not None]
print(int(statistics.median(values)))
PY
}

# Calibration: the extra library's cost without and with 200,000 steps, against the base, in
# one interleaved session of 30 rounds; then the steps that make the head's time to main 10% longer.
steps=200000
{
    printf '{"version": 1, "launches": [%s, %s, %s]}\n' \
        "$(runs=30 launch base "$work/base/bench-app")" \
        "$(runs=30 launch zero "$work/main/bench-app" '[]' '{"LP_EXTRA_ITERATIONS": "0"}')" \
        "$(runs=30 launch some "$work/main/bench-app" '[]' "{\"LP_EXTRA_ITERATIONS\": \"$steps\"}")"
} >"$work/calibrate.json"
"${priority[@]}" "$launchprof" bench "$work/calibrate.json" --rounds 30 --output "$work/calibration" >/dev/null 2>&1 || true
base_main=$(median_of "$work/calibration/base.json" timeToMainNs)
zero_main=$(median_of "$work/calibration/zero.json" timeToMainNs)
some_main=$(median_of "$work/calibration/some.json" timeToMainNs)
iterations=$(python3 -c "
base, zero, some, steps = $base_main, $zero_main, $some_main, $steps
per_step = max(1e-6, (some - zero) / steps)
print(max(0, int((base * 1.10 - zero) / per_step)))")
echo "calibration: time to main $((base_main / 1000)) us; with the library $((zero_main / 1000)) us, +$steps steps $((some_main / 1000)) us; head: LP_EXTRA_ITERATIONS=$iterations" >&2

if [ "${LOAD:-0}" -gt 0 ]; then
    python3 -c "
for i in range(3000): print('int f%d(int x) { return x * %d + f%d(x - 1); }' % (i + 1, i, i) if i else 'int f0(int x) { return x; }')
print('int main(void) { return f2999(3); }')" >"$work/load.c"
    for i in $(seq 1 "$LOAD"); do
        (while :; do cc -O2 -c -o "$work/load-$i.o" "$work/load.c" 2>/dev/null; done) &
        loaders+=("$!")
    done
fi

# One suite, so one bench session, per pair, as the recipe has it: pairs sharing a session
# carried over onto each other (a launch right after the demo, whose exit frees ~100 MB, paid
# for it, and with five pairs in turns /bin/true's head followed the demo and its base never did:
# its head was called slower in 2 of 20 trials).
pair() { # name base-launch head-launch
    printf '{"version": 1, "minEffectNs": 20000, "launches": [%s, %s]}\n' "$2" "$3" >"$work/$1.json"
}
pair git "$(launch git-base "$work/base/git" '["--version"]')" "$(launch git-head "$work/head/git" '["--version"]')"
pair true "$(launch true-base "$work/base/true")" "$(launch true-head "$work/head/true")"
pair demo "$(launch demo-base "$work/base/launchprof-demo")" "$(launch demo-head "$work/head/launchprof-demo")"
pair dfl "$(launch app-base "$work/dfl/bench-app")" \
    "$(launch app-slow "$work/dfl/bench-app" '[]' '{"LP_BENCH_SLOWDOWN_PERCENT": "10"}')"
pair libs "$(launch libs-base "$work/base/bench-app")" \
    "$(launch libs-head "$work/main/bench-app" '[]' "{\"LP_EXTRA_ITERATIONS\": \"$iterations\"}")"
fi

verdict() { # bench-folder statistic base head key → "exit shift% verdict-of-key flagged-keys"
    local bench="$1" statistic="$2"
    shift 2
    set +e
    "$launchprof" compare --statistic "$statistic" --format json "$bench/$1.json" "$bench/$2.json" >"$bench/$1-$2.$statistic.json" 2>"$bench/$1-$2.err"
    local status=$?
    set -e
    python3 - "$bench/$1-$2.$statistic.json" "$3" "$status" <<'PY'
import json, sys
try:
    entry = json.load(open(sys.argv[1]))["entries"][0]
except Exception:
    print(sys.argv[3], "n/a", "error", "-"); sys.exit()
key = next((c for c in entry["changes"] if c["key"] == sys.argv[2]), None)
flagged = [c["key"] for c in entry["changes"] if c["verdict"] in ("regression", "improvement")]
shift = "n/a" if key is None or key.get("shiftPercent") is None else "%+.1f%%" % key["shiftPercent"]
print(sys.argv[3], shift, key["verdict"] if key else "absent", ",".join(flagged) or "-")
PY
}

declare -A quiet=() caught=()
for statistic in independent paired; do
    for name in git true demo dfl libs; do quiet[$statistic.$name]=0; caught[$statistic.$name]=0; done
done
printf '%5s %6s  %-28s %-28s %-28s %-32s %-32s\n' trial load git true demo "slow-dfl (didFinishLaunching)" "slow-main (timeToMainNs)"
for trial in $(seq 1 "$trials"); do
    bench="$work/bench-$trial"
    load="-"
    if [ -z "${REPORTS:-}" ]; then
        rm -rf "$bench"
        for name in git true demo dfl libs; do
            "${priority[@]}" "$launchprof" bench "$work/$name.json" --rounds "$runs" --output "$bench" >/dev/null 2>"$work/bench.err" \
                || { [ -s "$work/bench.err" ] && sed "s/^/  trial $trial, $name: /" "$work/bench.err" | tail -3 >&2; }
            # Each session rewrites the folder's suite.json; the reports stay, one per launch.
        done
        load="$(cut -d' ' -f1 /proc/loadavg)"
    fi
    for statistic in independent paired; do
        cells=()
        for name in git true demo; do
            read -r status shift key flagged <<<"$(verdict "$bench" "$statistic" "$name-base" "$name-head" timeToMainNs)"
            if [ "$status" = 0 ] || [ "$status" = 5 ]; then quiet[$statistic.$name]=$((quiet[$statistic.$name] + 1)); fi
            cells+=("$status $flagged")
        done
        read -r status shift key flagged <<<"$(verdict "$bench" "$statistic" app-base app-slow phase:didFinishLaunching)"
        if [ "$status" = 2 ] && [ "$key" = regression ]; then caught[$statistic.dfl]=$((caught[$statistic.dfl] + 1)); fi
        cells+=("$status $shift $key")
        read -r status shift key flagged <<<"$(verdict "$bench" "$statistic" libs-base libs-head timeToMainNs)"
        if [ "$status" = 2 ] && [ "$key" = regression ]; then caught[$statistic.libs]=$((caught[$statistic.libs] + 1)); fi
        cells+=("$status $shift $key")
        [ "$statistic" = independent ] && printf '%5d %6s  %-28s %-28s %-28s %-32s %-32s\n' "$trial" "$load" "${cells[@]}"
    done
done
for statistic in independent paired; do
    echo "statistic $statistic: identical binaries quiet: git ${quiet[$statistic.git]}/$trials, true ${quiet[$statistic.true]}/$trials, demo ${quiet[$statistic.demo]}/$trials;" \
        "caught: didFinishLaunching +10% ${caught[$statistic.dfl]}/$trials, time to main +10% ${caught[$statistic.libs]}/$trials"
done
[ "${quiet[independent.git]}" = "$trials" ] && [ "${quiet[independent.true]}" = "$trials" ] && [ "${quiet[independent.demo]}" = "$trials" ] \
    && [ "${caught[independent.dfl]}" = "$trials" ] && [ "${caught[independent.libs]}" = "$trials" ]
}
recipe "$@"
exit $?
fi

# MODE=legacy: the issue-12 trials.
# The `launchprof compare` acceptance trials (issue 12): does compare catch a 10% slower
# didFinishLaunching at 20 runs per side, and stay quiet on two measurements of one build?
#
#   MODE=legacy Benchmarks/compare-trials.sh [TRIALS=10] [RUNS=20] [SLOWDOWN=10]
#
# Fixture: Tests/LaunchprofTests/Fixtures/bench-app.c, a fixed count of iterations in
# didFinishLaunching; LP_BENCH_SLOWDOWN_PERCENT=10 makes it 10% more work.
#
# Each trial measures three sides — A (the build), B (the same build again) and S (the slowed
# build) — interleaved one run at a time (A B S A B S …), RUNS runs each, so a change of the
# machine's load during the trial lands on every side alike; each side's single-run reports
# are pooled with `launchprof merge`. Then `compare A S` must exit 2 (caught) and
# `compare A B` must exit 0 (quiet). With SEQUENTIAL=1 the sides are measured one after the
# other instead (what a committed baseline from another time amounts to), for comparison. With
# BENCH=1 the three sides are the launches of one suite measured by `launchprof bench --rounds
# RUNS` (one run of each per round, as a CI job would do it), instead of single-run reports.
#
# Priority: on a machine shared with compilers, a CPU-bound launch at nice 0 gets whatever share
# of a core the scheduler leaves it (didFinishLaunching 7 ms quiet, 11-39 ms at load 11 on 2
# vCPUs), and no statistic finds 10% in that. As root the runs are made through
# high-priority.sh (nice -20 and its own autogroup at -20): the launch then gets a core against
# nice-0 builds (7.0-7.4 ms). PRIORITY=0 measures at the default priority.
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
trials="${1:-10}"
runs="${2:-20}"
slowdown="${3:-10}"
launchprof="${LAUNCHPROF:-$root/.build/debug/launchprof}"
[ -x "$launchprof" ] || { echo "build launchprof first (swift build), or set LAUNCHPROF" >&2; exit 1; }
work="$(mktemp -d "${TMPDIR:-/tmp}/compare-trials.XXXXXX")"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
echo "work: $work" >&2
app="$work/bench-app"
cc -O1 -I "$root/Tests/LaunchprofTests/Fixtures" -I "$root/Sources/LaunchprofHooks/include" \
   -o "$app" "$root/Tests/LaunchprofTests/Fixtures/bench-app.c"

priority=(bash "$here/high-priority.sh")

measure() { # side index extra-env…
    local side="$1" index="$2"
    shift 2
    "${priority[@]}" "$launchprof" run --runs 1 --warmup 0 "$@" --json "$work/$side-$index.json" "$app" >/dev/null 2>&1 || true
}

caught=0
quiet=0
echo "trial  A-vs-S(exit, shift of didFinishLaunching)  A-vs-B(exit, quantities flagged)"
for trial in $(seq 1 "$trials"); do
    rm -f "$work"/[ABS]-*.json
    "${priority[@]}" "$launchprof" run --runs 3 --json "$work/warm.json" "$app" >/dev/null 2>&1 || true
    if [ "${BENCH:-0}" = 1 ]; then
        launch() { # name slowdown
            printf '{"name": "%s", "program": "%s", "runs": %d, "warmup": 1, "environment": {"LP_BENCH_SLOWDOWN_PERCENT": "%d"}}' \
                "$1" "$app" "$runs" "$2"
        }
        printf '{"version": 1, "launches": [%s, %s, %s]}\n' "$(launch A 0)" "$(launch B 0)" "$(launch S "$slowdown")" >"$work/suite.json"
        "${priority[@]}" "$launchprof" bench "$work/suite.json" --rounds "$runs" --output "$work/bench" >/dev/null 2>"$work/bench.err" \
            || sed "s/^/  trial $trial: /" "$work/bench.err" >&2
        for side in A B S; do cp "$work/bench/$side.json" "$work/$side-1.json"; done
    elif [ "${SEQUENTIAL:-0}" = 1 ]; then
        for i in $(seq 1 "$runs"); do measure A "$i"; done
        for i in $(seq 1 "$runs"); do measure B "$i"; done
        for i in $(seq 1 "$runs"); do measure S "$i" --env "LP_BENCH_SLOWDOWN_PERCENT=$slowdown"; done
    else
        for i in $(seq 1 "$runs"); do
            measure A "$i"
            measure B "$i"
            measure S "$i" --env "LP_BENCH_SLOWDOWN_PERCENT=$slowdown"
        done
    fi
    for side in A B S; do
        "$launchprof" merge "$work/$side"-*.json -o "$work/$side.json" 2>/dev/null
    done
    set +e
    "$launchprof" compare --format json "$work/A.json" "$work/S.json" >"$work/AS.json"
    slow=$?
    "$launchprof" compare --format json "$work/A.json" "$work/B.json" >"$work/AB.json"
    same=$?
    set -e
    [ "$slow" = 2 ] && caught=$((caught + 1))
    [ "$same" = 0 ] && quiet=$((quiet + 1))
    detail=$(python3 - "$work/AS.json" "$work/AB.json" <<'PY'
import json, sys
slow = json.load(open(sys.argv[1]))["entries"][0]["changes"]
same = json.load(open(sys.argv[2]))["entries"][0]["changes"]
dfl = next((c for c in slow if c["key"] == "phase:didFinishLaunching"), None)
flagged = ["%s(%+.1f%%,%+dus)" % (c["key"], c.get("shiftPercent") or 0, c["shift"]["shiftNs"] // 1000)
           for c in same if c["verdict"] in ("regression", "improvement")]
text = "n/a" if dfl is None or dfl.get("shiftPercent") is None else "%+.1f%% %s" % (dfl["shiftPercent"], dfl["verdict"])
print(text + "\t" + (",".join(flagged) or "-"))
PY
)
    printf '%5d  %d  %-34s  %d  %s\n' "$trial" "$slow" "$(echo "$detail" | cut -f1)" "$same" "$(echo "$detail" | cut -f2)"
done
echo "caught the ${slowdown}% regression: $caught/$trials; quiet on the same build: $quiet/$trials"
[ "$caught" -ge $((trials * 9 / 10)) ] && [ "$quiet" -ge $((trials * 9 / 10)) ]
