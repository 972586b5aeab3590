import ArgumentParser
import LaunchprofCore

extension ObserverChoice: ExpressibleByArgument {}

/// `run --observer`: how the boundaries before `main` are observed.
struct ObserverOptions: ParsableArguments {
    @Option(help: """
        How launch boundaries before main are observed: auto (uprobes where permitted: root or \
        CAP_SYS_ADMIN and the uprobe PMU; else ptrace), uprobe (perf events, the child never \
        stops), ptrace (breakpoints).
        """)
    var observer: ObserverChoice = .auto

    @Flag(help: """
        Leave out the probes after main (dlopen, toolkit and Python phases). They are held \
        system-wide while launchprof runs: every process mapping libc, the loader, a toolkit or \
        python3 takes their hits (docs/observers.md).
        """)
    var noRuntimeProbes = false

    func apply(to configuration: inout RunConfiguration) {
        configuration.observer = observer
        configuration.runtimeProbes = !noRuntimeProbes
    }
}
