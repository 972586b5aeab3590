/// When a launch counts as ready (its first frame), in one place: the `--ready` value parsed
/// once (its pattern compiled once), the watchers a session must set up for it, the live rule
/// the run monitor ends a launch by (`isComplete`) and the rule the timeline places the first
/// frame by afterwards (`firstFrame`). Both rules read one `Evidence` through one precedence, so
/// they cannot disagree. Adding a readiness kind is a `Rule` case and its answers here.
///
/// The precedence: the app's own `first-frame` hook wins, except under `--ready frame` (the
/// display server's frame only); then the event the rule names (a matched output line, a
/// listening socket, the display server's first frame under automatic readiness); then, where
/// the rule allows it, a clean exit. A launch is complete once its first frame is known from
/// anything but the exit and no extended-launch task is open (a launch ended with a task open
/// would report it as never finished); under `--ready exit` it runs to its exit.
public struct ReadinessPolicy: Sendable, Equatable, Hashable, CustomStringConvertible {
    public enum Rule: Sendable, Equatable, Hashable {
        /// The app's `first-frame` hook if it calls one, else the display server's first frame
        /// of one of its windows (when a display is watched), else the child's clean exit.
        case automatic
        /// The child's exit (unless the app calls `first-frame`).
        case exit
        /// Only the app's `first-frame` hook.
        case hook
        /// The first line on the child's stdout matching `pattern`.
        case stdout(pattern: String)
        /// The first line on the child's stderr matching `pattern`.
        case stderr(pattern: String)
        /// The child's (or a descendant's) first listening socket, seen by the tracer.
        case listen
        /// The first frame of one of the program's windows on the display server.
        case frame
    }

    public let rule: Rule
    /// The compiled `stdout:`/`stderr:` pattern. `Regex` is a value without shared mutable
    /// state; matching it from the monitor's thread is safe.
    private nonisolated(unsafe) let regex: Regex<AnyRegexOutput>?

    public static let automatic = ReadinessPolicy(fixed: .automatic)
    public static let exit = ReadinessPolicy(fixed: .exit)
    public static let hook = ReadinessPolicy(fixed: .hook)
    public static let listen = ReadinessPolicy(fixed: .listen)
    public static let frame = ReadinessPolicy(fixed: .frame)

    /// `--ready stdout:REGEX`; a pattern that does not compile is a usage error naming it.
    public static func stdout(_ pattern: String) throws(LaunchReportError) -> ReadinessPolicy {
        try ReadinessPolicy(.stdout(pattern: pattern))
    }

    /// `--ready stderr:REGEX`.
    public static func stderr(_ pattern: String) throws(LaunchReportError) -> ReadinessPolicy {
        try ReadinessPolicy(.stderr(pattern: pattern))
    }

    private init(fixed rule: Rule) {
        self.rule = rule
        regex = nil
    }

    /// The policy of `rule`, its pattern compiled.
    public init(_ rule: Rule) throws(LaunchReportError) {
        self.rule = rule
        switch rule {
        case .stdout(let pattern), .stderr(let pattern):
            do {
                regex = try Regex(pattern)
            } catch {
                throw .invalidReadiness(rule.argument, reason: "the pattern does not compile: \(error)")
            }
        default:
            regex = nil
        }
    }

    /// Parses the `--ready` value (and a bench suite's `ready`): `exit`, `hook`, `listen`,
    /// `frame`, `auto`/`automatic`, `stdout:REGEX`, `stderr:REGEX`.
    public init(argument: String) throws(LaunchReportError) {
        let rule: Rule
        switch argument {
        case "exit": rule = .exit
        case "hook": rule = .hook
        case "listen": rule = .listen
        case "frame": rule = .frame
        case "auto", "automatic": rule = .automatic
        default:
            if argument.hasPrefix("stdout:"), argument.count > 7 {
                rule = .stdout(pattern: String(argument.dropFirst(7)))
            } else if argument.hasPrefix("stderr:"), argument.count > 7 {
                rule = .stderr(pattern: String(argument.dropFirst(7)))
            } else {
                throw .invalidReadiness(argument, reason: nil)
            }
        }
        try self.init(rule)
    }

    public static func == (lhs: ReadinessPolicy, rhs: ReadinessPolicy) -> Bool { lhs.rule == rhs.rule }
    public func hash(into hasher: inout Hasher) { hasher.combine(rule) }
    public var description: String { argument }

    /// The spelling `init(argument:)` accepts, as written in the report's `mode`.
    public var argument: String { rule.argument }

    // MARK: What a session watches

