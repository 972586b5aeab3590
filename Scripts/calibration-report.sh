#!/usr/bin/env bash
# Calibrates launchprof on this host, then compares inspect's loader estimate (built-in defaults
# and calibrated) with run's measured loader.map + loader.relocate (median of 20 launches, in the
# calibration's own rounds) for gdb, git, node, a small SwiftPM program using Foundation, and
# cc1plus, chromium and swift-frontend where installed. Writes Reports/calibration.md and
# Reports/calibration.svg; the calibration itself goes to $XDG_CACHE_HOME/launchprof.
#
#   bash Scripts/calibration-report.sh [REPORT_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
reports="${1:-$root/Reports}"
cd "$root"

bash Scripts/setup.sh build gcc gdb git nodejs   # calibrate builds with cc; gdb, git and node are checked programs
swift build -c release --static-swift-stdlib --disable-local-rpath --product launchprof >&2
launchprof="$root/.build/release/launchprof"

# A SwiftPM program that prints a Date(), built from source in a temporary directory: its
# closure holds the Swift runtime and Foundation as shared libraries.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/DateApp/Sources/DateApp"
cat > "$work/DateApp/Package.swift" <<'SWIFT'
// swift-tools-version: 6.0
import PackageDescription
let package = Package(name: "DateApp", targets: [.executableTarget(name: "DateApp")])
SWIFT
echo 'import Foundation; print(Date())' > "$work/DateApp/Sources/DateApp/main.swift"
swift build -c release --package-path "$work/DateApp" >&2
dateapp="$(swift build -c release --package-path "$work/DateApp" --show-bin-path)/DateApp"

# A C++ compiler, a browser's ~100-object closure and a Swift toolchain binary, where installed.
wider=()
for candidate in "$(gcc -print-prog-name=cc1plus 2>/dev/null)" /usr/lib/chromium/chromium \
  "$(dirname "$(readlink -f "$(command -v swift)")")/swift-frontend"; do
  if [ -x "$candidate" ]; then wider+=(--check "$candidate --version"); fi
done

mkdir -p "$reports"
"$launchprof" calibrate \
  --check "$(command -v gdb) --version" \
  --check "$(command -v git) --version" \
  --check "$(command -v node) --version" \
  --check "$dateapp" \
  "${wider[@]}" \
  --report "$reports"
