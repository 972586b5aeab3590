import ArgumentParser
import LaunchprofCore

/// `launchprof prewarm`'s own options: where to freeze, how long to hold, the pool.
struct PrewarmOptions: ParsableArguments {
    @Option(help: "Where to freeze: main (before any of the app's own work) or willFinishLaunching (before the app's first hooked phase; needs the launch hooks).", transform: { try OptionValue.freezePoint($0) })
    var freezeAt = PrewarmConfiguration.FreezePoint.main

    // `.unconditional`: `--hold -1s` is a value to refuse with its reason, not a missing one.
    @Option(parsing: .unconditional, help: "How long a prewarmed process stays frozen: a duration (500ms, 2s, 1m), uniform:MIN-MAX or exponential:MEAN. With --pool, the time between the user's launches.", transform: { try OptionValue.hold($0) })
    var hold = PrewarmHold.fixed(ns: 1_000_000_000)

    @Option(help: "Seed for random holds.")
    var seed: UInt64 = 1

    @Option(help: "Keep N frozen processes ready and refill after each launch (a pre-forked pool).")
    var pool = 0

    @Option(parsing: .unconditional, help: "With --pool: end a frozen process not launched within this duration.", transform: { try OptionValue.duration($0) })
    var ttl: UInt64?

    @Flag(help: "Skip the untimed hazard scan of the prewarm part.")
    var noHazardScan = false

    func validate() throws {
        guard pool >= 0, pool <= 64 else { throw ValidationError("--pool takes 0 to 64 processes.") }
        if ttl != nil, pool == 0 { throw ValidationError("--ttl needs --pool.") }
    }

    /// The prewarm configuration around `run`.
    func configuration(run: RunConfiguration) -> PrewarmConfiguration {
        var configuration = PrewarmConfiguration(run: run)
        configuration.freezeAt = freezeAt
        configuration.hold = hold
        configuration.seed = seed
        configuration.pool = pool
        configuration.ttlNs = ttl
        configuration.scanHazards = !noHazardScan
        return configuration
    }
}
