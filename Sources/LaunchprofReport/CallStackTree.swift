/// Sampled call stacks in MetricKit's `MXCallStackTree` shape, so that tools written for
/// MetricKit's diagnostics read launchprof's: roots are the outermost callers and `subFrames`
/// their callees (a flame graph), each frame counting the samples it was on the stack in.
///
/// On Linux `binaryUUID` is the NSUUID form of the object's GNU build-id (its first 16 bytes),
/// `launchprofBuildID` the whole build-id, and `offsetIntoBinaryTextSegment` the address minus
/// the object's load address.
public struct CallStackTree: Sendable, Equatable, Codable {
    /// True when `callStacks` holds one entry per thread (launchprof always attributes them).
    public var callStackPerThread: Bool
    public var callStacks: [CallStack]

    public init(callStackPerThread: Bool = true, callStacks: [CallStack]) {
        self.callStackPerThread = callStackPerThread
        self.callStacks = callStacks
    }

    /// What a diagnostic carries when the sampler did not run: MetricKit never writes a
    /// diagnostic without a tree, so consumers require one.
    public static let empty = CallStackTree(callStacks: [])

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

    /// One frame, with its callees. Keys are MetricKit's, except `launchprofBuildID` and
    /// `symbol`, which are launchprof's own (consumers that decode MetricKit's keys ignore them).
    public struct Frame: Sendable, Equatable, Codable {
        public var binaryName: String
        /// MetricKit's NSUUID form of the object's identity: the first 16 bytes of the GNU
        /// build-id, `8-4-4-4-12` uppercase hex (typed consumers decode it as a `UUID`).
        public var binaryUUID: String
        /// launchprof's own: the object's full GNU build-id in hex ("" when it has none); a
        /// SHA-1 build-id is 20 bytes, so `binaryUUID` alone cannot name it.
        public var launchprofBuildID: String
        /// The frame's address in the sampled process.
        public var address: UInt64
        public var offsetIntoBinaryTextSegment: UInt64
        /// Samples in which this frame was on the stack at this position of the tree.
        public var sampleCount: Int
        /// launchprof's own: the function's name, demangled, when launchprof could name it
        /// (MetricKit leaves symbolication to the reader).
        public var symbol: String?
        /// Callees; nil (left out of the JSON) when there are none.
        public var subFrames: [Frame]?

        /// - Parameter buildID: the object's GNU build-id in hex; `binaryUUID` is derived from it.
        public init(
            binaryName: String, buildID: String, address: UInt64,
            offsetIntoBinaryTextSegment: UInt64, sampleCount: Int, symbol: String? = nil,
            subFrames: [Frame]? = nil
        ) {
            self.binaryName = binaryName
            self.binaryUUID = Self.uuid(buildID: buildID)
            self.launchprofBuildID = buildID
            self.address = address
            self.offsetIntoBinaryTextSegment = offsetIntoBinaryTextSegment
            self.sampleCount = sampleCount
            self.symbol = symbol
            self.subFrames = subFrames
        }

        enum CodingKeys: String, CodingKey {
            case binaryName, binaryUUID, launchprofBuildID, address, offsetIntoBinaryTextSegment, sampleCount, symbol,
                subFrames
        }

        /// Reads reports written before `launchprofBuildID` existed too, whose `binaryUUID`
        /// held the build-id itself.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            binaryName = try container.decode(String.self, forKey: .binaryName)
            let uuid = try container.decode(String.self, forKey: .binaryUUID)
            if let buildID = try container.decodeIfPresent(String.self, forKey: .launchprofBuildID) {
                launchprofBuildID = buildID
                binaryUUID = uuid
            } else {
                launchprofBuildID = uuid
                binaryUUID = Self.uuid(buildID: uuid)
            }
            address = try container.decode(UInt64.self, forKey: .address)
            offsetIntoBinaryTextSegment = try container.decode(UInt64.self, forKey: .offsetIntoBinaryTextSegment)
            sampleCount = try container.decode(Int.self, forKey: .sampleCount)
            symbol = try container.decodeIfPresent(String.self, forKey: .symbol)
            subFrames = try container.decodeIfPresent([Frame].self, forKey: .subFrames)
        }

        /// A GNU build-id in MetricKit's NSUUID form: its first 16 bytes (32 hex digits) as
        /// `8-4-4-4-12`, uppercase; a shorter build-id (or none) is padded with zeros. Anything
        /// but hex digits is ignored, so the result always parses as a UUID.
        public static func uuid(buildID: String) -> String {
            var digits = buildID.uppercased().filter { $0.isHexDigit }.prefix(32)
            digits += String(repeating: "0", count: 32 - digits.count)
            var result = ""
            for (offset, digit) in digits.enumerated() {
                if [8, 12, 16, 20].contains(offset) { result += "-" }
                result.append(digit)
            }
            return result
        }
    }

    /// MetricKit caps a tree's depth at 130 frames.
    public static let maximumDepth = 130
}
