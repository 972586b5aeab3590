#!/usr/bin/env bash
# Checks of the release build, which the test suite (debug builds) does not run: it is one static
# executable (Package.swift), which samples stacks with libunwind loaded by a static glibc's
# dlopen and sees an X11 first frame through the libxcb linked into it.
#
#   bash Scripts/release-smoke.sh      (CI runs it after the tests)
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --static-swift-stdlib --disable-local-rpath >&2
bin=$(swift build -c release --static-swift-stdlib --disable-local-rpath --show-bin-path)
work=$(mktemp -d)
server=
trap 'rm -rf "$work"; [ -z "$server" ] || kill "$server" 2>/dev/null || true' EXIT
fail() {
    echo "release-smoke: $*" >&2
    exit 1
}

# No program interpreter: the kernel starts it, with no ld.so, libc or libm to load.
! readelf -l "$bin/launchprof" | grep -q "Requesting program interpreter" || fail "launchprof is not a static executable"

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
echo "release-smoke: static executable; sampled stacks through main; xeyes's first frame seen" >&2
