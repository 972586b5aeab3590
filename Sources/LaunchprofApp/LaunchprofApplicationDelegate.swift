/// The app's side of `LaunchprofApplication.main(delegate:)`, in the spirit of
/// UIApplicationDelegate. Methods are called in order, once, on the thread that called `main`.
public protocol LaunchprofApplicationDelegate: AnyObject {
    /// First launch step. Return false when the app cannot launch: `main` stops there.
    func willFinishLaunching(options: LaunchOptions) -> Bool
    /// Restores the state saved by a previous run (default: nothing to restore).
    func restoreState(options: LaunchOptions)
    /// Last launch step before the first frame. Return false when the app cannot launch.
    func didFinishLaunching(options: LaunchOptions) -> Bool
    /// Puts the first frame on screen (default: nothing to draw).
    func drawFirstFrame()
    /// The app's life after its first frame; the result is the exit status (default: 0).
    func run(options: LaunchOptions) -> Int32

    // App-state transitions after the first frame (see `LifecycleEvent`), called one at a time
    // on launchprof's lifecycle thread, not the thread that called `main`. Default: nothing.
    func willResignActive()
    func didEnterBackground()
    func willEnterForeground()
    func didBecomeActive()
    /// The process ends (by the SIGTERM that brought this) when it returns.
    func willTerminate()
}

extension LaunchprofApplicationDelegate {
    public func willFinishLaunching(options: LaunchOptions) -> Bool { true }
    public func restoreState(options: LaunchOptions) {}
    public func drawFirstFrame() {}
    public func run(options: LaunchOptions) -> Int32 { 0 }
    public func willResignActive() {}
    public func didEnterBackground() {}
    public func willEnterForeground() {}
    public func didBecomeActive() {}
    public func willTerminate() {}
}
