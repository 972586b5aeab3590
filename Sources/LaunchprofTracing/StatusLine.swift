#if canImport(Glibc)
import Glibc
#endif

/// A line on stderr from below the command line (`launchprof: …`): what a user would otherwise
/// wait on blind, such as a probe release or a frozen process. Written whole, retried on EINTR.
public enum StatusLine {
    public static func say(_ text: String) {
        let bytes = Array(("launchprof: " + text + "\n").utf8)
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(STDERR_FILENO, raw.baseAddress.map { $0 + offset }, raw.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
