import Foundation
import Testing

/// Builds the C fixture programs and libraries under `Tests/LaunchprofTests/Fixtures/` with the
/// system C compiler, into a per-user cache keyed by the sources and flags, so repeated test runs
/// reuse them. Fixtures are never checked in as binaries.
///
/// Every artifact is built into its own directory layout chosen by the caller (`subdirectory`),
/// which matters for fixtures that exercise `$ORIGIN` and RUNPATH resolution.
enum FixtureBuilder {
    struct BuildError: Error, CustomStringConvertible {
        var description: String
    }

    /// The directory holding the fixture sources (copied as a test resource).
    static var sourceDirectory: URL {
        Bundle.module.resourceURL!.appendingPathComponent("Fixtures")
    }

    /// Root of the build cache: one directory per user and checkout, shared by all tests in it
    /// (two checkouts' tests rebuilding one file from different sources would run each other's
    /// half-written binaries).
    static let outputRoot: URL = {
        let root = FileManager.default.temporaryDirectory
            .appendingPathComponent("launchprof-fixtures-\(getuid())-\(stableHash(packageRoot.path).prefix(8))")
        try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return root
    }()

    private static let lock = NSLock()

    /// Compiles `sources` (names relative to the fixture directory) into `output`, a path relative
    /// to the build root, passing `flags` to the compiler driver. Returns the absolute path.
    /// Rebuilds only when the sources or flags changed since the last build.
    @discardableResult
    static func build(
        _ sources: [String], output: String, flags: [String] = [],
        sourcesText extraSource: String? = nil
    ) throws -> String {
        lock.lock()
        defer { lock.unlock() }
        let outputURL = outputRoot.appendingPathComponent(output)
        try FileManager.default.createDirectory(
            at: outputURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        var inputs = try sources.map { name -> String in
            let url = sourceDirectory.appendingPathComponent(name)
            return try String(contentsOf: url, encoding: .utf8)
        }
        var arguments = sources.map { sourceDirectory.appendingPathComponent($0).path }
        if let extraSource {
            let generated = outputURL.path + ".generated.c"
            try extraSource.write(toFile: generated, atomically: true, encoding: .utf8)
            arguments.append(generated)
            inputs.append(extraSource)
        }
        // Headers the sources may include (the fixtures' own and the hooks header) are part of
        // the key too, so editing one rebuilds what depends on it.
        let key = stableHash((inputs + headerContents() + flags + [output]).joined(separator: "\u{0}"))
        let stamp = outputURL.path + ".stamp"
        if FileManager.default.fileExists(atPath: outputURL.path),
            (try? String(contentsOfFile: stamp, encoding: .utf8)) == key
        {
            return outputURL.path
        }
        let include = sourceDirectory.path
        let hooks = packageRoot.appendingPathComponent("Sources/LaunchprofHooks/include").path
        try run(
            "/usr/bin/cc",
            ["-O1", "-g0", "-I", include, "-I", hooks, "-o", outputURL.path] + arguments + flags)
        try key.write(toFile: stamp, atomically: true, encoding: .utf8)
        return outputURL.path
    }

    /// The text of every header in the fixture directory and of `launchprof.h`, in name order.
    private static func headerContents() -> [String] {
        let fixtureHeaders =
            ((try? FileManager.default.contentsOfDirectory(atPath: sourceDirectory.path)) ?? [])
            .filter { $0.hasSuffix(".h") }.sorted()
            .map { sourceDirectory.appendingPathComponent($0) }
        let hooksHeader = packageRoot.appendingPathComponent("Sources/LaunchprofHooks/include/launchprof.h")
        return (fixtureHeaders + [hooksHeader]).map {
            (try? String(contentsOf: $0, encoding: .utf8)) ?? ""
        }
    }

    /// FNV-1a: `hashValue` is seeded per process, so it cannot key a cache across test runs.
    private static func stableHash(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    /// The package's root directory (for headers shipped in `Sources/`).
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Runs a build tool and throws with its output when it fails.
    static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BuildError(
                description: "\(tool) \(arguments.joined(separator: " ")) failed:\n"
                    + String(decoding: output, as: UTF8.self))
        }
    }
}
