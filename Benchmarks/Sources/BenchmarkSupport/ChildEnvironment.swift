#if canImport(Glibc)
import Glibc
#endif

/// The environment every benchmark child gets: the harness's own, less what the harness runs
/// under. package-benchmark preloads its malloc interposer (LD_PRELOAD); a child inheriting it
/// would pay the interposer's start-up several times over and skew bare and profiled alike.
public enum ChildEnvironment {
    public static let stripped: Set<String> = ["LD_PRELOAD", "LD_AUDIT", "LAUNCHPROF_HOOK_FD"]

    /// The harness's environment without the stripped variables, plus `adding`.
    public static func dictionary(adding extra: [String: String] = [:]) -> [String: String] {
        var result: [String: String] = [:]
        var cursor = environ
        while let entry = cursor.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                let key = String(text[..<equals])
                if !stripped.contains(key) { result[key] = String(text[text.index(after: equals)...]) }
            }
            cursor += 1
        }
        result.merge(extra) { _, new in new }
        return result
    }

    /// The same as `KEY=VALUE` strings, sorted (for posix_spawn and `TraceRequest`).
    public static func strings(adding extra: [String: String] = [:]) -> [String] {
        dictionary(adding: extra).map { "\($0.key)=\($0.value)" }.sorted()
    }
}
