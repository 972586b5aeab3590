import LaunchprofELF

/// Unwinds a sample's user stack by the objects' call frame rules (`CallFrameTable`), cached by
/// address: frames repeat from sample to sample, so after the first stacks each frame is a cache
/// hit and a few loads from the copied stack. Frames the simple rules cannot take (a CFA
/// expression as in PLT entries, a signal frame, a register saved in another register) stop it
/// with the registers recovered so far, for libunwind to go on from there.
///
/// Used by one thread at a time (the tracer's, after a launch).
final class CallFrameUnwinder {
    /// DWARF x86-64 numbering: RAX RDX RCX RBX RSI RDI RBP RSP R8–R15, then the return address.
    static let registerCount = CallFrameRule.registerCount
    static let returnAddress = CallFrameRule.returnAddressRegister
    static let stackPointer = 7
    /// Registers a callee preserves (RBX RBP RSP R12–R15) and the return address: the only ones
    /// known in a caller's frame.
    static let calleeSaved: UInt32 = 1 << 3 | 1 << 6 | 1 << 7 | 1 << 12 | 1 << 13 | 1 << 14 | 1 << 15 | 1 << 16

    /// A rule reduced to what the fast path does: CFA = register + offset, registers saved at
    /// CFA + offset. `usable` is false when the rule needs more (libunwind's), or there is none.
    struct CachedRule {
        var address: UInt64 = 0
        var filled = false
        var usable = false
        var returnAddressUndefined = false
        var frameRegister: UInt8 = 0
        var frameOffset: Int64 = 0
        /// Registers saved at CFA + `offsets[register]`.
        var saved: UInt32 = 0
        var offsets = InlineArray<17, Int32>(repeating: 0)
    }

    struct Object {
        var textStart: UInt64
        var textEnd: UInt64
        var bias: UInt64
        var table: CallFrameTable?
        /// Which object file it is, for `computedRules`.
        var objectID: Int
    }

    /// A rule by object file and unrelocated address.
    struct RuleKey: Hashable {
        var objectID: Int
        var vaddr: UInt64
    }

    static let cacheSlots = 4096
    /// Slot `hash(address)` holds the rule of the last address that hashed there.
    private let cache: UnsafeMutablePointer<CachedRule>
    private var objects: [Object] = []
    private var lastObject = 0
    /// Every rule computed, kept across launches: a rule holds no absolute address, so the next
    /// launch of the same objects (loaded elsewhere) finds it here instead of in `.eh_frame`.
    private var computedRules: [RuleKey: CachedRule] = [:]

    init() {
        cache = .allocate(capacity: Self.cacheSlots)
        cache.initialize(repeating: CachedRule(), count: Self.cacheSlots)
    }

    deinit { cache.deallocate() }

    /// Forgets every object and rule (a new launch).
    func reset() {
        objects = []
        lastObject = 0
        for index in 0..<Self.cacheSlots { cache[index].filled = false }
    }

    /// Adds an object's text mapping; rules cached for its addresses are dropped (a new object
    /// can sit where an unloaded one was).
    func add(textStart: UInt64, textEnd: UInt64, bias: UInt64, table: CallFrameTable?, objectID: Int) {
        objects.append(Object(textStart: textStart, textEnd: textEnd, bias: bias, table: table, objectID: objectID))
        lastObject = objects.count - 1
        for index in 0..<Self.cacheSlots where cache[index].address >= textStart && cache[index].address < textEnd {
            cache[index].filled = false
        }
    }

