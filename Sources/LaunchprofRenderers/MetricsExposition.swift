/// Metric families written in either text exposition Prometheus reads: OpenMetrics 1.0 or the
/// classic Prometheus text format 0.0.4. Pure and independent of launch reports, so an HTTP
/// endpoint can build the families once and answer each scrape in the format its `Accept`
/// header asks for (`ExpositionFormat.negotiated(accept:)`, `contentType`).
///
/// The formats differ where a consumer notices: OpenMetrics names a counter's family without
/// `_total` (its samples carry it), declares `# UNIT`, escapes `"` in help text and ends with
/// `# EOF`; 0.0.4 names a family after its samples (`# TYPE x_total counter`), has no unit line,
/// leaves `"` in help text alone (an unknown escape is an error there) and has no end marker.
public struct MetricsExposition: Sendable, Equatable {
    public var families: [MetricFamily]

    public init(families: [MetricFamily] = []) {
        self.families = families
    }

    /// The exposition as `format` writes it, ending with a newline.
    public func text(_ format: ExpositionFormat) -> String {
        var lines: [String] = []
        for family in families {
            switch format {
            case .openMetrics:
                lines.append("# TYPE \(family.name) \(family.type.rawValue)")
                if let unit = family.unit { lines.append("# UNIT \(family.name) \(unit)") }
                lines.append("# HELP \(family.name) \(Self.escape(family.help, quotes: true))")
            case .prometheusText:
                // 0.0.4 has one name for family and samples: a counter's is its samples' `_total`.
                let name = family.type == .counter ? family.name + "_total" : family.name
                lines.append("# HELP \(name) \(Self.escape(family.help, quotes: false))")
                lines.append("# TYPE \(name) \(family.type.rawValue)")
            }
            for sample in family.samples {
                lines.append(family.name + sample.suffix + Self.labelText(sample.labels) + " " + sample.value)
            }
        }
        if format == .openMetrics { lines.append("# EOF") }
        return lines.joined(separator: "\n") + "\n"
    }

    static func labelText(_ labels: [(name: String, value: String)]) -> String {
        labels.isEmpty ? "" : "{" + labels.map { "\($0.name)=\"\(escape($0.value, quotes: true))\"" }.joined(separator: ",") + "}"
    }

    /// Backslash and line feed escaped, and double quote with `quotes`: label values escape all
    /// three in both formats, help text escapes the quote in OpenMetrics only.
    static func escape(_ value: String, quotes: Bool) -> String {
        var result = ""
        for character in value {
            switch character {
            case "\\": result += "\\\\"
            case "\"" where quotes: result += "\\\""
            case "\n": result += "\\n"
            default: result.append(character)
            }
        }
        return result
    }

    /// "1.234567890" seconds from 1234567890 ns: exact, no exponent, read alike by both formats.
    public static func seconds(_ ns: UInt64) -> String {
        let fraction = String(ns % 1_000_000_000)
        return "\(ns / 1_000_000_000)." + String(repeating: "0", count: 9 - fraction.count) + fraction
    }

    /// The same for a value that may be negative ("-0.004900000").
    public static func seconds(signed ns: Int64) -> String {
        (ns < 0 ? "-" : "") + seconds(ns.magnitude)
    }
}

/// One metric family: its name (for a counter, without `_total`), type, unit, help and samples.
public struct MetricFamily: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case counter, gauge, summary
        /// Samples `_bucket{le="…"}` (cumulative, the last `+Inf`), `_count` and `_sum`.
        case histogram
    }

    public var name: String
    public var type: Kind
    /// The OpenMetrics unit (the name must end with it), e.g. `seconds`.
    public var unit: String?
    public var help: String
    public var samples: [MetricSample]

    public init(name: String, type: Kind, unit: String? = nil, help: String, samples: [MetricSample] = []) {
        self.name = name
        self.type = type
        self.unit = unit
        self.help = help
        self.samples = samples
    }
}

/// One sample: the suffix it adds to its family's name (`_total`, `_count`, `_sum` or none),
/// its labels in order, and its value as the text to write.
public struct MetricSample: Sendable, Equatable {
    public var suffix: String
    public var labels: [(name: String, value: String)]
    public var value: String

    public init(suffix: String = "", labels: [(name: String, value: String)], value: String) {
        self.suffix = suffix
        self.labels = labels
        self.value = value
    }

    public static func == (a: MetricSample, b: MetricSample) -> Bool {
        a.suffix == b.suffix && a.value == b.value && a.labels.map(\.name) == b.labels.map(\.name)
            && a.labels.map(\.value) == b.labels.map(\.value)
    }
}

/// The two text expositions, with the HTTP content type each is served as.
public enum ExpositionFormat: String, Sendable, CaseIterable {
    /// OpenMetrics 1.0 text.
    case openMetrics
    /// The classic Prometheus text format 0.0.4 (textfile collector, Pushgateway, promtool).
    case prometheusText

    public var contentType: String {
        switch self {
        case .openMetrics: "application/openmetrics-text; version=1.0.0; charset=utf-8"
        case .prometheusText: "text/plain; version=0.0.4; charset=utf-8"
        }
    }

    /// What a scraper's `Accept` header asks for: OpenMetrics when it accepts
    /// `application/openmetrics-text` (version 1.0.0, or no version) with a weight at least that
    /// of any plain-text entry, else the classic text format, which every Prometheus reads (and
    /// the answer to no header at all).
    public static func negotiated(accept: String?) -> ExpositionFormat {
        guard let accept else { return .prometheusText }
        var openMetricsWeight = -1.0
        var textWeight = -1.0
        for entry in accept.split(separator: ",") {
            let parts = entry.split(separator: ";").map { $0.trimmingWhitespace() }
            guard let type = parts.first?.lowercased() else { continue }
            var weight = 1.0
            var version: String?
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingWhitespace() }
                guard pair.count == 2 else { continue }
                if pair[0].lowercased() == "q" { weight = Double(pair[1]) ?? 0 }
                if pair[0].lowercased() == "version" { version = pair[1] }
            }
            if type == "application/openmetrics-text", version == nil || version == "1.0.0" {
                openMetricsWeight = max(openMetricsWeight, weight)
            } else if type == "text/plain" || type == "*/*" || type == "text/*" {
                textWeight = max(textWeight, weight)
            }
        }
        return openMetricsWeight > 0 && openMetricsWeight >= textWeight ? .openMetrics : .prometheusText
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
