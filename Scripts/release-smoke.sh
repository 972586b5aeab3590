#!/usr/bin/env bash
# Checks of the release build, which the test suite (debug builds) does not run: a dynamically
# linked executable with the Swift runtime linked in (`--static-swift-stdlib`), which samples
# stacks with libunwind loaded by dlopen and sees an X11 first frame through the libxcb linked
# into it.
#
#   bash Scripts/release-smoke.sh      (CI runs it after the tests)
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --static-swift-stdlib --disable-local-rpath >&2
bin=$(swift build -c release --static-swift-stdlib --disable-local-rpath --show-bin-path)
work=$(mktemp -d)
server=
monitor=
trap '[ -z "$monitor" ] || kill "$monitor" 2>/dev/null || true; rm -rf "$work"; [ -z "$server" ] || kill "$server" 2>/dev/null || true' EXIT
fail() {
    echo "release-smoke: $*" >&2
    exit 1
}

# An ordinary dynamic executable: ld.so starts it against the system's libc; the Swift runtime
# is inside it, so it needs no Swift installation; every library it needs is found.
readelf -l "$bin/launchprof" | grep -q "Requesting program interpreter" || fail "launchprof has no program interpreter"
libraries=$(ldd "$bin/launchprof")
! grep -q "not found" <<< "$libraries" || fail "a library of launchprof is not found: $(grep "not found" <<< "$libraries")"
! grep -q "libswift" <<< "$libraries" || fail "launchprof needs the shared Swift runtime: $(grep libswift <<< "$libraries")"

# Sampling: the demo's heavy function, found below main in the sampled stacks.
"$bin/launchprof" run -r 2 --sample --folded "$work/folded" "$bin/launchprof-demo" > "$work/run.txt"
grep -q ";main;build_search_index" "$work/folded" || fail "no sampled stack through main;build_search_index: $(head -3 "$work/folded")"

# X11: xeyes's first frame on a server of this script's own.
exec 3> "$work/display"
Xvfb -displayfd 3 -nolisten tcp > /dev/null 2>&1 &
server=$!
exec 3>&-
for _ in $(seq 100); do [ -s "$work/display" ] && break; sleep 0.05; done
display=":$(tr -d '[:space:]' < "$work/display")"
[ "$display" != ":" ] || fail "Xvfb did not start"
"$bin/launchprof" run -r 1 --ready frame --env "DISPLAY=$display" xeyes > "$work/frame.txt"
grep -q "^firstFrame" "$work/frame.txt" || fail "no first frame of xeyes: $(cat "$work/frame.txt")"

# launchprof monitor: SQLite linked in, the kernel's events and the hooks' USDT probes. Three
# launches of the demo from this shell are recorded with its hook phases and read back.
mkfifo "$work/said"
"$bin/launchprof" monitor --store "$work/field" --program "$bin/launchprof-demo" 2> "$work/said" &
monitor=$!
exec 4< "$work/said"
while IFS= read -r line <&4; do
  echo "$line" >> "$work/monitor.log"
  [[ "$line" == *"recording into"* ]] && break
done
cat <&4 >> "$work/monitor.log" &
exec 4<&-
for _ in 1 2 3; do "$bin/launchprof-demo" > /dev/null; done
kill -TERM "$monitor"
wait "$monitor" || fail "launchprof monitor exited $?: $(cat "$work/monitor.log")"
monitor=
"$bin/launchprof" monitor report --store "$work/field" --json "$work/field.json" 2> "$work/report.log" \
  || fail "monitor report failed: $(cat "$work/report.log")"
python3 - "$work/field.json" <<'PY' || fail "the monitor's report: $(head -c 600 "$work/field.json"); it said: $(cat "$work/monitor.log")"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert len(runs) == 3, f"{len(runs)} launches recorded, not 3"
for run in runs:
    names = {phase["name"] for phase in run["phases"]}
    assert {"main", "didFinishLaunching", "firstFrame"} <= names, sorted(names)
PY
echo "release-smoke: dynamic executable, Swift runtime inside; sampled stacks through main; xeyes's first frame seen; the monitor recorded the demo's launches with their hooks" >&2
