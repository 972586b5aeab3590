import Foundation

/// A strict reader of MetricKit payloads, written from the documented shape
/// (/work/shared/reference/metrickit.md, docs/formats/metrickit.md) rather than from launchprof's
/// types: an unknown or misspelled key, a missing required key or a wrong type fails. It reads
/// Apple's real payloads too: timestamps with or without " +0000", durations in any of
/// MetricKit's units ("20000 ms", "20 sec"), the metric groups launchprof does not write.
enum MetricKitPayloadParser {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    struct Bucket: Equatable {
        var startMs: Int
        var endMs: Int
        var count: Int
    }

    struct Histogram: Equatable {
        /// In index order.
        var buckets: [Bucket]
        var total: Int { buckets.reduce(0) { $0 + $1.count } }
    }

    struct MetricPayload {
        var appVersion: String
        var timeStampBegin: String
        var timeStampEnd: String
        var metaData: [String: Any]
        /// JSON key → histogram, for applicationLaunchMetrics and applicationResponsivenessMetrics.
        var launch: [String: Histogram]
        var responsiveness: [String: Histogram]
    }

    struct Diagnostic {
        var metaData: [String: Any]
        /// `launchDuration` or `hangDuration`, in ms.
        var durationMs: Double
        /// Frames in the call stack tree (0: an empty tree, the sampler did not run).
        var frameCount: Int
        var hangType: String?
    }

    struct DiagnosticPayload {
        var timeStampBegin: String
        var timeStampEnd: String
        var launches: [Diagnostic]
        var hangs: [Diagnostic]
    }

    static let metaDataKeys: Set = [
        "bundleIdentifier", "regionFormat", "osVersion", "deviceType", "appBuildVersion",
        "platformArchitecture", "lowPowerModeEnabled", "pid", "isTestFlightApp",
    ]
    /// The metric groups of MXMetricPayload that launchprof does not write (read and ignored).
    static let otherMetricGroups: Set = [
        "cpuMetrics", "gpuMetrics", "cellularConditionMetrics", "applicationTimeMetrics", "locationActivityMetrics",
        "networkTransferMetrics", "applicationExitMetrics", "diskIOMetrics", "memoryMetrics", "displayMetrics",
        "animationMetrics", "signpostMetrics", "diskSpaceUsageMetrics",
    ]
    static let launchKeys: Set = [
        "histogrammedTimeToFirstDrawKey", "histogrammedOptimizedTimeToFirstDrawKey", "histogrammedResumeTime",
        "histogrammedExtendedLaunch",
    ]

    static func metrics(_ data: Data) throws -> MetricPayload {
        let top = try object(try JSONSerialization.jsonObject(with: data), "payload")
        try keys(
            top, "payload", required: ["appVersion", "timeStampBegin", "timeStampEnd", "metaData"],
            optional: otherMetricGroups.union(["applicationLaunchMetrics", "applicationResponsivenessMetrics"]))
        let meta = try object(top["metaData"], "metaData")
        try keys(meta, "metaData", required: ["appBuildVersion", "osVersion", "bundleIdentifier"], optional: metaDataKeys)
        var launch: [String: Histogram] = [:]
        if let group = top["applicationLaunchMetrics"] {
            let group = try object(group, "applicationLaunchMetrics")
            try keys(group, "applicationLaunchMetrics", required: [], optional: launchKeys)
            for (key, value) in group { launch[key] = try histogram(value, key) }
        }
        var responsiveness: [String: Histogram] = [:]
        if let group = top["applicationResponsivenessMetrics"] {
            let group = try object(group, "applicationResponsivenessMetrics")
            try keys(group, "applicationResponsivenessMetrics", required: [], optional: ["histogrammedAppHangTime"])
            for (key, value) in group { responsiveness[key] = try histogram(value, key) }
        }
        return MetricPayload(
            appVersion: try string(top["appVersion"], "appVersion"),
            timeStampBegin: try timestamp(top["timeStampBegin"], "timeStampBegin"),
            timeStampEnd: try timestamp(top["timeStampEnd"], "timeStampEnd"),
            metaData: meta, launch: launch, responsiveness: responsiveness)
    }

