import LaunchprofReport

/// MetricKit's `metaData` (in a metric payload) and `diagnosticMetaData` (in a diagnostic),
/// filled with the Linux facts that play the same role; `docs/formats/metrickit.md` gives every
/// mapping. The keys MetricKit always writes are always written here too, since typed
/// consumers (Meter, Sentry) require them.
public struct MetricKitMetaData: Sendable, Equatable, Codable {
    /// The executable's GNU build-id in hex ("" when it has none): it names one build exactly.
    public var appBuildVersion: String
    /// Diagnostics only: the app's version; ELF carries none, so launchprof writes "unknown".
    public var appVersion: String?
    /// The executable's resolved path: on Linux a program is known by where it is installed.
    public var bundleIdentifier: String
    /// The CPU model: the hardware the launch ran on.
    public var deviceType: String
    /// Hang diagnostics only: how long the main thread was unresponsive, whole ms ("1240 ms").
    public var hangDuration: String?
    /// Always false: Linux has no TestFlight.
    public var isTestFlightApp: Bool
    /// Launch diagnostics only: the launch's time to first frame, whole ms ("431 ms").
    public var launchDuration: String?
    /// Always false: launchprof reports no power mode (MetricKit's default).
    public var lowPowerModeEnabled: Bool
    /// The distribution and kernel, e.g. "Debian GNU/Linux 12 (bookworm), Linux 6.1.0-13-amd64".
    public var osVersion: String
    /// The launched process in a diagnostic; -1 in a metric payload, which aggregates many
    /// processes (as MetricKit writes it).
    public var pid: Int32
    /// `uname -m`, e.g. "x86_64".
    public var platformArchitecture: String
    /// The territory of launchprof's locale ("en_US.UTF-8" → "US"); "ZZ", the Unicode CLDR code
    /// for an unknown region, under C/POSIX or a locale without one.
    public var regionFormat: String

    /// MetricKit's pid in a metric payload.
    public static let aggregatePid: Int32 = -1
    /// CLDR's "Unknown Region".
    public static let unknownRegion = "ZZ"

    public init(
        appBuildVersion: String, appVersion: String? = nil, bundleIdentifier: String, deviceType: String,
        hangDuration: String? = nil, isTestFlightApp: Bool = false, launchDuration: String? = nil,
        lowPowerModeEnabled: Bool = false, osVersion: String, pid: Int32 = Self.aggregatePid,
        platformArchitecture: String, regionFormat: String = Self.unknownRegion
    ) {
        self.appBuildVersion = appBuildVersion
        self.appVersion = appVersion
        self.bundleIdentifier = bundleIdentifier
        self.deviceType = deviceType
        self.hangDuration = hangDuration
        self.isTestFlightApp = isTestFlightApp
        self.launchDuration = launchDuration
        self.lowPowerModeEnabled = lowPowerModeEnabled
        self.osVersion = osVersion
        self.pid = pid
        self.platformArchitecture = platformArchitecture
        self.regionFormat = regionFormat
    }
}
