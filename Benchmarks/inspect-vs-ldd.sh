#!/bin/sh
# launchprof inspect --json versus ldd on the same program, in one hyperfine run (median of 30).
#   Benchmarks/inspect-vs-ldd.sh [program] [launchprof binary]
# Defaults: /usr/bin/gdb and the release build of the README (.build/release/launchprof).
# Goals: inspect's median at most ldd's (issue 2; exits 1 when it is not) and at most half of it
# (issue 20; reported). On a busy machine wall medians wait for a CPU: the CPU time (user + system,
# ldd's children included) is printed beside them.
set -eu
program="${1:-/usr/bin/gdb}"
launchprof="${2:-.build/release/launchprof}"
[ -x "$launchprof" ] || { echo "build it first: swift build -c release --static-swift-stdlib" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "hyperfine is not installed (apt-get install hyperfine)" >&2; exit 2; }
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
hyperfine -N --warmup 3 --runs 30 --export-json "$out" \
    "ldd $program" "$launchprof inspect --json $program"
python3 - "$out" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
ldd, inspect = (r["median"] for r in results)
cpu_ldd, cpu_inspect = (r["user"] + r["system"] for r in results)
print(f"median: ldd {ldd*1e3:.2f} ms, launchprof inspect --json {inspect*1e3:.2f} ms, ratio {inspect/ldd:.2f}"
      f" (goal ≤ 0.5: {'ok' if inspect <= ldd / 2 else 'missed'})")
print(f"CPU (mean user + system): ldd {cpu_ldd*1e3:.2f} ms, inspect {cpu_inspect*1e3:.2f} ms, ratio {cpu_inspect/cpu_ldd:.2f}")
sys.exit(0 if inspect <= ldd else 1)
PY
