/// How to find the caller's registers at one address of a function: a row of the DWARF call
/// frame table (`.eh_frame`), for the x86-64 registers 0–16 (RAX RDX RCX RBX RSI RDI RBP RSP,
/// R8–R15, and 16, the return address).
public struct CallFrameRule: Sendable, Equatable {
    /// The canonical frame address: the stack pointer's value at the call site.
    public enum FrameAddress: Sendable, Equatable {
        /// A register's value plus an offset.
        case register(UInt16, offset: Int64)
        /// A DWARF expression (PLT entries, signal trampolines).
        case expression
    }

    /// Where a register of the caller is.
    public enum Register: Sendable, Equatable {
        /// Unchanged by the callee (the default, and DW_CFA_same_value).
        case unchanged
        /// Not recoverable; for the return address, the outermost frame.
        case undefined
        /// Saved at CFA + offset.
        case savedAt(offset: Int64)
        /// The value is CFA + offset.
        case valueAt(offset: Int64)
        /// Saved in another register.
        case inRegister(UInt16)
        /// Saved at the address a DWARF expression computes.
        case expression
        /// The value a DWARF expression computes.
        case valueExpression
    }

    /// DWARF register numbers kept (x86-64: 16 general-purpose registers and the return address).
    public static let registerCount = 17
    /// The return address column of x86-64's call frame information.
    public static let returnAddressRegister = 16

    public var frameAddress: FrameAddress
    /// `registerCount` rules, by DWARF register number (inline: a rule is made for every new
    /// address a sampled stack passes through, without allocating).
    public var registers: InlineArray<17, Register>
    /// The function's range (unrelocated addresses), from its frame description entry.
    public var functionStart: UInt64
    public var functionEnd: UInt64
    /// The entry describes a signal trampoline (augmentation `S`): its return address is not
    /// after a call, so it must not be looked up one byte back.
    public var isSignalFrame: Bool

    public init(
        frameAddress: FrameAddress, registers: InlineArray<17, Register>, functionStart: UInt64, functionEnd: UInt64,
        isSignalFrame: Bool = false
    ) {
        self.frameAddress = frameAddress
        self.registers = registers
        self.functionStart = functionStart
        self.functionEnd = functionEnd
        self.isSignalFrame = isSignalFrame
    }

    /// The rule of the return address.
    public var returnAddress: Register { registers[Self.returnAddressRegister] }

    public static func == (a: CallFrameRule, b: CallFrameRule) -> Bool {
        a.frameAddress == b.frameAddress && a.functionStart == b.functionStart && a.functionEnd == b.functionEnd
            && a.isSignalFrame == b.isSignalFrame && a.registers.indices.allSatisfy { a.registers[$0] == b.registers[$0] }
    }
}