    static func diagnostics(_ data: Data) throws -> DiagnosticPayload {
        let top = try object(try JSONSerialization.jsonObject(with: data), "payload")
        try keys(
            top, "payload", required: ["timeStampBegin", "timeStampEnd"],
            optional: [
                "appLaunchDiagnostics", "hangDiagnostics", "cpuExceptionDiagnostics", "diskWriteExceptionDiagnostics",
                "crashDiagnostics",
            ])
        func list(_ key: String, durationKey: String, hang: Bool) throws -> [Diagnostic] {
            guard let value = top[key] else { return [] }
            guard let array = value as? [Any] else { throw Failure(description: "\(key) is not an array") }
            return try array.enumerated().map { index, item in
                let where_ = "\(key)[\(index)]"
                let diagnostic = try object(item, where_)
                try keys(
                    diagnostic, where_,
                    required: hang ? ["version", "diagnosticMetaData", "callStackTree", "hangType"]
                        : ["version", "diagnosticMetaData", "callStackTree"],
                    optional: [])
                guard try string(diagnostic["version"], "\(where_).version") == "1.0.0" else {
                    throw Failure(description: "\(where_).version is not 1.0.0")
                }
                let meta = try object(diagnostic["diagnosticMetaData"], "\(where_).diagnosticMetaData")
                try keys(
                    meta, "\(where_).diagnosticMetaData", required: ["appVersion", "appBuildVersion", durationKey],
                    optional: metaDataKeys)
                let duration = try milliseconds(meta[durationKey], "\(where_).\(durationKey)")
                let frames = try callStackTree(diagnostic["callStackTree"], "\(where_).callStackTree")
                return Diagnostic(
                    metaData: meta, durationMs: duration, frameCount: frames,
                    hangType: hang ? try string(diagnostic["hangType"], "\(where_).hangType") : nil)
            }
        }
        return DiagnosticPayload(
            timeStampBegin: try timestamp(top["timeStampBegin"], "timeStampBegin"),
            timeStampEnd: try timestamp(top["timeStampEnd"], "timeStampEnd"),
            launches: try list("appLaunchDiagnostics", durationKey: "launchDuration", hang: false),
            hangs: try list("hangDiagnostics", durationKey: "hangDuration", hang: true))
    }

    /// A duration with one of MetricKit's (NSUnitDuration's) units, in ms: "16 ms" → 16,
    /// "20 sec" → 20 000.
    static func milliseconds(_ value: Any?, _ path: String) throws -> Double {
        let text = try string(value, path)
        let units: [String: Double] = ["ns": 1e-6, "µs": 1e-3, "μs": 1e-3, "ms": 1, "sec": 1e3, "min": 60e3, "hr": 3_600e3]
        let parts = text.split(separator: " ")
        guard parts.count == 2, let scale = units[String(parts[1])], let number = Double(parts[0]), number >= 0 else {
            throw Failure(description: "\(path) is not a duration with a unit: \(text)")
        }
        return number * scale
    }

    /// Checks a tree and returns how many frames it holds.
    @discardableResult
    static func callStackTree(_ value: Any?, _ path: String) throws -> Int {
        let tree = try object(value, path)
        try keys(tree, path, required: ["callStackPerThread", "callStacks"], optional: [])
        guard tree["callStackPerThread"] is Bool, let stacks = tree["callStacks"] as? [Any] else {
            throw Failure(description: "\(path): callStackPerThread or callStacks has the wrong type")
        }
        var frames = 0
        for (index, stack) in stacks.enumerated() {
            let stack = try object(stack, "\(path).callStacks[\(index)]")
            try keys(stack, "\(path).callStacks[\(index)]", required: ["threadAttributed", "callStackRootFrames"], optional: [])
            guard let roots = stack["callStackRootFrames"] as? [Any] else { throw Failure(description: "\(path): roots") }
            for root in roots { frames += try frame(root, "\(path).frame", depth: 1) }
        }
        return frames
    }

    /// launchprof's own frame keys, which MetricKit does not write.
    static let launchprofFrameKeys: Set = ["launchprofBuildID", "symbol"]

