import LaunchprofReport

/// How long a prewarmed process stays frozen before the user "taps": a fixed duration, or a
/// random one from a stated distribution (iOS holds a prewarmed app for an indeterminate time).
public enum PrewarmHold: Sendable, Equatable, CustomStringConvertible {
    case fixed(ns: UInt64)
    /// Uniform between the two bounds.
    case uniform(minimumNs: UInt64, maximumNs: UInt64)
    /// Exponential with this mean (a Poisson arrival of the user), capped at 10 means.
    case exponential(meanNs: UInt64)

    /// Parses `2s`, `uniform:500ms-3s`, `exponential:2s`.
    public init(argument: String) throws(PrewarmArgumentError) {
        if argument.hasPrefix("uniform:") {
            let bounds = argument.dropFirst("uniform:".count).split(separator: "-", maxSplits: 1)
            guard bounds.count == 2 else { throw .badHold(argument) }
            let low = try Self.duration(String(bounds[0]))
            let high = try Self.duration(String(bounds[1]))
            guard low <= high else { throw .badHold(argument) }
            self = .uniform(minimumNs: low, maximumNs: high)
        } else if argument.hasPrefix("exponential:") {
            self = .exponential(meanNs: try Self.duration(String(argument.dropFirst("exponential:".count))))
        } else {
            self = .fixed(ns: try Self.duration(argument))
        }
    }

    /// One hold drawn from the distribution.
    public func draw(using generator: inout some RandomNumberGenerator) -> UInt64 {
        switch self {
        case .fixed(let ns): return ns
        case .uniform(let low, let high): return UInt64.random(in: low...high, using: &generator)
        case .exponential(let mean):
            let uniform = Double.random(in: Double.ulpOfOne..<1, using: &generator)
            return UInt64(min(-Double(mean) * log(uniform), Double(mean) * 10))
        }
    }

    /// The longest hold this distribution can give (to extend the run's timeout by).
    public var maximumNs: UInt64 {
        switch self {
        case .fixed(let ns): ns
        case .uniform(_, let high): high
        case .exponential(let mean): mean &* 10
        }
    }

    public var description: String {
        switch self {
        case .fixed(let ns): Self.format(ns)
        case .uniform(let low, let high): "uniform:\(Self.format(low))-\(Self.format(high))"
        case .exponential(let mean): "exponential:\(Self.format(mean))"
        }
    }

    /// `250us`, `500ms`, `2s`, `1m`, `1.5s`; a bare number is seconds.
    public static func duration(_ text: String) throws(PrewarmArgumentError) -> UInt64 {
        let units: [(String, Double)] = [("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("ns", 1), ("s", 1e9), ("m", 60e9)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            guard let value = Double(text.dropLast(suffix.count)), value >= 0, value.isFinite else {
                throw .badDuration(text)
            }
            return try nanoseconds(value * scale, text)
        }
        guard let seconds = Double(text), seconds >= 0, seconds.isFinite else { throw .badDuration(text) }
        return try nanoseconds(seconds * 1e9, text)
    }

    /// The longest duration accepted: a million seconds (11.6 days); more is surely a typo, and
    /// far more would not fit the nanosecond counters.
    public static let maximumNs: Double = 1e15

    private static func nanoseconds(_ value: Double, _ text: String) throws(PrewarmArgumentError) -> UInt64 {
        guard value <= maximumNs else { throw .durationTooLong(text) }
        return UInt64(value)
    }

    static func format(_ ns: UInt64) -> String {
        if ns % 1_000_000_000 == 0 { return "\(ns / 1_000_000_000)s" }
        if ns % 1_000_000 == 0 { return "\(ns / 1_000_000)ms" }
        return "\(ns / 1000)us"
    }
}

/// A prewarm option that does not parse; the CLI turns it into a usage error.
public enum PrewarmArgumentError: LaunchprofError, Sendable, Equatable {
    case badDuration(String)
    case badHold(String)
    case durationTooLong(String)

    public var exitCause: ExitCause { .usage }

    public var description: String {
        switch self {
        case .badDuration(let text): "\"\(text)\" is not a duration: use 250us, 500ms, 2s or 1m."
        case .durationTooLong(let text): "\"\(text)\" is out of range: a duration is at most 1000000s (11.6 days)."
        case .badHold(let text): "\"\(text)\" is not a hold: use a duration (2s), uniform:500ms-3s or exponential:2s."
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
