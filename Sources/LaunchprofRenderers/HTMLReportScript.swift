import LaunchprofReport

/// The HTML report's script (HTMLReportScript.js beside this file): reads the embedded report and
/// draws every chart as inline SVG. Plain ES2017, no library, no network.
///
/// Embedded in the code at build time (`.embedInCode` in Package.swift) rather than loaded from a
/// resource bundle: a bundle must travel beside the binary, and `Bundle.module` traps when it
/// does not, so a copied `launchprof` would crash on `--html`.
enum HTMLReportScript {
    /// The file's text without its final newline (the page places it on its own lines).
    static let source: String = {
        var bytes = PackageResources.HTMLReportScript_js[...]
        if bytes.last == UInt8(ascii: "\n") { bytes = bytes.dropLast() }
        return String(decoding: bytes, as: UTF8.self)
    }()
}
