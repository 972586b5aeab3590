import Foundation
import Testing

/// A fuzz pass over the report readers through the CLI (`report`, `compare`, `merge`, `export`):
/// mutated copies of a real report — truncated, wrong types, huge and negative numbers, NaN-like
/// strings, deep nesting, other kinds — each read by every command. None may crash; each exits
/// with a code from the table and, when it refuses, names the file. `Fuzz/run-reports.sh` runs
/// the same mutations many more times.
@Suite("CLI: fuzzed reports", .serialized)
struct ReportFuzzTests {
    @Test("mutated reports: no crash, a code from the table, the file named")
    func mutatedReports() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lp-fuzz-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let base = folder + "/base.json"
        let made = try LaunchprofCLI.run(["run", "-r", "3", "--json", base, "/bin/true"])
        try #require(made.status == 0, "\(made.stderr)")
        let original = try Data(contentsOf: URL(fileURLWithPath: base))
        // Fuzz/run-reports.sh sets a larger count and another seed.
        let environment = ProcessInfo.processInfo.environment
        let count = environment["LP_FUZZ_REPORTS"].flatMap(Int.init) ?? 60
        var generator = ReportMutator.Generator(seed: environment["LP_FUZZ_SEED"].flatMap(UInt64.init) ?? 22)
        let mutants = ReportMutator.mutants(of: original, count: count, generator: &generator)
        #expect(mutants.count == count)
        let table: Set<Int32> = [0, 1, 2, 4, 5, 65, 66]
        for (index, (name, bytes)) in mutants.enumerated() {
            let path = folder + "/m\(index).json"
            try bytes.write(to: URL(fileURLWithPath: path))
            let commands: [[String]] = [
                ["report", path, "--html", folder + "/out.html", "--trace", folder + "/out-trace.json"],
                ["compare", base, path], ["compare", path, base],
                ["merge", base, path, "-o", folder + "/merged.json"],
                ["export", "--openmetrics", path],
            ]
            for arguments in commands {
                let outcome = try LaunchprofCLI.run(arguments)
                #expect(table.contains(outcome.status), "\(name): \(arguments): exit \(outcome.status)\n\(outcome.stderr)")
                if outcome.status == 65 || outcome.status == 66 {
                    #expect(outcome.stderr.contains(path), "\(name): \(arguments): \(outcome.stderr)")
                    #expect(outcome.stderr.split(separator: "\n").count <= 3, "\(name): one clear message: \(outcome.stderr)")
                }
            }
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}

/// Mutations of a launch report's JSON: structured ones (a value replaced by one of another
/// type, a huge or negative number, a NaN-like string, deep nesting, a key removed) and byte-level
/// ones (truncation, a flipped byte), from a seeded generator so a failure replays.
enum ReportMutator {
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let replacements: [String] = [
        "null", "true", "\"NaN\"", "\"Infinity\"", "\"-inf\"", "-1", "-9223372036854775808", "18446744073709551615",
        "18446744073709551616", "1e308", "1.5", "\"\"", "[]", "{}", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
        "\"\\u0000\"", "0", "9223372036854775807", "99999999999999999", "100000000000000001",
    ]

    static func mutants(of original: Data, count: Int, generator: inout Generator) -> [(String, Data)] {
        var result: [(String, Data)] = [
            ("empty", Data()), ("truncated-half", original.prefix(original.count / 2)),
            ("truncated-1", original.dropLast(2)), ("array", Data("[1,2,3]".utf8)), ("number", Data("42".utf8)),
            ("deep", Data((String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)).utf8)),
            ("deep-object", Data((String(repeating: "{\"a\":", count: 3000) + "1" + String(repeating: "}", count: 3000)).utf8)),
            ("not-utf8", Data([0xFF, 0xFE, 0x7B, 0x00])),
            // Every time at the largest value a reader may add (a trace's end = start + duration).
            ("all-times-max", Data(String(decoding: original, as: UTF8.self).replacing(
                /("[A-Za-z]+Ns"):[0-9]+/, with: { "\($0.output.1):18446744073709551615" }).utf8)),
            ("all-times-limit", Data(String(decoding: original, as: UTF8.self).replacing(
                /("[A-Za-z]+Ns"):[0-9]+/, with: { "\($0.output.1):99999999999999999" }).utf8)),
        ]
        guard let object = (try? JSONSerialization.jsonObject(with: original)) as? [String: Any] else { return result }
        let paths = leafPaths(object, prefix: [])
        while result.count < count {
            switch generator.next() % 4 {
            case 0, 1:
                // A value replaced with one of another type or out of range.
                let path = paths[Int(generator.next() % UInt64(paths.count))]
                let replacement = replacements[Int(generator.next() % UInt64(replacements.count))]
                let marker = "\u{1}MUTANT\u{1}"
                guard let data = try? JSONSerialization.data(withJSONObject: setting(object, path, to: marker)),
                    let text = String(data: data, encoding: .utf8)
                else { continue }
                result.append(("\(path.joined(separator: ".")) = \(replacement)",
                    Data(text.replacingOccurrences(of: "\"\\u0001MUTANT\\u0001\"", with: replacement).utf8)))
            case 2:
                // A key removed.
                let path = paths[Int(generator.next() % UInt64(paths.count))]
                if let data = try? JSONSerialization.data(withJSONObject: setting(object, path, to: nil)) {
                    result.append(("without \(path.joined(separator: "."))", data))
                }
            default:
                // A byte flipped.
                var bytes = original
                let offset = Int(generator.next() % UInt64(bytes.count))
                bytes[bytes.startIndex + offset] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
                result.append(("byte \(offset) flipped", bytes))
            }
        }
        return result
    }

    /// Every path to a value, objects and arrays descended (the first three elements of arrays).
    static func leafPaths(_ value: Any, prefix: [String]) -> [[String]] {
        var paths: [[String]] = prefix.isEmpty ? [] : [prefix]
        if let object = value as? [String: Any] {
            for (key, child) in object { paths += leafPaths(child, prefix: prefix + [key]) }
        } else if let array = value as? [Any] {
            for (index, child) in array.prefix(3).enumerated() { paths += leafPaths(child, prefix: prefix + [String(index)]) }
        }
        return paths
    }

    static func setting(_ value: Any, _ path: [String], to replacement: Any?) -> Any {
        guard let key = path.first else { return replacement ?? NSNull() }
        if var object = value as? [String: Any] {
            if path.count == 1, replacement == nil {
                object.removeValue(forKey: key)
            } else if let child = object[key] {
                object[key] = setting(child, Array(path.dropFirst()), to: replacement)
            }
            return object
        }
        if var array = value as? [Any], let index = Int(key), index < array.count {
            if path.count == 1, replacement == nil {
                array.remove(at: index)
            } else {
                array[index] = setting(array[index], Array(path.dropFirst()), to: replacement)
            }
            return array
        }
        return value
    }
}
