/// The five launch hooks for Swift, on the channel launchprof passed in the environment:
/// `Launchprof.begin("restoreState")` is `launchprof_begin("restoreState")` in C.
public enum Launchprof {
    public static func begin(_ phase: String) { LaunchHookChannel.environment.begin(phase) }
    public static func end(_ phase: String) { LaunchHookChannel.environment.end(phase) }
    public static func firstFrame() { LaunchHookChannel.environment.firstFrame() }
    public static func extendLaunch(taskID: String) {
        LaunchHookChannel.environment.extendLaunch(taskID: taskID)
    }
    public static func finishExtendedLaunch(taskID: String) {
        LaunchHookChannel.environment.finishExtendedLaunch(taskID: taskID)
    }
}
