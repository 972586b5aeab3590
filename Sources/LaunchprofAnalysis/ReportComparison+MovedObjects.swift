import LaunchprofReport

extension ReportComparison {
    /// Libraries that moved between the two reports: base and new built in two folders (CI: two
    /// checkouts) load the app's own `../base/build/libx.so` and `build/libx.so`, one library at
    /// two paths. Of the objects (a `loader.init`'s library, a `dlopen`'s file, an imported
    /// module) only one report has, two are the same library when they have the same identity —
    /// the soname `soname` reads from the file, else the file name — and no other object only
    /// one side has shares it (two candidates would be a guess). Returns each moved object's
    /// new path → its base path.
    public static func movedObjects(
        base: LaunchReport, new: LaunchReport, soname: (String) -> String? = { _ in nil }
    ) -> [String: String] {
        func objects(_ report: LaunchReport) -> Set<String> {
            Set(report.runs.flatMap { $0.phases.compactMap(\.object) })
        }
        let baseObjects = objects(base), newObjects = objects(new)
        func identities(_ only: Set<String>) -> [String: [String]] {
            Dictionary(grouping: only) { path in soname(path) ?? String(path.split(separator: "/").last ?? Substring(path)) }
        }
        let baseOnly = identities(baseObjects.subtracting(newObjects))
        let newOnly = identities(newObjects.subtracting(baseObjects))
        var moved: [String: String] = [:]
        for (identity, newPaths) in newOnly {
            guard newPaths.count == 1, let basePaths = baseOnly[identity], basePaths.count == 1 else { continue }
            moved[newPaths[0]] = basePaths[0]
        }
        return moved
    }

    /// `key` (a phase or state key of the base report) with a moved object's base path replaced
    /// by its new one, so both reports' samples of the library meet under one key.
    static func renamingMoved(_ key: String, _ newPathOfBase: [String: String]) -> String {
        guard !newPathOfBase.isEmpty, let open = key.firstIndex(of: "[") else { return key }
        // The object is between the first '[' and the last ']' (a path may hold brackets).
        guard let close = key.lastIndex(of: "]"), open < close else { return key }
        let object = String(key[key.index(after: open)..<close])
        guard let renamed = newPathOfBase[object] else { return key }
        return String(key[...open]) + renamed + String(key[close...])
    }
}