    /// Unwinds from `registers` (17, DWARF numbering; the innermost frame's instruction
    /// pointer in the return address slot) over `stack` (copied from the stack pointer
    /// `stackAddress` up), appending instruction pointers to `output` up to its capacity; `count`
    /// is how many were written. Returns false when the rules stopped at the last frame written:
    /// `registers` then hold that frame's registers, for libunwind to take it from there.
    func unwind(
        registers: UnsafeMutablePointer<UInt64>, stackAddress: UInt64, stack: UnsafeRawBufferPointer,
        output: UnsafeMutableBufferPointer<UInt64>, count: inout Int
    ) -> Bool {
        var known: UInt32 = (1 << 17) - 1
        let stackBytes = UInt64(stack.count)
        while count < output.count {
            let ip = registers[Self.returnAddress]
            if ip == 0 { return true }
            output[count] = ip
            count += 1
            let rule = self.rule(at: count == 1 ? ip : ip &- 1)
            let frameRegister = Int(rule.pointee.frameRegister)
            guard rule.pointee.usable, known & (1 &<< UInt32(frameRegister)) != 0 else { return false }
            if rule.pointee.returnAddressUndefined { return true }
            let frameAddress = registers[frameRegister] &+ UInt64(bitPattern: rule.pointee.frameOffset)
            if frameAddress <= registers[Self.stackPointer] && count > 1 { return false }  // not going up
            // Every saved register must be in the copied stack before any is restored, so that a
            // miss leaves this frame's registers for libunwind.
            var saved = rule.pointee.saved
            while saved != 0 {
                let register = saved.trailingZeroBitCount
                saved &= saved &- 1
                let offset = frameAddress &+ UInt64(bitPattern: Int64(rule.pointee.offsets[register])) &- stackAddress
                guard offset <= stackBytes &- 8, stackBytes >= 8 else { return false }
            }
            saved = rule.pointee.saved
            while saved != 0 {
                let register = saved.trailingZeroBitCount
                saved &= saved &- 1
                let offset = frameAddress &+ UInt64(bitPattern: Int64(rule.pointee.offsets[register])) &- stackAddress
                registers[register] = stack.loadUnaligned(fromByteOffset: Int(offset), as: UInt64.self)
            }
            registers[Self.stackPointer] = frameAddress
            known = Self.calleeSaved
        }
        return true
    }

    /// The cached rule at `address`, computed on a miss: its slot, valid until the next call.
    private func rule(at address: UInt64) -> UnsafeMutablePointer<CachedRule> {
        let slot = cache + Int(truncatingIfNeeded: (address ^ (address &>> 12)) & UInt64(Self.cacheSlots - 1))
        if !slot.pointee.filled || slot.pointee.address != address { slot.pointee = compute(address) }
        return slot
    }

    private func compute(_ address: UInt64) -> CachedRule {
        guard let object = object(containing: address) else {
            var unknown = CachedRule()
            unknown.address = address
            unknown.filled = true
            return unknown
        }
        let key = RuleKey(objectID: object.objectID, vaddr: address &- object.bias)
        var cached: CachedRule
        if let known = computedRules[key] {
            cached = known
        } else {
            cached = Self.compute(key.vaddr, in: object.table)
            computedRules[key] = cached
        }
        cached.address = address
        cached.filled = true
        return cached
    }

    private static func compute(_ vaddr: UInt64, in table: CallFrameTable?) -> CachedRule {
        var cached = CachedRule()
        guard let table, let rule = try? table.rule(at: vaddr), !rule.isSignalFrame,
            case .register(let register, let offset) = rule.frameAddress, register < UInt16(Self.registerCount),
            let frameOffset = Int32(exactly: offset)
        else { return cached }
        cached.frameRegister = UInt8(register)
        cached.frameOffset = Int64(frameOffset)
        for index in rule.registers.indices {
            switch rule.registers[index] {
            case .unchanged:
                continue
            case .undefined:
                if index == Self.returnAddress { cached.returnAddressUndefined = true }
            case .savedAt(let offset):
                guard let narrow = Int32(exactly: offset) else { return cached }
                cached.saved |= 1 << UInt32(index)
                cached.offsets[index] = narrow
            default:
                return cached
            }
        }
        guard cached.returnAddressUndefined || cached.saved & (1 << UInt32(Self.returnAddress)) != 0 else { return cached }
        cached.usable = true
        return cached
    }

    private func object(containing address: UInt64) -> Object? {
        if lastObject < objects.count, objects[lastObject].textStart <= address, address < objects[lastObject].textEnd {
            return objects[lastObject]
        }
        // The newest mapping of an address wins (a library loaded where another was).
        guard let index = objects.lastIndex(where: { $0.textStart <= address && address < $0.textEnd }) else { return nil }
        lastObject = index
        return objects[index]
    }
}
