#if canImport(Glibc)
import Glibc
#endif

/// A signal one thread raises and another waits for (a POSIX semaphore): for hand-overs that
/// take microseconds, where a lock and condition would be more code for the same wait.
final class OneShotSignal: @unchecked Sendable {
    private let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)

    init() { sem_init(semaphore, 0, 0) }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Raising it again lets one more `wait` through.
    func raise() { sem_post(semaphore) }

    func wait() {
        while sem_wait(semaphore) != 0 {}  // EINTR
    }
}
