import Foundation
import LaunchprofELF
import Testing

@testable import LaunchprofTracing

/// The uprobe observer's plan comes from the files alone: initializer targets from relocation
/// tables, probe placements from the code bytes.
@Suite("Uprobe plans")
struct UprobePlanTests {
    /// A DT_INIT_ARRAY slot's relocated value, read from the file, is the function gcc put there
    /// first (crtbegin's frame_dummy): through a RELA R_X86_64_RELATIVE entry, and through DT_RELR.
    @Test(arguments: [false, true])
    func relocatedInitArraySlotIsTheFunctionTheLinkerPutThere(_ packed: Bool) throws {
        let name = packed ? "relr" : "rela"
        let path = try FixtureBuilder.build(
            ["run-lib.c"], output: "uprobe-plan/lib\(name).so",
            flags: ["-fPIC", "-shared", "-DLP_LIB_NAME=\(name)"] + (packed ? ["-Wl,-z,pack-relative-relocs"] : []))
        let image = try ELFImage.read(path: path)
        #expect(image.dynamic.hasRELR == packed)
        let array = try #require(image.dynamic.initArray)
        let frameDummy = try #require(image.symbolAddress("frame_dummy"))
        let constructor = try #require(image.symbolAddress("lp_library_constructor"))
        let targets = (0..<array.count).map { image.relocatedPointer(atSlot: array.vaddr + UInt64($0) * 8) }
        #expect(targets.first == frameDummy)
        #expect(targets.contains(constructor))
    }

    @Test func probesGoOnTheFirstEmulatedInstructionOfAStraightPrologue() {
        // ld.so's _dl_relocate_object: push %rbp; mov %rsp,%rbp; push %r15; mov %rdi,%r15; push %r14
        // → the push at 9, clear of the 8 bytes a ptrace breakpoint at the entry covers.
        #expect(ProbePlacement.place([0x55, 0x48, 0x89, 0xe5, 0x41, 0x57, 0x49, 0x89, 0xff, 0x41, 0x56]) == (9, true))
        // Nothing emulated past 8 bytes: the first emulated one after the entry, else the entry.
        #expect(ProbePlacement.place([0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0x57]) == (4, true))  // endbr64; push %r15
        #expect(ProbePlacement.place([0x55, 0xe8, 0, 0, 0, 0]) == (1, true))  // push %rbx; call
        // Only the entry is emulated: the next instruction, stepped, rather than the entry.
        #expect(ProbePlacement.place([0x55, 0x48, 0x89, 0xe5, 0x8b, 0x07]) == (1, false))
        // _init: sub $8,%rsp; mov disp(%rip),%rax; test %rax,%rax; je …
        #expect(ProbePlacement.place([0x48, 0x83, 0xec, 0x08, 0x48, 0x8b, 0x05, 1, 2, 3, 4, 0x48, 0x85, 0xc0, 0x74, 0x02]) == (14, true))
        // libc's first initializer: push; mov; sub; cmpb $0,disp(%rip); je
        #expect(ProbePlacement.place([0x53, 0x89, 0xfb, 0x48, 0x83, 0xec, 0x10, 0x80, 0x3d, 1, 2, 3, 4, 0, 0x74, 0x17]) == (14, true))
        // mov (%rdi),%eax: a memory operand ends the scan; the entry is probed and stepped.
        #expect(ProbePlacement.place([0x8b, 0x07, 0x55]) == (0, false))
        // A function that starts with a jmp (frame_dummy) is followed to its target.
        #expect(ProbePlacement.jumpTarget([0xeb, 0x10], at: 0x1000) == 0x1012)
        #expect(ProbePlacement.jumpTarget([0xe9, 0xf0, 0xff, 0xff, 0xff], at: 0x1000) == 0xff5)
        #expect(ProbePlacement.jumpTarget([0x55], at: 0x1000) == nil)
        #expect(ProbePlacement.place([]) == (0, false))
    }

    /// Every boundary of a libc-only program is a probe: relocation start in ld.so, libc's first
    /// initializer, the program's, and main, each at an offset inside its file.
    @Test func libcOnlyProgramHasAProbeForEveryBoundary() throws {
        let path = try FixtureBuilder.build(["run-static.c"], output: "uprobe-plan/libc-only")
        let program = try ELFImage.read(path: path)
        let closure = DependencyResolver.system().resolve(program: program, environment: [:])
        let plan = ImagePlanner.plan(program: program, closure: closure)
        let actions = plan.uprobes.map(\.action)
        #expect(actions.contains(.relocationStart))
        #expect(actions.contains { if case .objectInit(let path) = $0 { path.hasSuffix("/libc.so.6") } else { false } })
        #expect(actions.contains(.programInit))
        #expect(actions.contains(.main))
        #expect(plan.uprobeUnobservable.isEmpty)
        for target in plan.uprobes {
            if ProcessInfo.processInfo.environment["LP_SHOW_PLAN"] != nil { print("PLAN \(target)") }
            let size = try #require(try? FileManager.default.attributesOfItem(atPath: target.path)[.size] as? Int)
            #expect(target.offset < UInt64(size), "\(target)")
        }
    }
}
