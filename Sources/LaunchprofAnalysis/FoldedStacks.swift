import LaunchprofReport

/// Folded stacks, the text flamegraph.pl, inferno and speedscope read: one line per distinct
/// stack, frames outermost first separated by `;`, then a space and a count.
public struct FoldedStacks: Sendable, Equatable {
    public private(set) var counts: [String: Int] = [:]

    public init() {}

    public mutating func add(_ stacks: [String: Int]) {
        for (stack, count) in stacks { counts[stack, default: 0] += count }
    }

    /// Lines sorted by stack, so the file is deterministic.
    public var text: String {
        counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)\n" }.joined()
    }

    /// A frame name made safe for the format: no `;` (the separator) and no line breaks.
    static func clean(_ name: String) -> String {
        String(name.map { $0 == ";" ? ":" : ($0 == "\n" || $0 == "\r") ? " " : $0 })
    }
}
