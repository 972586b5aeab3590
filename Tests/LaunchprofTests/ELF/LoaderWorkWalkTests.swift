import Foundation
import LaunchprofReport
import Testing

@testable import LaunchprofELF

/// The loader-work walk steps over members that can no longer change a count (their hash
/// table's pages all read, no export of the name's hash); its counts must be the exhaustive
/// walk's, where every name is tested against every member until its definer.
@Suite("ELF: loader-work walk")
struct LoaderWorkWalkTests {
    /// With two threads each walks every other name; a member is stepped over once their marks
    /// together fill its table, at whatever name each thread notices.
    @Test("stepping over filled members gives the exhaustive walk's counts, object by object, on one thread or two",
          arguments: ["/usr/bin/gdb", "/usr/bin/python3", "/usr/bin/git", "/bin/true"], [1, 2])
    func steppingMatchesExhaustive(_ program: String, threads: Int) throws {
        let closure = DependencyResolver.system().resolve(program: try ELFImage.read(path: program), environment: [:])
        let stepping = LoaderWorkAnalyzer.analyze(closure, exhaustive: false, threads: threads)
        let exhaustive = LoaderWorkAnalyzer.analyze(closure, exhaustive: true)
        #expect(stepping.count == closure.entries.count)
        for (index, entry) in closure.entries.enumerated() {
            #expect(stepping[index] == exhaustive[index], "\(entry.image.path)")
        }
        let total = stepping.reduce(LoaderWork(), +)
        // Every program here looks names up in libc at least: the walks had work to compare.
        #expect(total.lookups > 0 && total.scopeSteps >= total.lookups && total.symbolTablePages > 0)
    }

    /// `inspect` replays each object on a second thread as the resolver finds it; the counts
    /// must be the one-thread analysis's, whatever the interleaving (LD_PRELOAD puts an object
    /// ahead of the program's own libraries; a missing library leaves a hole in the closure).
    @Test("the two-thread pipeline gives the one-thread analysis's counts, object by object",
          arguments: [
            ("/usr/bin/gdb", [:]), ("/usr/bin/python3", [:]), ("/bin/true", [:]),
            ("/usr/bin/git", ["LD_PRELOAD": "libz.so.1"]),
          ] as [(String, [String: String])])
    func pipelineMatchesAnalyze(_ program: String, _ environment: [String: String]) throws {
        let image = try ELFImage.read(path: program)
        let pipeline = LoaderWorkAnalyzer.Pipeline()
        var added: [String] = []
        let closure = DependencyResolver.system().resolve(program: image, environment: environment) { entry in
            added.append(entry.image.path)
            pipeline.add(entry.image)
        }
        #expect(added == closure.entries.map(\.image.path), "every entry, in load order")
        let piped = pipeline.finish(closure)
        let alone = LoaderWorkAnalyzer.analyze(closure)
        #expect(piped.count == closure.entries.count)
        for (index, entry) in closure.entries.enumerated() {
            #expect(piped[index] == alone[index], "\(entry.image.path)")
        }
        #expect(piped.reduce(LoaderWork(), +).lookups > 0)
    }

    @Test("the pipeline given other objects than the closure's analyzes the closure afresh")
    func pipelineOfAnotherClosure() throws {
        let resolver = DependencyResolver.system()
        let closure = resolver.resolve(program: try ELFImage.read(path: "/usr/bin/git"), environment: [:])
        let pipeline = LoaderWorkAnalyzer.Pipeline()
        pipeline.add(try ELFImage.read(path: "/bin/true"))
        #expect(pipeline.finish(closure) == LoaderWorkAnalyzer.analyze(closure))
    }
}
