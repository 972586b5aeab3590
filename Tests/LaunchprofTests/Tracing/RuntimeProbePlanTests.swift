import Foundation
import LaunchprofELF
import Testing

@testable import LaunchprofTracing

/// The runtime probe plan comes from the ELF files alone: the loader's steps from libc6-dbg's
/// symbols, the toolkits' exported entry points, Python's SDT notes with their semaphores.
@Suite("Runtime probe plans")
struct RuntimeProbePlanTests {
    private func plan(_ path: String) throws -> (RuntimeProbePlan, Closure) {
        let program = try ELFImage.read(path: path)
        let closure = DependencyResolver.system().resolve(program: program, environment: [:])
        let loader = closure.objects.first { $0.path.contains("ld-linux") }
        return (RuntimeProbePlan.plan(program: program, closure: closure, loader: loader), closure)
    }

    private func probe(_ plan: RuntimeProbePlan, _ role: RuntimeProbe.Role) throws -> RuntimeProbe {
        try #require(plan.probes.first { $0.role == role }, "no \(role) probe")
    }

    @Test func aGtkApplicationsProbesAreGIOsAndGTKsEntryPoints() throws {
        let (plan, closure) = try plan(try ToolkitFixtures.gtk3())
        #expect(plan.sources == ["gtk3"])
        let gio = try #require(closure.objects.first { $0.path.contains("libgio-2.0.so") })
        let register = try probe(plan, .applicationRegister)
        let registered = try probe(plan, .applicationRegisterReturn)
        #expect(register.path == gio.path && register.source == "gtk3")
        // Entry and return share the function's first instruction (a push: emulated).
        #expect(register.offset == gio.fileOffset(ofAddress: try #require(gio.symbolAddress("g_application_register"))))
        #expect(registered.offset == register.offset && registered.isReturn && register.emulated)
        for role in [RuntimeProbe.Role.applicationActivate, .applicationActivateReturn, .gtkInit, .gtkInitReturn, .gtkMain] {
            _ = try probe(plan, role)
        }
        // No Qt, SDL or Python in its closure.
        #expect(!plan.probes.contains { $0.source == "qt5" || $0.source == "python" })
    }

    @Test func everyDynamicProgramHasTheLoadersProbes() throws {
        let (plan, closure) = try plan(try ToolkitFixtures.dlopenProgram())
        let libc = try #require(closure.objects.first { $0.path.contains("libc.so.6") })
        let call = try probe(plan, .dlopenCall)
        #expect(call.path == libc.path)
        #expect(call.fetch.map(\.tracefsText) == ["+0(%di):string", "+0(%sp):u64"])
        #expect(try probe(plan, .dlopenReturn).fetch.map(\.tracefsText) == ["%ax:u64"])
        // call_init's name and load address (l_name, l_addr) come from its argument, at the
        // guard's jump (Debian 12's glibc); the main program's unnamed map is the plan's program.
        let objectInit = try probe(plan, .loaderObjectInit)
        #expect(objectInit.fetch.map(\.tracefsText) == ["+0(+8(%di)):string", "+0(%di):u64"])
        #expect(plan.program == (try ToolkitFixtures.dlopenProgram()))
        #expect(objectInit.emulated)
        // The relocation probe is the pre-main plan's own: one event serves both.
        let program = try ELFImage.read(path: try ToolkitFixtures.dlopenProgram())
        let imagePlan = ImagePlanner.plan(program: program, closure: closure)
        let relocation = try #require(imagePlan.uprobes.first { $0.action == .relocationStart })
        let relocate = try probe(plan, .loaderRelocate)
        #expect(relocate.path == relocation.path && relocate.offset == relocation.offset)
    }

    /// Debian's python3 carries SDT notes; the import probes carry their semaphores, as readelf
    /// lists them, as reference counters.
    @Test func pythonsImportProbesAreItsSDTNotesWithTheirSemaphores() throws {
        let python = try #require(realpath("/usr/bin/python3", nil).map { String(cString: $0) })
        let (plan, _) = try plan(python)
        let start = try probe(plan, .pythonImportStart)
        let done = try probe(plan, .pythonImportDone)
        #expect(start.fetch.map(\.tracefsText) == ["+0(%ax):string"])
        #expect(start.referenceCounter != nil && done.referenceCounter != nil && start.referenceCounter != done.referenceCounter)
        let notes = try readelfNotes(python)
        let image = try ELFImage.read(path: python)
        let listed = try #require(notes.first { $0.name == "import__find__load__start" })
        #expect(start.offset == image.fileOffset(ofAddress: listed.location))
        #expect(start.referenceCounter == image.fileOffset(ofAddress: listed.semaphore))
        #expect(image.sdtProbes.count == notes.count)
        _ = try probe(plan, .pythonMain)
        _ = try probe(plan, .pythonRun)
    }

    @Test func sdtArgumentLocationsAreRegisters() {
        #expect(FetchedArgument(sdtLocation: "8@%rax", kind: .string)?.tracefsText == "+0(%ax):string")
        #expect(FetchedArgument(sdtLocation: "-4@%edx", kind: .s32)?.tracefsText == "%dx:s32")
        #expect(FetchedArgument(sdtLocation: "8@%r8", kind: .u64)?.tracefsText == "%r8:u64")
        #expect(FetchedArgument(sdtLocation: "-4@%r10d", kind: .s32)?.tracefsText == "%r10:s32")
        #expect(FetchedArgument(sdtLocation: "8@%rsi", kind: .u64)?.tracefsText == "%si:u64")
        #expect(FetchedArgument(sdtLocation: "8@16(%rbp)", kind: .u64) == nil)
        #expect(FetchedArgument(sdtLocation: "4@$5", kind: .s32) == nil)
    }

    @Test func aGuardsJumpIsFoundOnlyAfterACompareWithAReturnBehindIt() {
        // call_init: cmp %rdi,0x28(%rdi); je +10; ret
        #expect(ProbePlacement.guardJump([0x48, 0x39, 0x7f, 0x28, 0x74, 0x0a, 0xc3]) == 4)
        #expect(ProbePlacement.guardJump([0x48, 0x39, 0x7f, 0x28, 0x74, 0x0a, 0x90]) == nil)
        #expect(ProbePlacement.guardJump([0x55, 0x48, 0x89, 0xe5, 0x74, 0x0a, 0xc3]) == nil)
    }

    /// `readelf -n`'s SDT notes: name, location and semaphore addresses.
    private func readelfNotes(_ path: String) throws -> [(name: String, location: UInt64, semaphore: UInt64)] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/readelf")
        process.arguments = ["-n", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        var notes: [(String, UInt64, UInt64)] = []
        var name: String?
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "," })
            if fields.first == "Name:", fields.count == 2 { name = String(fields[1]) }
            if fields.first == "Location:", let name, fields.count >= 6 {
                func hex(_ text: Substring) -> UInt64 { UInt64(text.dropFirst(2), radix: 16) ?? 0 }
                notes.append((name, hex(fields[1]), hex(fields[5])))
            }
        }
        return notes
    }
}
