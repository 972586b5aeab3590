import LaunchprofReport

/// The slow-launch reasons: each rule measures one cause on the main thread over the launch
/// (spawn → readiness) and raises a reason when it passes its threshold — a share of the launch
/// and at least `floorNs`, so that a sub-millisecond launch's microseconds raise nothing. Reasons
/// are ranked by time. The thresholds (docs/ and README list them):
///
/// | reason | measure | threshold |
/// |---|---|---|
/// | cpuContention | runnable | 15% (Perfetto's Android rule) |
/// | diskIO | disk I/O waits | 10% |
/// | lockContention | futex waits, by the thread that released them | 10% |
/// | displayServer | sleeps the X server or a compositor ended | 10% |
/// | dbus | sleeps dbus-daemon/dbus-broker or the app's gdbus thread ended | 10% |
/// | otherProcess | sleeps another process ended, per process | 10% |
/// | ownThread | sleeps one of the app's threads ended (not a lock), per thread | 10% |
/// | timer | sleeps a timer ended | 10% |
/// | uninterruptible | other uninterruptible waits | 10% |
/// | launchprof | stopped by launchprof | 5% |
/// | cpuBound | running | 50% |
///
/// Perfetto's Android rules, for comparison, are made for launches of seconds: runnable > 15%,
/// interruptible sleep > 2.9 s, blocking I/O > 450 ms, lock contention > 20%.
public enum SlowLaunchRules {
    /// No reason below 1 ms.
    public static let floorNs: UInt64 = 1_000_000

    public static func percent(_ code: SlowLaunchReason.Code) -> Int {
        switch code {
        case .cpuContention: 15
        case .launchprof: 5
        case .cpuBound: 50
        default: 10
        }
    }

    public static func thresholdText(_ code: SlowLaunchReason.Code) -> String {
        "≥ \(percent(code))% of the launch and ≥ \(DurationText.text(floorNs))"
    }

    static func passes(_ ns: UInt64, launchNs: UInt64, _ code: SlowLaunchReason.Code) -> Bool {
        ns >= floorNs && launchNs > 0 && ns * 100 >= launchNs * UInt64(percent(code))
    }

    static let displayServers: Set<String> = [
        "Xorg", "X", "Xvfb", "Xwayland", "Xephyr", "Xnest", "Xvnc", "Xtigervnc", "weston", "gnome-shell", "mutter",
        "kwin_wayland", "kwin_x11", "sway", "Hyprland", "labwc", "wayfire", "river", "cage", "picom", "compton",
        "xfwm4", "openbox", "marco", "muffin", "cinnamon", "enlightenment", "gamescope",
    ]
    static let xServers: Set<String> = ["Xorg", "X", "Xvfb", "Xwayland", "Xephyr", "Xnest", "Xvnc", "Xtigervnc"]
    static let dbusDaemons: Set<String> = ["dbus-daemon", "dbus-broker", "dbus-broker-lau"]

