import LaunchprofReport
import LaunchprofTracing
import Testing

/// The one merge of event streams, on plain values: (name, time) pairs, "exit" the exit.
@Suite("EventMerge")
struct EventMergeTests {
    typealias Event = (name: String, time: UInt64?)

    private func merge(_ ordered: [Event], _ placed: [Event]) -> [String] {
        EventMerge.merge(ordered, placed, time: \.time, isExit: { $0.name == "exit" }).map(\.name)
    }

    @Test("placed events go by time among the ordered ones, which keep their order")
    func byTime() {
        let ordered: [Event] = [("spawn", 0), ("exec", 10), ("main", 30), ("exit", 50)]
        let placed: [Event] = [("hookB", 40), ("hookA", 20)]
        #expect(merge(ordered, placed) == ["spawn", "exec", "hookA", "main", "hookB", "exit"])
    }

    @Test("at equal times the ordered event comes first, and equal placed events keep their order")
    func ties() {
        let ordered: [Event] = [("exec", 10), ("main", 30), ("exit", 50)]
        let placed: [Event] = [("first", 30), ("second", 30), ("third", 10)]
        #expect(merge(ordered, placed) == ["exec", "third", "main", "first", "second", "exit"])
    }

    @Test("the exit stays last: events after it go just before it")
    func exitLast() {
        let ordered: [Event] = [("exec", 10), ("exit", 50)]
        #expect(merge(ordered, [("late", 70), ("later", 90)]) == ["exec", "late", "later", "exit"])
        // Without an exit, later events simply follow.
        #expect(merge([("exec", 10)], [("late", 70)]) == ["exec", "late"])
    }

    @Test("an empty stream gives the other one, in order")
    func empty() {
        let ordered: [Event] = [("exec", 10), ("note", nil), ("exit", 50)]
        #expect(merge(ordered, []) == ["exec", "note", "exit"])
        #expect(merge([], [("b", 20), ("a", 10)]) == ["a", "b"])
        #expect(merge([], []).isEmpty)
    }

    @Test("already sorted input stays as it is (stable), untimed events stay after their predecessor")
    func stable() {
        let ordered: [Event] = [("spawn", 0), ("exec", 10), ("note", nil), ("init", 20), ("exit", 40)]
        let placed: [Event] = [("h1", 5), ("h2", 5), ("h3", 15), ("h4", 30)]
        #expect(merge(ordered, placed) == ["spawn", "h1", "h2", "exec", "note", "h3", "init", "h4", "exit"])
        // The same input twice gives the same output.
        #expect(merge(ordered, placed) == merge(ordered, placed))
    }

    @Test("launch events: a hook after the exit stays before it; a hit at an image's start follows it")
    func launchEvents() {
        let traced: [LaunchEvent] = [
            .spawned(atNs: 0), .imageStarted(image: 0, path: "/a", atNs: 10),
            .unobservable(phase: "main", reason: "r"), .exited(.exited(code: 0), atNs: 50),
        ]
        let observed: [LaunchEvent] = [
            .hook(HookEvent(kind: .begin, name: "late", atNs: 60)), .relocationStarted(atNs: 10),
        ]
        #expect(EventMerge.merge(traced, observed) == [
            .spawned(atNs: 0), .imageStarted(image: 0, path: "/a", atNs: 10),
            .unobservable(phase: "main", reason: "r"), .relocationStarted(atNs: 10),
            .hook(HookEvent(kind: .begin, name: "late", atNs: 60)), .exited(.exited(code: 0), atNs: 50),
        ])
        #expect(LaunchEvent.unobservable(phase: "p", reason: "r").timeNs == nil)
        #expect(LaunchEvent.mainReached(atNs: 7).timeNs == 7)
    }
}
