#!/usr/bin/env bash
# What observing the first frame adds to a launch (issue 19): the xcb fixture
# (Tests/LaunchprofTests/Fixtures/frame-x11.c) on one Xvfb and the wl_shm fixture (frame-wayland.c)
# on one headless weston, each exiting right after its first frame after FRAME_DRAW_US of work
# (default 0), launched under `--ready frame` (launchprof's X11 client, or its Wayland relay) and
# under `--ready exit` (no observer), sessions alternating in rounds. Compared: the fixture's own
# CLOCK_MONOTONIC span from main to its first frame (after its round trip), the median of each
# mode; goal: frame readiness at most 1% slower.
#
#   Benchmarks/frame-overhead.sh [rounds (5)] [runs per round (20)]
#   LAUNCHPROF=path/to/launchprof skips the release build.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
rounds="${1:-5}"
per="${2:-20}"
work="$(mktemp -d)"
cd "$root"
if [ -z "${LAUNCHPROF:-}" ]; then
  swift build -c release --product launchprof >&2
  LAUNCHPROF="$(swift build -c release --show-bin-path)/launchprof"
fi
fixtures=Tests/LaunchprofTests/Fixtures
cc -O1 -I "$fixtures" -o "$work/frame-x11" "$fixtures/frame-x11.c" -lxcb
xml=/usr/share/wayland-protocols/stable/xdg-shell/xdg-shell.xml
wayland-scanner client-header "$xml" "$work/xdg-shell-client-protocol.h"
wayland-scanner private-code "$xml" "$work/xdg-shell-protocol.c"
cc -O1 -I "$fixtures" -I "$work" -o "$work/frame-wayland" "$fixtures/frame-wayland.c" "$work/xdg-shell-protocol.c" -lwayland-client
mkdir -m 700 "$work/xdg"
# Xvfb names its display on the descriptor -displayfd gives it once it accepts connections.
exec 3< <(Xvfb -displayfd 1 -screen 0 1280x800x24 -nolisten tcp -noreset 2>/dev/null)
read -r number <&3
xvfb=$(pgrep -n -x Xvfb)
XDG_RUNTIME_DIR="$work/xdg" weston --backend=headless-backend.so --socket=lp-bench --idle-time=0 >/dev/null 2>&1 &
weston=$!
trap 'kill $xvfb $weston 2>/dev/null; wait $weston 2>/dev/null; rm -rf "$work"' EXIT
until [ -S "$work/xdg/lp-bench" ]; do inotifywait -qq -t 1 -e create "$work/xdg" 2>/dev/null || sleep 0.05; done

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit } print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
for server in x11 wayland; do
  if [ $server = x11 ]; then display=(DISPLAY=":$number"); else display=(WAYLAND_DISPLAY=lp-bench XDG_RUNTIME_DIR="$work/xdg"); fi
  for round in $(seq "$rounds"); do
    for mode in frame exit; do
      env -i PATH=/usr/bin:/bin HOME="$HOME" "${display[@]}" FRAME_DRAW_US="${FRAME_DRAW_US:-0}" FRAME_EXIT=1 \
        LP_FIXTURE_TRUTH="$work/truth-$server-$mode.txt" "$LAUNCHPROF" run -r "$per" -w 1 --ready "$mode" \
        --linger 0.2 --ignore-failure "$work/frame-$server" > /dev/null
    done
  done
  for mode in frame exit; do
    # Pair each first-frame line with the main line before it: the fixture's own span.
    awk '$1 == "main" { m = $3 } $1 == "first-frame" && m { print $4 - m; m = 0 }' "$work/truth-$server-$mode.txt" | median > "$work/$mode.median"
    echo "$server --ready $mode: the fixture's main → first frame, median $(cat "$work/$mode.median") ns over $(grep -c first-frame "$work/truth-$server-$mode.txt") launches"
  done
  python3 -c "import sys; f, e = (int(open(sys.argv[1]).read()), int(open(sys.argv[2]).read())); print(f'$server: frame / exit = {f / e:.3f} ({f - e} ns)')" "$work/frame.median" "$work/exit.median"
done
