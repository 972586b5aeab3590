import LaunchprofSystem
import LaunchprofReport
import LaunchprofTracing

#if canImport(Glibc)
    import Glibc
#endif

/// `inspect`'s finished output, kept between invocations in `$XDG_CACHE_HOME/launchprof/inspect/`
/// (default `~/.cache/launchprof/inspect/`), so asking again about an unchanged program costs a
/// few `stat` calls instead of the closure's symbol tables.
///
/// An entry is served only while everything that decided it is as it was:
/// - the key (`key(program:json:environment:modelFile:)`): launchprof's own executable, the
///   request, the working directory, the search variables, the host and the calibration file;
/// - every path the inspection tried (`InspectOutcome.consultedPaths`), found or not: a file
///   must have the same device, inode, size, mtime and ctime; a path that was absent must still
///   be absent (a library dropped into an earlier search directory changes the closure).
///
/// File timestamps come from a clock that advances in ticks, so a file changed twice within a
/// tick could keep its ctime. An entry is therefore not stored when any consulted file changed
/// less than `settleNs` before the inspection began: a later change then always moves its ctime.
public struct InspectResultCache: Sendable {
    public let directory: String

    /// More than a timestamp tick (1–10 ms) on any kernel configuration.
    static let settleNs: Int64 = 50_000_000
    /// Entries kept; the least recently written go first.
    static let capacity = 64
    static let magic = "launchprof inspect result 1"

    public init(directory: String) {
        self.directory = directory
    }

    /// The user's cache, beside the calibrations; nil when neither XDG_CACHE_HOME nor HOME is set.
    public static func user(environment: [String: String]) -> InspectResultCache? {
        CalibrationStore.user(environment: environment).map { InspectResultCache(directory: $0.directory + "/inspect") }
    }

    /// Now on the clock file timestamps are taken from (CLOCK_REALTIME), in ns.
    public static func realTimeNs() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// Everything besides the consulted files that decides the output: launchprof's own build,
    /// the request, where relative paths start, the search variables, the host (its CPU decides
    /// glibc-hwcaps directories) and the calibration file the cost model comes from (`modelFile`:
    /// its state, absent included; the built-in model is part of the build). nil when launchprof
    /// cannot identify its own executable or that file: then nothing is cached.
    public static func key(program: String, json: Bool, environment: [String: String], modelFile: String?)
        -> String?
    {
        guard let executable = FileState.current("/proc/self/exe"), executable.exists,
            let model = modelFile.map({ FileState.current($0) }) ?? FileState(exists: false),
            let directory = getcwd(nil, 0)
        else { return nil }
        defer { free(directory) }
        var key = "launchprof \(executable.text)\nprogram \(program)\njson \(json)\n"
        key += "cwd \(String(cString: directory))\nhost \(HostInfo.cpuModel()) \(HostInfo.kernelRelease())\n"
        for name in ["PATH", "LD_LIBRARY_PATH", "LD_PRELOAD"] {
            key += "\(name) \(environment[name].map { "=" + $0 } ?? "unset")\n"
        }
        return key + "model \(modelFile ?? "none") \(model.text)\n"
    }

    /// What an inspection printed and how it exited.
    public struct Result: Equatable, Sendable {
        public var exitStatus: Int32
        public var standardOutput: [UInt8]
        public var standardError: [UInt8]

        public init(exitStatus: Int32, standardOutput: [UInt8], standardError: [UInt8]) {
            self.exitStatus = exitStatus
            self.standardOutput = standardOutput
            self.standardError = standardError
        }
    }

    /// The stored result for `key`, if every path it depends on is unchanged.
    public func lookup(key: String) -> Result? {
        guard let bytes = SmallFile.bytes(path(for: key), limit: 64 << 20), let entry = Entry(parsing: bytes),
            entry.key == Array(key.utf8)
        else { return nil }
        for (path, recorded) in entry.paths where FileState.current(path) != recorded { return nil }
        return entry.result
    }

