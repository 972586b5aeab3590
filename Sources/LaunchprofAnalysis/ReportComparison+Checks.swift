import LaunchprofReport

extension ReportComparison {
    /// Refuses a pair of reports no verdict can be drawn from: a side with no runs, the same
    /// runs on both sides (one report twice), or two different programs.
    ///
    /// Base and new are normally two builds of one program, so their build-ids differ and
    /// their paths may (`old/app`, `new/app`): the program is the same when the build-ids are,
    /// or else when the file names are. `allowDifferentPrograms` is for a deliberate rename.
    public static func checkComparable(
        base: (path: String, report: LaunchReport), new: (path: String, report: LaunchReport),
        allowDifferentPrograms: Bool
    ) throws(LaunchReportError) {
        for (path, report) in [base, new] where report.runs.isEmpty {
            throw .cannotCompare(
                reason: "'\(path)' has no runs (its summary counts \(report.summary.runs)), so there is nothing to compare")
        }
        if base.report.runs == new.report.runs {
            throw .cannotCompare(
                reason: "'\(base.path)' and '\(new.path)' hold the same runs (the same report twice); compare two measurements")
        }
        guard !allowDifferentPrograms else { return }
        let a = base.report.target
        let b = new.report.target
        if let x = a.buildID, let y = b.buildID, x == y { return }
        guard fileName(a.path) == fileName(b.path) else {
            throw .cannotCompare(
                reason: "'\(base.path)' measured \(a.path)\(a.buildID.map { " (build \($0))" } ?? ""), '\(new.path)' measured \(b.path)\(b.buildID.map { " (build \($0))" } ?? ""): different programs; give --allow-different-programs if one is a renamed build of the other")
        }
    }

    private static func fileName(_ path: String) -> Substring {
        path.split(separator: "/").last ?? Substring(path)
    }
}
