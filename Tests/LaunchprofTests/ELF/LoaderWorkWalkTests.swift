import Foundation
import LaunchprofReport
import Testing

@testable import LaunchprofELF

/// The loader-work walk steps over members that can no longer change a count (their hash
/// table's pages all read, no export of the name's hash); its counts must be the exhaustive
/// walk's, where every name is tested against every member until its definer.
@Suite("ELF: loader-work walk")
struct LoaderWorkWalkTests {
    @Test("stepping over filled members gives the exhaustive walk's counts, object by object",
          arguments: ["/usr/bin/gdb", "/usr/bin/python3", "/usr/bin/git", "/bin/true"])
    func steppingMatchesExhaustive(_ program: String) throws {
        let closure = DependencyResolver.system().resolve(program: try ELFImage.read(path: program), environment: [:])
        let stepping = LoaderWorkAnalyzer.analyze(closure)
        let exhaustive = LoaderWorkAnalyzer.analyze(closure, exhaustive: true)
        #expect(stepping.count == closure.entries.count)
        for (index, entry) in closure.entries.enumerated() {
            #expect(stepping[index] == exhaustive[index], "\(entry.image.path)")
        }
        let total = stepping.reduce(LoaderWork(), +)
        // Every program here looks names up in libc at least: the walks had work to compare.
        #expect(total.lookups > 0 && total.scopeSteps >= total.lookups && total.symbolTablePages > 0)
    }
}
