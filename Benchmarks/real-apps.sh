#!/usr/bin/env bash
# The toolkit phases and run-time loads of real, unmodified apps (issue 35), for the table in
# docs/observers.md: each app launched `runs` times (default 3) on one Xvfb under
# `launchprof run --ready frame`, and per app the median willFinishLaunching and
# didFinishLaunching with their source, the number of dlopen calls and their median total time,
# and the median time to first frame.
#
#   Benchmarks/real-apps.sh [runs (3)]
#   LAUNCHPROF=path/to/launchprof skips the release build.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
runs="${1:-3}"
work="$(mktemp -d)"
cd "$root"
if [ -z "${LAUNCHPROF:-}" ]; then
  swift build -c release --product launchprof >&2
  LAUNCHPROF="$(swift build -c release --show-bin-path)/launchprof"
fi
cc -O1 -o "$work/sdl-window" "$here/Programs/sdl-window.c" $(pkg-config --cflags --libs sdl2)
exec 3< <(Xvfb -displayfd 1 -screen 0 1280x800x24 -nolisten tcp -noreset 2>/dev/null)
read -r number <&3
xvfb=$(pgrep -n -x Xvfb)
trap 'kill $xvfb 2>/dev/null; rm -rf "$work"' EXIT

apps=(
  "gtk3-demo|/usr/bin/gtk3-demo"
  "gtk4-demo|/usr/bin/gtk4-demo"
  "gnome-calculator|/usr/bin/gnome-calculator"
  "mousepad|/usr/bin/mousepad"
  "featherpad (Qt 5)|/usr/bin/featherpad"
  "qt6ct (Qt 6)|/usr/bin/qt6ct"
  "SDL 2 window|$work/sdl-window"
  "glxgears|/usr/bin/glxgears"
)
index=0
for entry in "${apps[@]}"; do
  index=$((index + 1))
  name="${entry%%|*}"
  program="${entry#*|}"
  [ -x "$program" ] || { echo "real-apps: $program missing, skipped" >&2; continue; }
  echo "$name" > "$work/$index.name"
  env -i PATH=/usr/bin:/bin HOME="$work" DISPLAY=":$number" NO_AT_BRIDGE=1 XDG_RUNTIME_DIR="$work" \
    QT_QPA_PLATFORM=xcb "$LAUNCHPROF" run -r "$runs" -w 1 --ready frame --timeout 20 --ignore-failure \
    --json "$work/$index.json" "$program" > /dev/null 2> "$work/$index.err" || echo "real-apps: $name failed: $(tail -1 "$work/$index.err")" >&2
done
python3 - "$work" "$index" <<'PY'
import json, os, statistics, sys
work, count = sys.argv[1], int(sys.argv[2])
def ms(ns): return f"{ns / 1e6:.1f} ms" if ns is not None else "—"
def median(values): return statistics.median(values) if values else None
print("| app | willFinishLaunching | didFinishLaunching | dlopen calls (time) | first frame |")
print("|---|---|---|---|---|")
for i in range(1, count + 1):
    if not os.path.exists(f"{work}/{i}.json"): continue
    name = open(f"{work}/{i}.name").read().strip()
    runs = json.load(open(f"{work}/{i}.json"))["runs"]
    cells = []
    for phase in ("willFinishLaunching", "didFinishLaunching"):
        found = [p for r in runs for p in r["phases"] if p["name"] == phase]
        source = found[0].get("source", "?") if found else None
        cells.append(f"{ms(median([p['durationNs'] for p in found]))} ({source})" if found else "—")
    loads = [[p for p in r["phases"] if p["name"] == "dlopen" and "thread" not in p] for r in runs]
    threads = [[p for p in r["phases"] if p["name"] == "dlopen" and "thread" in p] for r in runs]
    calls = median([len(l) + len(t) for l, t in zip(loads, threads)])
    total = median([sum(p["durationNs"] for p in l) for l in loads])
    frame = median([r["metrics"]["timeToFirstFrameNs"] for r in runs if r["metrics"].get("timeToFirstFrameNs")])
    print(f"| {name} | {cells[0]} | {cells[1]} | {calls:g} ({ms(total)} on the main thread) | {ms(frame)} |")
PY
