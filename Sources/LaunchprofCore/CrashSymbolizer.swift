import LaunchprofTracing

/// Describes a crashed child's stack as `object+offset` frames, innermost first.
enum CrashSymbolizer {
    static func describe(_ stack: [UInt64], mappings: [ProcessMaps.Mapping]) -> String {
        stack.prefix(16).map { address in
            guard let mapping = mappings.first(where: { $0.start <= address && address < $0.end }) else {
                return "0x" + String(address, radix: 16)
            }
            let name = mapping.path.split(separator: "/").last.map(String.init) ?? mapping.path
            return "\(name)+0x" + String(address - mapping.start + mapping.offset, radix: 16)
        }.joined(separator: " ← ")
    }
}
