#!/usr/bin/env bash
# Command 1: install what is missing, build in release mode, and profile the bundled demo app.
# Writes Reports/demo-run.json (launchprof run), Reports/demo-inspect.json (launchprof inspect) and
# Reports/demo-prewarm.json (launchprof prewarm on the Swift demo: ordinary vs prewarmed launches).
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/setup.sh
swift build -c release --static-swift-stdlib
bin=$(swift build -c release --static-swift-stdlib --show-bin-path)
mkdir -p Reports
echo "== launchprof inspect (what the loader will do) ==" >&2
"$bin/launchprof" inspect "$bin/launchprof-demo"
"$bin/launchprof" inspect --json "$bin/launchprof-demo" > Reports/demo-inspect.json.tmp
mv Reports/demo-inspect.json.tmp Reports/demo-inspect.json
echo "== launchprof run (where the launch time goes) ==" >&2
"$bin/launchprof" run --runs 20 --warmup 2 --json Reports/demo-run.json "$bin/launchprof-demo"
echo "== launchprof prewarm (ordinary vs prewarmed launch, the saving) ==" >&2
"$bin/launchprof" prewarm --runs 5 --hold 500ms --json Reports/demo-prewarm.json "$bin/launchprof-demo-swift"
