import LaunchprofReport
import Testing

@testable import LaunchprofTracing

/// The rules both observers share, on plain hits: no process, no clock.
@Suite("Boundary recorder")
struct BoundaryRecorderTests {
    /// Feeds `hits` (boundaries, time) to one recorder and returns every event it recorded.
    private func record(_ hits: [([Boundary], UInt64)], into recorder: inout BoundaryRecorder) -> [LaunchEvent] {
        hits.flatMap { recorder.hit($0.0, atNs: $0.1) }
    }

    private func record(_ hits: [([Boundary], UInt64)]) -> [LaunchEvent] {
        var recorder = BoundaryRecorder()
        return record(hits, into: &recorder)
    }

    @Test func eachBoundaryBecomesItsEvent() {
        let events = record([
            ([.relocationStart], 10), ([.objectInit(path: "libc.so.6")], 20), ([.entry], 30),
            ([.programInit], 40), ([.main], 50),
        ])
        #expect(events == [
            .relocationStarted(atNs: 10), .relocationFinished(atNs: 20),
            .objectInitStarted(path: "libc.so.6", atNs: 20), .entryReached(atNs: 30),
            .programInitStarted(atNs: 40), .mainReached(atNs: 50),
        ])
    }

    @Test func onlyTheFirstHitOfABoundaryCounts() {
        let events = record([
            ([.relocationStart], 10), ([.relocationStart], 11), ([.objectInit(path: "a.so")], 20),
            ([.objectInit(path: "a.so")], 21), ([.objectInit(path: "b.so")], 22),
        ])
        #expect(events == [
            .relocationStarted(atNs: 10), .relocationFinished(atNs: 20),
            .objectInitStarted(path: "a.so", atNs: 20), .objectInitStarted(path: "b.so", atNs: 22),
        ])
    }

    /// Relocation ends at the first other boundary, whichever it is, and only once.
    @Test(arguments: [Boundary.objectInit(path: "a.so"), .entry, .programInit, .main, .libcStartMain])
    func relocationEndsAtTheFirstOtherBoundary(_ next: Boundary) {
        let events = record([([.relocationStart], 10), ([next], 25), ([.programInit, .entry], 30)])
        #expect(events.prefix(2) == [.relocationStarted(atNs: 10), .relocationFinished(atNs: 25)])
        #expect(events.filter { if case .relocationFinished = $0 { true } else { false } }.count == 1)
    }

    /// `__libc_start_main` records nothing of its own.
    @Test func libcStartMainRecordsNoEvent() {
        #expect(record([([.libcStartMain], 10)]).isEmpty)
        #expect(record([([.libcStartMain], 10), ([.main], 20)]) == [.mainReached(atNs: 20)])
    }

    /// Without a relocation start there is no relocation end.
    @Test func noRelocationEndWithoutAStart() {
        #expect(record([([.entry], 10), ([.main], 20)]) == [.entryReached(atNs: 10), .mainReached(atNs: 20)])
    }

    /// The hit that reaches `main` is the last one: later hits (a probe in code main calls)
    /// record nothing; boundaries sharing main's hit still count.
    @Test func nothingCountsAfterMain() {
        var recorder = BoundaryRecorder()
        let events = record(
            [([.main, .programInit], 10), ([.objectInit(path: "late.so")], 20), ([.entry], 30)], into: &recorder)
        #expect(events == [.mainReached(atNs: 10), .programInitStarted(atNs: 10)])
        #expect(recorder.reachedMain)
    }

    /// Several boundaries at one address count in the order given, at the same time.
    @Test func aSharedHitRecordsEveryBoundaryInOrder() {
        let events = record([([.relocationStart], 5), ([.objectInit(path: "a.so"), .programInit], 10)])
        #expect(events == [
            .relocationStarted(atNs: 5), .relocationFinished(atNs: 10),
            .objectInitStarted(path: "a.so", atNs: 10), .programInitStarted(atNs: 10),
        ])
    }

    /// An exec starts over: the new image's boundaries count again, even after `main`.
    @Test func aNewImageStartsOver() {
        var recorder = BoundaryRecorder()
        _ = record([([.relocationStart], 10), ([.main], 20)], into: &recorder)
        recorder.startImage()
        #expect(!recorder.reachedMain)
        let events = record([([.relocationStart], 30), ([.main], 40)], into: &recorder)
        #expect(events == [.relocationStarted(atNs: 30), .relocationFinished(atNs: 40), .mainReached(atNs: 40)])
    }

    /// An image that execs before relocation ends leaves no half-open relocation to the next.
    @Test func aNewImageForgetsAnOpenRelocation() {
        var recorder = BoundaryRecorder()
        _ = record([([.relocationStart], 10)], into: &recorder)
        recorder.startImage()
        #expect(record([([.entry], 30)], into: &recorder) == [.entryReached(atNs: 30)])
    }
}
