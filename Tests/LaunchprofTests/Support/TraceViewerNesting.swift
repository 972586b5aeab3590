import Foundation
import Testing

/// Replays how speedscope and Perfetto turn a Chrome trace's slices into nested frames, and
/// reports every place where either would nest a slice other than where it belongs.
///
/// - **speedscope** (`src/import/trace-event.ts`): per pid/tid, `B`/`E`/`X` events only; `X`
///   events sorted by `ts`, the longer first at a tie, each becoming a begin and an end
///   (`ts + dur` in doubles); begins and ends in two queues stably sorted by time. At one time a
///   begin goes first only if its name equals the name of the first end (a zero-length slice),
///   else ends go first, the end matching the open frame by name and arguments (then by name)
///   first. Ending a frame whose name differs from the open one is refused, one whose arguments
///   differ ends the open one instead; frames left open are closed at the end. Each of those is
///   a problem here, and so is a frame that ends at another time than its slice, or whose parent
///   is not the slice Perfetto nests it in.
/// - **Perfetto** (`SliceTracker::MaybeCloseStack`): per track, slices and thread-scoped
///   instants in `ts` order (ties in file order); a slice ending before the new one's start, or
///   at it (unless both are instants), is closed; a slice that starts inside the open one and
///   ends after it is dropped (`slice_drop_overlapping_complete_event`).
enum TraceViewerNesting {
    struct Problem: CustomStringConvertible {
        var viewer: String
        var track: String
        var message: String
        var description: String { "\(viewer) \(track): \(message)" }
    }

    /// An event the importers look at, with its position in the file.
    struct Event {
        var index: Int
        var name: String
        var phase: String
        var ts: Double
        var dur: Double?
        var pid: Int
        var tid: Int
        var scope: String?
        /// speedscope's frame key: the name and the arguments as `JSON.stringify` writes them.
        var key: String
    }

    /// Both viewers' problems with a trace file (`{"traceEvents": […]}` or a bare array), and
    /// Perfetto's with its thread-state lines (`PerfettoSystraceReplay`).
    static func problems(_ bytes: [UInt8]) throws -> [Problem] {
        let events = try self.events(bytes)
        let (perfettoProblems, perfettoParents) = perfetto(events)
        let threadStateProblems = try PerfettoSystraceReplay.replay(bytes).problems.map {
            Problem(viewer: "Perfetto", track: "systemTraceEvents", message: $0)
        }
        return perfettoProblems + threadStateProblems + speedscope(events, expectedParents: perfettoParents)
    }

