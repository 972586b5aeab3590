import ArgumentParser

/// launchprof: measures and explains what happens between exec and a program being ready.
@main
struct Launchprof: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "launchprof",
        abstract: "A launch-performance profiler for Linux programs.",
        subcommands: [InspectCommand.self, RunCommand.self])
}
