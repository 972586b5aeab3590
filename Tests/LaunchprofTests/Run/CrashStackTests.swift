import Foundation
import LaunchprofCore
import LaunchprofReport
import Testing

/// A crashed child's stack, taken at its fatal signal's delivery by launchprof's one unwinder
/// (the sampler's: registers through ptrace, the stack through process_vm_readv), checked frame
/// by frame against the call chains the fixtures know they crash in.
@Suite("run: crash stacks", .serialized)
struct CrashStackTests {
    /// A frame "function (object+0xoffset)", or "object+0xoffset" when it has no name, as
    /// (function, object).
    private static func parts(_ frame: String) -> (function: String, object: String) {
        guard let open = frame.lastIndex(of: "(") else {
            return ("", frame.split(separator: "+").first.map(String.init) ?? frame)
        }
        let place = frame[frame.index(after: open)...].dropLast()
        let object = place.split(separator: "+").first.map(String.init) ?? ""
        return (frame[..<open].trimmingCharacters(in: .whitespaces), object)
    }

    /// The crashed run's stack, frame by frame, and its signal.
    private func crash(
        _ program: String, environment: [String: String], observer: ObserverChoice = .ptrace
    ) throws -> (frames: [(function: String, object: String)], signal: Int32?, text: String) {
        let run = try #require(try RunHarness.run(program, environment: environment) { $0.observer = observer }.runs.first)
        let warning = try #require(run.warnings.first { $0.code == .crashed && $0.crashStackFrames != nil }, "\(run.warnings)")
        let frames = try #require(warning.crashStackFrames)
        return (frames.map(Self.parts), run.exitStatus?.signal, frames.joined(separator: " | "))
    }

    private static let chain = ["lp_crash_inner", "lp_crash_middle", "lp_crash_outer"]

    @Test("SIGSEGV in main's callee: the fault's function first, then every caller to _start", arguments: [ObserverChoice.ptrace, .uprobe])
    func faultFromMain(_ observer: ObserverChoice) throws {
        let crashed = try crash(try RunFixtures.program("crash-stack"), environment: [:], observer: observer)
        #expect(crashed.signal == SIGSEGV)
        #expect(crashed.frames.prefix(4).map(\.function) == Self.chain + ["main"], "\(crashed.text)")
        #expect(crashed.frames.prefix(4).allSatisfy { $0.object == "run-crash-stack" }, "\(crashed.text)")
        // Then the C library's start-up, and the program's entry point: the stack is whole.
        #expect(crashed.frames.last?.function == "_start" && crashed.frames.last?.object == "run-crash-stack", "\(crashed.text)")
        #expect(crashed.frames.dropFirst(4).dropLast().allSatisfy { $0.object == "libc.so.6" }, "\(crashed.text)")
    }

    @Test("abort(): the C library's frames, then the caller of abort and its callers")
    func abortFromMain() throws {
        let crashed = try crash(try RunFixtures.program("crash-stack"), environment: ["LP_CRASH": "abort"])
        #expect(crashed.signal == SIGABRT)
        let inner = try #require(crashed.frames.firstIndex { $0.function == "lp_crash_inner" }, "\(crashed.text)")
        #expect(inner > 0 && crashed.frames[..<inner].allSatisfy { $0.object == "libc.so.6" }, "\(crashed.text)")
        #expect(crashed.frames[..<inner].contains { $0.function == "abort" }, "\(crashed.text)")
        #expect(crashed.frames[inner...].prefix(4).map(\.function) == Self.chain + ["main"], "\(crashed.text)")
        #expect(crashed.frames.last?.function == "_start", "\(crashed.text)")
    }

    @Test("a crash in a thread other than main: that thread's stack, down to its start")
    func faultInAThread() throws {
        let crashed = try crash(try RunFixtures.program("crash-stack"), environment: ["LP_CRASH_THREAD": "1"])
        #expect(crashed.signal == SIGSEGV)
        #expect(crashed.frames.prefix(4).map(\.function) == Self.chain + ["lp_crash_thread"], "\(crashed.text)")
        // The thread's start in the C library, not main's chain.
        #expect(!crashed.frames.isEmpty && crashed.frames.dropFirst(4).allSatisfy { $0.object == "libc.so.6" }, "\(crashed.text)")
        #expect(crashed.frames.dropFirst(4).contains { $0.function == "start_thread" }, "\(crashed.text)")
    }

    @Test("a crash in a shared library's initializer: the initializer, then the loader that ran it")
    func faultInALibraryInitializer() throws {
        let app = try RunFixtures.app(libraries: ["lpcrash"])
        let crashed = try crash(app, environment: ["LP_CTOR_lpcrash_CRASH": "1"])
        #expect(crashed.signal == SIGSEGV)
        #expect(crashed.frames.first?.function == "lp_library_constructor" && crashed.frames.first?.object == "liblpcrash.so", "\(crashed.text)")
        // The loader runs initializers before the program's entry: every caller is ld.so's, down
        // to its own entry point.
        #expect(crashed.frames.count >= 3 && crashed.frames.dropFirst().allSatisfy { $0.object.hasPrefix("ld-linux") }, "\(crashed.text)")
        #expect(crashed.frames.dropFirst().contains { $0.function == "_dl_init" }, "\(crashed.text)")
    }

    @Test("a fault the program handles and lives through is no crash: no crash stack")
    func handledFaultIsNoCrash() throws {
        let run = try #require(try RunHarness.run(
            try RunFixtures.program("crash-stack"), environment: ["LP_CRASH": "survive"]).runs.first)
        #expect(run.exitStatus?.code == 0 && run.exitStatus?.signal == nil, "\(String(describing: run.exitStatus))")
        #expect(!run.warnings.contains { $0.code == .crashed }, "\(run.warnings)")
    }
}
