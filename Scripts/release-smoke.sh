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
trap 'rm -rf "$work"; [ -z "$server" ] || kill "$server" 2>/dev/null || true' EXIT
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
echo "release-smoke: dynamic executable, Swift runtime inside; sampled stacks through main; xeyes's first frame seen" >&2
