#if canImport(Glibc)
import Glibc
#endif

/// Builds the C programs in `Benchmarks/Programs/` with /usr/bin/cc at benchmark start (no
/// checked-in binaries), into `Benchmarks/.build-programs/`.
public enum ProgramBuilder {
    /// The `Benchmarks/` folder of this checkout.
    public static let benchmarksDirectory: String = {
        // …/Benchmarks/Sources/BenchmarkSupport/ProgramBuilder.swift
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()

    /// The checkout's root (the launchprof package).
    public static var rootDirectory: String { benchmarksDirectory + "/.." }

    /// Compiles `Programs/<name>.c` (with symbols) and returns the executable's path.
    public static func build(_ name: String, flags: [String] = []) throws(BenchmarkError) -> String {
        let source = "\(benchmarksDirectory)/Programs/\(name).c"
        let directory = "\(benchmarksDirectory)/.build-programs"
        mkdir(directory, 0o755)
        let output = "\(directory)/\(name)"
        let arguments = ["cc", "-O2", "-g", "-o", output, source,
                         "-I", "\(rootDirectory)/Sources/LaunchprofHooks/include"] + flags
        let status = try BareSpawn(path: "/usr/bin/cc", arguments: arguments).run()
        guard status == 0 else { throw .compileFailed(source: source, status: status) }
        return output
    }

    /// The `launchprof` CLI: $LAUNCHPROF_BIN, else the release build of the checkout
    /// (`.build-bench`, then `.build`); nil when none is built.
    public static func launchprofBinary() -> String? {
        if let path = getenv("LAUNCHPROF_BIN").map({ String(cString: $0) }), access(path, X_OK) == 0 {
            return path
        }
        for scratch in [".build-bench", ".build"] {
            let path = "\(rootDirectory)/\(scratch)/release/launchprof"
            if access(path, X_OK) == 0 { return path }
        }
        return nil
    }
}
