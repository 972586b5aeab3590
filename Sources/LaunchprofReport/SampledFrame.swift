/// One frame of a sampled stack, named by launchprof's symbolizer.
public struct SampledFrame: Sendable, Hashable {
    /// The function, demangled; nil when no symbol covers the address.
    public var function: String?
    /// The object's file name (`libc.so.6`, the program's name); `?` when unmapped.
    public var object: String
    /// GNU build-id in hex; empty when the object has none.
    public var buildID: String
    /// The address in the sampled process.
    public var address: UInt64
    /// The address minus the object's load address (what `addr2line -e object` takes for a
    /// shared object or PIE).
    public var offset: UInt64
    /// A frame of the C library or the loader: blamed work goes to its caller.
    public var isSystem: Bool
    /// Without a symbol: where the function starts per the call frame information (offset
    /// like `offset`), so every sample in it gets one name.
    public var functionStart: UInt64?

    public init(
        function: String?, object: String, buildID: String = "", address: UInt64, offset: UInt64,
        isSystem: Bool = false, functionStart: UInt64? = nil
    ) {
        self.functionStart = functionStart
        self.function = function
        self.object = object
        self.buildID = buildID
        self.address = address
        self.offset = offset
        self.isSystem = isSystem
    }

    /// The function's name, else `object+0xstart` (the function's start by its call frame
    /// information), else `object+0xoffset`.
    public var name: String { function ?? "\(object)+0x" + String(functionStart ?? offset, radix: 16) }
}

/// What a thread was doing during a stretch of the launch, with its stack.
public struct SampledSpan: Sendable, Equatable {
    public enum State: String, Sendable, Codable {
        /// Running.
        case onCPU
        /// Ready to run but preempted.
        case runnable
        /// Waiting: in a system call (I/O, a sleep, a lock), a page fault, a tracer stop.
        case blocked
    }

    public var thread: Int32
    /// ns from the spawn.
    public var startNs: UInt64
    public var endNs: UInt64
    public var state: State
    /// For `blocked`: the system call the thread waited in, when it was in one.
    public var syscall: String?
    /// Innermost first.
    public var frames: [SampledFrame]

    public init(
        thread: Int32, startNs: UInt64, endNs: UInt64, state: State, syscall: String? = nil,
        frames: [SampledFrame]
    ) {
        self.thread = thread
        self.startNs = startNs
        self.endNs = endNs
        self.state = state
        self.syscall = syscall
        self.frames = frames
    }

    public var durationNs: UInt64 { endNs &- startNs }
}
