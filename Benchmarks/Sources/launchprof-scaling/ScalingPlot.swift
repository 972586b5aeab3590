import Foundation

/// Draws `Reports/scaling.svg`: one panel per study, the median of each phase per size, and the
/// fitted line of the phase the study is about, with its slope written beside it.
struct ScalingPlot {
    let report: ScalingReport

    private let panelWidth = 560.0
    private let panelHeight = 400.0
    private let margin = (left: 78.0, right: 24.0, top: 52.0, bottom: 62.0)
    private static let colours = [
        "loader.map": "#1f77b4", "loader.relocate": "#d62728", "loader.init": "#2ca02c", "timeToMain": "#7f7f7f",
    ]

    func svg() -> String {
        let columns = 2
        let rows = (report.curves.count + 1) / columns
        let width = panelWidth * Double(columns)
        let height = panelHeight * Double(rows) + 70
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="DejaVu Sans, Arial, sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(width / 2)" y="26" text-anchor="middle" font-size="18" font-weight="bold">\
            How launch cost grows (launchprof run, median of \(report.runsPerPoint) runs per point)</text>
            <text x="\(width / 2)" y="46" text-anchor="middle" fill="#555">\
            \(escape("\(report.host.cpu), \(report.host.cores) cores, \(report.host.libc), \(report.measuredAt)"))</text>

            """
        for (index, curve) in report.curves.enumerated() {
            let x = Double(index % columns) * panelWidth
            let y = 60 + Double(index / columns) * panelHeight
            out += panel(curve, at: (x, y))
        }
        out += "</svg>\n"
        return out
    }

    private func panel(_ curve: ScalingReport.Curve, at origin: (x: Double, y: Double)) -> String {
        let logX = curve.kind == .relativeRelocations || curve.kind == .symbolicRelocations
        let left = origin.x + margin.left
        let right = origin.x + panelWidth - margin.right
        let top = origin.y + margin.top
        let bottom = origin.y + panelHeight - margin.bottom
        let xs = curve.points.map { Double($0.x) }
        let maxY = curve.points.flatMap { $0.medianNs.values }.max().map(Double.init) ?? 1
        let (yUnit, yScale) = maxY >= 2_000_000 ? ("ms", 1e6) : ("µs", 1e3)
        let yTicks = Self.niceTicks(upTo: maxY / yScale)
        let yTop = (yTicks.last ?? 1) * yScale
        func px(_ value: Double) -> Double {
            if logX {
                let low = log10(max(xs.min() ?? 1, 1)), high = log10(max(xs.max() ?? 10, 10))
                return left + (log10(max(value, 1)) - low) / max(high - low, 1e-9) * (right - left)
            }
            let high = max(xs.max() ?? 1, 1)
            return left + value / high * (right - left)
        }
        func py(_ ns: Double) -> Double { bottom - ns / yTop * (bottom - top) }

        var out = "<g>\n"
        out += "<text x=\"\(origin.x + panelWidth / 2)\" y=\"\(origin.y + 24)\" text-anchor=\"middle\" "
        out += "font-size=\"15\" font-weight=\"bold\">\(escape(title(curve)))</text>\n"
        // Grid and y ticks.
        for tick in yTicks {
            let yy = py(tick * yScale)
            out += "<line x1=\"\(left)\" y1=\"\(yy)\" x2=\"\(right)\" y2=\"\(yy)\" stroke=\"#e5e5e5\"/>\n"
            out += "<text x=\"\(left - 6)\" y=\"\(yy + 4)\" text-anchor=\"end\">\(Self.format(tick))</text>\n"
        }
        // x ticks at the measured sizes; a label too close to the previous one is left out.
        var lastLabel = -Double.infinity
        for value in xs {
            let xx = px(value)
            out += "<line x1=\"\(xx)\" y1=\"\(bottom)\" x2=\"\(xx)\" y2=\"\(bottom + 5)\" stroke=\"black\"/>\n"
            guard xx - lastLabel >= 24 else { continue }
            lastLabel = xx
            out += "<text x=\"\(xx)\" y=\"\(bottom + 18)\" text-anchor=\"middle\">\(Self.count(Int(value)))</text>\n"
        }
        out += "<line x1=\"\(left)\" y1=\"\(bottom)\" x2=\"\(right)\" y2=\"\(bottom)\" stroke=\"black\"/>\n"
        out += "<line x1=\"\(left)\" y1=\"\(top)\" x2=\"\(left)\" y2=\"\(bottom)\" stroke=\"black\"/>\n"
        out += "<text x=\"\((left + right) / 2)\" y=\"\(bottom + 40)\" text-anchor=\"middle\">"
        out += "\(escape(curve.xLabel))\(logX ? " (log scale)" : "")</text>\n"
        out += "<text transform=\"translate(\(origin.x + 22) \((top + bottom) / 2)) rotate(-90)\" "
        out += "text-anchor=\"middle\">median time (\(yUnit))</text>\n"

        // The fitted line of the study's phase (drawn densely so it reads on a log axis too).
        if let fit = curve.fits[curve.phase], let low = xs.min(), let high = xs.max() {
            let steps = 60
            var path = ""
            for step in 0...steps {
                let fraction = Double(step) / Double(steps)
                let value = logX
                    ? pow(10, log10(max(low, 1)) + fraction * (log10(high) - log10(max(low, 1))))
                    : low + fraction * (high - low)
                let ns = min(max(fit.intercept + fit.slope * value, 0), yTop)
                path += "\(step == 0 ? "M" : "L")\(px(value)),\(py(ns)) "
            }
            out += "<path d=\"\(path)\" fill=\"none\" stroke=\"\(Self.colours[curve.phase] ?? "black")\" "
            out += "stroke-width=\"1.5\" stroke-dasharray=\"6 4\" opacity=\"0.7\"/>\n"
        }
        // Measured medians.
        for key in PointMeasurement.keys {
            let colour = Self.colours[key] ?? "black"
            let points = curve.points.compactMap { point in point.medianNs[key].map { (px(Double(point.x)), py(Double($0))) } }
            let path = points.enumerated().map { "\($0.offset == 0 ? "M" : "L")\($0.element.0),\($0.element.1)" }
            let width = key == curve.phase ? 2.5 : 1.5
            out += "<path d=\"\(path.joined(separator: " "))\" fill=\"none\" stroke=\"\(colour)\" stroke-width=\"\(width)\"/>\n"
            for point in points {
                out += "<circle cx=\"\(point.0)\" cy=\"\(point.1)\" r=\"3.5\" fill=\"\(colour)\"/>\n"
            }
        }
        // Legend and the derived figure, on a backing so crossing lines do not hide them.
        out += "<rect x=\"\(left + 6)\" y=\"\(top - 8)\" width=\"330\" height=\"120\" fill=\"white\" "
        out += "fill-opacity=\"0.85\" stroke=\"#ddd\"/>\n"
        var legendY = top + 6
        for key in PointMeasurement.keys {
            let colour = Self.colours[key] ?? "black"
            out += "<rect x=\"\(left + 12)\" y=\"\(legendY - 9)\" width=\"14\" height=\"4\" fill=\"\(colour)\"/>\n"
            let label = key == "loader.init" ? "loader.init (all objects)" : key
            out += "<text x=\"\(left + 32)\" y=\"\(legendY - 3)\"\(key == curve.phase ? " font-weight=\"bold\"" : "")>"
            out += "\(escape(label))</text>\n"
            legendY += 16
        }
        out += "<text x=\"\(left + 12)\" y=\"\(legendY + 6)\" font-weight=\"bold\" fill=\"\(Self.colours[curve.phase] ?? "black")\">"
        out += "\(escape(slopeText(curve)))</text>\n"
        out += "<text x=\"\(left + 12)\" y=\"\(legendY + 22)\" fill=\"#555\">"
        out += "\(escape(String(format: "timeToMain: %@ per %@", Self.duration(curve.timeToMainSlopeNsPerUnit), curve.unitName)))</text>\n"
        out += "<text x=\"\(left + 12)\" y=\"\(legendY + 38)\" fill=\"#555\">dashed: least-squares line; dots: medians</text>\n"
        out += "</g>\n"
        return out
    }

    private func title(_ curve: ScalingReport.Curve) -> String {
        switch curve.kind {
        case .libraries: "Shared libraries"
        case .relativeRelocations: "Relative relocations"
        case .symbolicRelocations: "Symbolic relocations"
        case .initializers: "Initializers (constructors)"
        }
    }

    private func slopeText(_ curve: ScalingReport.Curve) -> String {
        let r2 = curve.fits[curve.phase]?.rSquared ?? 0
        return "\(curve.phase): \(Self.duration(curve.slopeNsPerUnit)) per \(curve.unitName) (fit R² \(String(format: "%.3f", r2)))"
    }

    static func duration(_ ns: Double) -> String {
        abs(ns) >= 1000 ? String(format: "%.1f µs", ns / 1000) : String(format: "%.1f ns", ns)
    }

    static func count(_ value: Int) -> String {
        value >= 1_000_000 ? "\(value / 1_000_000)M" : value >= 1_000 ? "\(value / 1_000)k" : "\(value)"
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }

    /// 0 and 4–6 round steps covering `maximum`.
    static func niceTicks(upTo maximum: Double) -> [Double] {
        guard maximum > 0 else { return [0, 1] }
        let rough = maximum / 5
        let magnitude = pow(10, floor(log10(rough)))
        let step = [1.0, 2, 2.5, 5, 10].map { $0 * magnitude }.first { $0 >= rough } ?? rough
        var ticks: [Double] = []
        var value = 0.0
        while value < maximum + step * 0.999 {
            ticks.append(value)
            value += step
        }
        return ticks
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
