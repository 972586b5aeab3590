/// How one run ended, as the report states it: the launch completed, or why it did not.
///
/// A run that did not complete keeps only the metrics it really observed (a timeout is never a
/// first frame); `kind` says what happened and the other fields give the detail a reader needs:
/// the exit status, the signal's name, what the run was waiting for when it timed out.
public struct RunOutcome: Sendable, Equatable, Hashable, Codable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable, Hashable, Codable, CaseIterable {
        /// The launch reached readiness (and, with `--resume-cycles`, every cycle ran).
        case completed
        /// The program exited by itself before readiness, or with a non-zero status.
        case exitedEarly
        /// A signal the program did not handle ended it (launchprof did not send it).
        case crashed
        /// `--timeout` passed first; `waitedFor` says what had not happened yet.
        case timedOut
        /// The program's first instruction was never reached.
        case failedToStart
        /// `--resume-cycles` on a program that handles no lifecycle signal: the launch itself
        /// completed, no resume was timed, and the program was not signalled.
        case noLifecycleHandling
        /// launchprof itself was interrupted (Ctrl-C, SIGTERM) during the launch and ended the
        /// program (`signal`, `signalNumber`: the signal launchprof got); the run shows what the
        /// program reached before.
        case interrupted

        /// The label value in OpenMetrics (`launchprof_runs_total{outcome="timeout"}`).
        public var metricLabel: String {
            switch self {
            case .completed: "completed"
            case .exitedEarly: "exited_early"
            case .crashed: "crashed"
            case .timedOut: "timeout"
            case .failedToStart: "failed_to_start"
            case .noLifecycleHandling: "no_lifecycle_handling"
            case .interrupted: "interrupted"
            }
        }
    }

    public var kind: Kind
    /// `exitedEarly`, `failedToStart`: the exit status.
    public var exitCode: Int32?
    /// `exitedEarly`: it exited before readiness (false: at readiness, with a non-zero status).
    public var beforeReadiness: Bool?
    /// `crashed`: the signal's name ("SIGSEGV") and number.
    public var signal: String?
    public var signalNumber: Int32?
    /// `timedOut`: what the run was still waiting for ("the first-frame hook", …).
    public var waitedFor: String?
    /// `timedOut`: the `--timeout` that passed.
    public var timeoutNs: UInt64?
    /// `failedToStart`, `noLifecycleHandling`: why, in words.
    public var reason: String?

    public init(
        kind: Kind, exitCode: Int32? = nil, beforeReadiness: Bool? = nil, signal: String? = nil,
        signalNumber: Int32? = nil, waitedFor: String? = nil, timeoutNs: UInt64? = nil,
        reason: String? = nil
    ) {
        self.kind = kind
        self.exitCode = exitCode
        self.beforeReadiness = beforeReadiness
        self.signal = signal
        self.signalNumber = signalNumber
        self.waitedFor = waitedFor
        self.timeoutNs = timeoutNs
        self.reason = reason
    }

    public static let completed = RunOutcome(kind: .completed)

    /// launchprof got `signal` (Ctrl-C: SIGINT) during the launch and ended the program.
    public static func interrupted(by signal: Int32) -> RunOutcome {
        RunOutcome(kind: .interrupted, signal: signalName(signal), signalNumber: signal)
    }

    public static func timedOut(after timeoutNs: UInt64?, waitingFor awaited: String) -> RunOutcome {
        RunOutcome(kind: .timedOut, waitedFor: awaited, timeoutNs: timeoutNs)
    }

    /// The outcome of a run that did not time out, from how it ended and whether it reached
    /// readiness (`reachedReadiness`: a first frame was observed).
    public init(exit: RunExit?, reachedReadiness: Bool, startedProgram: Bool, notStartedReason: String? = nil) {
        if let exit, exit.killedBy == nil, let signal = exit.signal {
            self.init(kind: .crashed, signal: Self.signalName(signal), signalNumber: signal)
        } else if !startedProgram, let exit, exit.killedBy == nil, exit.code != 0 {
            self.init(kind: .failedToStart, reason: notStartedReason ?? "the program's first instruction was never reached")
        } else if let exit, let code = exit.code, code != 0 || !reachedReadiness,
            exit.killedBy == nil || !reachedReadiness
        {
            // A status launchprof's own SIGTERM after readiness provoked (xterm exits 15) is the
            // program's answer to being ended, not a failed launch.
            self.init(kind: .exitedEarly, exitCode: code, beforeReadiness: !reachedReadiness)
        } else {
            self = .completed
        }
    }

    /// A report written before outcomes were recorded, told as it was then judged: a timeout, a
    /// signal launchprof did not send, a non-zero status, or no recorded exit failed it.
    init(legacyExit exit: RunExit?, timedOut: Bool, reachedReadiness: Bool) {
        guard !timedOut else {
            self = .timedOut(after: nil, waitingFor: "readiness")
            return
        }
        guard let exit else {
            self = .timedOut(after: nil, waitingFor: "the program's exit (the report records none)")
            return
        }
        if exit.killedBy == nil, let signal = exit.signal {
            self.init(kind: .crashed, signal: Self.signalName(signal), signalNumber: signal)
        } else if let code = exit.code, code != 0 {
            self.init(kind: .exitedEarly, exitCode: code, beforeReadiness: !reachedReadiness)
        } else {
            self = .completed
        }
    }

    /// Lowercase, after "N of M runs": "crashed (SIGSEGV)", "timed out after 1.00 s waiting for
    /// the first-frame hook", "exited with status 1 before readiness".
    public var description: String {
        switch kind {
        case .completed:
            return "completed"
        case .exitedEarly:
            let status = exitCode.map { "exited with status \($0)" } ?? "exited"
            return status + (beforeReadiness == true ? " before readiness" : "")
        case .crashed:
            return "crashed (" + (signal ?? signalNumber.map { "signal \($0)" } ?? "a signal") + ")"
        case .timedOut:
            let after = timeoutNs.map { " after " + DurationText.text($0) } ?? ""
            return "timed out" + after + " waiting for " + (waitedFor ?? "readiness")
        case .failedToStart:
            return "failed to start: " + (reason ?? "no reason recorded")
        case .noLifecycleHandling:
            return "were not resume-cycled: " + (reason ?? "the program has no lifecycle handling")
        case .interrupted:
            return "ended when launchprof was interrupted" + (signal.map { " (\($0))" } ?? "")
        }
    }

    /// A Linux signal's name; "signal N" for one without a fixed name.
    public static func signalName(_ number: Int32) -> String {
        let names = [
            "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS", "SIGFPE",
            "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM",
            "SIGSTKFLT", "SIGCHLD", "SIGCONT", "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG",
            "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO", "SIGPWR", "SIGSYS",
        ]
        if number >= 1, Int(number) <= names.count { return names[Int(number) - 1] }
        if number >= 34, number <= 64 { return "SIGRTMIN+\(number - 34)" }
        return "signal \(number)"
    }
}
