import LaunchprofCore
import LaunchprofReport

/// The progress line on stderr while launches run ("launchprof: run 3/10"), only for a person
/// at a terminal; cleared when the runs end, however they end.
final class TerminalProgress: LaunchRunSink {
    private let label: String
    private let shown = Terminal.isInteractive(2)

    /// `label` names what is counted: "run", "prewarm", "app run" (a bench launch).
    init(_ label: String) {
        self.label = label
    }

    func record(_ measured: MeasuredRun) throws(RunError) {}

    func progress(done: Int, total: Int) {
        if shown { Terminal.write(2, "\r\u{1b}[Klaunchprof: \(label) \(done)/\(total)") }
    }

    func finish(_ report: StreamedLaunchReport) throws(RunError) { clear() }

    func cancel() { clear() }

    private func clear() {
        if shown { Terminal.write(2, "\r\u{1b}[K") }
    }
}
