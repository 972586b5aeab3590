import CLaunchprof
import LaunchprofReport
import LaunchprofSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension LoaderWorkAnalyzer {
    /// `LoaderWorkAnalyzer.analyze` on two CPUs, for `inspect`: each object's relocations are
    /// replayed on a second thread as the resolver adds it to the closure (`add`, from the
    /// resolver's `onEntry`), while the resolver goes on finding and reading the next ones;
    /// `finish` then walks the names through the scope, split between the caller and that same
    /// thread. Same counts as `analyze`; on gdb's 59 objects the scans overlap nearly all of the
    /// resolution.
    public final class Pipeline: @unchecked Sendable {
        private let queue = ImageQueue()
        private let shared = ScannedObjects()
        private let helper = WalkHelper()
        private let scanner: DedicatedThread<Void>
        private var finished = false
        /// The caller's CPU affinity while it is kept on the CPU the scanner is kept off.
        private var callerAffinity: lp_cpu_mask?

        public init() {
            let queue = self.queue
            let shared = self.shared
            let helper = self.helper
            scanner = DedicatedThread(.offCurrentCPU) {
                // Made here, not by the caller: its memory's first touch is the scanner's, beside
                // the resolver.
                let names = LookupNameTable(expectedNames: ScannedObjects.expectedNames)
                shared.names = names
                var position = 0
                while let image = queue.next() {
                    shared.objects.append(ScannedObject(image, position: position, names: names))
                    position += 1
                }
                // The walk's index too, while the caller reads the cost model (`finish`).
                shared.candidates = CandidateIndex(names: names, memberCount: position)
                // Then this thread walks half of the names, if `finish` asks it to.
                helper.serve(afterPosting: shared.scanned)
            }
            // The caller stays on the CPU the scanner keeps off until `finish`: when a thread that
            // waited is woken, a VM's scheduler puts it on the waker's CPU (an idle vCPU looks
            // preempted), and the two threads then shared one CPU for the whole walk.
            if let cpu = scanner.keptOffCPU {
                var saved = lp_cpu_mask()
                if lp_pin_self(cpu, &saved) == 0 { callerAffinity = saved }
            }
        }

        private func releaseCaller() {
            if var saved = callerAffinity {
                lp_restore_affinity(&saved)
                callerAffinity = nil
            }
        }

        /// The next object of the closure, in load order (the program first).
        public func add(_ image: ELFImage) {
            queue.push(image)
        }

        /// The loader work of `closure`, whose entries were all passed to `add` in order.
        /// `meanwhile` runs first, while the scanner finishes the last objects (the caller would
        /// otherwise only wait for it).
        public func finish(_ closure: Closure, meanwhile: () -> Void = {}) -> [LoaderWork] {
            queue.close()
            finished = true
            meanwhile()
            // Without a thread of its own (none could be started) the scanner runs here, now,
            // and the walk has no second thread.
            let helping: WalkHelper? = scanner.isRunning ? helper : nil
            if helping == nil {
                helper.release()
                scanner.join()
            }
            shared.scanned.wait()
            defer {
                // Whether or not the walk used it, the scanner's thread ends now, on its own.
                helper.release()
                scanner.detach()
                releaseCaller()
            }
            let scanned = shared.objects
            let names = shared.names!
            guard scanned.count == closure.entries.count,
                zip(scanned, closure.entries).allSatisfy({ $0.fileID == $1.image.fileID })
            else {
                // Not the closure the scans saw: analyze it from the start.
                return LoaderWorkAnalyzer.analyze(closure)
            }
            return LoaderWorkAnalyzer.finish(
                closure.entries, scanned: scanned, names: names, exhaustive: false, threads: 2, helper: helping,
                candidates: shared.candidates)
        }

        deinit {
            // Never finished (an inspection that failed): let the scanner end.
            if !finished {
                queue.close()
                helper.release()
                scanner.join()
                releaseCaller()
            }
        }
    }

    /// The scanner's results, read by the caller once `scanned` is posted (the table and the
    /// scans are the scanner's alone until then).
    private final class ScannedObjects: @unchecked Sendable {
        /// The closure's size is unknown yet: room for gdb's ~11,000 names, grown past that.
        static let expectedNames = 16_384
        var names: LookupNameTable?
        var objects: [ScannedObject] = []
        var candidates: CandidateIndex?
        let scanned = Semaphore()
    }
}

/// A thread done with its own work that runs one more body for a walk, so that the walk's
/// second half starts on a thread already running (a new thread takes ~70 µs to start on a
/// VM, and the scanner would end just before).
final class WalkHelper: @unchecked Sendable {
    private var body: (@Sendable () -> [Int32])?
    private var result: [Int32] = []
    private let given = Semaphore()
    private let done = Semaphore()
    private let released = Atomic<Bool>(false)

    /// On the helper's thread: posts `ready`, then waits for a body (or a release) and runs it.
    func serve(afterPosting ready: Semaphore) {
        ready.post()
        given.wait()
        if let body { result = body() }
        done.post()
    }

    /// Runs `body` on the helper's thread; the function returned waits for its result.
    func run(_ body: @escaping @Sendable () -> [Int32]) -> () -> [Int32] {
        self.body = body
        release()
        return {
            self.done.wait()
            return self.result
        }
    }

    /// Lets the helper go (with the body given, if any); only the first call counts.
    func release() {
        if !released.exchange(true, ordering: .acquiringAndReleasing) { given.post() }
    }
}

/// A POSIX semaphore whose wait polls for up to `pollNs` before it sleeps: the threads of a
/// pipeline hand each other work every few tens of µs, and a wake-up from sleep costs a
/// cross-CPU interrupt (tens of µs on a VM) each time. With a single CPU to run on, polling
/// would only keep the other thread from it: the wait sleeps at once.
final class Semaphore: @unchecked Sendable {
    private let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    private static let canPoll = lp_allowed_cpu_count() > 1
    private let pollNs: Int

    /// `pollNs`: how long a wait polls (where more than one CPU is allowed).
    init(pollNs: Int = 200_000) {
        self.pollNs = Self.canPoll ? pollNs : 0
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    func post() { sem_post(semaphore) }

    func wait() {
        let deadline = Self.monotonicNs() + pollNs
        while sem_trywait(semaphore) != 0 {
            guard Self.monotonicNs() < deadline else {
                while sem_wait(semaphore) != 0 && errno == EINTR {}
                return
            }
        }
    }

    private static func monotonicNs() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec * 1_000_000_000 + now.tv_nsec
    }
}

/// Images from the resolver to the scanner: a list under a lock and a semaphore counting what
/// the scanner has yet to take (and the close). The resolver adds one every ~30 µs; the first
/// comes ~0.3 ms after the scanner starts (the caller reads the program meanwhile): the scanner
/// polls that long, on a CPU nothing else wants, rather than be woken by an interrupt.
private final class ImageQueue: @unchecked Sendable {
    private let images = Mutex<(pending: [ELFImage], closed: Bool)>(([], false))
    private let available = Semaphore(pollNs: 1_000_000)

    func push(_ image: ELFImage) {
        images.withLock { $0.pending.append(image) }
        available.post()
    }

    func close() {
        images.withLock { $0.closed = true }
        available.post()
    }

    /// Waits for the next image; nil once the queue is closed and empty.
    func next() -> ELFImage? {
        while true {
            available.wait()
            let image: ELFImage?? = images.withLock { state in
                if !state.pending.isEmpty { return .some(state.pending.removeFirst()) }
                return state.closed ? .some(nil) : nil
            }
            if let image { return image }
        }
    }
}
