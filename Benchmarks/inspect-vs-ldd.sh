#!/bin/sh
# launchprof inspect --json versus ldd on the same program, in one hyperfine run (median of 30):
# read afresh (`--no-cache`, what a first inspection costs) and asked again (served from inspect's
# result cache, what a repeated inspection of an unchanged program costs; see the README).
#   Benchmarks/inspect-vs-ldd.sh [program] [launchprof binary]
# Defaults: /usr/bin/gdb and the release build of the README (.build/release/launchprof).
# Goals: the fresh reading's median at most ldd's (issue 2; exits 1 when it is not) and at most half
# of it (issue 20; reported for both). On a busy machine wall medians wait for a CPU: the CPU time
# (user + system, ldd's children included) is printed beside them.
set -eu
program="${1:-/usr/bin/gdb}"
launchprof="${2:-.build/release/launchprof}"
[ -x "$launchprof" ] || { echo "build it first: swift build -c release --static-swift-stdlib" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "hyperfine is not installed (apt-get install hyperfine)" >&2; exit 2; }
out="$(mktemp)"
cache="$(mktemp -d)"
trap 'rm -rf "$out" "$cache"' EXIT
# A private cache: the repeated side's entry is made by the warm-up, never found from earlier use.
XDG_CACHE_HOME="$cache" hyperfine -N --warmup 3 --runs 30 --export-json "$out" \
    "ldd $program" "$launchprof inspect --json --no-cache $program" "$launchprof inspect --json $program"
python3 - "$out" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
ldd, fresh, repeated = (r["median"] for r in results)
cpu = [r["user"] + r["system"] for r in results]
verdict = lambda t: "ok" if t <= ldd / 2 else "missed"
print(f"median: ldd {ldd*1e3:.2f} ms; inspect --json read afresh {fresh*1e3:.2f} ms, ratio {fresh/ldd:.2f}"
      f" (goal ≤ 0.5: {verdict(fresh)}); asked again {repeated*1e3:.2f} ms, ratio {repeated/ldd:.2f}"
      f" (goal ≤ 0.5: {verdict(repeated)})")
print(f"CPU (mean user + system): ldd {cpu[0]*1e3:.2f} ms, afresh {cpu[1]*1e3:.2f} ms ({cpu[1]/cpu[0]:.2f}),"
      f" again {cpu[2]*1e3:.2f} ms ({cpu[2]/cpu[0]:.2f})")
sys.exit(0 if fresh <= ldd else 1)
PY
