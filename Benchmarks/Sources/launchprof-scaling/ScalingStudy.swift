/// One curve of the study: what grows, the sizes measured, and which phase answers it.
struct ScalingStudy: Sendable {
    enum Kind: String, Codable, Sendable, CaseIterable {
        case libraries
        case relativeRelocations
        case symbolicRelocations
        case initializers
    }

    var kind: Kind
    var sizes: [Int]
    /// The phase whose slope is the per-unit cost (the other phases are recorded too).
    var phase: String
    /// How the derived figure is quoted: "µs per library", "ns per relocation", …
    var unitName: String
    var xLabel: String

    static let all: [ScalingStudy] = [
        ScalingStudy(
            kind: .libraries, sizes: [1, 10, 50, 100, 200], phase: "loader.map",
            unitName: "library", xLabel: "shared libraries linked"),
        ScalingStudy(
            kind: .relativeRelocations, sizes: [1_000, 10_000, 100_000, 1_000_000], phase: "loader.relocate",
            unitName: "relative relocation", xLabel: "R_X86_64_RELATIVE relocations"),
        ScalingStudy(
            kind: .symbolicRelocations, sizes: [1_000, 10_000, 100_000, 1_000_000], phase: "loader.relocate",
            unitName: "symbolic relocation", xLabel: "R_X86_64_64 relocations (1,024 symbols, another library)"),
        ScalingStudy(
            kind: .initializers, sizes: [0, 10, 100, 1_000], phase: "loader.init",
            unitName: "initializer", xLabel: "constructors in one library"),
    ]

    /// `--quick`: the smallest sizes only, for a smoke test of the study itself.
    var quick: ScalingStudy {
        var study = self
        study.sizes = Array(sizes.prefix(3))
        return study
    }
}
