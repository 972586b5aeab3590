import ArgumentParser
import LaunchprofReport
import LaunchprofRenderers

/// How `compare` and `bench` decide and print: shared by both commands.
struct ComparisonOptions: ParsableArguments {
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, markdown, json
    }

    @Option(help: "Output on stdout: text, markdown or json.")
    var format: Format = .text

    @Option(help: "The smallest change, in percent of the base median, that counts (default: the suite's, else 5).", transform: { text in
        guard let value = OptionValue.decimal(text), value <= 1_000_000 else {
            throw OptionValue.Invalid(description: "a percentage is digits with an optional fraction, 0 to 1000000, e.g. 5 or 2.5")
        }
        return value
    })
    var minEffect: Double?

    @Option(help: "The smallest change in ns that counts, however large relatively (default: the suite's, else 100000).")
    var minEffectNs: UInt64?

    @Option(help: "Confidence of the shift's interval (default: the suite's, else 0.95).", transform: { text in
        guard let value = OptionValue.decimal(text) else {
            throw OptionValue.Invalid(description: "a confidence is a fraction between 0.5 and 1, e.g. 0.95")
        }
        return value
    })
    var confidence: Double?

    @Option(help: "independent (default): base and new as two independent samples; paired: the runs of one interleaved bench session (--rounds) matched round by round, judged on their differences (falls back to independent for reports of two sessions).")
    var statistic: ComparisonSettings.StatisticChoice?

    @Flag(help: "List every phase in text output, not only those that changed.")
    var allPhases = false

    func validate() throws {
        if let minEffect, minEffect < 0 { throw ValidationError("--min-effect cannot be negative.") }
        if let confidence, !(confidence > 0.5 && confidence < 1) {
            throw ValidationError("--confidence must be between 0.5 and 1, e.g. 0.95.")
        }
    }

    /// `base` settings (a suite's) with the options given on the command line over them.
    func settings(over base: ComparisonSettings?) -> ComparisonSettings {
        var settings = base ?? ComparisonSettings()
        if let minEffect { settings.minEffectPercent = minEffect }
        if let minEffectNs { settings.minEffectNs = minEffectNs }
        if let confidence { settings.confidence = confidence }
        if let statistic { settings.statistic = statistic }
        return settings
    }

    func renderer() -> any ComparisonRenderer {
        switch format {
        case .text: ComparisonTextRenderer(allPhases: allPhases)
        case .markdown: ComparisonMarkdownRenderer()
        case .json: ComparisonJSONRenderer()
        }
    }
}

extension ComparisonSettings.StatisticChoice: ExpressibleByArgument {}
