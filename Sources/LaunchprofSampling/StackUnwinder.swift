import CLaunchprof
import LaunchprofELF
import LaunchprofReport

#if canImport(Glibc)
import Glibc
#endif

/// launchprof's one stack unwinder, for sampled stacks and for a crashed or stopped thread alike:
/// registers and a copy of the stack from the stack pointer up, unwound by the objects' call
/// frame rules (`CallFrameUnwinder`, cached by address) while they apply, then by libunwind
/// (unwind.c, over the same copy and the objects' file bytes) from the frame they could not take.
/// A sample brings its registers and stack from perf; a stopped thread's are copied through
/// ptrace and process_vm_readv (`unwindStopped`).
///
/// Used by one thread at a time.
public final class StackUnwinder {
    private let symbolizer: StackSymbolizer
    /// libunwind, for the frames the call frame rules cannot take.
    private let fallback: OpaquePointer
    private let frameUnwinder = CallFrameUnwinder()
    /// The registers of the frame being unwound, DWARF numbering.
    private let dwarfRegisters = UnsafeMutablePointer<UInt64>.allocate(capacity: CallFrameUnwinder.registerCount)
    private let libunwindOnly: Bool
    /// Each object's call frame table, read once per unwinder (nil: none or unreadable), and its
    /// number for the call frame rules.
    private var tables: [String: (table: CallFrameTable?, id: Int)] = [:]
    private var mappings: [StackSymbolizer.LoadedMapping] = []
    private var lastMapping = 0

    /// nil when libunwind cannot be loaded (`lp_unwind_library_missing` says why) or memory ran
    /// out. `libunwindOnly`: without the cached call frame rules (to compare the two).
    public init?(symbolizer: StackSymbolizer = .shared, libunwindOnly: Bool = false) {
        guard let fallback = lp_unwinder_create() else { return nil }
        self.symbolizer = symbolizer
        self.fallback = fallback
        self.libunwindOnly = libunwindOnly
    }

    deinit {
        lp_unwinder_destroy(fallback)
        dwarfRegisters.deallocate()
    }

    /// Forgets every mapping (a new process); the call frame tables read stay.
    public func reset() {
        lp_unwinder_reset(fallback)
        frameUnwinder.reset()
        mappings = []
        lastMapping = 0
    }

    /// Adds an executable mapping of the process; one over an older one replaces it (a library
    /// unloaded and another loaded there).
    public func add(_ mapping: StackSymbolizer.Mapping) {
        let loaded = symbolizer.load(mapping)
        mappings.removeAll { $0.mapping.start < mapping.end && mapping.start < $0.mapping.end }
        mappings.append(loaded)
        lastMapping = 0
        let path = loaded.symbols?.path ?? mapping.path
        let entry = tables[path] ?? (loaded.symbols.flatMap { (try? CallFrameTable(object: $0)) ?? nil }, tables.count)
        tables[path] = entry
        frameUnwinder.add(
            textStart: mapping.start, textEnd: mapping.end, bias: loaded.bias, table: entry.table, objectID: entry.id)
        guard let symbols = loaded.symbols else { return }
        let segments = symbols.segments.map { lp_segment(vaddr: $0.vaddr, offset: $0.offset, file_size: $0.fileSize) }
        segments.withUnsafeBufferPointer { segmentPointer in
            guard let image = symbols.bytes.baseAddress else { return }
            var object = lp_unwind_object(
                bias: loaded.bias, text_start: mapping.start, text_end: mapping.end,
                image: image.assumingMemoryBound(to: UInt8.self), image_size: UInt64(symbols.bytes.count),
                segments: segmentPointer.baseAddress!, segment_count: Int32(segments.count),
                eh_frame_hdr: symbols.ehFrameHeader ?? 0)
            _ = lp_unwinder_add_object(fallback, &object)
        }
    }

    /// The mapping added last that holds `address`, to name a frame.
    public func mapping(containing address: UInt64) -> StackSymbolizer.LoadedMapping? {
        if lastMapping < mappings.count {
            let candidate = mappings[lastMapping]
            if candidate.mapping.start <= address && address < candidate.mapping.end { return candidate }
        }
        guard let index = mappings.firstIndex(where: { $0.mapping.start <= address && address < $0.mapping.end }) else {
            return nil
        }
        lastMapping = index
        return mappings[index]
    }

