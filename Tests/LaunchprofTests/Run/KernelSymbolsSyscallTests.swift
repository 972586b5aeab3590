import Foundation
import Synchronization
import Testing

@testable import LaunchprofSampling
import LaunchprofTracing

/// The system call a blocked thread is in, named from its switch-out's kernel frames.
@Suite("sampling: system calls from kernel frames")
struct KernelSymbolsSyscallTests {
    static let kallsyms = """
        ffffffff81000000 T _stext
        ffffffff81000130 T entry_SYSCALL_64_after_hwframe
        ffffffff81100000 T schedule
        ffffffff8142db10 T __x64_sys_clock_nanosleep
        ffffffff8142dc00 t common_nsleep
        ffffffff816dd5a0 T __x64_sys_poll
        ffffffff816dd700 T __ia32_sys_poll
        ffffffff81900000 d some_data
        ffffffff821ef620 T do_syscall_64
        ffffffffc0001000 t __x64_sys_module_thing\t[some_module]
        """

    let names = KernelSymbols(kallsyms: Array(kallsyms.utf8))

    @Test func theInnermostSyscallEntryNamesTheCall() {
        // schedule+0x23 ← do_sys_poll (not listed: inside __x64_sys_poll's range) ← do_syscall_64+0x71
        #expect(names.syscallName(kernelFrames: [0xffffffff81100023, 0xffffffff816dd5d4, 0xffffffff821ef691]) == "poll")
        #expect(names.syscallName(kernelFrames: [0xffffffff81100023, 0xffffffff8142dc30, 0xffffffff8142dbde]) == "clock_nanosleep")
    }

    @Test func framesOutsideAnyEntryNameNothing() {
        // Preempted in an interrupt, or blocked in a page fault: no system call entry on the stack.
        #expect(names.syscallName(kernelFrames: [0xffffffff81100023, 0xffffffff821ef691]) == nil)
        #expect(names.syscallName(kernelFrames: [0xffffffff8142dc30]) == nil, "common_nsleep ends clock_nanosleep's range")
        #expect(names.syscallName(kernelFrames: [0xffffffff816dd5a0]) == nil, "a return address is past its call, never at the entry")
        #expect(names.syscallName(kernelFrames: []) == nil)
    }

    @Test func aModuleSymbolLosesItsModuleName() {
        #expect(names.syscallName(kernelFrames: [0xffffffffc0001010]) == "module_thing")
    }

    @Test func aReturnAddressJustPastTheEntryStillCounts() {
        // A call as the entry function's last instruction returns to the next symbol's start.
        #expect(names.syscallName(kernelFrames: [0xffffffff816dd700]) == "poll")
    }

    @Test func hiddenAddressesNameNothing() {
        let hidden = KernelSymbols(kallsyms: Array("0000000000000000 T __x64_sys_poll\n".utf8))
        #expect(hidden.isEmpty)
        #expect(hidden.syscallName(kernelFrames: [0x10]) == nil)
    }

    /// On this kernel, through /proc/kallsyms (the tests run as root, so addresses are shown).
    @Test func theRunningKernelsPollEntryIsNamed() throws {
        // Read to the end: /proc files report a size of 0.
        let file = try #require(FileHandle(forReadingAtPath: "/proc/kallsyms"))
        let text = String(decoding: try #require(try file.readToEnd()), as: UTF8.self)
        let line = try #require(text.split(separator: "\n").first { $0.hasSuffix(" __x64_sys_poll") })
        let address = try #require(UInt64(line.split(separator: " ")[0], radix: 16))
        try #require(address != 0, "/proc/kallsyms hides addresses: the tests need root")
        #expect(KernelSymbols.shared.syscallName(kernelFrames: [address + 0x20]) == "poll")
    }

    /// kallsyms is read when the first name is asked for, once; a capture with no kernel stack
    /// never asks.
    @Test func readOnceWhenFirstNeeded() {
        let reads = Atomic<Int>(0)
        let text = Array(Self.kallsyms.utf8)
        let symbols = KernelSymbols(reading: {
            reads.add(1, ordering: .relaxed)
            return text
        })
        _ = SchedulerCapture().trace(symbols: symbols)
        #expect(reads.load(ordering: .relaxed) == 0)
        #expect(symbols.names([0xffffffff81100023]) == ["schedule"])
        #expect(symbols.syscallName(kernelFrames: [0xffffffff816dd5d4]) == "poll")
        #expect(reads.load(ordering: .relaxed) == 1)
    }

    /// A second process of the same boot and modules takes the table from the cache instead of
    /// kallsyms (~40 ms of the kernel's time each); another module set, a damaged file or a
    /// directory other users can write make it read kallsyms again.
    @Test func aBootsTableIsReadOnceAndCached() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lp-ksyms-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let reads = Atomic<Int>(0)
        let text = Array(Self.kallsyms.utf8)
        func symbols(_ cache: KernelSymbolCache) -> KernelSymbols {
            KernelSymbols(reading: {
                reads.add(1, ordering: .relaxed)
                return text
            }, cache: { cache })
        }
        let cache = KernelSymbolCache(directory: directory, bootID: "0123-abcd", fingerprint: Array("mod_a 16384 0 - Live\n".utf8))
        #expect(symbols(cache).names([0xffffffff81100023]) == ["schedule"])
        #expect(reads.load(ordering: .relaxed) == 1)
        var status = stat()
        #expect(stat(directory + "/kallsyms-0123-abcd.cache", &status) == 0 && status.st_mode & 0o777 == 0o600)
        // The next process: the same names, no read.
        let cached = symbols(cache)
        #expect(cached.names([0xffffffff81100023]) == ["schedule"])
        #expect(cached.syscallName(kernelFrames: [0xffffffff816dd5d4]) == "poll")
        #expect(reads.load(ordering: .relaxed) == 1)
        // Another module set: read again (and stored for it).
        var modules = cache
        modules.fingerprint = Array("mod_b 16384 0 - Live\n".utf8)
        _ = symbols(modules).names([0xffffffff81100023])
        #expect(reads.load(ordering: .relaxed) == 2)
        // A later boot's cache replaces this boot's file.
        var nextBoot = modules
        nextBoot.bootID = "4567-ef01"
        _ = symbols(nextBoot).names([0xffffffff81100023])
        #expect(reads.load(ordering: .relaxed) == 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["kallsyms-4567-ef01.cache"])
        // Every truncation of the file is refused, never a crash or a wrong table.
        let file = directory + "/kallsyms-4567-ef01.cache"
        let whole = try Data(contentsOf: URL(fileURLWithPath: file))
        for length in stride(from: 0, to: whole.count, by: 7) {
            try whole.prefix(length).write(to: URL(fileURLWithPath: file))
            #expect(nextBoot.load() == nil, "a \(length)-byte prefix was loaded")
        }
        // A directory other users can write is not used.
        try whole.write(to: URL(fileURLWithPath: file))
        #expect(nextBoot.load() != nil)
        chmod(directory, 0o777)
        #expect(nextBoot.load() == nil)
    }
}
