#if canImport(Glibc)
    import Glibc
#endif

/// What the app is told about its launch, like UIKit's launch options.
public struct LaunchOptions: Sendable, Equatable {
    /// Why the process was started.
    public enum Reason: String, Sendable, Equatable {
        /// The user launched the app.
        case user
        /// The system started the app ahead of use (`ActivePrewarm=1`); the user has not asked
        /// for it yet, so launch-time work that only matters on screen can wait.
        case prewarm
    }

    public var reason: Reason
    /// The command line after the program name.
    public var arguments: [String]

    public init(reason: Reason = .user, arguments: [String] = []) {
        self.reason = reason
        self.arguments = arguments
    }

    /// The options of this process: `.prewarm` when `ActivePrewarm=1` is in the environment.
    public static var current: LaunchOptions {
        LaunchOptions(
            reason: reason(activePrewarm: getenv("ActivePrewarm").map { String(cString: $0) }),
            arguments: Array(CommandLine.arguments.dropFirst()))
    }

    /// The launch reason for a value of `ActivePrewarm` (nil when unset): only "1" is prewarm.
    public static func reason(activePrewarm: String?) -> Reason {
        activePrewarm == "1" ? .prewarm : .user
    }
}
