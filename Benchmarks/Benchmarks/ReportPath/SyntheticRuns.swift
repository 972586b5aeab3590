import LaunchprofReport

/// Tracer output for many runs of a gdb-like launch (a dozen libraries), with deterministic
/// jitter: the report path's input, made before any timing.
enum SyntheticRuns {
    static let libraries = (0..<12).map { "/usr/lib/x86_64-linux-gnu/libsynthetic\($0).so.1" }

    static func events(count: Int) -> [[LaunchEvent]] {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func jitter(_ scale: UInt64) -> UInt64 {
            // xorshift64: the same runs every time, so malloc counts are comparable.
            seed ^= seed << 13
            seed ^= seed >> 7
            seed ^= seed << 17
            return seed % scale
        }
        return (0..<count).map { index in
            var t = 1_000_000_000 + UInt64(index) * 50_000_000
            var events: [LaunchEvent] = [.spawned(atNs: t)]
            t += 300_000 + jitter(50_000)
            events.append(.imageStarted(image: 0, path: "/usr/bin/gdb", atNs: t))
            t += 400_000 + jitter(80_000)
            events.append(.relocationStarted(atNs: t))
            t += 2_000_000 + jitter(300_000)
            events.append(.relocationFinished(atNs: t))
            for library in libraries {
                t += 5_000 + jitter(20_000)
                events.append(.objectInitStarted(path: library, atNs: t))
            }
            t += 100_000 + jitter(10_000)
            events.append(.entryReached(atNs: t))
            t += 200_000 + jitter(20_000)
            events.append(.mainReached(atNs: t))
            t += 5_000_000 + jitter(1_000_000)
            events.append(.exited(.exited(code: 0), atNs: t))
            return events
        }
    }
}
