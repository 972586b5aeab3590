import ArgumentParser
import LaunchprofCore
import LaunchprofReport
import Synchronization

/// The options a command declares, read from the argument parser's own help for it (public API),
/// so that messages and checks cannot drift from what the parser accepts.
enum CommandOptions {
    /// Every spelling of every option and flag of `command` (`-r`, `--runs`, …), `--help` aside.
    static func names(of command: ParsableCommand.Type, valuesOnly: Bool = false) -> [String] {
        var result: [String] = []
        for argument in declared(by: command) where !valuesOnly || argument.isOption {
            for spelled in argument.names where spelled != "-h" && spelled != "--help" { result.append(spelled) }
        }
        return result
    }

    /// One argument of a command as its help shows it: its spellings, and whether it is an
    /// option that takes a value.
    private struct DeclaredArgument: Sendable {
        var isOption: Bool
        var names: [String]
    }

    /// Each command's arguments, read once per process (its help is made by reflecting over the
    /// command's options, a millisecond or more).
    private static let declaredArguments = Mutex<[ObjectIdentifier: [DeclaredArgument]]>([:])

    private static func declared(by command: ParsableCommand.Type) -> [DeclaredArgument] {
        if let known = declaredArguments.withLock({ $0[ObjectIdentifier(command)] }) { return known }
        // Each option's line starts with its spellings, then two spaces and its help:
        // "  -r, --runs <runs>  Measured runs", "  --cold  Evict…", "  --sample [<rate>]  …".
        var arguments: [DeclaredArgument] = []
        for line in command.helpMessage(columns: 100_000).split(separator: "\n") where line.hasPrefix("  -") {
            let spellings = line.dropFirst(2).components(separatedBy: "  ")[0]
            let names = spellings.components(separatedBy: ", ").compactMap { $0.split(separator: " ").first.map(String.init) }
            arguments.append(DeclaredArgument(isOption: spellings.contains("<"), names: names))
        }
        declaredArguments.withLock { $0[ObjectIdentifier(command)] = arguments }
        return arguments
    }

    /// The program and its arguments from the words the parser left after `command`'s options
    /// (captured for passthrough, so the program's own options reach it untouched): a leading
    /// `--` ends launchprof's options, as in every getopt tool; a word starting with `-` before
    /// the program is a misspelled or unknown option, not a program.
    static func programAndArguments(_ words: [String], of command: ParsableCommand.Type) throws -> [String] {
        if words.first == "--" { return Array(words.dropFirst()) }
        guard let first = words.first, first.hasPrefix("-"), first != "-" else { return words }
        // The parser's own flags are captured too when they come first: honour them.
        switch first {
        case "-h", "--help", "-help": throw CleanExit.helpRequest(command)
        case "--version": throw CleanExit.message(LaunchprofVersion.description)
        default: break
        }
        let option = String(first.split(separator: "=", maxSplits: 1)[0])
        var message = "Unknown option '\(option)'."
        if let suggestion = nearest(to: option, in: names(of: command)) {
            message += " Did you mean '\(suggestion)'?"
        }
        message += " (A program whose name starts with '-' goes after '--'.)"
        throw ValidationError(message)
    }

    /// Refuses `--runs -3` (an option's value that is a negative number) as what it is: the
    /// parser would take `-3` for an option and say the value is missing.
    static func refuseNegativeValues(_ arguments: [String], of command: ParsableCommand.Type, takesProgram: Bool) throws {
        // Most command lines hold no negative number: then the options need not be read at all
        // (reading them dumps the whole help as JSON, a millisecond of every `run`).
        guard arguments.contains(where: OptionValue.isNegativeNumber) else { return }
        let options = Set(names(of: command, valuesOnly: true))
        guard let (option, value) = OptionValue.negativeValue(in: arguments, valueOptions: options, stopsAtPositional: takesProgram)
        else { return }
        throw ValidationError("\(option) \(value): negative values are not accepted (see --help for the range \(option) takes).")
    }

    /// Refuses `--sample=abc`: the rate is optional, so the parser falls back to the default
    /// when a word is no rate (`--sample PROGRAM` must keep working); a rate written with `=` is
    /// meant as one and is read strictly here.
    static func refuseBadSampleRate(_ arguments: [String], of command: ParsableCommand.Type, takesProgram: Bool) throws {
        guard arguments.contains(where: { $0.hasPrefix("--sample=") }) else { return }
        let options = Set(names(of: command, valuesOnly: true)).subtracting(["--sample"])
        guard let value = OptionValue.inlineValue(of: "--sample", in: arguments, valueOptions: options, stopsAtPositional: takesProgram)
        else { return }
        do {
            _ = try OptionValue.rate(value)
        } catch {
            throw ValidationError("--sample=\(value): \(error).")
        }
    }

    /// The closest of `names` to `word` by edit distance, if close enough to be a typo.
    static func nearest(to word: String, in names: [String]) -> String? {
        let scored = names.map { ($0, editDistance(word, $0)) }.min { $0.1 < $1.1 }
        guard let (name, distance) = scored, distance <= max(2, word.count / 3) else { return nil }
        return name
    }

    /// Levenshtein distance, counting a swap of neighbours as one edit (`--jsno` → `--json`).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
