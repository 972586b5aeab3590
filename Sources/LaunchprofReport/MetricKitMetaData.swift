/// MetricKit's `metaData` (in a metric payload) and `diagnosticMetaData` (in a diagnostic),
/// filled with the Linux facts that play the same role; `Reports/METRICKIT.md` gives every
/// mapping. A key launchprof has no truthful value for is left out.
public struct MetricKitMetaData: Sendable, Equatable, Codable {
    /// The executable's GNU build-id in hex ("" when it has none): it names one build exactly.
    public var appBuildVersion: String
    /// Diagnostics only: the app's version; ELF carries none, so launchprof writes "unknown".
    public var appVersion: String?
    /// The executable's resolved path: on Linux a program is known by where it is installed.
    public var bundleIdentifier: String
    /// The CPU model: the hardware the launch ran on.
    public var deviceType: String
    /// Hang diagnostics only: how long the main thread was unresponsive, e.g. "312.5 ms".
    public var hangDuration: String?
    /// Always false: Linux has no TestFlight.
    public var isTestFlightApp: Bool
    /// Launch diagnostics only: the launch's time to first frame, e.g. "431.25 ms".
    public var launchDuration: String?
    /// The distribution and kernel, e.g. "Debian GNU/Linux 12 (bookworm), Linux 6.1.0-13-amd64".
    public var osVersion: String
    /// Diagnostics only: the launched process.
    public var pid: Int32?
    /// `uname -m`, e.g. "x86_64".
    public var platformArchitecture: String
    /// The territory of launchprof's locale (`LC_ALL`, else `LANG`: "en_US.UTF-8" → "US"); left
    /// out under the C/POSIX locale.
    public var regionFormat: String?

    public init(
        appBuildVersion: String, appVersion: String? = nil, bundleIdentifier: String, deviceType: String,
        hangDuration: String? = nil, isTestFlightApp: Bool = false, launchDuration: String? = nil,
        osVersion: String, pid: Int32? = nil, platformArchitecture: String, regionFormat: String? = nil
    ) {
        self.appBuildVersion = appBuildVersion
        self.appVersion = appVersion
        self.bundleIdentifier = bundleIdentifier
        self.deviceType = deviceType
        self.hangDuration = hangDuration
        self.isTestFlightApp = isTestFlightApp
        self.launchDuration = launchDuration
        self.osVersion = osVersion
        self.pid = pid
        self.platformArchitecture = platformArchitecture
        self.regionFormat = regionFormat
    }
}