    /// Keeps `result` for `key` (best effort: a cache that cannot be written is no error).
    /// `startedAtNs` is CLOCK_REALTIME when the inspection began, before any file was read.
    public func store(_ result: Result, key: String, consulted: [String], startedAtNs: Int64) {
        var paths: [(String, FileState)] = []
        var seen = Set<String>()
        for path in consulted where seen.insert(path).inserted {
            // A newline would end the entry's line; such paths are not worth a format.
            guard !path.contains("\n"), let state = FileState.current(path) else { return }
            if state.changedNs > startedAtNs - Self.settleNs { return }
            paths.append((path, state))
        }
        guard createDirectory() else { return }
        let entry = Entry(key: Array(key.utf8), result: result, paths: paths)
        do throws(LaunchReportError) {
            let file = try AtomicReportFile(path: path(for: key), mode: 0o600)
            try file.write(entry.bytes())
            try file.commit()
        } catch {
            return
        }
        prune()
    }

    /// The entry's file: the key's FNV-1a hash (the entry holds the whole key, so a collision
    /// only misses).
    func path(for key: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return directory + "/" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    private func createDirectory() -> Bool {
        var made = ""
        for component in directory.split(separator: "/") {
            made += "/" + component
            if mkdir(made, 0o755) != 0, errno != EEXIST { return false }
        }
        return true
    }

    /// Drops the oldest entries beyond `capacity`.
    private func prune() {
        var entries: [(path: String, writtenNs: Int64)] = []
        for name in DirectoryListing.names(directory) ?? [] {
            guard name.utf8.count == 16, name.utf8.allSatisfy({ $0 < 0x80 && isxdigit(Int32($0)) != 0 }) else { continue }
            let path = directory + "/" + name
            if let state = FileState.current(path), state.exists { entries.append((path, state.modifiedNs)) }
        }
        guard entries.count > Self.capacity else { return }
        for stale in entries.sorted(by: { $0.writtenNs < $1.writtenNs }).prefix(entries.count - Self.capacity) {
            unlink(stale.path)
        }
    }
}

/// One cache file: a text header, then the key and the output bytes.
///
///     launchprof inspect result 1
///     status 0
///     sizes KEY STDOUT STDERR
///     path STATE\tPATH            (one per consulted path; STATE is `FileState.text`)
///     end
///     <key><stdout><stderr>
private struct Entry {
    var key: [UInt8]
    var result: InspectResultCache.Result
    var paths: [(String, FileState)]

    init(key: [UInt8], result: InspectResultCache.Result, paths: [(String, FileState)]) {
        self.key = key
        self.result = result
        self.paths = paths
    }

    func bytes() -> [UInt8] {
        var header = InspectResultCache.magic + "\nstatus \(result.exitStatus)\n"
        header += "sizes \(key.count) \(result.standardOutput.count) \(result.standardError.count)\n"
        for (path, state) in paths { header += "path \(state.text)\t\(path)\n" }
        header += "end\n"
        return Array(header.utf8) + key + result.standardOutput + result.standardError
    }

    /// nil for anything but a whole entry of this format (an old, cut or foreign file misses).
    init?(parsing bytes: [UInt8]) {
        var lines: [Substring] = []
        var start = 0
        var payload: Int?
        for index in bytes.indices where bytes[index] == UInt8(ascii: "\n") {
            let line = String(decoding: bytes[start..<index], as: UTF8.self)[...]
            start = index + 1
            if line == "end" {
                payload = start
                break
            }
            lines.append(line)
        }
        guard let payload, lines.count >= 3, lines[0] == InspectResultCache.magic,
            lines[1].hasPrefix("status "), let status = Int32(lines[1].dropFirst(7)), lines[2].hasPrefix("sizes ")
        else { return nil }
        let sizes = lines[2].dropFirst(6).split(separator: " ").compactMap { Int($0) }
        guard sizes.count == 3, sizes.allSatisfy({ $0 >= 0 }), payload + sizes.reduce(0, +) == bytes.count else {
            return nil
        }
        var paths: [(String, FileState)] = []
        for line in lines.dropFirst(3) {
            guard line.hasPrefix("path "), let tab = line.firstIndex(of: "\t"),
                let state = FileState(text: line[line.index(line.startIndex, offsetBy: 5)..<tab])
            else { return nil }
            paths.append((String(line[line.index(after: tab)...]), state))
        }
        let outputStart = payload + sizes[0]
        let errorStart = outputStart + sizes[1]
        self.init(
            key: Array(bytes[payload..<outputStart]),
            result: .init(
                exitStatus: status, standardOutput: Array(bytes[outputStart..<errorStart]),
                standardError: Array(bytes[errorStart...])),
            paths: paths)
    }
}