    /// Fails the test with the first problems found, if any.
    static func expectNested(_ bytes: [UInt8], _ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let found = try problems(bytes)
        #expect(found.isEmpty, "\(what): \(found.count) nesting problem(s): \(found.prefix(6).map(\.description).joined(separator: "; "))",
            sourceLocation: sourceLocation)
    }

    static func events(_ bytes: [UInt8]) throws -> [Event] {
        let json = try JSONSerialization.jsonObject(with: Data(bytes))
        let list = (json as? [String: Any])?["traceEvents"] as? [[String: Any]] ?? (json as? [[String: Any]]) ?? []
        return list.enumerated().compactMap { index, raw in
            guard let phase = raw["ph"] as? String, let ts = (raw["ts"] as? NSNumber)?.doubleValue else { return nil }
            let name = raw["name"] as? String ?? "(unnamed)"
            var key = name
            if let args = raw["args"] as? [String: Any] { key += " " + javascriptStringify(args) }
            return Event(
                index: index, name: name, phase: phase, ts: ts, dur: (raw["dur"] as? NSNumber)?.doubleValue,
                pid: (raw["pid"] as? NSNumber)?.intValue ?? 0, tid: (raw["tid"] as? NSNumber)?.intValue ?? 0,
                scope: raw["s"] as? String, key: key)
        }
    }

    /// `JSON.stringify` of a decoded object: keys in the order they were written. Foundation
    /// does not keep that order, so keys are sorted; launchprof writes sorted keys, so the text
    /// is the same (the keys only need to compare equal between events anyway).
    static func javascriptStringify(_ value: Any) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: Perfetto

    /// Perfetto's problems and, for each slice it kept (by file position), the slice it nests
    /// it in (nil at the top).
    static func perfetto(_ events: [Event]) -> ([Problem], [Int: Int?]) {
        var problems: [Problem] = []
        var parents: [Int: Int?] = [:]
        var tracks: [String: [Event]] = [:]
        for event in events where event.phase == "X" || (event.phase == "i" && (event.scope ?? "t") == "t") {
            tracks["\(event.pid)/\(event.tid)", default: []].append(event)
        }
        for (track, trackEvents) in tracks {
            // The sorter orders by timestamp, keeping the file's order at a tie.
            let sorted = trackEvents.enumerated().sorted { ($0.element.ts, $0.offset) < ($1.element.ts, $1.offset) }.map(\.element)
            var stack: [(start: Int64, duration: Int64, index: Int)] = []
            for event in sorted {
                let start = Int64((event.ts * 1000).rounded())
                let duration = event.phase == "X" ? Int64(((event.dur ?? 0) * 1000).rounded()) : 0
                if duration < 0 {
                    problems.append(Problem(viewer: "Perfetto", track: track, message: "\(event.name) at \(event.ts) µs has a negative duration"))
                    continue
                }
                var dropped = false
                while let top = stack.last {
                    let end = top.start + top.duration
                    if end < start || (end == start && !(top.duration == 0 && duration == 0)) {
                        stack.removeLast()
                        continue
                    }
                    if start < end, start + duration > end {
                        problems.append(Problem(
                            viewer: "Perfetto", track: track,
                            message: "\(event.name) [\(event.ts) µs, +\(event.dur ?? 0)] starts inside \(trackEvents.first { $0.index == top.index }?.name ?? "?") and outlasts it: dropped"))
                        dropped = true
                    }
                    break
                }
                if dropped { continue }
                parents[event.index] = .some(stack.last?.index)
                stack.append((start, duration, event.index))
            }
        }
        return (problems, parents)
    }

    // MARK: speedscope

    static func speedscope(_ events: [Event], expectedParents: [Int: Int?]) -> [Problem] {
        var problems: [Problem] = []
        var tracks: [String: [Event]] = [:]
        var order: [String] = []
        for event in events where ["B", "E", "X"].contains(event.phase) {
            let track = "\(event.pid)/\(event.tid)"
            if tracks[track] == nil { order.append(track) }
            tracks[track, default: []].append(event)
        }
        for track in order {
            guard var trackEvents = tracks[track], !trackEvents.isEmpty else { continue }
            // Times rebased on the track's first one, in doubles, as speedscope does.
            let first = trackEvents.map(\.ts).min() ?? 0
            for index in trackEvents.indices { trackEvents[index].ts -= first }
            var begins = trackEvents.filter { $0.phase == "B" }
            var ends = trackEvents.filter { $0.phase == "E" }
            let complete = trackEvents.enumerated().filter { $0.element.phase == "X" }
                .sorted { a, b in
                    if a.element.ts != b.element.ts { return a.element.ts < b.element.ts }
                    let (x, y) = (a.element.dur ?? 0, b.element.dur ?? 0)
                    return x != y ? x > y : a.offset < b.offset
                }.map(\.element)
            for event in complete {
                begins.append(event)
                var end = event
                end.ts = event.ts + (event.dur ?? 0)
                ends.append(end)
            }
            begins = stableSortedByTime(begins)
            ends = stableSortedByTime(ends)

            var stack: [Event] = []
            var parent: [Int: Int?] = [:]
            func report(_ message: String) { problems.append(Problem(viewer: "speedscope", track: track, message: message)) }
            while !begins.isEmpty || !ends.isEmpty {
                let takeBegin: Bool
                if ends.isEmpty {
                    takeBegin = true
                } else if begins.isEmpty {
                    takeBegin = false
                } else if begins[0].ts != ends[0].ts {
                    takeBegin = begins[0].ts < ends[0].ts
                } else {
                    takeBegin = begins[0].name == ends[0].name
                }
                if takeBegin {
                    let begin = begins.removeFirst()
                    parent[begin.index] = .some(stack.last?.index)
                    stack.append(begin)
                    continue
                }
                // Among the ends at this time, the one matching the open frame by key, else by name.
                if let top = stack.last {
                    let sameTime = ends.prefix { $0.ts == ends[0].ts }
                    if let match = sameTime.indices.dropFirst().first(where: { sameTime[$0].key == top.key })
                        ?? sameTime.indices.dropFirst().first(where: { sameTime[$0].name == top.name })
                    {
                        ends.swapAt(0, match)
                    }
                }
                let end = ends.removeFirst()
                guard let top = stack.last else {
                    report("\(end.name) ends at \(end.ts) µs with no frame open")
                    continue
                }
                if end.name != top.name {
                    report("\(end.name) ends at \(end.ts) µs while \(top.name) is open: refused")
                    continue
                }
                if end.key != top.key {
                    report("\(end.name) ends at \(end.ts) µs while another \(top.name) (other arguments) is open: that one ends instead")
                }
                stack.removeLast()
                let ownEnd = top.phase == "X" ? top.ts + (top.dur ?? 0) : nil
                if let ownEnd, ownEnd != end.ts {
                    report("\(top.name) [\(top.ts + first) µs] is closed at \(end.ts + first) µs, not at its end \(ownEnd + first) µs")
                }
            }
            for open in stack.reversed() { report("\(open.name) at \(open.ts + first) µs is still open at the end") }
            for (index, speedscopeParent) in parent {
                guard let expected = expectedParents[index], expected != speedscopeParent else { continue }
                func name(_ position: Int?) -> String {
                    guard let position else { return "the top" }
                    return events.first { $0.index == position }?.name ?? "?"
                }
                report("\(name(index)) is nested in \(name(speedscopeParent)), Perfetto nests it in \(name(expected))")
            }
        }
        return problems
    }

    private static func stableSortedByTime(_ events: [Event]) -> [Event] {
        events.enumerated().sorted { ($0.element.ts, $0.offset) < ($1.element.ts, $1.offset) }.map(\.element)
    }
}
