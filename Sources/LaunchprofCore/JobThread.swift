import LaunchprofSystem
import LaunchprofTracing

#if canImport(Glibc)
import Glibc
#endif

/// One thread that runs jobs one after another, for the run monitor: a session hands it one
/// job per run instead of creating and joining a thread per run (about 20 µs each, spent
/// between two launches of the child).
final class JobThread: @unchecked Sendable {
    // `job` is written by the submitting thread before `posted` is signalled and taken by the
    // worker after waiting on it; `finished` orders the job's effects before `waitForJob`.
    private var job: (@Sendable () -> Void)?
    private var stopping = false
    private let posted = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    private let finished = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    private var thread: DedicatedThread<Int>?

    init() {
        sem_init(posted, 0, 0)
        sem_init(finished, 0, 0)
        thread = DedicatedThread { [self] in
            while true {
                while sem_wait(posted) != 0 {}  // EINTR
                if stopping { return 0 }
                job?()
                job = nil
                sem_post(finished)
            }
        }
    }

    deinit {
        sem_destroy(posted)
        sem_destroy(finished)
        posted.deallocate()
        finished.deallocate()
    }

    /// Starts `body` on the thread; at most one job at a time (call `waitForJob` in between).
    func start(_ body: @escaping @Sendable () -> Void) {
        job = body
        sem_post(posted)
    }

    /// Waits for the job `start` began.
    func waitForJob() {
        while sem_wait(finished) != 0 {}
    }

    /// Ends the thread (after the current job) and joins it.
    func stop() {
        stopping = true
        sem_post(posted)
        _ = thread?.join()
        thread = nil
    }
}
