import ArgumentParser
import LaunchprofCore

/// `launchprof run`'s app-lifecycle options.
struct LifecycleOptions: ParsableArguments {
    @Option(help: "Once the app is active, send it to the background and back K times (SIGUSR1, SIGUSR2; the hooks turn them into delegate calls) and time each resume to didBecomeActive (metrics.resumeTimeNs).")
    var resumeCycles = 0

    func validate() throws {
        guard resumeCycles >= 0, resumeCycles <= 1000 else { throw ValidationError("--resume-cycles takes 0 to 1000.") }
    }

    func apply(to configuration: inout RunConfiguration) {
        configuration.resumeCycles = resumeCycles
    }
}
