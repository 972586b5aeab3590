import ArgumentParser
import LaunchprofCore
import LaunchprofReport

/// Strict readers for option values: a number is all digits (and a point where a fraction makes
/// sense), in range, finite; anything else is a usage error (exit 64) that names the option,
/// the value and what is accepted. Nothing a user types reaches a conversion that can trap.
enum OptionValue {
    /// The reason a value was refused (the parser prefixes "The value 'x' is invalid for '--y'").
    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    /// `--ready`: the readiness policy, its pattern compiled here, once.
    static func readiness(_ text: String) throws -> ReadinessPolicy {
        do {
            return try ReadinessPolicy(argument: text)
        } catch {
            throw Invalid(description: error.description)
        }
    }

    /// `prewarm --freeze-at`.
    static func freezePoint(_ text: String) throws -> PrewarmConfiguration.FreezePoint {
        guard let point = PrewarmConfiguration.FreezePoint(rawValue: text) else {
            throw Invalid(description: "use main or willFinishLaunching")
        }
        return point
    }

    /// `prewarm --hold`: a duration, `uniform:MIN-MAX` or `exponential:MEAN`.
    static func hold(_ text: String) throws -> PrewarmHold {
        do {
            return try PrewarmHold(argument: text)
        } catch {
            throw Invalid(description: error.description)
        }
    }

    /// A duration with its unit (`250us`, `500ms`, `2s`, `1m`), in ns.
    static func duration(_ text: String) throws -> UInt64 {
        do {
            return try PrewarmHold.duration(text)
        } catch {
            throw Invalid(description: error.description)
        }
    }

    /// The longest duration an option takes, in seconds (11.6 days): more is surely a typo, and
    /// far more would overflow the nanosecond counters.
    static let maximumSeconds: Double = 1_000_000

    /// A number of seconds, `low` (exclusive when `positive`) to `maximumSeconds`: digits with
    /// an optional fraction, no sign, no exponent, no `inf`/`nan`.
    static func seconds(_ text: String, positive: Bool) throws -> Double {
        guard let value = decimal(text) else {
            throw Invalid(description: "a number of seconds is digits with an optional fraction, e.g. 2 or 0.5")
        }
        if positive && value == 0 { throw Invalid(description: "it must be more than 0 seconds") }
        guard value <= maximumSeconds else {
            throw Invalid(description: "out of range: at most \(Int(maximumSeconds)) seconds (11.6 days)")
        }
        return value
    }

    /// A number of milliseconds, 0 (exclusive when `positive`) to `maximumSeconds` worth.
    static func milliseconds(_ text: String, positive: Bool) throws -> Double {
        guard let value = decimal(text) else {
            throw Invalid(description: "a number of milliseconds is digits with an optional fraction, e.g. 5 or 0.5")
        }
        if positive && value == 0 { throw Invalid(description: "it must be more than 0 ms") }
        guard value <= maximumSeconds * 1000 else {
            throw Invalid(description: "out of range: at most \(Int(maximumSeconds) * 1000) ms")
        }
        return value
    }

    /// A plain decimal number: digits, at most one point, at most 15 significant characters.
    static func decimal(_ text: String) -> Double? {
        guard !text.isEmpty, text.count <= 20, text != ".",
            text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            text.filter({ $0 == "." }).count <= 1
        else { return nil }
        return Double(text)
    }

    /// A whole number `range.lowerBound` to `range.upperBound`; a negative one is named as such.
    static func count(_ text: String, _ range: ClosedRange<Int>, unit: String) throws -> Int {
        if text.hasPrefix("-"), let negative = Int(text), negative < 0 {
            throw Invalid(description: "\(unit) cannot be negative; give \(range.lowerBound) to \(range.upperBound)")
        }
        guard text.allSatisfy({ $0.isASCII && $0.isNumber }), !text.isEmpty, let value = Int(text) else {
            throw Invalid(description: "\(unit) is a whole number, \(range.lowerBound) to \(range.upperBound)")
        }
        guard range.contains(value) else {
            throw Invalid(description: "out of range: \(unit) is \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// `--sample`'s rate: a whole number of samples per second, 1 to 100000 (`10k` is refused:
    /// one spelling, the one `perf record -F` takes).
    static func rate(_ text: String) throws -> Int {
        try count(text, 1...100_000, unit: "the rate (samples per second of CPU time)")
    }

    /// The command-line words `arguments` (after the subcommand name), checked for an option
    /// that takes a value followed by a negative number: the parser reads `-3` as an option and
    /// would say "Missing value for '--runs'". Words after `--` or after the program
    /// (`stopsAtPositional`) are the program's own.
    static func negativeValue(in arguments: [String], valueOptions: Set<String>, stopsAtPositional: Bool) -> (option: String, value: String)? {
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            if word == "--" { return nil }
            if valueOptions.contains(word) {
                if index + 1 < arguments.count, isNegativeNumber(arguments[index + 1]) {
                    return (word, arguments[index + 1])
                }
                index += 2
                continue
            }
            if !word.hasPrefix("-") && stopsAtPositional { return nil }
            index += 1
        }
        return nil
    }

    /// The value of `option=VALUE` among launchprof's own words of `arguments` (those before
    /// `--` and, with `stopsAtPositional`, before the program), if it is written that way.
    static func inlineValue(of option: String, in arguments: [String], valueOptions: Set<String>, stopsAtPositional: Bool) -> String? {
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            if word == "--" { return nil }
            if word.hasPrefix(option + "=") { return String(word.dropFirst(option.count + 1)) }
            if valueOptions.contains(word) {
                index += 2
                continue
            }
            if !word.hasPrefix("-") && stopsAtPositional { return nil }
            index += 1
        }
        return nil
    }

    static func isNegativeNumber(_ word: String) -> Bool {
        guard word.count > 1, word.hasPrefix("-") else { return false }
        return decimal(String(word.dropFirst())) != nil
    }
}
