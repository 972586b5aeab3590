# Sourced by the benchmark scripts (after setting `root`, the checkout): which launchprof to
# measure, and the tools a script needs. A broken setup exits 2, naming what is missing.
#
#   find_launchprof NAME         sets `launchprof`: LAUNCHPROF_BIN, else the checkout's release build
#                                (.build-bench first: the benchmarks' own scratch path)
#   require_tools NAME TOOL…     every TOOL on PATH, else exit 2 naming the package to install

find_launchprof() {
    launchprof="${LAUNCHPROF_BIN:-}"
    for candidate in "$root/.build-bench/release/launchprof" "$root/.build/release/launchprof"; do
        [ -n "$launchprof" ] || { [ -x "$candidate" ] && launchprof="$candidate"; } || true
    done
    [ -x "$launchprof" ] || {
        echo "$1: build launchprof first: swift build -c release --static-swift-stdlib --disable-local-rpath --product launchprof --scratch-path .build-bench" >&2
        exit 2
    }
}

require_tools() {
    local name="$1" tool
    shift
    for tool in "$@"; do
        command -v "$tool" >/dev/null || { echo "$name: $tool is not installed (apt-get install $tool)" >&2; exit 2; }
    done
}

# Sets LP and DEMO for the sampler's benchmarks: LAUNCHPROF and DEMO when given, else the
# package's release builds, built first (run from the package root).
release_launchprof_and_demo() {
    if [[ -z "${LAUNCHPROF:-}" ]]; then
        swift build -c release --product launchprof >&2
        swift build -c release --product launchprof-demo >&2
    fi
    LP=${LAUNCHPROF:-.build/release/launchprof}
    DEMO=${DEMO:-.build/release/launchprof-demo}
}
