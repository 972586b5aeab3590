import ArgumentParser

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
            if written <= 0 { return }
            offset += written
        }
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
