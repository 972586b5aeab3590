import LaunchprofCore
import LaunchprofReport

/// `inspect --dlopen`'s text: one row per run-time load (what was asked for, the object whose code
/// asked, its thread, its time in the launch, and the new objects' counts as `inspect` gives the
/// pre-main closure's; 0 objects: it was loaded already, or the load failed), then the totals
/// beside the pre-main closure's.
struct RuntimeLoadsTextRenderer {
    func render(_ result: RuntimeLoadInspector.Result) -> String {
        var lines = ["run-time loads of \(result.program) (one launch): \(result.loads.count) dlopen call(s)"]
        for absent in result.unobserved { lines.append("not observed: \(absent.phase): \(absent.reason)") }
        let header = ["dlopen", "caller", "thread", "time", "objects", "relative", "symbolic", "jump", "init", "size"]
        var rows: [[String]] = [header]
        var objects = 0, relative = 0, symbolic = 0, jump = 0, initializers = 0
        var size: UInt64 = 0
        for load in result.loads {
            let counts = load.objects
            // `relative` counts DT_RELR's addresses already.
            let r = counts.reduce(0) { $0 + $1.relocations.relative }
            let s = counts.reduce(0) { $0 + $1.relocations.symbolic }
            let j = counts.reduce(0) { $0 + $1.relocations.jumpSlot }
            let i = counts.reduce(0) { $0 + $1.initializers.total }
            let bytes = counts.reduce(UInt64(0)) { $0 + $1.sizeBytes }
            objects += counts.count + load.unread.count
            relative += r
            symbolic += s
            jump += j
            initializers += i
            size += bytes
            // No name: dlopen(NULL) (the program's own handle), or a name the kernel could not read.
            let name = load.requested.map { $0.split(separator: "/").last.map(String.init) ?? $0 } ?? "(no name)"
            let new = counts.count + load.unread.count
            rows.append([
                name, load.caller.map { $0.split(separator: "/").last.map(String.init) ?? $0 } ?? "-",
                load.thread.map(String.init) ?? "main", DurationText.text(load.durationNs),
                "\(new)", "\(r)", "\(s)", "\(j)", "\(i)", kibibytes(bytes),
            ])
            for path in load.unread { lines.append("  \(path): could not be read for its counts") }
        }
        let closure = result.closure
        rows.append(["at run time", "", "", "", "\(objects)", "\(relative)", "\(symbolic)", "\(jump)", "\(initializers)", kibibytes(size)])
        rows.append([
            "pre-main closure", "", "", "", "\(closure.objects)",
            "\(closure.relocations.relative)", "\(closure.relocations.symbolic)",
            "\(closure.relocations.jumpSlot)", "\(closure.initializers)", kibibytes(closure.sizeBytes),
        ])
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = row.enumerated().map { column, cell in
                // Names to the left, numbers to the right.
                column <= 1 ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - cell.count) + cell
            }
            lines.append(cells.joined(separator: "  "))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// As inspect's own table writes sizes.
    private func kibibytes(_ bytes: UInt64) -> String {
        bytes >= 1024 ? "\(bytes / 1024) KiB" : "\(bytes) B"
    }
}
