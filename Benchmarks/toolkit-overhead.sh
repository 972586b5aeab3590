#!/usr/bin/env bash
# What the runtime probes (issue 35: dlopen, toolkit and Python phases) add to a real GTK 3
# launch: gtk3-demo on one Xvfb, time to first frame as launchprof measures it, in sessions that
# alternate between the probes held (the default) and `--no-runtime-probes`, every session with
# its own probe holder (its own socket), which ends as soon as its session does
# (LAUNCHPROF_UPROBE_LINGER=0) and deletes its events as it ends; a session without the probes
# starts only once the previous session's holder has exited, so it really runs without them.
# (Waiting for the events to leave tracefs instead is wrong: a holder of another launchprof may
# hold the same shared events — libc's dlopen, the loader's — for as long as it lives.) Both
# kinds keep the boundary probes before main: the ratio is the new probes' alone. Goal:
# profiled ÷ bare ≤ 1.02 (ratio of the medians).
#
#   Benchmarks/toolkit-overhead.sh [rounds (6)] [runs per session (5)]
#   LAUNCHPROF=path/to/launchprof skips the release build.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
rounds="${1:-6}"
per="${2:-5}"
work="$(mktemp -d)"
cd "$root"
if [ -z "${LAUNCHPROF:-}" ]; then
  swift build -c release --product launchprof >&2
  LAUNCHPROF="$(swift build -c release --show-bin-path)/launchprof"
fi
demo=/usr/bin/gtk3-demo
[ -x "$demo" ] || { echo "toolkit-overhead: $demo missing (apt-get install gtk-3-examples)" >&2; exit 1; }
# Xvfb names its display on the descriptor -displayfd gives it once it accepts connections.
exec 3< <(Xvfb -displayfd 1 -screen 0 1280x800x24 -nolisten tcp -noreset 2>/dev/null)
read -r number <&3
xvfb=$(pgrep -n -x Xvfb)
trap 'kill $xvfb 2>/dev/null; rm -rf "$work"' EXIT
mkdir -m 700 "$work/holder"
events=/sys/kernel/tracing/uprobe_events

# The holder serving socket $1 (its command line names it), if it still runs.
holder_of() { pgrep -f -x "lp-uprobe-hold --socket $1 .*" | head -1; }

# Until that holder has exited (it releases and deletes its probes before it does).
await_exit() {
  local pid
  pid=$(holder_of "$1") || true
  [ -n "$pid" ] && tail --pid="$pid" -f /dev/null
  return 0
}

shared=0
for round in $(seq "$rounds"); do
  for mode in probes bare; do
    flags=()
    if [ $mode = bare ]; then flags=(--no-runtime-probes); await_exit "holder-$round-probes.sock"; fi
    env -i PATH=/usr/bin:/bin HOME="$HOME" DISPLAY=":$number" NO_AT_BRIDGE=1 \
      LAUNCHPROF_UPROBE_HOLDER="$work/holder/holder-$round-$mode.sock" LAUNCHPROF_UPROBE_LINGER=0 \
      "$LAUNCHPROF" run -r "$per" -w 1 --ready frame --observer uprobe "${flags[@]}" \
      --json "$work/$mode-$round.json" "$demo" > /dev/null
    # The bare session's holder deleted every unused launchprof event as it started: a runtime
    # probe still defined is another launchprof's, held during that session.
    if [ $mode = bare ] && grep -q 'launchprof/lp[er]_' "$events"; then shared=$((shared + 1)); fi
  done
done
if [ "$shared" -gt 0 ]; then
  echo "toolkit-overhead: $shared of $rounds bare sessions ran while another launchprof held runtime probes: the ratio understates their cost" >&2
fi
python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
frames = {"probes": [], "bare": []}
phases = 0
for mode in frames:
    for round in range(1, rounds + 1):
        report = json.load(open(f"{work}/{mode}-{round}.json"))
        for run in report["runs"]:
            if run["metrics"].get("timeToFirstFrameNs"):
                frames[mode].append(run["metrics"]["timeToFirstFrameNs"])
            if mode == "probes":
                phases += sum(1 for p in run["phases"] if p.get("source") not in (None, "hook"))
for mode, values in frames.items():
    print(f"gtk3-demo {mode}: time to first frame median {statistics.median(values) / 1e6:.2f} ms over {len(values)} launches")
if phases == 0:
    # Without the holder the probes are not placed at all: the two kinds would be the same.
    sys.exit("toolkit-overhead: no verdict: the profiled sessions showed no runtime phase (was the probe holder used?)")
ratio = statistics.median(frames["probes"]) / statistics.median(frames["bare"])
print(f"profiled / bare = {ratio:.3f} (runtime phases per profiled launch: {phases / max(len(frames['probes']), 1):.0f})")
PY
