import LaunchprofReport

/// Renders an `InspectReport` as plain text for a terminal: the program, the closure one
/// object per line, missing libraries, totals and advice.
public struct InspectTextRenderer: Sendable {
    public init() {}

    public func render(_ report: InspectReport) -> String {
        var lines: [String] = []
        let program = report.program
        if let script = report.script {
            let argument = script.interpreterArgument.map { " \($0)" } ?? ""
            lines.append("script       \(script.path) (#!\(script.interpreter)\(argument))")
        }
        lines.append("program      \(program.path)")
        lines.append("type         \(program.type), \(program.elfClass) \(program.machine)")
        lines.append("interpreter  \(program.interpreter ?? "none (no loader work)")")
        lines.append("build-id     \(program.buildID ?? "none")")
        lines.append("symbols      \(program.stripped ? "stripped" : "not stripped")")
        if program.usesLoader || !program.hashStyles.isEmpty {
            lines.append("binding      \(program.binding)")
            lines.append("hash         \(program.hashStyles.isEmpty ? "none" : program.hashStyles.joined(separator: ", "))")
        }
        lines.append("tls          \(program.tlsSizeBytes) bytes")
        if program.usesLoader {
            lines.append("cost model   \(costModelLine(report.costModel))")
        }

        if report.objects.count > 1 || !report.missing.isEmpty {
            lines.append("")
            let header = ["#", "object", "via", "relative", "symbolic", "jump", "init", "size"]
            var rows: [[String]] = []
            for (index, object) in report.objects.enumerated() {
                let relocations = object.relocations
                let relative = relocations.relativeRELR > 0 ? "\(relocations.relative)r" : "\(relocations.relative)"
                rows.append([
                    "\(index)", object.loadedAs, object.foundVia, relative, "\(relocations.symbolic)",
                    "\(relocations.jumpSlot)\(object.binding == "now" ? "!" : "")", "\(object.initializers.total)",
                    kibibytes(object.sizeBytes),
                ])
            }
            lines += TextTable(rows: [header] + rows, rightAligned: [0, 3, 4, 5, 6, 7]).lines
            lines.append("(r: relative relocations packed with DT_RELR; !: bound at start-up)")
        }

        if !report.missing.isEmpty {
            lines.append("")
            lines.append("missing")
            for missing in report.missing {
                lines.append("  \(missing.name): \(missing.reason), needed by \(missing.neededBy.joined(separator: ", "))")
            }
        }

        let totals = report.totals
        lines.append("")
        lines.append("totals")
        lines.append("  objects      \(totals.objects) (\(kibibytes(totals.sizeBytes)))")
        let relocations = totals.relocations
        lines.append(
            "  relocations  \(relocations.total): \(relocations.relative) relative (\(relocations.relativeRELR) in DT_RELR), "
                + "\(relocations.symbolic) symbolic, \(relocations.jumpSlot) jump slots, \(relocations.tls) TLS, "
                + "\(relocations.copy) copy, \(relocations.irelative) IRELATIVE, \(relocations.other) other")
        lines.append("  symbols      \(totals.importedSymbols) imported, \(totals.exportedSymbols) exported")
        lines.append("  initializers \(totals.initializers), finalizers \(totals.finalizers)")
        if program.usesLoader {
            let mark = report.costModel.calibration == nil ? " (uncalibrated)" : ""
            let work = totals.loaderWork
            lines.append("  loader work  ~\(microseconds(totals.estimatedLoaderNs)) estimated\(mark) for loader.map + loader.relocate:")
            lines.append(
                "               \(work.mappedObjects) objects mapped (\(work.segments) segments), \(work.relative) address adjustments, "
                    + "\(work.lookups) lookups searching \(work.scopeSteps) objects, \(work.pagesTouched) pages written, "
                    + "\(work.versionChecks) version checks, \(work.symbolTablePages) symbol-table pages read "
                    + "(\(work.symbolTableFaults) faults)")
        } else {
            lines.append("  loader work  none: statically linked, no dynamic loader runs")
        }

        if !report.advice.isEmpty {
            lines.append("")
            lines.append("advice")
            for item in report.advice {
                let cost = item.estimatedNs > 0 ? " [~\(microseconds(item.estimatedNs))]" : ""
                lines.append("  - \(item.message)\(cost)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Which cost model the estimates use: the host's calibration, or the built-in defaults.
    private func costModelLine(_ model: LaunchCostModel) -> String {
        guard let calibration = model.calibration else {
            return "uncalibrated: built-in defaults from Reports/scaling.json (run `launchprof calibrate` for this host)"
        }
        let permille = calibration.rSquaredPermille
        let fraction = String(abs(permille) % 1000)
        let rSquared = (permille < 0 ? "-" : "") + "\(abs(permille) / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
        return "calibrated on this host (\(calibration.cpu), kernel \(calibration.kernel)) at \(calibration.measuredAt), "
            + "R² \(rSquared)"
    }

    private func kibibytes(_ bytes: UInt64) -> String {
        bytes >= 1024 ? "\(bytes / 1024) KiB" : "\(bytes) B"
    }

    private func microseconds(_ ns: Int) -> String {
        DurationText.wholeMicroseconds(ns, from: 10_000)
    }
}
