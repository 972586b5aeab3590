import LaunchprofReport

/// How every view of a report names a phase and which colour family it belongs to: the
/// terminal waterfall, the trace and the HTML page (which gets both from the page's embedded
/// view, never computing them itself).
public enum PhaseStyle {
    /// A phase's colour family (the trace's category, the page's legend).
    public enum Category: String, Sendable, Encodable, CaseIterable {
        case loader, program, app, extendedLaunch, prewarm

        /// The legend's words.
        public var legend: String {
            switch self {
            case .loader: "loader"
            case .program: "program"
            case .app: "app phases"
            case .extendedLaunch: "extended launch"
            case .prewarm: "prewarm hold"
            }
        }
    }

    /// `loader.init libfoo.so.1`, `extendedLaunch sync`, `[1] main`, `willFinishLaunching (gtk3)`,
    /// `dlopen libbar.so from libfoo.so.1`: the name, the object's file name, the task, the toolkit
    /// a phase came from (the app's hooks, the loader and Python go unsaid), the file name of
    /// the library that called a `dlopen`, the image of an exec chain, and `#2` for a phase's
    /// second occurrence.
    public static func label(
        name: String, object: String?, task: String?, image: Int?, occurrence: Int? = nil, source: String? = nil,
        caller: String? = nil
    ) -> String {
        var label = name
        if let object { label += " " + fileName(object) }
        if let caller { label += " from " + fileName(caller) }
        if let task { label += " " + task }
        if let source, !["hook", "loader", "python"].contains(source) { label += " (\(source))" }
        if let occurrence { label += " #\(occurrence + 1)" }
        if let image { label = "[\(image)] " + label }
        return label
    }

    public static func label(_ phase: LaunchPhase) -> String {
        label(
            name: phase.name, object: phase.object, task: phase.task, image: phase.image, source: phase.source,
            caller: phase.caller)
    }

    public static func label(_ phase: PhaseSummary) -> String {
        label(
            name: phase.name, object: phase.object, task: phase.task, image: phase.image, occurrence: phase.occurrence,
            source: phase.source, caller: phase.caller)
    }

    private static func fileName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    public static func category(_ name: String) -> Category {
        // A run-time load is the loader's work too.
        if name.hasPrefix("loader.") || name.hasPrefix("dlopen") || name == LaunchPhase.exec { return .loader }
        if name.hasPrefix("program.") { return .program }
        if name == TraceEventRenderer.holdSlice { return .prewarm }
        if name == LaunchPhase.extendedLaunch { return .extendedLaunch }
        return .app
    }
}
