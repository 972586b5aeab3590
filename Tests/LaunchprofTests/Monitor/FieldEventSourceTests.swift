import CLaunchprof
import Foundation
import LaunchprofMonitor
import Testing

/// The monitor's kernel side on real processes: every fork, exec and exit of processes this test
/// starts is seen, in order, with the exit status, inside the times the test itself took.
@Suite("Field events from the kernel", .serialized)
struct FieldEventSourceTests {
    @Test("forks, execs and exits of processes started elsewhere, with their exit status")
    func processLifecycle() throws {
        let tracefs = try TracefsEvents()
        let source = try FieldEventSource()
        try source.addProcessEvents(tracefs)
        let exits = try ProcessExitConnector()
        try source.enable()

        var children: [(pid: pid_t, code: Int32, beforeNs: UInt64, reapedNs: UInt64)] = []
        for code: Int32 in [0, 3, 7] {
            let before = lp_now_ns()
            let pid = try spawn("/bin/sh", ["-c", "exit \(code)"])
            var status: Int32 = 0
            #expect(waitpid(pid, &status, 0) == pid)
            children.append((pid, code, before, lp_now_ns()))
        }
        // The connector's messages and the rings: everything before the last reap is in them.
        let events = (source.read() + exits.read()).sorted { $0.atNs < $1.atNs }
        for child in children {
            let own = events.filter { $0.pid == child.pid }
            let forkTime = own.compactMap { if case .forked(let parent, _, let at) = $0, parent == getpid() { at } else { nil } }.first
            let exec = own.compactMap { if case .execed(_, let name, let at) = $0 { (name, at) } else { nil } }.first
            let exit = own.compactMap { if case .exited(_, let status, let at) = $0 { (status, at) } else { nil } }.first
            let forked = try #require(forkTime, "no fork of \(child.pid) among \(own)")
            let (name, execed) = try #require(exec, "no exec of \(child.pid)")
            let (status, exited) = try #require(exit, "no exit of \(child.pid)")
            #expect(name == "/bin/sh")
            #expect(status == child.code << 8)
            #expect(child.beforeNs <= forked && forked <= execed && execed <= exited && exited <= child.reapedNs)
        }
        source.close()
    }

    @Test("a signal's death is its status; stop and continue are seen")
    func signals() throws {
        let tracefs = try TracefsEvents()
        let source = try FieldEventSource()
        try source.addProcessEvents(tracefs)
        let exits = try ProcessExitConnector()
        try source.enable()
        let pid = try spawn("/bin/sleep", ["30"])
        kill(pid, SIGSTOP)
        var status: Int32 = 0
        #expect(waitpid(pid, &status, WUNTRACED) == pid)
        kill(pid, SIGCONT)
        kill(pid, SIGSEGV)
        #expect(waitpid(pid, &status, 0) == pid)
        let events = (source.read() + exits.read()).filter { $0.pid == pid }.sorted { $0.atNs < $1.atNs }
        let kinds = events.map { event -> String in
            switch event {
            case .forked: "fork"
            case .execed: "exec"
            case .stopped: "stop"
            case .continued: "continue"
            case .exited(_, let status, _): "exit \(status & 0x7f)"
            default: "other"
            }
        }
        // A stop is stamped when it is sent: posix_spawn returns once the child's exec has
        // released the parent's memory, before the exec tracepoint fires, so the stop may come
        // first. It is delivered (and continued) after.
        #expect(kinds.filter { $0 != "stop" } == ["fork", "exec", "continue", "exit 11"], "\(kinds)")
        #expect(kinds.firstIndex(of: "stop").map { $0 > 0 && $0 < kinds.firstIndex(of: "continue")! } == true, "\(kinds)")
        source.close()
    }

    private func spawn(_ path: String, _ arguments: [String]) throws -> pid_t {
        var pid: pid_t = 0
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let result = posix_spawn(&pid, path, nil, nil, argv, environ)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EINVAL) }
        return pid
    }
}
