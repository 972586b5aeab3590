/// A hand-written JSON encoding of one run, byte for byte what `JSONEncoder` with sorted keys
/// and unescaped slashes gives (the tests compare the two), about ten times faster: a run is
/// encoded while the next one waits, so this is on launchprof's own per-run path.
extension LaunchRun {
    func jsonBytes() -> [UInt8] {
        var json = JSONBytes()
        json.object { json in
            json.key("absent")
            json.array(absent) { json, entry in
                json.object { json in
                    if let image = entry.image { json.field("image", image) }
                    json.field("phase", entry.phase)
                    json.field("reason", entry.reason)
                }
            }
            if let closureBytes { json.field("closureBytes", closureBytes) }
            if let exitStatus {
                json.key("exitStatus")
                json.object { json in
                    if let code = exitStatus.code { json.field("code", code) }
                    if let coreDumped = exitStatus.coreDumped { json.field("coreDumped", coreDumped) }
                    if let killedBy = exitStatus.killedBy { json.field("killedBy", killedBy) }
                    if let signal = exitStatus.signal { json.field("signal", signal) }
                }
            }
            json.field("index", index)
            json.key("metrics")
            json.object { json in
                if let value = metrics.exitNs { json.field("exitNs", value) }
                if let value = metrics.extendedLaunchNs { json.field("extendedLaunchNs", value) }
                if let value = metrics.timeToFirstFrameNs { json.field("timeToFirstFrameNs", value) }
                if let value = metrics.timeToMainNs { json.field("timeToMainNs", value) }
            }
            json.key("phases")
            json.array(phases) { json, phase in
                json.object { json in
                    json.field("durationNs", phase.durationNs)
                    if let image = phase.image { json.field("image", image) }
                    json.field("name", phase.name)
                    if let object = phase.object { json.field("object", object) }
                    json.field("startNs", phase.startNs)
                    if let task = phase.task { json.field("task", task) }
                }
            }
            json.field("pid", pid)
            if let residentBeforeBytes { json.field("residentBeforeBytes", residentBeforeBytes) }
            json.field("timedOut", timedOut)
            json.key("warnings")
            json.array(warnings) { json, warning in
                json.object { json in
                    json.field("code", warning.code.rawValue)
                    json.field("message", warning.message)
                }
            }
        }
        return json.bytes
    }
}

/// A minimal JSON writer: the caller emits keys in sorted order.
struct JSONBytes {
    var bytes: [UInt8] = []
    private var needsComma = false

    init() {
        bytes.reserveCapacity(2048)
    }

    mutating func object(_ body: (inout JSONBytes) -> Void) {
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    mutating func array<Element>(_ elements: [Element], _ body: (inout JSONBytes, Element) -> Void) {
        bytes.append(UInt8(ascii: "["))
        needsComma = false
        for element in elements {
            if needsComma { bytes.append(UInt8(ascii: ",")) }
            body(&self, element)
            needsComma = true
        }
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    mutating func key(_ name: String) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        string(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    mutating func field(_ name: String, _ value: String) {
        key(name)
        string(value)
        needsComma = true
    }

    mutating func field(_ name: String, _ value: some BinaryInteger) {
        key(name)
        bytes.append(contentsOf: String(value).utf8)
        needsComma = true
    }

    mutating func field(_ name: String, _ value: Bool) {
        key(name)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
        needsComma = true
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// JSON string escaping as Foundation's encoder does it (slashes left alone).
    mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x00..<0x20:
                bytes.append(contentsOf: Array("\\u00".utf8))
                bytes.append(Self.hex[Int(byte >> 4)])
                bytes.append(Self.hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