    static func reasons(
        launch: ThreadStateBreakdown, launchNs: UInt64, causes: Causes, fileReads: [FileRead], phases: [LaunchPhase],
        spawnNs: UInt64
    ) -> [SlowLaunchReason] {
        var reasons: [SlowLaunchReason] = []
        func percentText(_ ns: UInt64) -> String { "\(launchNs > 0 ? ns * 100 / launchNs : 0)%" }
        func add(_ code: SlowLaunchReason.Code, _ ns: UInt64, _ message: String, _ advice: String, spans: [ThreadTimeline.Span]) {
            guard passes(ns, launchNs: launchNs, code) else { return }
            reasons.append(SlowLaunchReason(
                code: code, message: message, ns: ns, percentOfLaunch: Int(launchNs > 0 ? ns * 100 / launchNs : 0),
                threshold: thresholdText(code), advice: advice, phase: phase(of: spans, phases: phases, spawnNs: spawnNs)))
        }

        // CPU contention: who held the CPU.
        let competitors = causes.competitors.prefix(3)
        let holders = competitors.map { "\($0.launchprof ? "launchprof" : $0.task.text) \(DurationText.text($0.ns))" }
        let ownShare = competitors.filter(\.ownProcess).reduce(0) { $0 + $1.ns }
        add(
            .cpuContention, launch.runnableNs,
            "main thread runnable \(percentText(launch.runnableNs)) of the launch (\(DurationText.text(launch.runnableNs))): CPU contention"
                + (holders.isEmpty ? "" : " (\(holders.joined(separator: ", ")))"),
            ownShare * 2 > competitors.reduce(0, { $0 + $1.ns })
                ? "the app's own threads took the main thread's CPU: start fewer worker threads during the launch, or lower their priority"
                : "other tasks held the CPU the main thread was ready to run on: launch on a quieter machine, or lower their priority (nice, cgroups)",
            spans: causes.runnable)

        // Disk reads, by file.
        let diskSpans = causes.fileWaits.map(\.span)
        let files = fileReads.filter { $0.waitNs > 0 }.prefix(3).map { "\(Self.fileName($0.path)) \(DurationText.text($0.waitNs))" }
        let readMessage = files.count == 1
            ? "\(DurationText.text(launch.diskIONs)) reading \(Self.fileName(fileReads[0].path)) from disk (cold cache)"
            : "\(DurationText.text(launch.diskIONs)) reading files from disk (cold cache): \(files.joined(separator: ", "))"
        add(
            .diskIO, launch.diskIONs, readMessage,
            "the files were not in the page cache (a first launch after boot, an update, or memory pressure): fewer or smaller libraries and data files, or read them ahead before the launch",
            spans: diskSpans)

        // Lock contention, by holder.
        for holder in causes.lockHolders {
            let spans = causes.waits.filter { $0.span.state == .lock && $0.waker?.tid == holder.task.tid }.map(\.span)
            let who = holder.ownProcess ? "thread \(holder.task.thread) (\(holder.task.tid))" : holder.task.text
            add(
                .lockContention, holder.ns,
                "\(DurationText.text(holder.ns)) waiting on a lock held by \(who) (\(holder.count) wait\(holder.count == 1 ? "" : "s"))",
                "the main thread blocked on a lock (a futex) that \(who) held: shorten the critical section, or do not take that lock on the main thread during the launch",
                spans: spans)
        }
        let unreleased = causes.waits.filter { $0.span.state == .lock && $0.waker == nil }
        let unreleasedNs = unreleased.reduce(0) { $0 + $1.span.durationNs }
        add(
            .lockContention, unreleasedNs,
            "\(DurationText.text(unreleasedNs)) in futex waits that a timeout or an interrupt ended",
            "the main thread waited on a lock or condition until its timeout: find what it waits for (launchprof run --sample names the function)",
            spans: unreleased.map(\.span))

        // Sleeps ended by other tasks, grouped by what they are.
        let sleeps = causes.waits.filter { $0.span.state == .sleeping }
        var byProcess: [String: (code: SlowLaunchReason.Code, ns: UInt64, count: Int, spans: [ThreadTimeline.Span], who: String)] = [:]
        for wait in sleeps where wait.kind == .thread && !wait.launchprof {
            guard let waker = wait.waker else { continue }
            let process = waker.process ?? waker.thread
            let code: SlowLaunchReason.Code
            let key: String
            let who: String
            if wait.ownProcess {
                code = waker.thread == "gdbus" ? .dbus : .ownThread
                key = code == .dbus ? "dbus" : "thread \(waker.tid)"
                who = code == .dbus ? "D-Bus (replies through the app's gdbus thread)" : "the app's thread \(waker.thread) (\(waker.tid))"
            } else if displayServers.contains(process) {
                code = .displayServer
                key = "display \(process)"
                who = xServers.contains(process) ? "the X server (\(process))" : "the compositor (\(process))"
            } else if dbusDaemons.contains(process) {
                code = .dbus
                key = "dbus"
                who = "D-Bus (\(process))"
            } else {
                code = .otherProcess
                key = "process \(waker.pid ?? waker.tid)"
                who = "\(process) (\(waker.pid ?? waker.tid))"
            }
            var entry = byProcess[key] ?? (code, 0, 0, [], who)
            entry.ns += wait.span.durationNs
            entry.count += 1
            entry.spans.append(wait.span)
            byProcess[key] = entry
        }
        for (_, entry) in byProcess.sorted(by: { $0.key < $1.key }) {
            let unit = entry.code == .displayServer && entry.who.hasPrefix("the X server") ? "round trip" : "wake-up"
            let advice: String
            switch entry.code {
            case .displayServer:
                advice = "each synchronous request waits for the display server's answer: batch requests, avoid round trips (XSync, reading properties, wl_display_roundtrip) before the first frame"
            case .dbus:
                advice = "synchronous D-Bus calls during the launch (name requests, portals, the accessibility bus): make them asynchronous or defer them past the first frame"
            case .ownThread:
                advice = "the main thread waited for work handed to another thread: do it after the first frame, or do not wait for it"
            default:
                advice = "the main thread waited for another process to answer: make the call asynchronous, or defer it past the first frame"
            }
            add(
                entry.code, entry.ns,
                "\(DurationText.text(entry.ns)) waiting for \(entry.who) (\(entry.count) \(unit)\(entry.count == 1 ? "" : "s"))",
                advice, spans: entry.spans)
        }

        let timers = sleeps.filter { $0.kind == .timer }
        let timerNs = timers.reduce(0) { $0 + $1.span.durationNs }
        add(
            .timer, timerNs,
            "\(DurationText.text(timerNs)) sleeping until timers expired (\(timers.count) sleep\(timers.count == 1 ? "" : "s") or timeout\(timers.count == 1 ? "" : "s"))",
            "the main thread slept or waited for a timeout: remove fixed delays and polling loops from the launch",
            spans: timers.map(\.span))

        let uninterruptible = causes.waits.filter { $0.span.state == .other }
        let blockedIn = Dictionary(grouping: uninterruptible, by: { $0.span.wait?.blockedIn ?? "the kernel" })
            .map { ($0.key, $0.value.reduce(0) { $0 + $1.span.durationNs }) }.sorted { ($0.1, $1.0) > ($1.1, $0.0) }
        add(
            .uninterruptible, launch.otherNs,
            "\(DurationText.text(launch.otherNs)) in uninterruptible waits"
                + (blockedIn.isEmpty ? "" : " (in \(blockedIn.prefix(2).map { $0.0 }.joined(separator: ", ")))"),
            "the main thread waited inside the kernel for something other than disk reads (a kernel lock, the memory map's lock): see where with --sample",
            spans: uninterruptible.map(\.span))

        add(
            .launchprof, launch.tracedNs,
            "launchprof held the main thread stopped \(DurationText.text(launch.tracedNs)) (\(percentText(launch.tracedNs)) of the launch)",
            "the observer's stops: --observer uprobe stops the child only at its exec",
            spans: causes.waits.filter { $0.span.state == .traced }.map(\.span))

        add(
            .cpuBound, launch.runningNs,
            "main thread on a CPU \(percentText(launch.runningNs)) of the launch (\(DurationText.text(launch.runningNs))): the launch is the app's own work",
            "see which functions with launchprof run --sample, and defer what the first frame does not need",
            spans: causes.running)

        return reasons.sorted { ($0.ns, $1.code.rawValue) > ($1.ns, $0.code.rawValue) }
    }

    /// The phase holding most of `spans` (the shortest among equals: the innermost).
    static func phase(of spans: [ThreadTimeline.Span], phases: [LaunchPhase], spawnNs: UInt64) -> String? {
        guard !spans.isEmpty else { return nil }
        var best: (name: String, ns: UInt64, length: UInt64)?
        for phase in phases where phase.durationNs > 0 {
            let start = spawnNs + phase.startNs, end = spawnNs + phase.endNs
            let ns = spans.reduce(UInt64(0)) { total, span in
                let from = max(start, span.startNs), to = min(end, span.endNs)
                return total + (to > from ? to - from : 0)
            }
            guard ns > 0 else { continue }
            if best == nil || ns > best!.ns || (ns == best!.ns && phase.durationNs < best!.length) {
                best = (phase.name + (phase.object.map { " \($0)" } ?? ""), ns, phase.durationNs)
            }
        }
        return best?.name
    }

    static func fileName(_ path: String) -> String {
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }
}
