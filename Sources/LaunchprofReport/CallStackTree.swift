/// Sampled call stacks in MetricKit's `MXCallStackTree` shape, so that tools written for
/// MetricKit's diagnostics read launchprof's: roots are the outermost callers and `subFrames`
/// their callees (a flame graph), each frame counting the samples it was on the stack in.
///
/// On Linux `binaryUUID` is the object's GNU build-id (hex) and `offsetIntoBinaryTextSegment`
/// the address minus the object's load address.
public struct CallStackTree: Sendable, Equatable, Codable {
    /// True when `callStacks` holds one entry per thread (launchprof always attributes them).
    public var callStackPerThread: Bool
    public var callStacks: [CallStack]

    public init(callStackPerThread: Bool = true, callStacks: [CallStack]) {
        self.callStackPerThread = callStackPerThread
        self.callStacks = callStacks
    }

    /// The stacks of one thread.
    public struct CallStack: Sendable, Equatable, Codable {
        /// True for the thread the tree is about (the main thread).
        public var threadAttributed: Bool
        public var callStackRootFrames: [Frame]

        public init(threadAttributed: Bool, callStackRootFrames: [Frame]) {
            self.threadAttributed = threadAttributed
            self.callStackRootFrames = callStackRootFrames
        }
    }

    /// One frame, with its callees. Keys are MetricKit's; `symbol` is launchprof's addition
    /// (MetricKit leaves symbolication to the reader).
    public struct Frame: Sendable, Equatable, Codable {
        public var binaryName: String
        /// GNU build-id in hex; empty when the object has none.
        public var binaryUUID: String
        /// The frame's address in the sampled process.
        public var address: UInt64
        public var offsetIntoBinaryTextSegment: UInt64
        /// Samples in which this frame was on the stack at this position of the tree.
        public var sampleCount: Int
        /// The function's name, demangled, when launchprof could name it.
        public var symbol: String?
        /// Callees; nil (left out of the JSON) when there are none.
        public var subFrames: [Frame]?

        public init(
            binaryName: String, binaryUUID: String, address: UInt64,
            offsetIntoBinaryTextSegment: UInt64, sampleCount: Int, symbol: String? = nil,
            subFrames: [Frame]? = nil
        ) {
            self.binaryName = binaryName
            self.binaryUUID = binaryUUID
            self.address = address
            self.offsetIntoBinaryTextSegment = offsetIntoBinaryTextSegment
            self.sampleCount = sampleCount
            self.symbol = symbol
            self.subFrames = subFrames
        }
    }

    /// MetricKit caps a tree's depth at 130 frames.
    public static let maximumDepth = 130
}
