import Foundation
import LaunchprofReport
import Testing

/// The bad inputs a new user tries, each through the CLI: its exit code from the one table, a
/// message naming what is wrong, and no trap.
@Suite("CLI: bad input", .serialized)
struct BadInputTests {
    /// Reports of /bin/true (3 runs and another 3), /usr/bin/env, and documents of other kinds.
    final class Samples {
        let folder: String
        let trueReport: String
        let trueAgain: String
        let envReport: String

        init() throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("lp-bad-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            trueReport = folder + "/true.json"
            trueAgain = folder + "/true-again.json"
            envReport = folder + "/env.json"
            for (path, program) in [(trueReport, "/bin/true"), (trueAgain, "/bin/true"), (envReport, "/usr/bin/env")] {
                let outcome = try LaunchprofCLI.run(["run", "-r", "3", "--json", path, program])
                #expect(outcome.status == 0, "\(outcome.stderr)")
            }
        }

        func write(_ name: String, _ text: String) throws -> String {
            let path = folder + "/" + name
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }

        /// The /bin/true report with `transform` applied to its JSON object.
        func edited(_ name: String, _ transform: (inout [String: Any]) -> Void) throws -> String {
            var object = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: trueReport))) as? [String: Any])
            transform(&object)
            let path = folder + "/" + name
            try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
            return path
        }

        deinit { try? FileManager.default.removeItem(atPath: folder) }
    }

    private func expect(_ arguments: [String], _ status: Int32, _ message: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let outcome = try LaunchprofCLI.run(arguments)
        #expect(outcome.status == status, "\(arguments): \(outcome.stderr)", sourceLocation: sourceLocation)
        #expect(outcome.stderr.contains(message), "\(arguments): \(outcome.stderr)", sourceLocation: sourceLocation)
        #expect(!outcome.stderr.contains("Error Domain") && !outcome.stderr.contains("CocoaError"), "\(outcome.stderr)", sourceLocation: sourceLocation)
    }

    @Test("strict option values: rates, durations, counts; negatives named; nothing traps")
    func strictValues() throws {
        let cases: [([String], String)] = [
            (["run", "--sample=abc", "/bin/true"], "--sample=abc"),
            (["run", "--sample=1.5", "/bin/true"], "--sample=1.5"),
            (["run", "--sample=10k", "/bin/true"], "--sample=10k"),
            (["run", "--sample=0", "/bin/true"], "1 to 100000"),
            (["run", "--timeout", "inf", "/bin/true"], "'inf'"),
            (["run", "--timeout", "1e30", "/bin/true"], "'1e30'"),
            (["run", "--timeout", "nan", "/bin/true"], "'nan'"),
            (["run", "--timeout", "0", "/bin/true"], "more than 0"),
            (["run", "--timeout", "99999999", "/bin/true"], "out of range"),
            (["run", "--linger", "1e30", "/bin/true"], "'1e30'"),
            (["run", "--sample", "--flag-threshold", "1e300", "/bin/true"], "'1e300'"),
            (["run", "--launch-diagnostic-threshold", "inf", "/bin/true"], "'inf'"),
            (["prewarm", "--hold", "99999999999s", "/bin/true"], "out of range"),
            (["prewarm", "--hold", "uniform:1s-99999999999s", "/bin/true"], "out of range"),
            (["run", "-r", "-3", "/bin/true"], "-r -3: negative values are not accepted"),
            (["run", "--runs", "-3", "/bin/true"], "--runs -3: negative"),
            (["run", "--runs=-3", "/bin/true"], "cannot be negative"),
            (["run", "--warmup", "-1", "/bin/true"], "--warmup -1: negative"),
            (["run", "-r", "1.5", "/bin/true"], "whole number"),
            (["run", "-r", "0", "/bin/true"], "1 to 100000"),
            (["prewarm", "--pool", "-2", "/bin/true"], "--pool -2: negative"),
            (["bench", "s.json", "--rounds", "-1"], "--rounds -1: negative"),
            (["calibrate", "-r", "-5"], "-r -5: negative"),
            (["compare", "--min-effect", "nan", "a.json", "b.json"], "'nan'"),
            (["compare", "--confidence", "inf", "a.json", "b.json"], "'inf'"),
            (["compare", "--min-effect-ns", "-1", "a.json", "b.json"], "--min-effect-ns -1: negative"),
        ]
        for (arguments, message) in cases { try expect(arguments, 64, message) }
        // A negative number after the program is the program's own.
        let passed = try LaunchprofCLI.run(["run", "-r", "1", "/bin/sh", "-c", "exit 0", "-r", "-3"])
        #expect(passed.status == 0, "\(passed.stderr)")
        // A bare --sample takes no value: the word after it is the program (its rate is the
        // default), as docs/sampling.md writes `run --sample ./app`.
        for command in ["run", "prewarm"] {
            let sampled = try LaunchprofCLI.run([command, "-r", "1", "--sample", "/bin/true"])
            #expect(sampled.status == 0, "\(command): \(sampled.stderr)")
            #expect(sampled.stdout.contains(command == "run" ? "1000 Hz" : "prewarmed launch"), "\(command): \(sampled.stdout)")
        }
    }

    @Test("one cause, one code in every command")
    func sameCauseSameCode() throws {
        let samples = try Samples()
        let folder = samples.folder
        // A missing program: 66 from run, prewarm, bench and inspect.
        let suite = try samples.write("missing.json", #"{"version": 1, "launches": [{"name": "x", "program": "/nonexistent/prog", "runs": 2}]}"#)
        for arguments in [["run", "/nonexistent/prog"], ["prewarm", "/nonexistent/prog"], ["inspect", "/nonexistent/prog"],
                          ["run", "launchprof-no-such-program"], ["inspect", "launchprof-no-such-program"], ["bench", suite, "-o", folder + "/b"]] {
            try expect(arguments, 66, "prog")
        }
        // Not an ELF file: 65 from inspect and run alike.
        let junk = try samples.write("junk", "garbage")
        chmod(junk, 0o755)
        try expect(["inspect", junk], 65, "not an ELF file")
        try expect(["run", junk], 65, "not an ELF file")
        // Bad JSON: 65 from report, compare, merge, export; unreadable (a directory, no file): 66.
        let bad = try samples.write("bad.json", "{ not json")
        let readers: [(String) -> [String]] = [
            { ["report", $0, "--html", folder + "/x.html"] }, { ["compare", samples.trueReport, $0] },
            { ["merge", samples.trueReport, $0, "-o", folder + "/m.json"] }, { ["export", "--openmetrics", $0] },
        ]
        for reader in readers {
            try expect(reader(bad), 65, "'\(bad)' is not a launchprof launch report")
            try expect(reader(folder + "/none.json"), 66, "Could not read '\(folder)/none.json'")
        }
        try expect(["report", folder, "--html", folder + "/x.html"], 66, "Is a directory")
        try expect(["export", "--openmetrics", folder], 66, "Is a directory")
    }

    @Test("launchprof help prints the exit-code table, and docs/exit-status.md's is the same")
    func exitCodeTable() throws {
        let help = try LaunchprofCLI.run(["help"])
        #expect(help.status == 0)
        let helpRows = help.stdout.split(separator: "\n").compactMap { line -> String? in
            let trimmed = line.drop { $0 == " " }
            guard let first = trimmed.first, first.isNumber, let gap = trimmed.range(of: "  ") else { return nil }
            return trimmed[..<gap.lowerBound] + " | " + trimmed[gap.upperBound...]
        }
        let page = try LaunchprofCLI.document("docs/exit-status.md")
        let section = try #require(page.components(separatedBy: "# Exit status\n").dropFirst().first)
        let pageRows = section.split(separator: "\n").prefix { !$0.hasPrefix("#") }.compactMap { line -> String? in
            guard line.hasPrefix("| "), let first = line.dropFirst(2).first, first.isNumber else { return nil }
            return String(line.dropFirst(2).dropLast(2)).replacingOccurrences(of: "\\|", with: "|")
        }
        #expect(helpRows.count >= 10)
        #expect(helpRows == pageRows)
    }

    @Test("compare and merge refuse what they cannot judge, naming why")
    func compareAndMergeRefuse() throws {
        let samples = try Samples()
        let folder = samples.folder
        // Different programs.
        try expect(["compare", samples.trueReport, samples.envReport], 65, "different programs")
        let allowed = try LaunchprofCLI.run(["compare", "--allow-different-programs", samples.trueReport, samples.envReport])
        #expect(![64, 65, 66, 70].contains(allowed.status), "\(allowed.stderr)")
        // The same report twice, or a copy.
        let copy = folder + "/copy.json"
        try FileManager.default.copyItem(atPath: samples.trueReport, toPath: copy)
        try expect(["compare", samples.trueReport, samples.trueReport], 65, "the same report twice")
        try expect(["compare", samples.trueReport, copy], 65, "the same report twice")
        try expect(["merge", samples.trueReport, samples.trueReport, "-o", folder + "/m.json"], 65, "the same report twice")
        try expect(["merge", samples.trueReport, copy, "-o", folder + "/m.json"], 65, "the same report twice")
        #expect(!FileManager.default.fileExists(atPath: folder + "/m.json"))
        // An empty side.
        let empty = try samples.edited("empty.json") { $0["runs"] = [] }
        try expect(["compare", samples.trueReport, empty], 65, "has no runs")
        try expect(["compare", empty, samples.trueReport], 65, "has no runs")
        try expect(["merge", samples.trueReport, empty, "-o", folder + "/m.json"], 65, "has no runs")
        // Other kinds of document, named for what they are.
        let inspect = try LaunchprofCLI.run(["inspect", "--json", "/bin/true"])
        let inspectReport = try samples.write("inspect.json", inspect.stdout)
        let comparison = try LaunchprofCLI.run(["compare", "--format", "json", samples.trueReport, samples.trueAgain])
        let comparisonFile = try samples.write("comparison.json", comparison.stdout)
        let suite = try samples.write("suite-in.json", #"{"version": 1, "launches": [{"name": "t", "program": "/bin/true"}]}"#)
        let metrics = try samples.write("metrics.json", #"{"appVersion": "1", "timeStampBegin": "x", "timeStampEnd": "y", "metaData": {}}"#)
        for (file, kind) in [(inspectReport, "an inspect report"), (comparisonFile, "a comparison"), (suite, "a bench suite"), (metrics, "a MetricKit metric payload")] {
            for arguments in [["compare", samples.trueReport, file], ["merge", samples.trueReport, file, "-o", folder + "/m.json"],
                              ["export", "--openmetrics", file], ["report", file, "--html", folder + "/x.html"]] {
                try expect(arguments, 65, "'\(file)' is \(kind)")
            }
        }
        // An unknown schema version: report refuses it exactly as compare does.
        let future = try samples.edited("future.json") { $0["schemaVersion"] = 99 }
        let byCompare = try LaunchprofCLI.run(["compare", samples.trueReport, future])
        let byReport = try LaunchprofCLI.run(["report", future, "--html", folder + "/x.html"])
        #expect(byCompare.status == 65 && byReport.status == 65)
        #expect(byReport.stderr == byCompare.stderr, "\(byReport.stderr) vs \(byCompare.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/x.html"))
    }

    @Test("too few runs: no verdict with the interval it could compute, in text and JSON alike")
    func tooFewRunsNoVerdict() throws {
        let samples = try Samples()
        let text = try LaunchprofCLI.run(["compare", samples.trueReport, samples.trueAgain])
        #expect(text.status == 5, "\(text.stderr)")
        #expect(text.stdout.contains("no verdict"))
        #expect(text.stdout.contains("at 90.0%"), "3 + 3 runs: the widest interval is 90% confident\n\(text.stdout)")
        #expect(!text.stdout.contains(": unchanged"))
        let json = try LaunchprofCLI.run(["compare", "--format", "json", samples.trueReport, samples.trueAgain])
        #expect(json.status == 5)
        try SchemaValidator.expectValid(Array(json.stdout.utf8), against: .comparison)
        let decoded = try JSONDecoder().decode(SuiteComparison.self, from: Data(json.stdout.utf8))
        #expect(decoded.verdict == .noVerdict)
        let first = try #require(decoded.entries.first?.changes.first { $0.key == "timeToFirstFrameNs" })
        #expect(first.verdict == .noVerdict)
        #expect(try #require(first.shift).confidence < 0.95)
    }

    @Test("bench: a threshold on a phase that does not exist is refused; a launch the baseline lacks is not 'unchanged'")
    func benchThresholdsAndBaseline() throws {
        let samples = try Samples()
        let folder = samples.folder
        let typo = try samples.write("typo.json", #"{"version": 1, "launches": [{"name": "t", "program": "/bin/true", "runs": 2, "thresholds": {"phase:nosuch": {"maxMedianNs": 1}}}]}"#)
        try expect(["bench", typo, "-o", folder + "/typo"], 64, "'phase:nosuch', a phase this launch does not have; its phases: exec")
        let one = try samples.write("one.json", #"{"version": 1, "launches": [{"name": "t", "program": "/bin/true", "runs": 2}]}"#)
        let two = try samples.write("two.json", #"{"version": 1, "launches": [{"name": "t", "program": "/bin/true", "runs": 2}, {"name": "u", "program": "/bin/true", "runs": 2}]}"#)
        #expect(try LaunchprofCLI.run(["bench", one, "-o", folder + "/base"]).status != 64)
        let outcome = try LaunchprofCLI.run(["bench", two, "-o", folder + "/new", "--baseline", folder + "/base"])
        #expect(outcome.status == 5, "\(outcome.stdout)\(outcome.stderr)")
        #expect(outcome.stdout.contains("u (warm, 2 runs, no baseline): no verdict"), "\(outcome.stdout)")
        #expect(outcome.stdout.contains("not in the baseline"), "\(outcome.stdout)")
    }

    @Test("the documented shell hook works under /bin/sh (dash): the hook fd is a single digit")
    func shellHookUnderDash() throws {
        let samples = try Samples()
        let script = try samples.write("hook.sh", """
            #!/bin/sh
            [ -n "$LAUNCHPROF_HOOK_FD" ] && echo "first-frame -" >&"$LAUNCHPROF_HOOK_FD"
            exit 0

            """)
        chmod(script, 0o755)
        let guide = try LaunchprofCLI.document("docs/readiness-and-hooks.md")
        #expect(guide.contains(#"[ -n "$LAUNCHPROF_HOOK_FD" ] && echo "first-frame -" >&"$LAUNCHPROF_HOOK_FD""#))
        let report = samples.folder + "/hook.json"
        let outcome = try LaunchprofCLI.run(["run", "-r", "2", "--ready", "hook", "--timeout", "5", "--json", report, script])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(!outcome.stderr.contains("Bad fd number"))
        let decoded = try LaunchReportDecoder.decode(Array(try Data(contentsOf: URL(fileURLWithPath: report))), path: report)
        #expect(decoded.summary.failedRuns == 0)
        #expect(decoded.runs.allSatisfy { $0.metrics.timeToFirstFrameNs != nil })
        // A line that is not an event is not lost silently: a warning names it.
        let garbled = try samples.write("garbled.sh", """
            #!/bin/sh
            echo "not an event" >&"$LAUNCHPROF_HOOK_FD"
            echo "first-frame -" >&"$LAUNCHPROF_HOOK_FD"

            """)
        chmod(garbled, 0o755)
        let warned = try LaunchprofCLI.run(["run", "-r", "2", "--ready", "hook", "--timeout", "5", garbled])
        #expect(warned.status == 0, "\(warned.stderr)")
        #expect(warned.stdout.contains("not an event"), "\(warned.stdout)")
        // A program that closed its hook fd cannot send a hook (its write fails): the timeout says
        // why the hook never arrived instead of only that it did not.
        let closed = try samples.write("closed.sh", """
            #!/bin/sh
            exec 9>&-
            echo "first-frame -" >&"$LAUNCHPROF_HOOK_FD" 2>/dev/null
            exec sleep 30

            """)
        chmod(closed, 0o755)
        let lost = try LaunchprofCLI.run(["run", "-r", "1", "--ready", "hook", "--timeout", "1", closed])
        #expect(lost.status == 1, "\(lost.stderr)")
        #expect(lost.stdout.contains("timed out after 1.00 s waiting for the first-frame hook"), "\(lost.stdout)")
        #expect(lost.stdout.contains("closed its hook channel"), "\(lost.stdout)")
    }
}
