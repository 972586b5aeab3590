import LaunchprofReport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// Where host calibrations live: `$XDG_CACHE_HOME/launchprof/` (default `~/.cache/launchprof/`),
/// one file per host, named after its CPU model and kernel release, since unit costs change
/// with either.
public struct CalibrationStore: Sendable {
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    /// The user's store, from `XDG_CACHE_HOME` or `HOME`; nil when neither is set.
    public static func user(environment: [String: String]) -> CalibrationStore? {
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") {
            return CalibrationStore(directory: cache + "/launchprof")
        }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return CalibrationStore(directory: home + "/.cache/launchprof")
    }

    /// The calibration file for `host`.
    public func path(for host: LaunchReport.Host) -> String {
        path(cpu: host.cpu, kernel: host.kernel)
    }

    /// The calibration file for a host of this CPU model and kernel release (all a file's name
    /// depends on: `inspect` needs nothing else of `HostInfo.current()`).
    public func path(cpu: String, kernel: String) -> String {
        directory + "/calibration-" + Self.key(cpu: cpu, kernel: kernel) + ".json"
    }

    /// "AMD EPYC 7B13 … / 6.18.0-1-amd64" as a file-name-safe key: ASCII letters, digits, "."
    /// and "_" kept, any run of other characters one "-".
    static func key(cpu: String, kernel: String) -> String {
        var key = ""
        for character in (cpu + "-" + kernel).unicodeScalars {
            let safe = ("a"..."z").contains(character) || ("A"..."Z").contains(character)
                || ("0"..."9").contains(character) || character == "." || character == "_"
            if safe {
                key.unicodeScalars.append(character)
            } else if !key.hasSuffix("-") {
                key += "-"
            }
        }
        return key
    }

    /// The calibration stored for `host`; nil when there is none. A file that cannot be read
    /// or decoded throws (the caller says so and falls back to the defaults).
    public func load(host: LaunchReport.Host) throws(CalibrationError) -> HostCalibration? {
        try load(file: path(for: host))
    }

    /// The calibration stored in `file` (a path from `path(for:)`); nil when there is none.
    public func load(file: String) throws(CalibrationError) -> HostCalibration? {
        try decoded(file) { bytes in
            // The version first: another version may name its fields otherwise.
            struct Version: Decodable { var schemaVersion: Int? }
            try Self.expectCurrentVersion(try JSONDecoder().decode(Version.self, from: Data(bytes)).schemaVersion ?? 0, of: file)
            return try JSONDecoder().decode(HostCalibration.self, from: Data(bytes))
        }
    }

    /// Only the fitted model stored for `host`: what `inspect` prices a closure with.
    public func loadModel(host: LaunchReport.Host) throws(CalibrationError) -> LaunchCostModel? {
        try loadModel(file: path(for: host))
    }

    /// The fitted model stored in `file`; nil when there is none.
    public func loadModel(file: String) throws(CalibrationError) -> LaunchCostModel? {
        try load(file: file)?.model
    }

    /// `decode` applied to `file`'s bytes; nil when there is no file. What `decode` throws
    /// becomes `.unreadable` naming the file.
    private func decoded<Value>(_ file: String, _ decode: ([UInt8]) throws -> Value) throws(CalibrationError) -> Value? {
        guard let bytes = try contents(file) else { return nil }
        do {
            return try decode(bytes)
        } catch let error as CalibrationError {
            throw error
        } catch {
            throw .unreadable(path: file, reason: "\(error)")
        }
    }

    /// A calibration of another schema version is refused, not misread.
    private static func expectCurrentVersion(_ version: Int, of file: String) throws(CalibrationError) {
        guard version == HostCalibration.currentSchemaVersion else {
            throw .unreadable(path: file, reason: "schema version \(version), expected \(HostCalibration.currentSchemaVersion)")
        }
    }

    /// The file's bytes; nil when it does not exist.
    private func contents(_ file: String) throws(CalibrationError) -> [UInt8]? {
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw .unreadable(path: file, reason: String(cString: strerror(errno)))
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count < 16 << 20 {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return bytes
    }

    /// Writes `calibration` atomically (whole or absent) and returns its path.
    @discardableResult
    public func save(_ calibration: HostCalibration) throws(CalibrationError) -> String {
        var made = ""
        for component in directory.split(separator: "/") {
            made += "/" + component
            if mkdir(made, 0o755) != 0, errno != EEXIST {
                throw .cannotWrite(path: made, reason: String(cString: strerror(errno)))
            }
        }
        let file = path(for: calibration.host)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data: Data
        do {
            data = try encoder.encode(calibration)
        } catch {
            throw .cannotWrite(path: file, reason: "\(error)")
        }
        do throws(LaunchReportError) {
            let output = try AtomicReportFile(path: file)
            try output.write(Array(data) + [UInt8(ascii: "\n")])
            try output.commit()
        } catch {
            throw .cannotWrite(path: file, reason: error.description)
        }
        return file
    }
}
