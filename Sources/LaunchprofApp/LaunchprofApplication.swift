/// An app entry point in the spirit of UIApplicationMain: it drives the delegate through the
/// launch, timing each step as an app phase on launchprof's hook channel, then marks the first
/// frame:
///
///     willFinishLaunching → restoreState → didFinishLaunching → drawFirstFrame → first-frame
///
/// The phases are named `willFinishLaunching`, `restoreState` and `didFinishLaunching`, as
/// `launchprof run` reports them. Without launchprof the hooks cost nothing.
///
///     @main struct App { static func main() { exit(LaunchprofApplication.main(delegate: MyDelegate())) } }
public enum LaunchprofApplication {
    /// Phase names, the report's contract.
    public static let willFinishLaunchingPhase = "willFinishLaunching"
    public static let restoreStatePhase = "restoreState"
    public static let didFinishLaunchingPhase = "didFinishLaunching"

    /// Exit status when a delegate step returned false.
    public static let declinedStatus: Int32 = 1

    /// Runs the launch sequence and then the app; returns the exit status for the caller to
    /// pass to `exit`.
    /// - Parameters:
    ///   - delegate: the app.
    ///   - options: the launch options (default: this process's, see `LaunchOptions.current`).
    ///   - hooks: where phases are reported (default: the channel launchprof passed).
    public static func main(
        delegate: some LaunchprofApplicationDelegate, options: LaunchOptions = .current,
        hooks: LaunchHookChannel = .environment
    ) -> Int32 {
        let willFinish = hooks.measure(willFinishLaunchingPhase) {
            delegate.willFinishLaunching(options: options)
        }
        guard willFinish else { return declinedStatus }
        hooks.measure(restoreStatePhase) { delegate.restoreState(options: options) }
        let didFinish = hooks.measure(didFinishLaunchingPhase) {
            delegate.didFinishLaunching(options: options)
        }
        guard didFinish else { return declinedStatus }
        delegate.drawFirstFrame()
        hooks.firstFrame()
        return delegate.run(options: options)
    }
}
