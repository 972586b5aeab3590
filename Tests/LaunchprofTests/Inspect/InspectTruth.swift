import Foundation

/// Runs system tools (ldd, readelf, the loader with LD_DEBUG) to get the truth launchprof's
/// own reading of ELF files is compared with.
enum InspectTruth {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `tool` with `arguments`; the environment is the test's plus `environment`, minus
    /// LD_* variables the harness may carry (they would change what the loader does).
    static func run(_ tool: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LD_") }
        // launchprof reads a host calibration from the cache directory: never the user's.
        merged["XDG_CACHE_HOME"] = FixtureBuilder.outputRoot.appendingPathComponent("empty-cache").path
        merged.merge(environment) { $1 }
        process.environment = merged
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Drain both pipes concurrently so a chatty child cannot block on a full pipe.
        let errBox = DataBox()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errBox.data = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        let errData = errBox.data
        return Output(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Written by one reader thread, read after the group wait that orders the two.
    private final class DataBox: @unchecked Sendable {
        var data = Data()
    }

    /// What `ldd` prints: resolved objects (real paths, in order, vDSO left out) and missing names.
    static func ldd(_ program: String, environment: [String: String] = [:]) throws -> (objects: [String], missing: [String]) {
        let output = try run("/usr/bin/ldd", [program], environment: environment)
        var objects: [String] = []
        var missing: [String] = []
        for line in output.stdout.split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("linux-vdso") { continue }
            if text.hasSuffix("=> not found") {
                missing.append(String(text.dropLast("=> not found".count)).trimmingCharacters(in: .whitespaces))
                continue
            }
            var path: Substring
            if let arrow = text.range(of: " => ") {
                path = text[arrow.upperBound...]
            } else {
                path = Substring(text)
            }
            if let paren = path.range(of: " (0x") { path = path[..<paren.lowerBound] }
            guard path.hasPrefix("/") else { continue }
            objects.append(realPath(String(path)))
        }
        guard output.status == 0 || !missing.isEmpty else {
            throw Failure(description: "ldd \(program) failed: \(output.stderr)")
        }
        return (objects, missing)
    }

    /// The "number of relative relocations" LD_DEBUG=statistics reports when running `program`.
    static func relativeRelocationStatistic(_ program: String, _ arguments: [String] = []) throws -> Int {
        let output = try run(program, arguments, environment: ["LD_DEBUG": "statistics"])
        for line in output.stderr.split(separator: "\n") where line.contains("number of relative relocations:") {
            if let value = line.split(separator: ":").last.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) {
                return value
            }
        }
        throw Failure(description: "no relative relocation statistic in: \(output.stderr.prefix(500))")
    }

    /// The objects whose initializers the loader calls, in order (LD_DEBUG=libs "calling init").
    static func initCalls(_ program: String, _ arguments: [String] = [], environment: [String: String] = [:]) throws -> [String] {
        var merged = environment
        merged["LD_DEBUG"] = "libs"
        let output = try run(program, arguments, environment: merged)
        return output.stderr.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "calling init: ") else { return nil }
            return realPath(String(line[range.upperBound...]).trimmingCharacters(in: .whitespaces))
        }
    }

    /// Build-ids `readelf -n` prints for `path`.
    static func readelfBuildID(_ path: String) throws -> String? {
        let output = try run("/usr/bin/readelf", ["-n", path])
        for line in output.stdout.split(separator: "\n") where line.contains("Build ID:") {
            return line.components(separatedBy: "Build ID:").last?.trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    /// The number of DT_RELR-encoded addresses `readelf -r` reports ("N offsets"), 0 without.
    static func readelfRELROffsets(_ path: String) throws -> Int {
        let output = try run("/usr/bin/readelf", ["-r", "-W", path])
        var total = 0
        for line in output.stdout.split(separator: "\n") where line.hasSuffix(" offsets") {
            total += Int(line.trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") ?? 0
        }
        return total
    }

    /// Symbol values `nm` prints (`-D` for the dynamic table), for defined symbols.
    static func nm(_ path: String, dynamic: Bool) throws -> [String: UInt64] {
        let output = try run("/usr/bin/nm", (dynamic ? ["-D"] : []) + ["--defined-only", path])
        var values: [String: UInt64] = [:]
        for line in output.stdout.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3, let value = UInt64(fields[0], radix: 16) else { continue }
            var name = String(fields[2])
            if let at = name.firstIndex(of: "@") { name = String(name[..<at]) }
            values[name] = values[name] ?? value
        }
        return values
    }

    static func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
