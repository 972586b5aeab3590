#!/usr/bin/env bash
# Command 2: install what is missing, build, and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/setup.sh test
swift build --build-tests
# Serially: the run tests compare real time spans with the programs' own clocks, and other suites
# compiling their C fixtures at the same moment would only add scheduler noise.
swift test --skip-build --no-parallel "$@"