    private static func frame(_ value: Any?, _ path: String, depth: Int) throws -> Int {
        guard depth <= 130 else { throw Failure(description: "\(path): deeper than 130 frames") }
        let fields = try object(value, path)
        try keys(
            fields, path, required: ["binaryName", "binaryUUID", "address", "offsetIntoBinaryTextSegment", "sampleCount"],
            optional: launchprofFrameKeys.union(["subFrames"]))
        guard let count = fields["sampleCount"] as? Int, count >= 1 else { throw Failure(description: "\(path).sampleCount") }
        let uuid = try string(fields["binaryUUID"], "\(path).binaryUUID")
        guard uuid.wholeMatch(of: /[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}/) != nil else {
            throw Failure(description: "\(path).binaryUUID is not an uppercase NSUUID string: \(uuid)")
        }
        guard fields["address"] is Int, fields["offsetIntoBinaryTextSegment"] is Int else {
            throw Failure(description: "\(path): address or offsetIntoBinaryTextSegment is not an integer")
        }
        var frames = 1
        if let sub = fields["subFrames"] {
            guard let sub = sub as? [Any], !sub.isEmpty else { throw Failure(description: "\(path).subFrames empty or not an array") }
            for child in sub { frames += try frame(child, path, depth: depth + 1) }
        }
        return frames
    }

    private static func histogram(_ value: Any?, _ path: String) throws -> Histogram {
        let histogram = try object(value, path)
        try keys(histogram, path, required: ["histogramNumBuckets", "histogramValue"], optional: [])
        guard let count = histogram["histogramNumBuckets"] as? Int, count >= 1 else {
            throw Failure(description: "\(path).histogramNumBuckets is not a positive integer")
        }
        let values = try object(histogram["histogramValue"], "\(path).histogramValue")
        guard Set(values.keys) == Set((0..<count).map(String.init)) else {
            throw Failure(description: "\(path).histogramValue keys \(values.keys.sorted()) are not 0..<\(count)")
        }
        let buckets = try (0..<count).map { index -> Bucket in
            let where_ = "\(path).histogramValue.\(index)"
            let bucket = try object(values[String(index)], where_)
            try keys(bucket, where_, required: ["bucketStart", "bucketEnd", "bucketCount"], optional: [])
            guard let bucketCount = bucket["bucketCount"] as? Int, bucketCount >= 0 else {
                throw Failure(description: "\(where_).bucketCount is not an integer")
            }
            let start = try milliseconds(bucket["bucketStart"], "\(where_).bucketStart")
            let end = try milliseconds(bucket["bucketEnd"], "\(where_).bucketEnd")
            guard end > start, start == start.rounded(), end == end.rounded() else {
                throw Failure(description: "\(where_): bounds \(start)–\(end) ms")
            }
            return Bucket(startMs: Int(start), endMs: Int(end), count: bucketCount)
        }
        for (a, b) in zip(buckets, buckets.dropFirst()) where b.startMs < a.endMs {
            throw Failure(description: "\(path): buckets overlap or are out of order")
        }
        return Histogram(buckets: buckets)
    }

    private static func timestamp(_ value: Any?, _ path: String) throws -> String {
        let text = try string(value, path)
        guard text.wholeMatch(of: /\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}( [+-]\d{4})?/) != nil else {
            throw Failure(description: "\(path) is not yyyy-MM-dd HH:mm:ss[ +0000]: \(text)")
        }
        return text
    }

    private static func object(_ value: Any?, _ path: String) throws -> [String: Any] {
        guard let object = value as? [String: Any] else { throw Failure(description: "\(path) is not an object") }
        return object
    }

    private static func string(_ value: Any?, _ path: String) throws -> String {
        guard let text = value as? String else { throw Failure(description: "\(path) is not a string") }
        return text
    }

    private static func keys(_ object: [String: Any], _ path: String, required: Set<String>, optional: Set<String>) throws {
        let present = Set(object.keys)
        if let missing = required.subtracting(present).sorted().first {
            throw Failure(description: "\(path): missing key \(missing)")
        }
        if let unknown = present.subtracting(required).subtracting(optional).sorted().first {
            throw Failure(description: "\(path): unknown key \(unknown)")
        }
    }
}
