import LaunchprofReport

/// The causes of the main thread's non-running time over the launch: who held its CPU while it
/// was runnable, what ended each wait, which file each disk wait read.
struct Causes {
    let index: TraceIndex
    let analyzer: ThreadStateAnalyzer
    let mainThread: Int32

    /// A wait of the main thread and what ended it.
    struct Wait {
        var span: ThreadTimeline.Span
        var kind: WakeCause.Kind
        var waker: TaskName?
        var ownProcess: Bool
        var launchprof: Bool
    }

    var waits: [Wait] = []
    var running: [ThreadTimeline.Span] = []
    /// Runnable spans and the time each other task held the CPU during them.
    var runnable: [ThreadTimeline.Span] = []
    var competitorNs: [Int32: UInt64] = [:]
    /// Disk waits by file path.
    var fileWaits: [(path: String, span: ThreadTimeline.Span)] = []

    init(index: TraceIndex, analyzer: ThreadStateAnalyzer, mainThread: Int32) {
        self.index = index
        self.analyzer = analyzer
        self.mainThread = mainThread
    }

    mutating func collect(_ spans: [ThreadTimeline.Span]) {
        for span in spans {
            switch span.state {
            case .running:
                running.append(span)
            case .runnable:
                runnable.append(span)
                guard let cpu = span.cpu else { continue }
                for (tid, ns) in index.occupants(cpu: cpu, from: span.startNs, to: span.endNs) where tid != mainThread && tid != 0 {
                    competitorNs[tid, default: 0] += ns
                }
            default:
                let kind = WakeCause.Kind(span.wakeup, wait: span.wait)
                var waker: TaskName?
                var own = false, launchprof = false
                if kind == .thread, let wakeup = span.wakeup {
                    waker = index.task(wakeup.wakerTID, pid: wakeup.wakerPID)
                    own = wakeup.wakerPID == mainThread
                    launchprof = wakeup.wakerPID == index.launchprofPID
                }
                waits.append(Wait(span: span, kind: kind, waker: waker, ownProcess: own, launchprof: launchprof))
                if span.state == .diskIO { fileWaits.append((file(for: span), span)) }
            }
        }
    }

    /// The top tasks on the main thread's CPU while it was runnable.
    var competitors: [TaskTime] {
        competitorNs.map { tid, ns in
            let task = index.task(tid)
            return TaskTime(task: task, ns: ns, ownProcess: task.pid == mainThread, launchprof: task.pid == index.launchprofPID)
        }.sorted { ($0.ns, -$0.task.tid) > ($1.ns, -$1.task.tid) }
    }

    var wakers: [WakeCause] {
        struct Key: Hashable {
            var kind: WakeCause.Kind
            var tid: Int32?
            var state: ThreadState
        }
        var grouped: [Key: WakeCause] = [:]
        for wait in waits {
            let key = Key(kind: wait.kind, tid: wait.waker?.tid, state: wait.span.state)
            var cause = grouped[key] ?? WakeCause(
                kind: wait.kind, task: wait.waker, state: wait.span.state, ns: 0, count: 0, ownProcess: wait.ownProcess,
                launchprof: wait.launchprof)
            cause.ns += wait.span.durationNs
            cause.count += 1
            grouped[key] = cause
        }
        return grouped.values.sorted {
            ($0.ns, $1.state.rawValue, -($0.task?.tid ?? -1)) > ($1.ns, $0.state.rawValue, -($1.task?.tid ?? -1))
        }
    }

    var lockHolders: [LockHolder] {
        var grouped: [Int32: LockHolder] = [:]
        for wait in waits where wait.span.state == .lock {
            guard let waker = wait.waker else { continue }
            var holder = grouped[waker.tid] ?? LockHolder(task: waker, ns: 0, count: 0, ownProcess: wait.ownProcess)
            holder.ns += wait.span.durationNs
            holder.count += 1
            grouped[waker.tid] = holder
        }
        return grouped.values.sorted { ($0.ns, -$0.task.tid) > ($1.ns, -$1.task.tid) }
    }

    // MARK: Files

    /// The file a disk wait read: for a wait inside a page fault, the file mapped at the
    /// address of the thread's next major fault (counted when the fault completes, after the
    /// wait); otherwise the file whose pages the thread last added to the page cache before it
    /// slept (it submitted the read, then waited for it).
    func file(for span: ThreadTimeline.Span) -> String {
        let trace = index.trace
        let switchOut = span.switchOutNs ?? span.startNs
        if span.wait?.inPageFault == true,
            let fault = trace.majorFaults.first(where: { $0.tid == mainThread && $0.timeNs >= switchOut }),
            let mapping = mapping(pid: fault.pid, address: fault.address, atNs: fault.timeNs)
        {
            return mapping.path
        }
        if let add = trace.pageCacheAdds.last(where: { $0.tid == mainThread && $0.timeNs <= switchOut }) {
            return name(SchedulerTrace.FileIdentity(device: add.device, inode: add.inode))
        }
        if let fault = trace.majorFaults.first(where: { $0.tid == mainThread && $0.timeNs >= switchOut }),
            let mapping = mapping(pid: fault.pid, address: fault.address, atNs: fault.timeNs)
        {
            return mapping.path
        }
        return "an unidentified file"
    }

    func mapping(pid: Int32, address: UInt64, atNs: UInt64) -> SchedulerTrace.FileMapping? {
        index.trace.mappings.last { $0.pid == pid && $0.timeNs <= atNs && address >= $0.start && address - $0.start < $0.length }
    }

    func name(_ file: SchedulerTrace.FileIdentity) -> String {
        if let mapped = index.trace.mappings.last(where: { $0.device == file.device && $0.inode == file.inode }) {
            return mapped.path
        }
        if let known = index.trace.knownFiles[file] { return known }
        return "device \(file.device.major):\(file.device.minor) inode \(file.inode)"
    }

    /// The files read over [startNs, endNs): the main thread's waits on each, and the process's
    /// major faults and page reads on each.
    func fileReads(from startNs: UInt64, to endNs: UInt64) -> [FileRead] {
        var reads: [String: FileRead] = [:]
        func entry(_ path: String) -> FileRead { reads[path] ?? FileRead(path: path, waitNs: 0, majorFaults: 0, pagesRead: 0) }
        for (path, span) in fileWaits {
            var read = entry(path)
            read.waitNs += span.durationNs
            reads[path] = read
        }
        let trace = index.trace
        for fault in trace.majorFaults where fault.pid == mainThread && fault.timeNs >= startNs && fault.timeNs < endNs {
            let path = mapping(pid: fault.pid, address: fault.address, atNs: fault.timeNs)?.path ?? "an unidentified file"
            var read = entry(path)
            read.majorFaults += 1
            reads[path] = read
        }
        var names: [SchedulerTrace.FileIdentity: String] = [:]
        for add in trace.pageCacheAdds where index.processThreads.contains(add.tid) && add.timeNs >= startNs && add.timeNs < endNs {
            let file = SchedulerTrace.FileIdentity(device: add.device, inode: add.inode)
            let path = names[file] ?? name(file)
            names[file] = path
            var read = entry(path)
            read.pagesRead += add.pages
            reads[path] = read
        }
        return reads.values.sorted {
            ($0.waitNs, $0.majorFaults + $0.pagesRead, $1.path) > ($1.waitNs, $1.majorFaults + $1.pagesRead, $0.path)
        }
    }
}
