import LaunchprofReport

/// One event of the Chrome Trace Event format (the JSON Perfetto UI and chrome://tracing open):
/// `X` complete slices, `i` instants and `M` metadata (track names and order). Times are µs, on
/// a grid of 1/8 µs (`TraceEventRenderer.micros`), so every viewer's arithmetic on them is exact.
public struct TraceEvent: Sendable, Equatable, Codable {
    public var name: String
    /// Category, for the viewers' filters.
    public var cat: String?
    /// Phase: "X", "i" or "M".
    public var ph: String
    /// Start, µs: a multiple of 1/8 µs (125 ns), exactly representable and at most three
    /// decimals.
    public var ts: Double?
    /// Duration of an "X" slice, µs, on the same grid: `ts + dur` is the end exactly.
    public var dur: Double?
    public var pid: Int
    public var tid: Int
    /// Scope of an instant: "t", the thread's track.
    public var s: String?
    public var args: [String: Argument]?

    public init(
        name: String, cat: String? = nil, ph: String, ts: Double? = nil, dur: Double? = nil, pid: Int, tid: Int,
        s: String? = nil, args: [String: Argument]? = nil
    ) {
        self.name = name
        self.cat = cat
        self.ph = ph
        self.ts = ts
        self.dur = dur
        self.pid = pid
        self.tid = tid
        self.s = s
        self.args = args
    }

    /// An argument value: text or an integer.
    public enum Argument: Sendable, Equatable, Codable {
        case text(String)
        case integer(Int64)

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(Int64.self) {
                self = .integer(value)
            } else {
                self = .text(try container.decode(String.self))
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let value): try container.encode(value)
            case .integer(let value): try container.encode(value)
            }
        }
    }
}

/// The trace file: `{"displayTimeUnit": "ms", "metadata": {…}, "traceEvents": […]}`.
public struct TraceDocument: Sendable, Equatable, Codable {
    public var displayTimeUnit: String
    /// What was launched (program, build-id, …): the Trace Event format's trace-level metadata,
    /// which chrome://tracing and DevTools show. Perfetto skips it, so each run's `spawn`
    /// instant carries the same facts as arguments.
    public var metadata: [String: String]
    /// ftrace text lines Perfetto turns into thread-state tracks (each run's main thread; see
    /// `TraceEventRenderer.systemTrace`); nil without thread states.
    public var systemTraceEvents: String?
    public var traceEvents: [TraceEvent]

    public init(
        displayTimeUnit: String = "ms", metadata: [String: String], systemTraceEvents: String? = nil,
        traceEvents: [TraceEvent]
    ) {
        self.displayTimeUnit = displayTimeUnit
        self.metadata = metadata
        self.systemTraceEvents = systemTraceEvents
        self.traceEvents = traceEvents
    }
}
