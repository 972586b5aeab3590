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

    /// A field whose value is rare and nested (sampled stacks, flags): encoded by `JSONEncoder`
    /// with the same formatting, so the whole stays byte-identical to it. A value that cannot be
    /// encoded (it holds nothing that can fail today) is written as `null`.
    mutating func encoded(_ name: String, _ value: some Encodable) {
        key(name)
        bytes.append(contentsOf: (try? LaunchReportWriter.encodeValue(value)) ?? Array("null".utf8))
        needsComma = true
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// JSON string escaping as Foundation's encoder does it (slashes left alone).
    mutating func string(_ value: String) {
        Self.appendString(value, to: &bytes)
    }

    /// Whether a byte of a string must be escaped in JSON (quote, backslash, control).
    static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// Appends `value` as a JSON string: the one escaping both of launchprof's JSON writers use
    /// (this compact one and the inspect report's indented `InspectJSONText`).
    static func appendString(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings (paths, names) need no escape: copied whole, not byte by byte.
        let copied: Bool? = value.utf8.withContiguousStorageIfAvailable { utf8 in
            guard !utf8.contains(where: needsEscape) else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if copied == true {
            bytes.append(UInt8(ascii: "\""))
            return
        }
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
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
