import LaunchprofCore

/// The study's programs come from launchprof's own generator (`LaunchprofCore.ProgramGenerator`,
/// shared with `launchprof calibrate`): one executable per (study, size), built with cc.
extension ProgramGenerator {
    /// The executable for `size` units of `kind`, built if missing.
    func program(_ kind: ScalingStudy.Kind, size: Int) throws -> String {
        switch kind {
        case .libraries: try libraries(size)
        case .relativeRelocations: try relocations(size, symbolic: false)
        case .symbolicRelocations: try relocations(size, symbolic: true)
        case .initializers: try initializers(size)
        }
    }
}
