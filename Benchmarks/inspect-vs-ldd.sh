#!/bin/sh
# launchprof inspect --json versus ldd on the same program, in one hyperfine run (median of 30).
#   Benchmarks/inspect-vs-ldd.sh [program] [launchprof binary]
# Defaults: /usr/bin/gdb and the release build of the README (.build/release/launchprof).
# Goal (issue 2): inspect's median is at most ldd's. Exits 1 when it is not.
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
print(f"median: ldd {ldd*1e3:.2f} ms, launchprof inspect --json {inspect*1e3:.2f} ms, ratio {inspect/ldd:.2f}")
sys.exit(0 if inspect <= ldd else 1)
PY
