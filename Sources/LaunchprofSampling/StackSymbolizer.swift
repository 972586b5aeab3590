/// Names the frames of a stack as `object+offset` (the offset into the object's file, what
/// `addr2line -e object` takes), innermost first.
public enum StackSymbolizer {
    /// A file-backed mapping of the process the stack came from.
    public struct Mapping: Sendable, Equatable {
        public var start: UInt64
        public var end: UInt64
        /// The file offset mapped at `start`.
        public var offset: UInt64
        public var path: String

        public init(start: UInt64, end: UInt64, offset: UInt64, path: String) {
            self.start = start
            self.end = end
            self.offset = offset
            self.path = path
        }
    }

    public static func describe(_ stack: [UInt64], mappings: [Mapping], limit: Int = 16) -> String {
        stack.prefix(limit).map { address in
            guard let mapping = mappings.first(where: { $0.start <= address && address < $0.end }) else {
                return "0x" + String(address, radix: 16)
            }
            let name = mapping.path.split(separator: "/").last.map(String.init) ?? mapping.path
            return "\(name)+0x" + String(address - mapping.start + mapping.offset, radix: 16)
        }.joined(separator: " ← ")
    }
}
