#!/bin/sh
# Builds the libFuzzer target for launchprof's byte parsers and runs it.
#   Fuzz/run.sh [seconds]   (default 60; corpus in Fuzz/corpus, crashes in Fuzz/artifacts)
# The target compiles the parser sources of Sources/LaunchprofELF and the uprobe holder's
# protocol directly (they use only the Swift standard library), with -sanitize=fuzzer,address.
set -eu
seconds="${1:-60}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="$root/.build-fuzz"
mkdir -p "$build" "$here/corpus" "$here/artifacts"
elf="$root/Sources/LaunchprofELF"
# ELFError imports LaunchprofReport for two names: a shim module of that name provides them.
swiftc -parse-as-library -O -module-name LaunchprofReport -emit-module \
    -emit-module-path "$build/LaunchprofReport.swiftmodule" -c -o "$build/LaunchprofReport.o" "$here/ReportShim.swift"
swiftc -sanitize=fuzzer,address -parse-as-library -O -g -module-name LaunchprofFuzz \
    -I "$build" "$build/LaunchprofReport.o" \
    -o "$build/fuzz-parsers" \
    "$here/FuzzParsers.swift" \
    "$elf/ByteView.swift" "$elf/ELFError.swift" "$elf/SegmentMap.swift" "$elf/NoteParser.swift" \
    "$elf/DynamicInfo.swift" "$elf/DynamicSectionParser.swift" "$elf/RelocationCounts.swift" \
    "$elf/SymbolTable.swift" "$elf/LoaderCache.swift" \
    "$elf/CallFrameTable.swift" "$elf/CallFrameCursor.swift" "$elf/CallFrameInterpreter.swift" \
    "$elf/CallFrameRule.swift" "$elf/CommonInformationEntry.swift" \
    "$root/Sources/LaunchprofTracing/UprobeHolderProtocol.swift"
# Seeds: the real loader cache and pieces of real ELF files, one per parser.
if [ -z "$(ls -A "$here/corpus")" ]; then
    seed() { { printf "\\$(printf '%03o' "$1")"; cat; } > "$here/corpus/seed-$2"; }
    seed 0 cache < /etc/ld.so.cache
    for lib in /lib/x86_64-linux-gnu/libc.so.6 /bin/true; do
        name=$(basename "$lib")
        objcopy -O binary --only-section=.note.gnu.build-id "$lib" /dev/stdout 2>/dev/null | seed 1 "notes-$name" || true
        objcopy -O binary --only-section=.note.gnu.property "$lib" /dev/stdout 2>/dev/null | seed 2 "property-$name" || true
        objcopy -O binary --only-section=.dynamic "$lib" /dev/stdout 2>/dev/null | seed 3 "dynamic-$name" || true
        objcopy -O binary --only-section=.rela.dyn "$lib" /dev/stdout 2>/dev/null | seed 4 "rela-$name" || true
        objcopy -O binary --only-section=.relr.dyn "$lib" /dev/stdout 2>/dev/null | seed 6 "relr-$name" || true
        objcopy -O binary --only-section=.gnu.hash "$lib" /dev/stdout 2>/dev/null | seed 7 "hash-$name" || true
        # .eh_frame_hdr and the .eh_frame after it, as one piece (the header's pointers are relative).
        objcopy -O binary --only-section=.eh_frame_hdr --only-section=.eh_frame "$lib" /dev/stdout 2>/dev/null \
            | head -c 60000 | seed 8 "frames-$name" || true
    done
fi
# Seeds for the holder's messages of protocol 8 (selector 9): a greeting, a hold, a runtime
# hold (an SDT probe with its semaphore and a fetched string), a drain, its replies.
holder_seed() { [ -e "$here/corpus/seed-holder-$1" ] || printf "$2" > "$here/corpus/seed-holder-$1"; }
holder_seed hello-8 '\011\005\000\000\000\001\010\000\000\000'
holder_seed hold '\011\031\000\000\000\002\340\177\002\000\000\000\000\000\001\001/lib/libc.so.6'
holder_seed hold-runtime-8 '\0113\000\000\000\007\020}"\000\000\000\000\000\000\000\001.JU\000\000\000\000\000\001\005\002\002\010\000\000\000\000\000\000\000/usr/bin/python3.11'
holder_seed drain '\011\021\000\000\000\004\001\000\000\000*\000\000\000\001\000\000\000\000\000\000\000'
holder_seed held-runtime-8 '\011\017\000\000\000\206*\011\000\000\000\000\000\000\001\020\000\004\000\001'
holder_seed hits-8 '\011?\000\000\000\204*\000\000\000\003\000\000\000\000\000\000\000\001\000\000\000\001\000\000\000\007\000\000\000\000\000\000\000\011\000\000\000\000\000\000\000\010\000\000\000\000\000\000\000+\000\000\000\012\000\000\000\000\000\000\000\004\000\020\000\004\000'
# Protocol 10: a drain reply with loss windows.
holder_seed hello-10 '\011\005\000\000\000\001\012\000\000\000'
holder_seed hits-10 '\011\131\000\000\000\204\052\000\000\000\003\000\000\000\000\000\000\000\001\000\000\000\000\000\000\000\002\000\000\000\007\000\000\000\000\000\000\000\011\000\000\000\000\000\000\000\005\000\000\000\000\000\000\000\010\000\000\000\000\000\000\000\002\000\000\000\000\000\000\000\012\000\000\000\000\000\000\000\014\000\000\000\000\000\000\000\001\000\000\000\000\000\000\000'
# The Swift runtime's backtracer reads memory ASan does not expect: let libFuzzer report a trap.
SWIFT_BACKTRACE=enable=no exec "$build/fuzz-parsers" -max_total_time="$seconds" -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$here/artifacts/" "$here/corpus"
