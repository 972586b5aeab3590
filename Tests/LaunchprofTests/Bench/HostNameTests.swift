import Foundation
import Testing

@testable import LaunchprofCore

@Suite("reports: the host's name")
struct HostNameTests {
    /// `host.name` (the OpenMetrics `host` label) is the kernel's host name, as
    /// /proc/sys/kernel/hostname gives it.
    @Test func hostNameIsTheKernels() throws {
        let truth = try String(contentsOfFile: "/proc/sys/kernel/hostname", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(HostInfo.current().name == truth)
        #expect(!truth.isEmpty)
    }
}
