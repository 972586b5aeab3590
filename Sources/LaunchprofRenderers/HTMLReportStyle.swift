import LaunchprofReport

/// The HTML report's style sheet (inlined: the file must open with no network).
enum HTMLReportStyle {
    static var css: String { layout + "\n" + stateRules }

    /// A thread state's colour on the page and the state Perfetto shows for it. The colours are
    /// Perfetto UI's thread-state colours (`colorForThreadState`, ui/src/plugins/dev.perfetto.Sched/
    /// common.ts), so the page and the trace's thread-state track read alike, except where the
    /// page needs its own: Perfetto draws Sleeping white on its white track, which would vanish
    /// here (pale grey instead), and it has no lock state (a futex wait is Sleeping there).
    static func stateStyle(_ state: ThreadState) -> (colour: String, perfetto: String) {
        switch state {
        case .running: ("hsl(120, 44%, 34%)", "Running")  // Perfetto's dark green
        case .runnable: ("hsl(75, 55%, 47%)", "Runnable")  // lime green
        case .sleeping: ("hsl(0, 0%, 82%)", "Sleeping")  // Perfetto: white
        case .lock: ("hsl(285, 38%, 58%)", "Sleeping, in futex")  // Perfetto: none of its own
        case .diskIO: ("hsl(36, 100%, 50%)", "Uninterruptible Sleep (IO)")  // orange
        case .other: ("hsl(3, 30%, 49%)", "Uninterruptible Sleep (non-IO)")  // desaturated red
        case .traced: ("hsl(231, 48%, 48%)", "Traced")  // indigo, Perfetto's colour for any other state
        }
    }

    /// `.state-diskIO` for a bar's segment (fill) and a legend's swatch (background).
    static var stateRules: String {
        ThreadState.allCases.map { state in
            let colour = stateStyle(state).colour
            return ".state-\(state.rawValue) { fill: \(colour); } .legend i.state-\(state.rawValue) { background: \(colour); }"
        }.joined(separator: "\n")
    }

    private static let layout = #"""
        :root { --fg: #1d2330; --muted: #6b7280; --grid: #e5e7eb; --bg: #ffffff; --panel: #f8fafc;
          --loader: #3b82f6; --program: #8b5cf6; --app: #f59e0b; --extended: #10b981; --instant: #dc2626;
          --flag: #ef4444; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
        header { padding: 20px 28px 8px; border-bottom: 1px solid var(--grid); }
        h1 { font-size: 20px; margin: 0 0 4px; }
        h2 { font-size: 16px; margin: 0 0 8px; }
        #lp-subtitle { margin: 0; color: var(--muted); }
        main { padding: 8px 28px 40px; max-width: 1200px; }
        section { margin: 18px 0; padding: 14px 16px; background: var(--panel); border: 1px solid var(--grid); border-radius: 8px; }
        section p.note { color: var(--muted); margin: 4px 0 8px; }
        table { border-collapse: collapse; font-size: 13px; }
        th, td { text-align: left; padding: 3px 10px 3px 0; vertical-align: top; }
        th { color: var(--muted); font-weight: 600; } th.num { text-align: right; }
        td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
        svg { display: block; overflow: visible; }
        /* Charts are drawn for a wide page; on a narrower one they scale down with their labels. */
        svg.lp-chart { max-width: 100%; height: auto; }
        svg text { font: 11px system-ui, sans-serif; fill: var(--fg); }
        svg text.axis { fill: var(--muted); }
        svg line.grid { stroke: var(--grid); }
        .cat-loader { fill: var(--loader); } .cat-program { fill: var(--program); }
        .cat-app { fill: var(--app); } .cat-extendedLaunch { fill: var(--extended); }
        .instant { stroke: var(--instant); stroke-width: 1.5; }
        .hist-bar { fill: var(--loader); } .run-dot { fill: var(--app); fill-opacity: .75; }
        .run-dot.prewarm { fill: var(--extended); }
        .median-line { stroke: var(--instant); stroke-width: 1.5; stroke-dasharray: 4 3; }
        .flame-frame { stroke: #fff; stroke-width: .5; }
        .legend span { display: inline-block; margin-right: 14px; color: var(--muted); }
        .legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; border-radius: 2px; vertical-align: -1px; }
        .legend i.cat-loader { background: var(--loader); } .legend i.cat-program { background: var(--program); }
        .legend i.cat-app { background: var(--app); } .legend i.cat-extendedLaunch { background: var(--extended); }
        section.warnings li { margin: 2px 0; } ol.crash-stack { margin: 4px 0 8px; padding-left: 26px; font: 12px ui-monospace, monospace; }
        ol.crash-stack li { margin: 1px 0; } span.runs { color: var(--muted); }
        select { font: inherit; }
        .hold-gap { fill: var(--bg); } .hold-break { stroke: var(--muted); stroke-width: 1.5; }
        .prewarm-part { fill-opacity: .55; }
        p.headline { font-size: 15px; margin: 4px 0 10px; }
        p.warning { color: var(--flag); }
        .badge { display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 12px; }
        .badge-hazard { background: #fee2e2; color: #991b1b; } .badge-note { background: var(--grid); color: var(--muted); }
        tr.severity-note td { color: var(--muted); }
        td.flag-function b { font-weight: 600; }
        h3 { font-size: 14px; margin: 14px 0 6px; }
        svg text.state-words { font-size: 10px; }
        .state-bar rect { stroke: var(--bg); stroke-width: .4; }
        .state-legend span { cursor: help; }
        p.bar-title { margin: 6px 0 4px; }
        ol.reasons { margin: 4px 0 8px; padding-left: 26px; } ol.reasons li { margin: 0 0 8px; }
        .reason-context { color: var(--muted); font-size: 13px; } .reason-advice { font-size: 13px; }
        .table-wrap { overflow-x: auto; max-width: 100%; } td.muted { color: var(--muted); }
        svg.thread-states { max-width: 40vw; height: auto; }
        """#
}
