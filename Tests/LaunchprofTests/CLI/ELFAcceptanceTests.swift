import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the kernel runs, launchprof measures; what it refuses, `inspect` refuses with the
/// kernel's reason (issue 33). Each case asks the kernel too: its execve is the judge.
@Suite("ELF acceptance matches the kernel's")
struct ELFAcceptanceTests {
    private static func temporaryDirectory() throws -> String {
        var template = Array("/tmp/lp-elf-accept-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        return String(cString: made)
    }

    /// A copy of /bin/true changed by `edit`, executable.
    private static func variant(_ name: String, in directory: String, _ edit: (inout Data) -> Void) throws -> String {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: "/bin/true").resolvingSymlinksInPath())
        edit(&bytes)
        let path = directory + "/" + name
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect(chmod(path, 0o755) == 0)
        return path
    }

    private static func put<T: FixedWidthInteger>(_ value: T, at offset: Int, in bytes: inout Data) {
        withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(offset..<(offset + MemoryLayout<T>.size), with: $0) }
    }

    /// The kernel's verdict: nil when execve succeeded and the program exited 0, else the errno.
    private static func kernelRefusal(_ path: String) -> Int32? {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(path), nil]
        defer { for argument in argv { free(argument) } }
        let error = posix_spawn(&pid, path, nil, nil, argv, environ)
        guard error == 0 else { return error }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status == 0 ? nil : -1
    }

    @Test("a copy cut by one byte, or with its section headers past the end, runs: inspect and run measure it")
    func whatTheKernelRunsIsMeasured() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cut = try Self.variant("cut", in: directory) { $0.removeLast() }
        let pastTheEnd = try Self.variant("shoff", in: directory) { bytes in Self.put(UInt64(bytes.count + 1), at: 40, in: &bytes) }
        let huge = try Self.variant("shoff-max", in: directory) { bytes in Self.put(UInt64.max, at: 40, in: &bytes) }
        for program in [cut, pastTheEnd, huge] {
            #expect(Self.kernelRefusal(program) == nil, "the kernel runs \(program)")
            let inspected = try LaunchprofCLI.run(["inspect", program])
            #expect(inspected.status == 0, "inspect \(program): \(inspected.stderr)")
            let ran = try LaunchprofCLI.run(["run", "-r", "1", program])
            #expect(ran.status == 0, "run \(program): \(ran.stderr)")
            #expect(ran.stdout.contains("main"), "\(ran.stdout)")
        }
    }

    @Test("e_phnum 0 or 0xffff: the kernel refuses (ENOEXEC), and so does inspect, saying so")
    func whatTheKernelRefusesIsRefused() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for count in [UInt16(0), 0xffff] {
            let program = try Self.variant("phnum-\(count)", in: directory) { Self.put(count, at: 56, in: &$0) }
            #expect(Self.kernelRefusal(program) == ENOEXEC)
            let inspected = try LaunchprofCLI.run(["inspect", program])
            #expect(inspected.status == 65, "\(inspected.stderr)")
            #expect(inspected.stderr.contains("the kernel refuses to run it: Exec format error"), "\(inspected.stderr)")
        }
    }

    @Test("a FIFO or a device is refused at once, never opened")
    func specialFilesAreRefusedWithoutBlocking() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o755) == 0)
        for (path, kind) in [(fifo, "a FIFO"), ("/dev/null", "a character device")] {
            let inspected = try LaunchprofCLI.run(["inspect", path])
            #expect(inspected.status == 66, "\(inspected.stderr)")
            #expect(inspected.stderr.contains("\(path): is \(kind), not a program file"), "\(inspected.stderr)")
        }
    }

    @Test("a PT_INTERP naming a missing file: inspect and run name the interpreter, exit 66")
    func aMissingInterpreterIsNamed() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let interpreter = "/lib64/ld-linux-x86-64.so.2"
        let program = try Self.variant("no-interpreter", in: directory) { bytes in
            guard let found = bytes.range(of: Data(interpreter.utf8)) else { return }
            bytes.replaceSubrange(found, with: Data("/nonexistent/ld-linux.so".utf8) + Data(repeating: 0, count: found.count - 24))
        }
        #expect(Self.kernelRefusal(program) == ENOENT)
        let inspected = try LaunchprofCLI.run(["inspect", program])
        #expect(inspected.status == 66, "\(inspected.stderr)")
        #expect(inspected.stderr.contains("its ELF interpreter /nonexistent/ld-linux.so does not exist"), "\(inspected.stderr)")
        let ran = try LaunchprofCLI.run(["run", "-r", "1", program])
        #expect(ran.status == 66, "\(ran.stderr)")
        #expect(ran.stderr.contains("its ELF interpreter /nonexistent/ld-linux.so does not exist"), "\(ran.stderr)")
    }
}
