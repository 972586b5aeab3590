#if canImport(Glibc)
import Glibc
#endif

/// launchprof's own environment, the base of every child's, read from `environ` (Foundation's
/// `ProcessInfo` is not needed for it).
public enum ProcessEnvironment {
    /// Every variable, `KEY` → `VALUE`.
    public static func current() -> [String: String] {
        var environment: [String: String] = [:]
        var cursor = environ
        while let entry = cursor.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                environment[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            cursor += 1
        }
        return environment
    }
}
