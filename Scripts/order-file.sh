#!/bin/sh
# Regenerates Scripts/link/launchprof.order: the functions `launchprof inspect` runs, which the
# link places side by side (Package.swift, the launchprof target). Spread over the 12 MB of code
# they touched ~100 windows of 64 KiB, each a page fault at every start; side by side, ~35.
#   Scripts/order-file.sh
# Run it after changes to the inspect path (the functions' names change with the code); a stale
# list only costs start-up time. Needs valgrind (apt-get install valgrind): callgrind lists every
# function a run executes, however briefly. Each inspection runs in a private result cache, read
# afresh, then stored, then answered from it, as JSON and as text. Reading a stored calibration
# is not on the list: under valgrind the CPU is a synthetic one, whose calibration is never found.
set -eu
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
swift build -c release --static-swift-stdlib --disable-local-rpath --product launchprof >&2
binary="$(swift build -c release --static-swift-stdlib --disable-local-rpath --show-bin-path)/launchprof"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# valgrind's DWARF reader gives up on the Swift runtime's debug information: a copy without it.
strip --strip-debug -o "$work/launchprof" "$binary"
run=0
for program in /usr/bin/gdb /bin/true; do
    for format in --json ""; do
        for cache in --no-cache "" ""; do
            run=$((run + 1))
            # The exit's teardown helper is a clone valgrind refuses (and stops there): the
            # counts are written just before it starts, to run-N.1; a stored answer exits
            # without it, and writes run-N.
            XDG_CACHE_HOME="$work/cache" valgrind --tool=callgrind --demangle=no \
                --dump-before=lp_detach_teardown --callgrind-out-file="$work/run-$run" \
                "$work/launchprof" inspect $format $cache "$program" >/dev/null 2>"$work/valgrind.err" || true
            [ -s "$work/run-$run.1" ] || [ -s "$work/run-$run" ] || { cat "$work/valgrind.err" >&2; exit 1; }
        done
    done
done
python3 - "$work" "$binary" Scripts/link/launchprof.order <<'PY'
import glob, re, subprocess, sys
work, binary, out = sys.argv[1:]
executed = set()
for path in glob.glob(f"{work}/run-*"):
    for line in open(path, errors="replace"):
        match = re.match(r"^c?fn=\(\d+\) (.+)$", line.rstrip("\n"))
        if match:
            executed.add(match.group(1))
# The functions in launchprof's binary (in a release build, libc's too: it is static), in today's order.
address = {}
for line in subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout.splitlines():
    fields = line.split()
    if len(fields) == 3 and fields[1] in "tTwW":
        address[fields[2]] = int(fields[0], 16)
names = sorted((name for name in executed if name in address), key=address.get)
open(out, "w").write("".join(name + "\n" for name in names))
print(f"{out}: {len(names)} functions", file=sys.stderr)
PY
