import LaunchprofReport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension LoaderWorkAnalyzer {
    /// `LoaderWorkAnalyzer.analyze` on two CPUs, for `inspect`: each object's relocations are
    /// replayed on a second thread as the resolver adds it to the closure (`add`, from the
    /// resolver's `onEntry`), while the resolver goes on finding and reading the next ones;
    /// `finish` then walks the names through the scope, split over both threads. Same counts as
    /// `analyze`; on gdb's 59 objects the scans overlap nearly all of the resolution.
    public final class Pipeline: @unchecked Sendable {
        private let queue = ImageQueue()
        private let names: LookupNameTable
        private let scanner: WorkerThread<ScannedObjects>
        private var finished = false

        public init() {
            // The closure's size is unknown yet: room for gdb's ~11,000 names, grown past that.
            let names = LookupNameTable(expectedNames: 16_384)
            self.names = names
            let queue = self.queue
            let shared = ScannedObjects(names: names)
            scanner = WorkerThread(offCurrentCPU: true) {
                var position = 0
                while let image = queue.next() {
                    shared.objects.append(ScannedObject(image, position: position, names: shared.names))
                    position += 1
                }
                return shared
            }
        }

        /// The next object of the closure, in load order (the program first).
        public func add(_ image: ELFImage) {
            queue.push(image)
        }

        /// The loader work of `closure`, whose entries were all passed to `add` in order.
        public func finish(_ closure: Closure) -> [LoaderWork] {
            queue.close()
            finished = true
            let scanned = scanner.join().objects
            guard scanned.count == closure.entries.count,
                zip(scanned, closure.entries).allSatisfy({ $0.fileID == $1.image.fileID })
            else {
                // Not the closure the scans saw: analyze it from the start.
                return LoaderWorkAnalyzer.analyze(closure)
            }
            return LoaderWorkAnalyzer.finish(closure.entries, scanned: scanned, names: names, exhaustive: false)
        }

        deinit {
            // Never finished (an inspection that failed): let the scanner end.
            if !finished {
                queue.close()
                _ = scanner.join()
            }
        }
    }

    /// The scanner's results, handed back through `WorkerThread.join` (the table and the scans
    /// are the scanner's alone until then).
    private final class ScannedObjects: @unchecked Sendable {
        let names: LookupNameTable
        var objects: [ScannedObject] = []

        init(names: LookupNameTable) { self.names = names }
    }
}

/// Images from the resolver to the scanner: a list under a lock and a semaphore counting what
/// the scanner has yet to take (and the close).
private final class ImageQueue: @unchecked Sendable {
    private let images = Mutex<(pending: [ELFImage], closed: Bool)>(([], false))
    private let available = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)

    init() { sem_init(available, 0, 0) }

    deinit {
        sem_destroy(available)
        available.deallocate()
    }

    static let pollNs = 200_000

    private func monotonicNs() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec * 1_000_000_000 + now.tv_nsec
    }

    func push(_ image: ELFImage) {
        images.withLock { $0.pending.append(image) }
        sem_post(available)
    }

    func close() {
        images.withLock { $0.closed = true }
        sem_post(available)
    }

    /// Waits for the next image; nil once the queue is closed and empty. The resolver adds one
    /// every ~30 µs: the wait polls for up to `pollNs` before it sleeps, as a wake-up from
    /// sleep costs a cross-CPU interrupt (tens of µs on a VM) per image.
    func next() -> ELFImage? {
        while true {
            let deadline = monotonicNs() + Self.pollNs
            var taken = sem_trywait(available) == 0
            while !taken, monotonicNs() < deadline { taken = sem_trywait(available) == 0 }
            if !taken { while sem_wait(available) != 0 && errno == EINTR {} }
            let image: ELFImage?? = images.withLock { state in
                if !state.pending.isEmpty { return .some(state.pending.removeFirst()) }
                return state.closed ? .some(nil) : nil
            }
            if let image { return image }
        }
    }
}

