/// Something in a run's events that breaks a rule (MetricKit's extended-launch rules, unpaired
/// hook calls) but still lets the run be measured. Warnings never fail a run.
public struct TimelineWarning: Sendable, Equatable, Hashable, Codable {
    public enum Code: String, Sendable, Codable, CaseIterable {
        /// More than 16 extended-launch tasks (MetricKit's limit).
        case tooManyExtendedTasks
        /// A task id longer than 128 characters (MetricKit's limit).
        case taskIDTooLong
        /// The first extended-launch task started after the first frame.
        case extendedTaskAfterFirstFrame
        /// `extend` for a task that is already running.
        case duplicateExtendedTask
        /// `extend` without `finish-extend`.
        case extendedTaskNotFinished
        /// `finish-extend` for a task that was never extended.
        case finishWithoutExtend
        /// `begin` without `end`.
        case beginWithoutEnd
        /// `end` without `begin`.
        case endWithoutBegin
        /// `first-frame` called more than once; the first one counts.
        case duplicateFirstFrame
        /// An event stamped before the spawn or a span ending before it starts (another clock?).
        case timeOutOfOrder
        /// A hook-channel line launchprof could not parse.
        case malformedHookLine
        /// The child ended but left descendants running (a daemon); launchprof killed them.
        case processesLeftBehind
        /// The child died of a crash signal; the message holds its stack.
        case crashed
        /// The uprobe observer's ring buffer overflowed: some probe hits were not recorded.
        case observerSamplesLost
        /// A warm launch read pages from disk (major page faults): part of its files had left the
        /// page cache, so it was not the warm launch the mode promises.
        case pagesReadFromDisk
        /// The X server lacks X-Resource: window owners came from `_NET_WM_PID`, which some
        /// programs do not set (their windows are then not seen).
        case displayOwnerFromWindowProperty
        /// The scheduler's events could not be recorded (not root, no tracefs, a PID namespace):
        /// the run has no thread states.
        case threadStatesUnavailable
        /// Events stamped after launchprof decided to end the child (a frame, a hook, a
        /// boundary) were left out: nothing after that moment is a metric.
        case eventsAfterEnd
        /// The kernel dropped scheduler records during the launch (launchprof's buffer was full):
        /// the run has no thread states, since any lost record may be one of the main thread's
        /// switches; the message counts the records lost.
        case threadStatesLost
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// A crash's warning: its stack's frames, innermost first, in the message.
    public static func crashStack(_ frames: [String]) -> TimelineWarning {
        TimelineWarning(.crashed, crashStackPrefix + frames.joined(separator: crashFrameSeparator))
    }

    /// The frames of a crash's warning, innermost first; nil for any other warning.
    public var crashStackFrames: [String]? {
        guard code == .crashed, message.hasPrefix(Self.crashStackPrefix) else { return nil }
        return message.dropFirst(Self.crashStackPrefix.count)
            .split(separator: Self.crashFrameSeparator, omittingEmptySubsequences: false).map(String.init)
    }

    static let crashStackPrefix = "crash stack: "
    static let crashFrameSeparator = " ← "
}
