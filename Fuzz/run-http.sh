#!/bin/sh
# Builds the libFuzzer target for the metrics endpoint's request parser and runs it.
#   Fuzz/run-http.sh [seconds]   (default 60; corpus in Fuzz/corpus-http, crashes in Fuzz/artifacts)
# The target compiles Sources/LaunchprofMonitor/HTTPRequest.swift directly (it uses only the
# Swift standard library), with -sanitize=fuzzer,address.
set -eu
seconds="${1:-60}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="$root/.build-fuzz"
corpus="$here/corpus-http"
mkdir -p "$build" "$corpus" "$here/artifacts"
swiftc -sanitize=fuzzer,address -parse-as-library -O -g -module-name LaunchprofFuzzHTTP \
    -o "$build/fuzz-http" \
    "$here/FuzzHTTPRequest.swift" "$root/Sources/LaunchprofMonitor/HTTPRequest.swift"
# Seeds: the requests Prometheus and curl send, and a few the endpoint refuses.
if [ -z "$(ls -A "$corpus")" ]; then
    printf 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9464\r\nUser-Agent: Prometheus/2.42.0\r\nAccept: application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\nAccept-Encoding: gzip\r\nAuthorization: Bearer 0123456789abcdef0123456789abcdef\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n' >"$corpus/prometheus"
    printf 'GET /metrics?x=1 HTTP/1.1\r\nHost: localhost\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n' >"$corpus/curl"
    printf 'HEAD /metrics HTTP/1.0\r\nauthorization: bearer abcdefabcdefabcdef\r\n\r\n' >"$corpus/head"
    printf 'POST /metrics HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\nbody' >"$corpus/body"
    printf 'GET /metrics HTTP/1.1\r\nAuthorization: Bearer a\r\n folded\r\nAuthorization: Bearer b\r\n\r\n' >"$corpus/folded"
    printf 'GET / HTTP/2.0\r\n\r\n' >"$corpus/http2"
    # Past the 8 KiB limit, which libFuzzer's growing lengths would take long to reach.
    { printf 'GET /metrics HTTP/1.1\r\nX-Pad: '; head -c 9000 /dev/zero | tr '\0' a; printf '\r\n\r\n'; } >"$corpus/large"
fi
# The Swift runtime's backtracer reads memory ASan does not expect: let libFuzzer report a trap.
SWIFT_BACKTRACE=enable=no exec "$build/fuzz-http" -max_total_time="$seconds" -max_len=12288 -print_final_stats=1 \
    -artifact_prefix="$here/artifacts/http-" "$corpus"
