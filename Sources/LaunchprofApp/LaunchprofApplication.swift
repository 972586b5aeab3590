#if canImport(Glibc)
    import Glibc
#endif

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
        // `launchprof prewarm --freeze-at willFinishLaunching`: stop here, before any app work;
        // launchprof holds the stop and resumes it as the user's launch.
        if hooks.descriptor >= 0, options.reason == .prewarm,
            getenv("LAUNCHPROF_FREEZE_AT").map({ String(cString: $0) }) == willFinishLaunchingPhase
        {
            kill(getpid(), SIGSTOP)
        }
        let willFinish = hooks.measure(willFinishLaunchingPhase) {
            delegate.willFinishLaunching(options: options)
        }
        guard willFinish else { return declinedStatus }
        hooks.measure(restoreStatePhase) { delegate.restoreState(options: options) }
        let didFinish = hooks.measure(didFinishLaunchingPhase) {
            delegate.didFinishLaunching(options: options)
        }
        guard didFinish else { return declinedStatus }
        // Listening before the first frame: launchprof may send a transition right after it.
        if hooks.descriptor >= 0 { deliverLifecycle(to: delegate, hooks: hooks) }
        delegate.drawFirstFrame()
        hooks.firstFrame()
        return delegate.run(options: options)
    }

    /// Under launchprof: app-state transitions arrive by signal (`LifecycleEvent`); each
    /// callback is timed as an app phase of its name.
    private static func deliverLifecycle(to delegate: some LaunchprofApplicationDelegate, hooks: LaunchHookChannel) {
        nonisolated(unsafe) let delegate = delegate
        LifecycleSignals.install { signal in
            for event in LifecycleEvent.events(for: signal) {
                if event == .willTerminate {
                    delegate.willTerminate()
                    // End as the signal would have ended the app, so launchprof still sees it
                    // ended by SIGTERM.
                    endBySignal(SIGTERM)
                }
                hooks.measure(event.rawValue) {
                    switch event {
                    case .willResignActive: delegate.willResignActive()
                    case .didEnterBackground: delegate.didEnterBackground()
                    case .willEnterForeground: delegate.willEnterForeground()
                    case .didBecomeActive: delegate.didBecomeActive()
                    case .willTerminate: break
                    }
                }
            }
        }
    }

    private static func endBySignal(_ number: Int32) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = SIG_DFL
        sigemptyset(&action.sa_mask)
        sigaction(number, &action, nil)
        raise(number)
    }
}
