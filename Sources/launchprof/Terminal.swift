import ArgumentParser
import LaunchprofReport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// launchprof's two streams: data on stdout, talk (progress, errors) on stderr.
enum Terminal {
    static func write(_ fd: Int32, _ text: String) {
        write(fd, Array(text.utf8))
    }

    static func write(_ fd: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write(fd, $0) }
    }

    static func write(_ fd: Int32, _ raw: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < raw.count {
            let written = Glibc.write(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset)
            if written < 0 && errno == EINTR { continue }
            if written <= 0 {
                // Data on stdout that did not arrive fails the command (`finishStandardOutput`);
                // talk on stderr that did not arrive has nowhere to be said.
                if fd == 1 { standardOutputError.withLock { $0 = $0 ?? (written < 0 ? errno : ENOSPC) } }
                return
            }
            offset += written
        }
    }

    /// The first error a write to stdout met (a full disk, `>/dev/full`, a closed stdout).
    private static let standardOutputError = Mutex<Int32?>(nil)
    /// Whether stdout was closed when launchprof started (`>&-`).
    nonisolated(unsafe) private static var standardOutputWasClosed = false

    /// Keeps descriptors 0–2 taken: one closed at the start (`>&-`) would otherwise be the next
    /// file launchprof opens, and the text meant for stdout would land in it. A closed stdout
    /// gets /dev/null read-only, so every write to it fails (EBADF) and is reported; a closed
    /// stdin or stderr gets /dev/null.
    static func claimStandardDescriptors() {
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) < 0 && errno == EBADF {
            let opened = open("/dev/null", fd == 2 ? O_WRONLY : O_RDONLY)
            if opened >= 0, opened != fd {
                dup2(opened, fd)
                close(opened)
            }
            if fd == 1 { standardOutputWasClosed = true }
        }
    }

    /// Exits 74 when something written to stdout did not arrive: a CI job must not lose its data
    /// unnoticed. Called once the command's work is done.
    static func finishStandardOutput() {
        guard let code = standardOutputError.withLock({ $0 }) else { return }
        let reason = standardOutputWasClosed ? "it is closed" : String(cString: strerror(code))
        write(2, "launchprof: could not write to standard output: \(reason); the output is incomplete\n")
        Glibc.exit(ExitCause.ioError.rawValue)
    }

    /// Prints `launchprof: message` on stderr and returns the exit code to throw.
    static func fail(_ message: String, status: Int32) -> ExitCode {
        write(2, "launchprof: \(message)\n")
        return ExitCode(status)
    }

    /// Colour and progress only for a person at a terminal, and never with NO_COLOR set.
    static func wantsColour(_ fd: Int32) -> Bool {
        isatty(fd) != 0 && getenv("NO_COLOR") == nil
    }

    static func isInteractive(_ fd: Int32) -> Bool { isatty(fd) != 0 }
}
