import LaunchprofReport

/// The terminal view of a report: one line per phase with its median duration, its share of the
/// median time to first frame and a bar placed at its median start, then the metrics.
///
/// Medians come from the summary, so the view works for a streamed report whose runs are on
/// disk. Absent phases and warnings are listed from the runs the report still holds.
public struct TextWaterfallRenderer: LaunchReportRenderer {
    /// Emit ANSI colours (the caller checks isatty and NO_COLOR).
    public var colour: Bool
    /// Columns for the bars.
    public var barWidth: Int
    /// At most this many `loader.init` rows per image: beyond it the fastest objects share one
    /// row (a program with 60 libraries stays readable; the JSON keeps every object).
    public var maximumObjectRows = 12

    public init(colour: Bool = false, barWidth: Int = 40) {
        self.colour = colour
        self.barWidth = Swift.max(barWidth, 10)
    }

    private static let labelWidth = 34

    /// A session's view as `run` prints it: its absent phases and warnings are its last run's.
    public func render(_ report: StreamedLaunchReport) throws(LaunchReportError) -> String {
        try render(report.withRuns(report.lastRun.map { [$0] } ?? []))
    }

    public func render(_ report: LaunchReport) throws(LaunchReportError) -> String {
        var lines: [String] = []
        let summary = report.summary
        let command = ([report.target.path] + report.target.arguments).joined(separator: " ")
        let warmup = report.mode.warmup > 0 ? ", \(report.mode.warmup) warm-up" : ""
        lines.append(
            "\(command): \(summary.runs) run\(summary.runs == 1 ? "" : "s")\(warmup), "
                + "\(report.mode.cold ? "cold" : "warm"), ready at \(report.mode.readiness)"
                + (report.mode.observer.map { observer in
                    ", observer \(observer)" + (report.mode.observerReason.map { " (\($0))" } ?? "")
                } ?? ""))
        for line in Self.outcomeLines(summary) { lines.append(paint(line, code: "31")) }

        let firstFrame = summary.timeToFirstFrameNs?.median
        let showsObserver = summary.phases.contains { $0.observerNs != nil }
        // Medians of starts and durations come from different runs: saturate, never trap.
        let phaseEnds = summary.phases.map {
            let (end, overflow) = $0.startNs.median.addingReportingOverflow($0.durationNs.median)
            return overflow ? UInt64.max : end
        }
        let scale = Swift.max(
            summary.extendedLaunchNs?.median ?? 0, firstFrame ?? 0, phaseEnds.max() ?? 0, 1)

        if !summary.phases.isEmpty {
            // Shares are of the median time to first frame; bars span 0 to `scale`.
            let share = firstFrame.map { " (share of \(DurationText.text($0)) to first frame)" } ?? ""
            lines.append("median per phase\(share), bars from spawn to \(DurationText.text(scale)):")
            lines.append(
                pad("phase", Self.labelWidth) + " " + leftPad("duration", 9) + " "
                    + leftPad("share", 6) + (showsObserver ? " " + leftPad("launchprof", 10) : ""))
        }
        let folded = foldedObjects(summary.phases, limit: Swift.max(maximumObjectRows, 2))
        for (index, phase) in summary.phases.enumerated() {
            if let group = folded.groups[index] {
                // The first folded object of an image stands for all of them; no bar, since
                // they are not contiguous.
                let total = group.reduce(UInt64(0)) { $0 + summary.phases[$1].durationNs.median }
                let image = phase.image.map { "[\($0)] " } ?? ""
                let what =
                    phase.name == LaunchPhase.loaderInit ? "loader.init (\(group.count) more objects)"
                    : phase.name == LaunchPhase.pythonImport ? "import (\(group.count) more)"
                    : "dlopen… (\(group.count) more)"
                lines.append(
                    pad("\(image)\(what)", Self.labelWidth) + " "
                        + leftPad(DurationText.text(total), 9) + " " + share(total, of: firstFrame))
                continue
            }
            if folded.hidden.contains(index) { continue }
            let duration = phase.durationNs.median
            let label = pad(PhaseStyle.label(phase), Self.labelWidth)
            let bar = self.bar(start: phase.startNs.median, duration: duration, scale: scale)
            lines.append(
                label + " " + leftPad(duration == 0 ? "at " + DurationText.text(phase.startNs.median)
                    : DurationText.text(duration), 9) + " " + share(duration, of: firstFrame)
                    + (showsObserver ? " " + observerColumn(phase) : "") + "  "
                    + paint(bar, code: Self.colourCode(phase.name)))
            let barColumn = Self.labelWidth + 1 + 9 + 1 + 6 + (showsObserver ? 11 : 0) + 2
            if let states = stateLine(phase, prefixWidth: barColumn, scale: scale) { lines.append(states) }
        }

        lines.append("")
        let metrics: [(String, SummaryStatistics?)] = [
            ("time to main", summary.timeToMainNs),
            ("time to first frame", summary.timeToFirstFrameNs),
            ("extended launch", summary.extendedLaunchNs), ("exit", summary.exitNs),
            ("resume time", summary.resumeTimeNs),
        ]
        if summary.runs > 0, summary.timeToFirstFrameNs == nil, summary.optimizedTimeToFirstFrameNs == nil {
            lines.append(pad("time to first frame", 20) + " none: no run reached readiness")
        }
        for (name, statistics) in metrics {
            guard let statistics else { continue }
            var text =
                pad(name, 20) + " median " + leftPad(DurationText.text(statistics.median), 9)
                + "  ± " + DurationText.text(statistics.stddev) + "  (min " + DurationText.text(statistics.min)
                + ", p90 " + DurationText.text(statistics.p90) + ", max " + DurationText.text(statistics.max)
                + ")"
            if statistics.outliers > 0 {
                text += "  \(statistics.outliers) outlier\(statistics.outliers == 1 ? "" : "s")"
            }
            // A metric some runs lack (`exit` when launchprof ended the app after its launch).
            if statistics.count < summary.runs {
                text += "  (\(statistics.count) of \(summary.runs) runs)"
            }
            lines.append(text)
        }
        if showsObserver {
            lines.append(
                "launchprof: its own median cost inside each phase (stops or probe hits, already in the"
                    + " duration); * at least half the phase")
        }
        if let pause = summary.tracerPauseNs {
            lines.append(
                pad("tracer stops", 20) + " median " + leftPad(DurationText.text(pause.median), 9)
                    + "  per run: launchprof's own cost, inside the times above")
        }
        if let faults = pageFaultLine(report) { lines.append(faults) }
        lines += dlopenCallerLines(report)
        lines += slowestImportLines(report)
        lines += sampledWorkLines(report)
        lines += threadStateLines(report)
        if summary.phases.contains(where: { $0.threadState != nil }) { lines.append(Self.stateLegend) }

        var absent: [AbsentPhase] = []
        var warnings: [String] = []
        for run in report.runs {
            for entry in run.absent where !absent.contains(entry) { absent.append(entry) }
            for warning in run.warnings where !warnings.contains(warning.message) {
                warnings.append(warning.message)
            }
        }
        if !absent.isEmpty {
            lines.append("")
            lines.append("not measured:")
            for entry in absent.prefix(8) {
                let image = entry.image.map { " (image \($0))" } ?? ""
                lines.append("  \(entry.phase)\(image): \(entry.reason)")
            }
        }
        if !warnings.isEmpty {
            lines.append("")
            lines.append(paint("warnings:", code: "33"))
            for warning in warnings.prefix(8) { lines.append("  " + warning) }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: Pieces

    /// One line per way runs failed: "2 of 2 runs crashed (SIGSEGV)", "1 of 3 runs timed out
    /// after 1.00 s waiting for the first-frame hook". `noun` names the runs ("prewarmed launches").
    public static func outcomeLines(_ summary: LaunchSummary, noun: String = "runs") -> [String] {
        guard let outcomes = summary.outcomes else {
            return summary.failedRuns > 0 ? ["\(summary.failedRuns) of \(summary.runs) \(noun) failed"] : []
        }
        return outcomes.filter { $0.outcome.kind != .completed }.map {
            "\($0.runs) of \(summary.runs) \(noun) \($0.outcome)"
        }
    }

    /// Which rows fold into one: of each family — an image's `loader.init` rows, the run-time
    /// loads (`dlopen` and its steps), the imports — all but the slowest `limit - 1`. `groups`
    /// maps the first folded row of a family to its members.
    private func foldedObjects(_ phases: [PhaseSummary], limit: Int) -> (hidden: Set<Int>, groups: [Int: [Int]]) {
        var families: [String: [Int]] = [:]
        for (index, phase) in phases.enumerated() {
            guard let family = Self.family(phase) else { continue }
            families[family, default: []].append(index)
        }
        var hidden = Set<Int>()
        var groups: [Int: [Int]] = [:]
        for rows in families.values where rows.count > limit {
            let slowest = rows.sorted {
                (phases[$0].durationNs.median, $1) > (phases[$1].durationNs.median, $0)
            }
            let folded = Array(slowest.dropFirst(limit - 1)).sorted()
            hidden.formUnion(folded)
            if let first = folded.first { groups[first] = folded }
        }
        return (hidden, groups)
    }

    /// The family a row folds with, nil for a row that never folds.
    private static func family(_ phase: PhaseSummary) -> String? {
        switch phase.name {
        case LaunchPhase.loaderInit: "\(phase.image ?? 0) " + LaunchPhase.loaderInit
        case LaunchPhase.dlopen, LaunchPhase.dlopenMap, LaunchPhase.dlopenRelocate, LaunchPhase.dlopenInit:
            "\(phase.image ?? 0) dlopen"
        case LaunchPhase.pythonImport: "\(phase.image ?? 0) import"
        default: nil
        }
    }

    /// The slowest top-level imports (not inside another import on the same thread) with their
    /// median cumulative time over the runs that made them: what `-X importtime` would blame.
    /// Which objects' code made the run-time loads: each caller's `dlopen` calls and the time
    /// inside them, medians per run (the waterfall's labels cut long callers short). A load made
    /// inside another's initialisation counts for its own caller too.
    private func dlopenCallerLines(_ report: LaunchReport, count: Int = 8) -> [String] {
        var perRun: [String: [(calls: Int, ns: UInt64)]] = [:]
        for (index, run) in report.runs.enumerated() {
            for phase in run.phases where phase.name == LaunchPhase.dlopen {
                let caller = phase.caller.map { $0.split(separator: "/").last.map(String.init) ?? $0 } ?? "(no caller seen)"
                var runs = perRun[caller] ?? []
                while runs.count <= index { runs.append((0, 0)) }
                runs[index].calls += 1
                runs[index].ns += phase.durationNs
                perRun[caller] = runs
            }
        }
        guard !perRun.isEmpty else { return [] }
        let runs = report.runs.count
        let medians = perRun.map { caller, values -> (caller: String, calls: Int, ns: UInt64) in
            let padded = values + Array(repeating: (0, 0), count: max(0, runs - values.count))
            return (caller, padded.map(\.calls).sorted()[runs / 2], padded.map(\.ns).sorted()[runs / 2])
        }.sorted { ($0.ns, $1.caller) > ($1.ns, $0.caller) }
        return ["run-time loads by caller (dlopen calls, time inside them; median per run):"]
            + medians.prefix(count).map {
                "  " + pad($0.caller, Self.labelWidth - 2) + " " + leftPad(DurationText.text($0.ns), 9) + "  \($0.calls) call"
                    + ($0.calls == 1 ? "" : "s")
            }
    }

    private func slowestImportLines(_ report: LaunchReport, count: Int = 5) -> [String] {
        var durations: [String: [UInt64]] = [:]
        for run in report.runs {
            let imports = run.phases.filter { $0.name == LaunchPhase.pythonImport }
            for phase in imports {
                let nested = imports.contains {
                    $0 != phase && $0.thread == phase.thread && $0.startNs <= phase.startNs && $0.endNs >= phase.endNs
                        && $0.durationNs > phase.durationNs
                }
                if !nested, let module = phase.object { durations[module, default: []].append(phase.durationNs) }
            }
        }
        guard !durations.isEmpty else { return [] }
        let medians = durations.map { (module: $0.key, median: $0.value.sorted()[$0.value.count / 2]) }
            .sorted { ($0.median, $1.module) > ($1.median, $0.module) }
        return ["slowest imports (top-level, cumulative, median):"]
            + medians.prefix(count).map { "  " + pad($0.module, Self.labelWidth - 2) + " " + leftPad(DurationText.text($0.median), 9) }
    }

    /// Page faults per launch, and how many launches read pages from disk (not warm).
    private func pageFaultLine(_ report: LaunchReport) -> String? {
        guard let faults = report.summary.pageFaults else { return nil }
        var text = pad("page faults", 20) + " median " + leftPad(String(faults.medianMinorFaults), 9) + "  per run"
        if faults.runsReadingFromDisk > 0 {
            text += "; \(faults.runsReadingFromDisk) of \(report.summary.runs) read \(faults.majorFaults) page(s) from disk"
                + " (major faults)" + (report.mode.cold ? "" : ": not warm launches")
        }
        return text
    }

    /// The observer's median cost in the phase, marked when it is half the phase or more.
    private func observerColumn(_ phase: PhaseSummary) -> String {
        guard let cost = phase.observerNs?.median, phase.durationNs.median > 0 else { return leftPad("", 10) }
        let mark = cost * 2 >= phase.durationNs.median && cost > 0 ? "*" : " "
        return leftPad(DurationText.text(cost), 9) + mark
    }

    private func share(_ duration: UInt64, of firstFrame: UInt64?) -> String {
        if duration == 0 { return "     ·" }
        guard let firstFrame, firstFrame > 0 else { return "     -" }
        return leftPad(Self.percent(duration, of: firstFrame), 6)
    }

    private func bar(start: UInt64, duration: UInt64, scale: UInt64) -> String {
        let width = barWidth
        let from = Int((Double(start) / Double(scale) * Double(width)).rounded(.down))
        let clampedFrom = Swift.min(Swift.max(from, 0), width - 1)
        if duration == 0 {
            return String(repeating: " ", count: clampedFrom) + "|"
        }
        let length = Swift.max(1, Int((Double(duration) / Double(scale) * Double(width)).rounded()))
        let clampedLength = Swift.min(length, width - clampedFrom)
        return String(repeating: " ", count: clampedFrom)
            + String(repeating: "█", count: Swift.max(clampedLength, 1))
    }

    func paint(_ text: String, code: String?) -> String {
        guard colour, let code else { return text }
        return "\u{1B}[\(code)m\(text)\u{1B}[0m"
    }

    private static func colourCode(_ name: String) -> String? {
        switch name {
        case LaunchPhase.exec, LaunchPhase.loaderMap, LaunchPhase.loaderRelocate: "34"
        case LaunchPhase.loaderInit, LaunchPhase.programInit: "33"
        case LaunchPhase.main, LaunchPhase.firstFrame, LaunchPhase.windowMapped: "35"
        case LaunchPhase.extendedLaunch: "36"
        case LaunchPhase.dlopen, LaunchPhase.dlopenMap, LaunchPhase.dlopenRelocate: "34"
        case LaunchPhase.dlopenInit: "33"
        case LaunchPhase.exit: nil
        default: "32"
        }
    }

    private func pad(_ text: String, _ width: Int) -> String {
        if text.count > width { return String(text.prefix(width - 1)) + "…" }
        return text + String(repeating: " ", count: width - text.count)
    }

    private func leftPad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }

    /// The report's spelling of a duration (`DurationText.text`), under the name the renderer's
    /// tests look lines up by.
    static func duration(_ ns: UInt64) -> String {
        DurationText.text(ns)
    }

    static func percent(_ part: UInt64, of whole: UInt64) -> String {
        guard part < UInt64.max / 1_000_000 else { return ">999%" }
        return DurationText.decimal(part * 100, per: whole) + "%"
    }
}
