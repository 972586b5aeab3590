import LaunchprofSystem
import LaunchprofTracing

#if canImport(Glibc)
import Glibc
#endif

/// The monitor's dynamic events in tracefs (group `launchprof_monitor`): uprobes on watched
/// programs' launch boundaries and hook probes. A definition is only a name: a
/// probe is installed while a perf event is open on it, so a monitor that was killed leaves
/// definitions but no probe (its descriptors closed with it). The next monitor deletes what is
/// left (`removeStale`), and a clean stop deletes its own.
public final class TracefsEvents: @unchecked Sendable {
    public static let group = "launchprof_monitor"

    public let root: String
    private var defined: [(file: String, name: String)] = []

    /// A tracefs field: its byte offset and size in the event's raw record; `dataLocation`: a
    /// `__data_loc` string (offset in the low, length in the high 16 bits of a u32).
    public struct Field: Sendable, Equatable {
        public var offset: Int
        public var size: Int
        public var dataLocation: Bool
    }

    public init() throws(MonitorError) {
        guard let root = UprobeHolder.tracefsRoot() else {
            throw .noTracefs
        }
        self.root = root
    }

    /// A kernel tracepoint's id and fields (`sched/sched_process_exec`).
    public func tracepoint(_ name: String) throws(MonitorError) -> (id: UInt64, fields: [String: Field]) {
        guard let id = readID("events/\(name)") else { throw .kernelEvent(what: name, errno: ENOENT) }
        return (id, fields("events/\(name)"))
    }

    /// Defines a uprobe on `path` at file `offset` with fetched `arguments` (tracefs syntax,
    /// `name=+0(%di):string`); named after the file's identity and the offset, so a file rebuilt
    /// in place (a new inode) gets a new event.
    public func uprobe(path: String, offset: UInt64, arguments: [String]) throws(MonitorError) -> (id: UInt64, fields: [String: Field]) {
        guard !path.contains(where: { $0 == " " || $0 == "\t" || $0 == "\n" }) else {
            throw .cannotWatch(path: path, reason: "tracefs cannot name a path with white space in it")
        }
        var status = stat()
        guard stat(path, &status) == 0 else { throw .cannotWatch(path: path, reason: MonitorError.text(errno)) }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        for byte in path.utf8 { mix(byte) }
        for value in [UInt64(status.st_ino), UInt64(status.st_dev)] {
            for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        for byte in arguments.joined(separator: " ").utf8 { mix(byte) }
        let name = "m_\(String(hash, radix: 16))_\(String(offset, radix: 16))"
        return try define(file: "uprobe_events", name: name, target: "\(path):0x\(String(offset, radix: 16))", arguments: arguments)
    }

    private func define(file: String, name: String, target: String, arguments: [String]) throws(MonitorError) -> (id: UInt64, fields: [String: Field]) {
        let directory = "events/\(Self.group)/\(name)"
        if readID(directory) == nil {
            let line = (["p:\(Self.group)/\(name)", target] + arguments).joined(separator: " ") + "\n"
            let error = write(line, to: file)
            if error != 0, error != EEXIST { throw .kernelEvent(what: "\(file): \(line.dropLast())", errno: error) }
            defined.append((file, name))
        }
        guard let id = readID(directory) else { throw .kernelEvent(what: "\(Self.group)/\(name)", errno: ENOENT) }
        return (id, fields(directory))
    }

    /// Deletes the definitions this object made (those still in use by another monitor stay:
    /// the kernel answers EBUSY).
    public func removeDefined() {
        for (file, name) in defined.reversed() { _ = write("-:\(Self.group)/\(name)\n", to: file) }
        defined = []
    }

    /// Deletes every definition of the group a killed monitor left (none in use: EBUSY keeps
    /// those another running monitor holds open).
    public func removeStale() {
        for file in ["uprobe_events"] {
            guard let text = SmallFile.read("\(root)/\(file)") else { continue }
            for line in text.split(separator: "\n") {
                // "p:launchprof_monitor/NAME TARGET …"
                guard let head = line.split(separator: " ").first, let slash = head.firstIndex(of: "/"),
                    head[head.index(after: head.startIndex)...].hasPrefix(":\(Self.group)/")
                else { continue }
                _ = write("-:\(Self.group)/\(head[head.index(after: slash)...])\n", to: file)
            }
        }
    }

    /// Names of the group's definitions now in tracefs (for tests and the stop check).
    public func definitions() -> [String] {
        (SmallFile.read("\(root)/uprobe_events") ?? "").split(separator: "\n").map(String.init)
            .filter { $0.contains(":\(Self.group)/") }
    }

    private func readID(_ directory: String) -> UInt64? {
        SmallFile.read("\(root)/\(directory)/id").flatMap { UInt64($0.filter(\.isNumber)) }
    }

    private func fields(_ directory: String) -> [String: Field] {
        Self.parseFormat(SmallFile.read("\(root)/\(directory)/format") ?? "")
    }

    /// The fields of a tracefs `format` file: `field:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;`.
    public static func parseFormat(_ text: String) -> [String: Field] {
        var result: [String: Field] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ";").map { $0.trimmingPrefix(while: { $0 == " " || $0 == "\t" }) }
            guard parts.count >= 3, parts[0].hasPrefix("field:"), parts[1].hasPrefix("offset:"), parts[2].hasPrefix("size:"),
                let offset = Int(parts[1].dropFirst(7)), let size = Int(parts[2].dropFirst(5))
            else { continue }
            let declaration = parts[0].dropFirst(6)
            guard var name = declaration.split(separator: " ").last else { continue }
            if let bracket = name.firstIndex(of: "[") { name = name[..<bracket] }
            result[String(name)] = Field(offset: offset, size: size, dataLocation: declaration.hasPrefix("__data_loc"))
        }
        return result
    }

    /// Appends `text` to a tracefs control file; 0 or the errno of the write.
    private func write(_ text: String, to file: String) -> Int32 {
        let fd = open("\(root)/\(file)", O_WRONLY | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        let written = text.withCString { Glibc.write(fd, $0, strlen($0)) }
        return written < 0 ? errno : 0
    }
}

extension Substring {
    fileprivate func trimmingPrefix(while predicate: (Character) -> Bool) -> Substring {
        self.drop(while: predicate)
    }
}