    /// The sources of readiness a session must watch besides the hook channel (always watched).
    public struct Watchers: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// The child's stdout through a pipe, lines matched (`matches`).
        public static let standardOutput = Watchers(rawValue: 1 << 0)
        /// The child's stderr, the same way.
        public static let standardError = Watchers(rawValue: 1 << 1)
        /// The tracer stops the child's `listen(2)` calls (seccomp) and reports the first success.
        public static let listen = Watchers(rawValue: 1 << 2)
        /// The display servers of the child's `$DISPLAY`/`$WAYLAND_DISPLAY`, for window frames.
        public static let display = Watchers(rawValue: 1 << 3)
    }

    public var watchers: Watchers {
        switch rule {
        case .stdout: .standardOutput
        case .stderr: .standardError
        case .listen: .listen
        case .frame, .automatic: .display
        case .exit, .hook: []
        }
    }

    /// Whether a display must be watchable (an error before the first run otherwise); automatic
    /// readiness watches the displays that are named and reachable, and does without.
    public var requiresDisplay: Bool { rule == .frame }

    /// Whether `line`, read from the child's `stream`, makes the launch ready.
    public func matches(line: String, on stream: OutputStream) -> Bool {
        guard let regex else { return false }
        switch (rule, stream) {
        case (.stdout, .standardOutput), (.stderr, .standardError):
            return (try? regex.firstMatch(in: line)) != nil
        default:
            return false
        }
    }

    public enum OutputStream: String, Sendable {
        case standardOutput = "stdout"
        case standardError = "stderr"
    }

    // MARK: The rule, live and afterwards

    /// What a launch showed of its readiness so far (CLOCK_MONOTONIC ns), live in the run monitor
    /// or afterwards from its events.
    public struct Evidence: Sendable, Equatable {
        /// The app's first `first-frame` hook.
        public var hookFirstFrameNs: UInt64?
        /// The first `ready` event: a matched output line, a listening socket.
        public var readyNs: UInt64?
        /// The display server's first frame of one of the program's windows.
        public var displayFrameNs: UInt64?
        /// The child's exit with status 0 (a crash, a failure status or launchprof's own ending
        /// is no first frame).
        public var cleanExitNs: UInt64?
        /// An extended-launch task is open.
        public var openTasks = false

        public init(
            hookFirstFrameNs: UInt64? = nil, readyNs: UInt64? = nil, displayFrameNs: UInt64? = nil,
            cleanExitNs: UInt64? = nil, openTasks: Bool = false
        ) {
            self.hookFirstFrameNs = hookFirstFrameNs
            self.readyNs = readyNs
            self.displayFrameNs = displayFrameNs
            self.cleanExitNs = cleanExitNs
            self.openTasks = openTasks
        }
    }

    /// Whether the app's `first-frame` hook counts (and then wins): everywhere but `--ready frame`.
    public var takesHookFirstFrame: Bool { rule != .frame }

    /// The instant that counts as the first frame, nil when none does.
    public func firstFrame(_ evidence: Evidence) -> UInt64? {
        if takesHookFirstFrame, let hook = evidence.hookFirstFrameNs { return hook }
        return switch rule {
        case .frame: evidence.displayFrameNs
        case .automatic: evidence.displayFrameNs ?? evidence.cleanExitNs
        case .exit: evidence.cleanExitNs
        case .hook: nil
        case .stdout, .stderr, .listen: evidence.readyNs
        }
    }

    /// Whether the launch is complete before its exit: the monitor then ends it (after the linger).
    public func isComplete(_ evidence: Evidence) -> Bool {
        guard rule != .exit else { return false }
        var beforeExit = evidence
        beforeExit.cleanExitNs = nil
        return firstFrame(beforeExit) != nil && !evidence.openTasks
    }

    /// What a launch that is not complete waits for, as its timeout names it.
    /// - Parameters:
    ///   - watchedDisplay: the display a frame observer watches ("display :99").
    ///   - closedHookDescriptor: the child closed its hook channel (at this descriptor), so no
    ///     hook it writes can arrive.
    public func awaited(
        _ evidence: Evidence, openTaskNames: [String], watchedDisplay: String?, closedHookDescriptor: Int32?
    ) -> String {
        if rule != .exit, firstFrame(evidence) != nil, !openTaskNames.isEmpty {
            let tasks = openTaskNames.sorted().map { "'\($0)'" }.joined(separator: ", ")
            return "the extended-launch task\(openTaskNames.count == 1 ? "" : "s") \(tasks) to finish"
        }
        if rule == .frame, let watchedDisplay { return "a first frame on \(watchedDisplay)" }
        if rule == .hook || rule == .automatic, evidence.hookFirstFrameNs == nil, let fd = closedHookDescriptor {
            // Its hook writes fail (EBADF) and the app cannot tell launchprof: say it here.
            return awaitedEvent + " (the program closed its hook channel, fd \(fd) "
                + "= LAUNCHPROF_HOOK_FD, so no hook it writes can arrive)"
        }
        return awaitedEvent
    }

    /// What a run waits for under this rule, as a timeout names it.
    public var awaitedEvent: String {
        switch rule {
        case .automatic: "the first-frame hook or the program's exit"
        case .exit: "the program's exit"
        case .hook: "the first-frame hook"
        case .stdout(let pattern): "a line on stdout matching '\(pattern)'"
        case .stderr(let pattern): "a line on stderr matching '\(pattern)'"
        case .listen: "a listening socket"
        case .frame: "a first frame on a display"
        }
    }

    /// Why a run has no first frame; `exit` says how the process ended, if it did.
    public func absenceReason(exit: String?) -> String {
        if rule == .automatic || rule == .exit, let exit {
            return "the process \(exit) before its first frame"
        }
        return switch rule {
        case .hook: "the app never called launchprof_first_frame"
        case .stdout(let pattern): "no stdout line matched '\(pattern)'"
        case .stderr(let pattern): "no stderr line matched '\(pattern)'"
        case .listen: "the program never listened on a socket"
        case .frame: "no window of the program showed a first frame"
        case .automatic, .exit: "the program neither sent a first frame nor exited"
        }
    }
}

extension ReadinessPolicy.Rule {
    var argument: String {
        switch self {
        case .automatic: "automatic"
        case .exit: "exit"
        case .hook: "hook"
        case .listen: "listen"
        case .frame: "frame"
        case .stdout(let pattern): "stdout:" + pattern
        case .stderr(let pattern): "stderr:" + pattern
        }
    }
}
