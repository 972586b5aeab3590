import Foundation

/// A strict reader of MetricKit payloads, written from the documented shape
/// (/work/shared/reference/metrickit.md, Reports/METRICKIT.md) rather than from launchprof's
/// types: an unknown or misspelled key, a missing required key or a wrong type fails.
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
        var hasCallStackTree: Bool
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
    static let launchKeys: Set = [
        "histogrammedTimeToFirstDrawKey", "histogrammedOptimizedTimeToFirstDrawKey", "histogrammedResumeTime",
        "histogrammedExtendedLaunch",
    ]

    static func metrics(_ data: Data) throws -> MetricPayload {
        let top = try object(try JSONSerialization.jsonObject(with: data), "payload")
        try keys(
            top, "payload", required: ["appVersion", "timeStampBegin", "timeStampEnd", "metaData"],
            optional: ["applicationLaunchMetrics", "applicationResponsivenessMetrics"])
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
                    diagnostic, where_, required: hang ? ["version", "diagnosticMetaData", "hangType"] : ["version", "diagnosticMetaData"],
                    optional: ["callStackTree"])
                guard try string(diagnostic["version"], "\(where_).version") == "1.0.0" else {
                    throw Failure(description: "\(where_).version is not 1.0.0")
                }
                let meta = try object(diagnostic["diagnosticMetaData"], "\(where_).diagnosticMetaData")
                try keys(
                    meta, "\(where_).diagnosticMetaData", required: ["appVersion", "appBuildVersion", durationKey],
                    optional: metaDataKeys)
                _ = try milliseconds(meta[durationKey], "\(where_).\(durationKey)")
                if let tree = diagnostic["callStackTree"] { try callStackTree(tree, "\(where_).callStackTree") }
                return Diagnostic(
                    metaData: meta, hasCallStackTree: diagnostic["callStackTree"] != nil,
                    hangType: hang ? try string(diagnostic["hangType"], "\(where_).hangType") : nil)
            }
        }
        return DiagnosticPayload(
            timeStampBegin: try timestamp(top["timeStampBegin"], "timeStampBegin"),
            timeStampEnd: try timestamp(top["timeStampEnd"], "timeStampEnd"),
            launches: try list("appLaunchDiagnostics", durationKey: "launchDuration", hang: false),
            hangs: try list("hangDiagnostics", durationKey: "hangDuration", hang: true))
    }

    /// "16.237 ms" → 16.237.
    static func milliseconds(_ value: Any?, _ path: String) throws -> Double {
        let text = try string(value, path)
        guard text.hasSuffix(" ms"), let number = Double(text.dropLast(3)), number >= 0 else {
            throw Failure(description: "\(path) is not a duration in ms: \(text)")
        }
        return number
    }

    private static func callStackTree(_ value: Any?, _ path: String) throws {
        let tree = try object(value, path)
        try keys(tree, path, required: ["callStackPerThread", "callStacks"], optional: [])
        guard tree["callStackPerThread"] is Bool, let stacks = tree["callStacks"] as? [Any] else {
            throw Failure(description: "\(path): callStackPerThread or callStacks has the wrong type")
        }
        for (index, stack) in stacks.enumerated() {
            let stack = try object(stack, "\(path).callStacks[\(index)]")
            try keys(stack, "\(path).callStacks[\(index)]", required: ["threadAttributed", "callStackRootFrames"], optional: [])
            guard let roots = stack["callStackRootFrames"] as? [Any] else { throw Failure(description: "\(path): roots") }
            for root in roots { try frame(root, "\(path).frame", depth: 1) }
        }
    }

    private static func frame(_ value: Any?, _ path: String, depth: Int) throws {
        guard depth <= 130 else { throw Failure(description: "\(path): deeper than 130 frames") }
        let fields = try object(value, path)
        try keys(
            fields, path, required: ["binaryName", "binaryUUID", "address", "offsetIntoBinaryTextSegment", "sampleCount"],
            optional: ["subFrames", "symbol"])
        guard let count = fields["sampleCount"] as? Int, count >= 1 else { throw Failure(description: "\(path).sampleCount") }
        if let sub = fields["subFrames"] {
            guard let sub = sub as? [Any], !sub.isEmpty else { throw Failure(description: "\(path).subFrames empty or not an array") }
            for child in sub { try frame(child, path, depth: depth + 1) }
        }
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
        guard text.wholeMatch(of: /\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/) != nil else {
            throw Failure(description: "\(path) is not yyyy-MM-dd HH:mm:ss: \(text)")
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
