import Foundation
import Testing

import CLaunchprof
import LaunchprofSystem

/// `DedicatedThread`'s placements: `.offCurrentCPU` starts a thread off the CPU its creator runs
/// on (where the process may run on several CPUs, the thread's own mask is the process's minus
/// one); `.pinned` runs it on one CPU and keeps the mask it had as launchprof's own.
@Suite("System: dedicated thread")
struct DedicatedThreadTests {
    /// The CPUs the calling thread may run on: /proc/thread-self/status's Cpus_allowed_list
    /// ("0-1", "0,2-3").
    static func allowedCPUs() throws -> Int {
        let status = try String(contentsOfFile: "/proc/thread-self/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") }) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        let list = line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces)
        return list.split(separator: ",").reduce(0) { total, range in
            let bounds = range.split(separator: "-").compactMap { Int($0) }
            return total + (bounds.count == 2 ? bounds[1] - bounds[0] + 1 : 1)
        }
    }

    @Test("off the current CPU: the thread may use every allowed CPU but one")
    func offCurrentCPU() throws {
        let process = try Self.allowedCPUs()
        let thread = DedicatedThread(.offCurrentCPU) { Result { try Self.allowedCPUs() } }
        let threadCPUs = try thread.join().get()
        #expect(threadCPUs == (process > 1 ? process - 1 : process))
    }

    @Test("by default the thread keeps its creator's CPUs, and returns the body's result")
    func defaultPlacement() throws {
        let process = try Self.allowedCPUs()
        let thread = DedicatedThread { Result { (try Self.allowedCPUs(), 6 * 7) } }
        let (threadCPUs, answer) = try thread.join().get()
        #expect(threadCPUs == process)
        #expect(answer == 42)
    }

    @Test("pinned: one CPU, and the mask it had before is the one given back (lp_affinity_restore)")
    func pinned() throws {
        let process = try Self.allowedCPUs()
        let cpu = DedicatedThread<Int>.currentCPU
        let thread = DedicatedThread(pinnedCPU: cpu) { () -> Result<(Int32, Int, Int), any Error> in
            Result {
                let ranOn = lp_current_cpu()
                let pinned = try Self.allowedCPUs()
                _ = lp_affinity_restore(0)
                return (ranOn, pinned, try Self.allowedCPUs())
            }
        }
        let (ranOn, pinnedCPUs, restoredCPUs) = try thread.join().get()
        #expect(ranOn == cpu)
        #expect(pinnedCPUs == 1)
        #expect(restoredCPUs == process)
    }
}
