import LaunchprofReport

/// `launchprof report --html`: one self-contained HTML file (no network, no CDN) that draws the
/// report with inline SVG: the phase waterfall of the median and of any run, every run at a
/// glance, the distribution of time to first frame (histogram and per-run strip), the time
/// before `main` by library, the sampler's flags and flame graph, prewarmed vs ordinary launches.
///
/// The report itself is embedded as JSON and drawn by an inline script (`HTMLReportScript`), so
/// the page holds every number the JSON does; beside it, the view (`HTMLReportView`): each
/// phase's label and category as the terminal and the trace name them, so the script computes
/// neither (and takes every median from the report's summary). The script marks
/// `<body data-render="ok">` and the number of charts it drew when it is done, or
/// `data-render="error: …"`, for headless checks.
public struct HTMLReportRenderer: LaunchReportRenderer {
    public init() {}

    public func render(_ report: LaunchReport) throws(LaunchReportError) -> String {
        let json = try LaunchReportWriter.encode(report)
        let view = try LaunchReportWriter.encodeValue(HTMLReportView(report))
        let title = "launchprof · " + (report.target.path.split(separator: "/").last.map(String.init) ?? report.target.path)
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="generator" content="launchprof">
            <title>\(Self.escapeHTML(title))</title>
            <style>
            \(HTMLReportStyle.css)
            </style>
            </head>
            <body data-render="pending">
            <header><h1>\(Self.escapeHTML(title))</h1><p id="lp-subtitle"></p></header>
            <main id="lp-main"><noscript>This report draws its charts with JavaScript; the data is in the page source.</noscript></main>
            <script type="application/json" id="lp-report">\(Self.scriptSafe(json))</script>
            <script type="application/json" id="lp-view">\(Self.scriptSafe(view))</script>
            <script>
            \(HTMLReportScript.source)
            </script>
            </body>
            </html>

            """
    }

    /// JSON made safe inside `<script>`: `<` only occurs inside JSON strings, where `\u003c`
    /// means the same, so no `</script>` or `<!--` can end or change the block.
    static func scriptSafe(_ json: [UInt8]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(json.count)
        for byte in json {
            if byte == UInt8(ascii: "<") {
                bytes += Array("\\u003c".utf8)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func escapeHTML(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            default: result.append(character)
            }
        }
        return result
    }
}

/// What the page draws that the report does not spell out: each phase's label and category,
/// from `PhaseStyle` (as the terminal and the trace have them), and its thread-state bar, for the
/// summary's phases and every run's, in the report's order; the legends; the thread states'
/// words (`HTMLReportView+ThreadStates`).
struct HTMLReportView: Encodable {
    struct Phase: Encodable {
        var label: String
        var category: PhaseStyle.Category
        /// The main thread's states in the phase: a run's, adding up to its duration; the
        /// summary's, each state's median. nil for an instant or without states.
        var states: ThreadStateBar?
    }

    struct LegendEntry: Encodable {
        var category: PhaseStyle.Category
        var legend: String
    }

    /// A distinct warning of the runs (a crash's with its stack's frames, innermost first).
    struct Warning: Encodable {
        var code: String
        var message: String
        var frames: [String]?
        var runs: [Int]
    }

    /// A phase not measured, once per distinct reason.
    struct Absent: Encodable {
        var phase: String
        var reason: String
        var runs: [Int]
    }

    var legend: [LegendEntry]
    var warnings: [Warning]
    var absent: [Absent]
    /// Parallel to `summary.phases`.
    var summaryPhases: [Phase]
    /// Parallel to `runs[i].phases`.
    var runPhases: [[Phase]]
    var stateLegend: [StateLegendEntry]
    /// nil when no run recorded thread states; then `noThreadStates` says why, if a run says.
    var launchStates: LaunchStates?
    var noThreadStates: String?
    /// Parallel to `runs`.
    var runStates: [RunStates]

    init(_ report: LaunchReport) {
        // The hold is drawn as a break in the time axis, not in a colour of its own.
        legend = PhaseStyle.Category.allCases.filter { $0 != .prewarm }.map { LegendEntry(category: $0, legend: $0.legend) }
        summaryPhases = report.summary.phases.map { phase in
            Phase(label: PhaseStyle.label(phase), category: PhaseStyle.category(phase.name),
                  states: Self.phaseStates(phase.threadState, durationNs: phase.durationNs.median))
        }
        warnings = []
        absent = []
        for run in report.runs {
            for warning in run.warnings {
                if let slot = warnings.firstIndex(where: { $0.code == warning.code.rawValue && $0.message == warning.message }) {
                    warnings[slot].runs.append(run.index)
                } else {
                    warnings.append(Warning(
                        code: warning.code.rawValue, message: warning.message, frames: warning.crashStackFrames, runs: [run.index]))
                }
            }
            for entry in run.absent {
                let phase = PhaseStyle.label(name: entry.phase, object: nil, task: nil, image: entry.image)
                if let slot = absent.firstIndex(where: { $0.phase == phase && $0.reason == entry.reason }) {
                    absent[slot].runs.append(run.index)
                } else {
                    absent.append(Absent(phase: phase, reason: entry.reason, runs: [run.index]))
                }
            }
        }
        runPhases = report.runs.map { run in
            run.phases.map { phase in
                Phase(label: PhaseStyle.label(phase), category: PhaseStyle.category(phase.name),
                      states: Self.phaseStates(phase.threadState, durationNs: phase.durationNs))
            }
        }
        stateLegend = Self.stateLegend
        launchStates = Self.launchStates(report)
        noThreadStates = launchStates == nil ? TextWaterfallRenderer.noThreadStates(report) : nil
        runStates = report.runs.map(Self.runStates)
    }
}
