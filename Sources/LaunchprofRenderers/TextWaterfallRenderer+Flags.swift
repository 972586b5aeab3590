import LaunchprofReport

/// `--sample`: the flags of heavy main-thread work under the waterfall, aggregated over runs.
extension TextWaterfallRenderer {
    func sampledWorkLines(_ report: LaunchReport) -> [String] {
        let sampling = report.runs.last?.sampling
        // A prewarmed launch's hold is no work of the program's: say it was left out (a streamed
        // report has no runs left, only the summary's hold).
        let hold = (sampling?.frozenNs ?? report.summary.prewarm?.holdNs?.median)
            .map { "; the prewarm hold (\(DurationText.text($0))) left out" } ?? ""
        guard let flags = report.summary.flags, !flags.isEmpty else {
            guard let sampling else { return [] }
            if let note = sampling.note { return ["", "sampling: " + note] }
            return ["", "sampling (\(sampling.rateHz) Hz): no heavy main-thread work flagged" + hold]
        }
        let rate = sampling.map { " (\($0.rateHz) Hz)" } ?? ""
        var lines = ["", "main-thread work flagged by sampling\(rate), median over the runs that flagged it\(hold):"]
        let rows = flags.map { flag -> [String] in
            let syscall = flag.syscall.map { " in \($0)()" } ?? ""
            return [
                flag.kind.rawValue, flag.phase, "\(flag.chain) (\(flag.object))\(syscall)",
                DurationText.text(flag.durationNs.median), "\(flag.runs)/\(report.summary.runs) runs",
                Self.shortAdvice(flag.kind),
            ]
        }
        // Laid out over every flag, so the columns do not move with how many are shown.
        let table = TextTable(rows: rows, rightAligned: [3]).lines
        for (row, text) in zip(rows, table).prefix(12) {
            lines.append(paint("  " + text, code: row[0] == "cpu" ? "35" : row[0] == "blocked" ? "36" : "31"))
        }
        if flags.count > 12 { lines.append("  … \(flags.count - 12) more in the JSON report") }
        return lines
    }

    static func shortAdvice(_ kind: LaunchFlag.Kind) -> String {
        switch kind {
        case .cpu: "defer it past the first frame or move it off the main thread"
        case .blocked: "do the wait asynchronously or off the main thread, or defer it"
        case .hang: "split it, move it off the main thread, or defer it"
        }
    }
}
