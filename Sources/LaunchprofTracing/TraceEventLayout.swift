/// Where a tracefs event's fields lie in its raw sample (`PERF_SAMPLE_RAW`), read from the
/// event's `format` file, and the runtime probes' fetched values decoded from a raw sample.
///
/// The raw bytes come from the kernel through the uprobe holder: every offset, size and
/// `__data_loc` is checked against the sample's length; a value that does not fit is nil.
public struct TraceEventLayout: Sendable, Equatable {
    public struct Field: Sendable, Equatable {
        public var name: String
        public var offset: Int
        public var size: Int
        /// A `__data_loc` field: a u32 whose low half is the data's offset in the record and
        /// high half its length (a string's, with its NUL).
        public var isDataLocation: Bool
    }

    public var fields: [Field]

    /// Parses `format`'s `field:` lines; nil when it has none.
    public init?(format: String) {
        var fields: [Field] = []
        for line in format.split(separator: "\n") {
            let parts = line.split(separator: ";").map { $0.trimmingPrefix(while: { $0 == " " || $0 == "\t" }) }
            guard let declaration = parts.first, declaration.hasPrefix("field:"), parts.count >= 3,
                parts[1].hasPrefix("offset:"), parts[2].hasPrefix("size:"),
                let offset = Int(parts[1].dropFirst(7)), let size = Int(parts[2].dropFirst(5)),
                let name = declaration.split(separator: " ").last
            else { continue }
            fields.append(Field(
                name: String(name.split(separator: "[").first ?? name), offset: offset, size: size,
                isDataLocation: declaration.contains("__data_loc")))
        }
        guard !fields.isEmpty else { return nil }
        self.fields = fields
    }

    /// The layout the holder reported for a runtime probe: its fetched values `a0`, `a1` … at
    /// the places given, in fetch order.
    public init(payloadFields: [UprobeHolderProtocol.PayloadField]) {
        fields = payloadFields.enumerated().map { index, field in
            Field(name: "a\(index)", offset: Int(field.offset), size: Int(field.size), isDataLocation: field.isDataLocation)
        }
    }

    /// The fetched arguments of a runtime probe's event, named `a0`, `a1` … in `fetch` order.
    public func values(_ raw: [UInt8], fetch: [FetchedArgument]) -> [RuntimeProbeHit.Value?] {
        fetch.indices.map { index in
            guard let field = fields.first(where: { $0.name == "a\(index)" }) else { return nil }
            return value(raw, field, fetch[index].kind)
        }
    }

    private func value(_ raw: [UInt8], _ field: Field, _ kind: FetchedArgument.Kind) -> RuntimeProbeHit.Value? {
        func unsigned(_ offset: Int, _ size: Int) -> UInt64? {
            guard offset >= 0, size > 0, size <= 8, offset + size <= raw.count else { return nil }
            return (0..<size).reduce(UInt64(0)) { $0 | UInt64(raw[offset + $1]) << (8 * UInt64($1)) }
        }
        switch kind {
        case .u64, .s32:
            return unsigned(field.offset, field.size).map { .integer($0) }
        case .string:
            guard field.isDataLocation, let location = unsigned(field.offset, 4) else { return nil }
            let start = Int(location & 0xffff)
            let length = Int(location >> 16)
            guard length > 0, start + length <= raw.count else { return nil }
            let bytes = raw[start..<(start + length)].prefix { $0 != 0 }
            return .string(String(decoding: bytes, as: UTF8.self))
        }
    }
}
