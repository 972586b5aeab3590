import Foundation
import Testing

/// Loads a page in headless Chromium (Debian's `chromium`, installed by Scripts/setup.sh) and
/// returns the DOM after its scripts ran and every console message it logged; keeps a
/// screenshot. A fresh profile directory per load, so concurrent runs cannot share a lock.
enum HeadlessChromium {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    struct Page {
        var dom: String
        /// Chromium's log lines for console messages and uncaught errors (any level).
        var consoleLines: [String]

        /// The value of `attribute` on `<body>`.
        func bodyAttribute(_ attribute: String) -> String? {
            guard let body = dom.firstMatch(of: /<body[^>]*>/) else { return nil }
            let tag = dom[body.range]
            guard let start = tag.range(of: attribute + "=\"") else { return nil }
            return String(tag[start.upperBound...].prefix { $0 != "\"" })
        }

        /// How many elements carry `className` among their classes.
        func count(class className: String) -> Int {
            dom.matches(of: /class="([^"]*)"/).filter { match in
                match.output.1.split(separator: " ").contains { $0 == className }
            }.count
        }

        /// The `data-count` values of the elements with `className`.
        func dataCounts(class className: String) -> [Int] {
            dom.matches(of: /<rect[^>]*>/).map { String(dom[$0.range]) }
                .filter { $0.contains("class=\"\(className)\"") }
                .compactMap { tag in tag.firstMatch(of: /data-count="(\d+)"/).flatMap { Int($0.output.1) } }
        }
    }

    static func executable() throws -> String {
        for candidate in ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        throw Failure(description: "headless Chromium is not installed: run Scripts/setup.sh (Debian package chromium)")
    }

    static func load(_ file: String, screenshot: String, height: Int = 2600) throws -> Page {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("lp-chromium-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let domFile = work.appendingPathComponent("dom.html")
        let logFile = work.appendingPathComponent("log.txt")
        for file in [domFile, logFile] where !FileManager.default.createFile(atPath: file.path, contents: nil) {
            throw Failure(description: "cannot create \(file.path)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try executable())
        process.arguments = [
            "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
            "--user-data-dir=" + work.appendingPathComponent("profile").path, "--enable-logging=stderr", "--v=0",
            "--hide-scrollbars", "--window-size=1280,\(height)", "--screenshot=" + screenshot, "--dump-dom",
            URL(fileURLWithPath: file).absoluteString,
        ]
        process.standardOutput = try FileHandle(forWritingTo: domFile)
        process.standardError = try FileHandle(forWritingTo: logFile)
        try process.run()
        // Chromium that never finishes would hang the suite: end it after a minute.
        let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        process.waitUntilExit()
        watchdog.cancel()
        let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0 else {
            throw Failure(description: "chromium exited \(process.terminationStatus):\n\(log.suffix(2000))")
        }
        let dom = try String(contentsOf: domFile, encoding: .utf8)
        let console = log.split(separator: "\n").map(String.init).filter { $0.contains(":CONSOLE") || $0.contains("Uncaught") }
        return Page(dom: dom, consoleLines: console)
    }

    /// `html` with a check run after the page's own script: how many pairs of a chart's text
    /// labels overlap as Chromium laid them out (`data-label-overlaps` on `<body>`, the first
    /// pairs in `data-overlap-pairs`).
    static func withOverlapCheck(_ html: String) -> String {
        let check = """
            <script>
            (function () {
              var found = [];
              document.querySelectorAll("svg.lp-chart").forEach(function (svg) {
                var boxes = Array.prototype.map.call(svg.querySelectorAll("text"), function (t) {
                  return { text: t.textContent, box: t.getBoundingClientRect() };
                }).filter(function (t) { return t.box.width > 0; });
                for (var i = 0; i < boxes.length; i++) for (var j = i + 1; j < boxes.length; j++) {
                  var a = boxes[i].box, b = boxes[j].box;
                  var w = Math.min(a.right, b.right) - Math.max(a.left, b.left), h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
                  if (w > 0.5 && h > 2) found.push(svg.getAttribute("data-chart") + ": " + boxes[i].text + " / " + boxes[j].text);
                }
              });
              document.body.setAttribute("data-label-overlaps", String(found.length));
              document.body.setAttribute("data-overlap-pairs", found.slice(0, 6).join(" | "));
            })();
            </script>
            """
        guard let end = html.range(of: "</body>", options: .backwards) else { return html + check }
        return html.replacingCharacters(in: end, with: check + "\n</body>")
    }

    /// Where tests keep their screenshots: `.build/test-artifacts/` of the package.
    static func artifactPath(_ name: String) throws -> String {
        let directory = FixtureBuilder.packageRoot.appendingPathComponent(".build/test-artifacts")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent(name).path
    }
}