    /// Unwinds from `registers` (perf's order, `LP_SAMPLE_REGISTER_COUNT`) over `stack`, copied
    /// from the stack pointer up: return addresses into `output`, innermost first (the
    /// instruction pointer itself first). Returns how many were written.
    public func unwind(
        registers: UnsafeBufferPointer<UInt64>, stack: UnsafeRawBufferPointer, output: UnsafeMutableBufferPointer<UInt64>
    ) -> Int {
        guard registers.count == Int(LP_SAMPLE_REGISTER_COUNT), output.count > 0 else { return 0 }
        let stackAddress = registers[Int(LP_SAMPLE_REGISTER_SP)]
        var count = 0
        if !libunwindOnly {
            for dwarf in 0..<Self.perfIndex.count { dwarfRegisters[dwarf] = registers[Self.perfIndex[dwarf]] }
            let complete = frameUnwinder.unwind(
                registers: dwarfRegisters, stackAddress: stackAddress, stack: stack, output: output, count: &count)
            guard !complete, count > 0 else { return count }
            // libunwind takes the frame again, from the registers recovered so far.
            count -= 1
            var more: Int32 = 0
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: Self.perfIndex.count) { perf in
                for dwarf in 0..<Self.perfIndex.count { perf[Self.perfIndex[dwarf]] = dwarfRegisters[dwarf] }
                _ = lp_unwinder_unwind(
                    fallback, perf.baseAddress!, stack.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    stackAddress, stack.count, output.baseAddress! + count, Int32(output.count - count), &more)
            }
            return count + Int(more)
        }
        var more: Int32 = 0
        _ = lp_unwinder_unwind(
            fallback, registers.baseAddress!, stack.baseAddress?.assumingMemoryBound(to: UInt8.self),
            stackAddress, stack.count, output.baseAddress!, Int32(output.count), &more)
        return Int(more)
    }

    /// perf's register order (AX BX CX DX SI DI BP SP IP R8–R15) by DWARF number (RAX RDX RCX
    /// RBX RSI RDI RBP RSP R8–R15, the return address = IP).
    private static let perfIndex: InlineArray<17, Int> = [0, 3, 2, 1, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 8]

    /// How much of a stopped thread's stack is copied at most: a deep stack's outer frames are
    /// cut (as a sample's are at perf's copy) rather than copying megabytes.
    public static let stoppedStackBytes = 512 * 1024

    /// The stack of `tid`, stopped under ptrace by the calling thread (a crash at its signal's
    /// delivery, a hazard's system call): instruction pointers, innermost first. Empty when the
    /// thread cannot be read (gone, not stopped) or libunwind cannot be loaded.
    public static func unwindStopped(_ tid: pid_t, maximumFrames: Int = 64, symbolizer: StackSymbolizer = .shared) -> [UInt64] {
        var registers = [UInt64](repeating: 0, count: Int(LP_SAMPLE_REGISTER_COUNT))
        var stack = [UInt8](repeating: 0, count: stoppedStackBytes)
        var length = 0
        let status = registers.withUnsafeMutableBufferPointer { registers in
            stack.withUnsafeMutableBufferPointer { stack in
                lp_thread_snapshot(tid, registers.baseAddress!, stack.baseAddress!, stack.count, &length)
            }
        }
        guard status == 0, let unwinder = StackUnwinder(symbolizer: symbolizer) else { return [] }
        // /proc/TID/maps: a thread's view of the process's mappings.
        for mapping in ProcessMappings.executable(tid) { unwinder.add(mapping) }
        var addresses = [UInt64](repeating: 0, count: maximumFrames)
        let count = registers.withUnsafeBufferPointer { registers in
            stack.withUnsafeBytes { stack in
                addresses.withUnsafeMutableBufferPointer { output in
                    unwinder.unwind(registers: registers, stack: UnsafeRawBufferPointer(rebasing: stack[..<length]), output: output)
                }
            }
        }
        return Array(addresses.prefix(count))
    }
}
