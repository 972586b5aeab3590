#!/usr/bin/env bash
# Command 1: install what is missing, build in release mode, and profile the bundled demo app.
# Writes Reports/demo-run.json (launchprof run) and Reports/demo-inspect.json (launchprof inspect),
# and from the same runs Reports/demo-report.html (open it in a browser), Reports/demo-trace.json
# (open it in ui.perfetto.dev or chrome://tracing) and Reports/metrickit/{metrics,diagnostics}.json;
# then Reports/demo-prewarm.{json,html} and Reports/metrickit-prewarm/ (launchprof prewarm on the
# Swift demo: ordinary vs prewarmed launches, the saving, the optimized time to first frame).
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/setup.sh demo
swift build -c release --static-swift-stdlib --disable-local-rpath
bin=$(swift build -c release --static-swift-stdlib --disable-local-rpath --show-bin-path)
mkdir -p Reports
echo "== launchprof inspect (what the loader will do) ==" >&2
"$bin/launchprof" inspect "$bin/launchprof-demo"
"$bin/launchprof" inspect --json "$bin/launchprof-demo" > Reports/demo-inspect.json.tmp
mv Reports/demo-inspect.json.tmp Reports/demo-inspect.json
echo "== launchprof run (where the launch time goes) ==" >&2
# Sampled (--sample): the demo's deliberately heavy build_search_index (50 ms of CPU time in
# didFinishLaunching) is flagged, and the page gets a flame graph. The demo's first frame comes at
# about 70 ms: launches at or over that get a launch diagnostic (with its sampled call stacks).
"$bin/launchprof" run --runs 20 --warmup 2 --sample --json Reports/demo-run.json --trace Reports/demo-trace.json \
  --metrickit Reports/metrickit --launch-diagnostic-threshold 70 "$bin/launchprof-demo"
"$bin/launchprof" report Reports/demo-run.json --html Reports/demo-report.html
echo "== launchprof prewarm (ordinary vs prewarmed launch, the saving) ==" >&2
"$bin/launchprof" prewarm --runs 5 --hold 500ms --json Reports/demo-prewarm.json \
  --metrickit Reports/metrickit-prewarm "$bin/launchprof-demo-swift"
"$bin/launchprof" report Reports/demo-prewarm.json --html Reports/demo-prewarm.html
