import Foundation

/// What MetricKit's JSON consumers require, as Codable types of our own with the field names
/// and types those consumers declare: ChimeHQ/Meter's diagnostic types (`regionFormat`,
/// `hangDuration`, a `callStackTree` required; frames with `binaryUUID: UUID?`,
/// `offsetIntoBinaryTextSegment: Int?`, `address: UInt64`) and Sentry's MetricKit integration
/// (`SentryMXCallStackTree`: `binaryUUID: UUID`, `offsetIntoBinaryTextSegment: Int`,
/// `address: UInt64` required). A payload either decodes into these or the consumer drops it.
enum MetricKitConsumerMirrors {
    /// Meter's date strategy: "yyyy-MM-dd HH:mm:ss Z", else without the zone.
    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            for format in ["yyyy-MM-dd HH:mm:ss Z", "yyyy-MM-dd HH:mm:ss"] {
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = TimeZone(identifier: "UTC")
                formatter.dateFormat = format
                if let date = formatter.date(from: text) { return date }
            }
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a MetricKit date: \(text)")
        }
        return decoder
    }

    // MARK: Meter

    struct MeterFrame: Decodable {
        var binaryUUID: UUID?
        var offsetIntoBinaryTextSegment: Int?
        var sampleCount: Int?
        var binaryName: String?
        var address: UInt64
        var subFrames: [MeterFrame]?
    }

    struct MeterCallStack: Decodable {
        var threadAttributed: Bool?
        var callStackRootFrames: [MeterFrame]
    }

    struct MeterCallStackTree: Decodable {
        var callStacks: [MeterCallStack]
        var callStackPerThread: Bool
    }

    /// Meter's metadata of a diagnostic: every one of these is required.
    struct MeterMetaData: Decodable {
        var deviceType: String
        var appBuildVersion: String
        var appVersion: String
        var osVersion: String
        var platformArchitecture: String
        var regionFormat: String
        var isTestFlightApp: Bool?
        var lowPowerModeEnabled: Bool?
        var pid: Int?
        var hangDuration: String?
        var launchDuration: String?
    }

    struct MeterDiagnostic: Decodable {
        var version: String
        var diagnosticMetaData: MeterMetaData
        var callStackTree: MeterCallStackTree
    }

    struct MeterDiagnosticPayload: Decodable {
        var timeStampBegin: Date
        var timeStampEnd: Date
        var hangDiagnostics: [MeterDiagnostic]?
        var appLaunchDiagnostics: [MeterDiagnostic]?
    }

    // MARK: Sentry

    struct SentryFrame: Decodable {
        var binaryUUID: UUID
        var offsetIntoBinaryTextSegment: Int
        var binaryName: String?
        var address: UInt64
        var subFrames: [SentryFrame]?
        var sampleCount: Int?
    }

    struct SentryCallStack: Decodable {
        var threadAttributed: Bool?
        var callStackRootFrames: [SentryFrame]
    }

    /// Sentry decodes each diagnostic's `callStackTree.jsonRepresentation()` on its own.
    struct SentryCallStackTree: Decodable {
        var callStacks: [SentryCallStack]
        var callStackPerThread: Bool
    }

    // MARK: Metric payload, as a typed dashboard reads it

    struct MetricMetaData: Decodable {
        var appBuildVersion: String
        var bundleIdentifier: String
        var deviceType: String
        var isTestFlightApp: Bool
        var lowPowerModeEnabled: Bool
        var osVersion: String
        var pid: Int
        var platformArchitecture: String
        var regionFormat: String
    }

    struct Bucket: Decodable {
        var bucketStart: String
        var bucketEnd: String
        var bucketCount: Int
    }

    struct Histogram: Decodable {
        var histogramNumBuckets: Int
        var histogramValue: [String: Bucket]
    }

    struct MetricPayload: Decodable {
        struct Launch: Decodable {
            var histogrammedTimeToFirstDrawKey: Histogram?
            var histogrammedOptimizedTimeToFirstDrawKey: Histogram?
            var histogrammedResumeTime: Histogram?
            var histogrammedExtendedLaunch: Histogram?
        }
        struct Responsiveness: Decodable {
            var histogrammedAppHangTime: Histogram?
        }
        var appVersion: String
        var timeStampBegin: Date
        var timeStampEnd: Date
        var metaData: MetricMetaData
        var applicationLaunchMetrics: Launch?
        var applicationResponsivenessMetrics: Responsiveness?
    }
}
