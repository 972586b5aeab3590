#!/usr/bin/env bash
# Peak RSS of `launchprof run -r 100` versus `-r 1000` (both writing --json), measured with
# GNU time's %M (KiB). Goal: the 1,000-run peak is at most 1.2x the 100-run peak (statistics are
# streamed; no per-run buffers grow with the run count). Exit 1 when the goal is missed: RSS is
# deterministic enough to fail on; exit 2 on a broken setup.
#
#   Benchmarks/memory.sh [PROGRAM]     (default: the libc-only program, built here)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
. "$here/lib/launchprof-binary.sh"
find_launchprof memory
[ -x /usr/bin/time ] || { echo "memory: GNU time is missing (apt-get install time)" >&2; exit 2; }
unset LD_PRELOAD LD_AUDIT LAUNCHPROF_HOOK_FD

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
program="${1:-}"
if [ -z "$program" ]; then
    cc -O2 -g -o "$work/libc-only" "$here/Programs/libc-only.c"
    program="$work/libc-only"
fi

peak() { # RUNS → peak RSS in KiB
    /usr/bin/time -f %M -o "$work/rss" "$launchprof" run -r "$1" --json "$work/report-$1.json" "$program" >/dev/null 2>&1 \
        || { echo "memory: launchprof run -r $1 $program failed" >&2; exit 2; }
    tail -1 "$work/rss"
}

small=$(peak 100)
large=$(peak 1000)
ratio=$(python3 -c 'import sys; print(f"{int(sys.argv[2])/int(sys.argv[1]):.3f}")' "$small" "$large")
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)   program: $program"
echo "peak RSS: -r 100 ${small} KiB, -r 1000 ${large} KiB, ratio ${ratio} (goal <= 1.2)"
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 1.2 else 1)' "$ratio" \
    || { echo "memory: peak RSS grows with the run count (ratio $ratio > 1.2)" >&2; exit 1; }
