#!/usr/bin/env bash
# Command 2: install what is missing, build, and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/setup.sh
swift build --build-tests
swift test --skip-build "$@"
