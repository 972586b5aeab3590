import Foundation
import LaunchprofReport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every output option through the CLI: files replaced whole, links followed and kept, devices
/// and FIFOs written in place and left as they were, bad paths refused before any launch.
@Suite("CLI: writing outputs", .serialized)
struct OutputDestinationTests {
    private func scratch() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lp-out-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return path
    }

    /// What is at `path` itself (not followed): type, link target, device number.
    private func node(_ path: String) -> (type: mode_t, link: String?, rdev: UInt) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return (0, nil, 0) }
        let link = try? FileManager.default.destinationOfSymbolicLink(atPath: path)
        return (info.st_mode & S_IFMT, info.st_mode & S_IFMT == S_IFLNK ? link : nil, UInt(info.st_rdev))
    }

    private func decodeReport(_ text: String) throws -> LaunchReport {
        try LaunchReportDecoder.decode(Array(text.utf8), path: "stdout")
    }

    @Test("--json - and --json /dev/stdout print the report on stdout (the waterfall on stderr); /dev/stdout stays a link")
    func standardOutput() throws {
        let before = node("/dev/stdout")
        for target in ["-", "/dev/stdout"] {
            let outcome = try LaunchprofCLI.run(["run", "-r", "2", "--json", target, "/bin/true"])
            #expect(outcome.status == 0, "\(outcome.stderr)")
            let report = try decodeReport(outcome.stdout)
            #expect(report.runs.count == 2)
            #expect(outcome.stderr.contains("time to first frame"), "the waterfall moves to stderr")
        }
        #expect(node("/dev/stdout").type == S_IFLNK)
        #expect(node("/dev/stdout").link == before.link)
        #expect(!FileManager.default.fileExists(atPath: FileManager.default.currentDirectoryPath + "/-"))
    }

    @Test("a link like /dev/stdout in a folder stays a link and the report reaches stdout")
    func stdoutLikeLink() throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let link = folder + "/stdout"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/proc/self/fd/1")
        let outcome = try LaunchprofCLI.run(["run", "-r", "2", "--json", link, "/bin/true"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(try decodeReport(outcome.stdout).runs.count == 2)
        #expect(node(link).type == S_IFLNK && node(link).link == "/proc/self/fd/1")
    }

    /// stdout redirected to a file — and to a file since deleted, which has no path to replace:
    /// the report is written where stdout writes, after what the shell wrote, and no link is
    /// replaced (a rename over /dev/stdout once replaced the machine's link with a report).
    @Test("stdout redirected to a file, even a deleted one: written through the descriptor, the links stay")
    func stdoutRedirectedToAFile() throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let link = folder + "/out"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/dev/stdout")
        let log = folder + "/log"
        let launchprof = try LaunchprofBinary.url().path
        for target in ["/dev/stdout", link, "/dev/fd/1"] {
            let shown = try LaunchprofCLI.run(
                executable: "/bin/sh",
                ["-c", "exec >\"$1\"; echo before; \"$2\" run -r 1 --json \"$3\" /bin/true 2>/dev/null; echo \"status $?\"", "sh", log, launchprof, target])
            #expect(shown.status == 0)
            let text = try String(contentsOfFile: log, encoding: .utf8)
            #expect(text.hasPrefix("before\n{"), "\(target): \(text.prefix(80))")
            #expect(text.hasSuffix("}\nstatus 0\n") || text.hasSuffix("}status 0\n"), "\(target): \(text.suffix(80))")
            // The deleted case: launchprof's stdout is a file without a path.
            let deleted = try LaunchprofCLI.run(
                executable: "/bin/sh",
                ["-c", "exec >\"$1\"; rm \"$1\"; \"$2\" run -r 1 --json \"$3\" /bin/true 2>&1 >/dev/null | tail -1; \"$2\" run -r 1 --json \"$3\" /bin/true 2>/dev/null; echo \"status $?\" >&2", "sh", log, launchprof, target])
            #expect(deleted.stderr.hasSuffix("status 0\n"), "\(target): \(deleted.stderr)")
        }
        #expect(node("/dev/stdout").type == S_IFLNK && node("/dev/stdout").link == "/proc/self/fd/1")
        #expect(node(link).type == S_IFLNK && node(link).link == "/dev/stdout")
    }

    @Test("a symlink to a file: the link stays, its target gets the report, its permissions kept")
    func symlinkToFile() throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let target = folder + "/target.json"
        let link = folder + "/link.json"
        try Data("old".utf8).write(to: URL(fileURLWithPath: target))
        chmod(target, 0o640)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "target.json")
        let outcome = try LaunchprofCLI.run(["run", "-r", "2", "--json", link, "/bin/true"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(node(link).type == S_IFLNK && node(link).link == "target.json")
        #expect(node(target).type == S_IFREG)
        #expect(try decodeReport(String(contentsOfFile: target, encoding: .utf8)).runs.count == 2)
        var info = stat()
        stat(target, &info)
        #expect(info.st_mode & 0o777 == 0o640)
        // A dangling link: its target is created, the link kept.
        let dangling = folder + "/dangling.json"
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: folder + "/new.json")
        #expect(try LaunchprofCLI.run(["run", "-r", "1", "--json", dangling, "/bin/true"]).status == 0)
        #expect(node(dangling).type == S_IFLNK)
        #expect(node(folder + "/new.json").type == S_IFREG)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["dangling.json", "link.json", "new.json", "target.json"])
    }

    @Test("a character device (mknod c 1 3) is written in place and stays that device, for every file option")
    func characterDevice() throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let device = folder + "/null"
        try #require(mknod(device, S_IFCHR | 0o666, dev_t((1 << 8) | 3)) == 0, "mknod needs root: \(errno)")
        let before = node(device)
        let report = folder + "/r.json"
        let runs: [[String]] = [
            ["run", "-r", "2", "--json", device, "--trace", device, "--output", device, "/bin/true"],
            ["run", "-r", "2", "--sample", "--folded", device, "/bin/true"],
            ["run", "-r", "2", "--json", report, "/bin/true"],
            ["report", report, "--html", device, "--trace", device],
            ["merge", report, "-o", device],
        ]
        for arguments in runs {
            let outcome = try LaunchprofCLI.run(arguments)
            #expect(outcome.status == 0, "\(arguments): \(outcome.stderr)")
            let after = node(device)
            #expect(after.type == S_IFCHR && after.rdev == before.rdev, "\(arguments)")
        }
    }

    @Test("a FIFO is written in place: a reader gets the whole report, the FIFO stays")
    func fifo() throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let pipe = folder + "/fifo"
        try #require(mkfifo(pipe, 0o644) == 0)
        nonisolated(unsafe) var received = Data()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            if let handle = FileHandle(forReadingAtPath: pipe) { received = handle.readDataToEndOfFile() }
            done.signal()
        }
        let outcome = try LaunchprofCLI.run(["run", "-r", "2", "--json", pipe, "/bin/true"])
        done.wait()
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(try LaunchReportDecoder.decode(Array(received), path: pipe).runs.count == 2)
        #expect(node(pipe).type == S_IFIFO)
    }

    /// An output that cannot be written is refused with 73 before the first launch: the program
    /// (`touch MARKER`) never runs and no other output is written.
    @Test("bad output paths: 73 before any launch or any work, nothing written")
    func refusedBeforeWork() throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let marker = folder + "/ran"
        let report = folder + "/r.json"
        let good = folder + "/good.json"
        #expect(try LaunchprofCLI.run(["run", "-r", "2", "--json", good, "/bin/true"]).status == 0)
        let suite = folder + "/suite.json"
        try Data(#"{"version": 1, "launches": [{"name": "t", "program": "/bin/touch", "arguments": ["\#(marker)"], "runs": 2}]}"#.utf8)
            .write(to: URL(fileURLWithPath: suite))
        let cases: [([String], String)] = [
            (["run", "-r", "2", "--json", report, "--trace", "/nodir/t.json", "/bin/touch", marker], "--trace /nodir/t.json"),
            (["run", "-r", "2", "--json", "/nodir/r.json", "/bin/touch", marker], "--json /nodir/r.json"),
            (["run", "-r", "2", "--json", folder, "/bin/touch", marker], "is a directory"),
            (["run", "-r", "2", "--output", "/nodir/o.txt", "/bin/touch", marker], "--output /nodir/o.txt"),
            (["run", "-r", "2", "--json", report, "--sample", "--folded", "/nodir/f.txt", "/bin/touch", marker], "--folded"),
            (["run", "-r", "2", "--json", report, "--metrickit", "/nodir/mk", "/bin/touch", marker], "--metrickit"),
            (["prewarm", "-r", "1", "--json", report, "--trace", "/nodir/t.json", "/bin/touch", marker], "--trace"),
            (["bench", suite, "-o", folder + "/b", "--markdown", "/nodir/x.md"], "--markdown /nodir/x.md"),
            (["bench", suite, "-o", good], "--output"),
            (["report", good, "--html", report, "--trace", "/nodir/t.json"], "--trace"),
            (["merge", good, "-o", "/nodir/m.json"], "--output /nodir/m.json"),
            (["calibrate", "--check", "/bin/true", "--report", "/nodir/cal"], "--report /nodir/cal"),
        ]
        for (arguments, message) in cases {
            let outcome = try LaunchprofCLI.run(arguments)
            #expect(outcome.status == 73, "\(arguments): \(outcome.stderr)")
            #expect(outcome.stderr.contains(message), "\(arguments): \(outcome.stderr)")
            #expect(!FileManager.default.fileExists(atPath: marker), "\(arguments) launched the program")
            #expect(!FileManager.default.fileExists(atPath: report), "\(arguments) wrote \(report)")
            #expect(!FileManager.default.fileExists(atPath: folder + "/b"), "\(arguments) made the bench folder")
        }
        // No temporary file left beside anything.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["good.json", "suite.json"])
    }

    /// Two outputs on one stream would be concatenated (`--json - --trace -` printed both
    /// documents one after the other); two on one file would lose the first. A usage error (64)
    /// before any launch; `/dev/null` may take any number.
    @Test("two outputs to one place (stdout twice, one file twice): 64 before any launch; /dev/null twice is fine")
    func twoOutputsOnePlace() throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let marker = folder + "/ran"
        let report = folder + "/r.json"
        let good = folder + "/good.json"
        #expect(try LaunchprofCLI.run(["run", "-r", "2", "--json", good, "/bin/true"]).status == 0)
        let cases: [([String], String)] = [
            (["run", "-r", "2", "--json", "-", "--trace", "-", "/bin/touch", marker], "--json - and --trace - both write to standard output"),
            (["run", "-r", "2", "--sample", "--json", "/dev/stdout", "--folded", "-", "/bin/touch", marker], "--json /dev/stdout and --folded - both write to standard output"),
            (["run", "-r", "2", "--json", "-", "--output", "inherit", "/bin/touch", marker], "--json - and --output inherit both write to standard output"),
            (["run", "-r", "2", "--json", report, "--trace", report, "/bin/touch", marker], "both write to the same file"),
            (["prewarm", "-r", "1", "--json", "-", "--trace", "-", "/bin/touch", marker], "--json - and --trace -"),
            (["report", good, "--html", "-", "--trace", "/dev/stdout"], "--html - and --trace /dev/stdout"),
        ]
        for (arguments, message) in cases {
            let outcome = try LaunchprofCLI.run(arguments)
            #expect(outcome.status == 64, "\(arguments): \(outcome.stderr)")
            #expect(outcome.stderr.contains(message), "\(arguments): \(outcome.stderr)")
            #expect(outcome.stdout.isEmpty, "\(arguments) printed: \(outcome.stdout.prefix(200))")
            #expect(!FileManager.default.fileExists(atPath: marker), "\(arguments) launched the program")
            #expect(!FileManager.default.fileExists(atPath: report), "\(arguments) wrote \(report)")
        }
        let discarded = try LaunchprofCLI.run(["run", "-r", "1", "--json", "/dev/null", "--trace", "/dev/null", "/bin/true"])
        #expect(discarded.status == 0, "\(discarded.stderr)")
        #expect(node("/dev/null").type == S_IFCHR)
    }
}
