/// Parses text from the hook channel (see `launchprof.h`): one event per line,
/// `<kind> <monotonic-ns|-> [<name>]`. The caller hands over whole lines (the channel is a
/// stream; the monitor keeps a partial last line until its newline arrives).
public enum HookChannelParser {
    /// The events in some lines, and the lines that were not events.
    public struct Result: Sendable, Equatable {
        public var events: [HookEvent]
        /// Lines that could not be parsed, as received (lossily decoded), for a warning.
        public var rejectedLines: [String]

        public init(events: [HookEvent] = [], rejectedLines: [String] = []) {
            self.events = events
            self.rejectedLines = rejectedLines
        }
    }

    /// Parses complete lines (a last line without its newline counts too).
    /// - Parameters:
    ///   - datagram: the bytes received.
    ///   - receivedAtNs: the monotonic time the bytes arrived; stamps events sent with `-`.
    public static func parse(_ datagram: some Collection<UInt8>, receivedAtNs: UInt64) -> Result {
        var result = Result()
        var line: [UInt8] = []
        for byte in datagram {
            if byte == UInt8(ascii: "\n") {
                parseLine(line, receivedAtNs: receivedAtNs, into: &result)
                line.removeAll(keepingCapacity: true)
            } else {
                line.append(byte)
            }
        }
        // The end of the bytes also ends their last line.
        parseLine(line, receivedAtNs: receivedAtNs, into: &result)
        return result
    }

    private static func parseLine(_ raw: [UInt8], receivedAtNs: UInt64, into result: inout Result) {
        var bytes = raw[...]
        if bytes.last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }
        guard !bytes.isEmpty else { return }
        if let event = event(bytes, receivedAtNs: receivedAtNs) {
            result.events.append(event)
        } else {
            result.rejectedLines.append(String(decoding: bytes, as: UTF8.self))
        }
    }

    private static func event(_ line: ArraySlice<UInt8>, receivedAtNs: UInt64) -> HookEvent? {
        let space = UInt8(ascii: " ")
        guard let kindEnd = line.firstIndex(of: space),
            let kind = HookEvent.Kind(rawValue: String(decoding: line[..<kindEnd], as: UTF8.self))
        else { return nil }
        let rest = line[(kindEnd + 1)...]
        let timeEnd = rest.firstIndex(of: space) ?? rest.endIndex
        let timeField = rest[..<timeEnd]
        let name =
            timeEnd < rest.endIndex
            ? String(decoding: rest[(timeEnd + 1)...], as: UTF8.self) : ""
        let atNs: UInt64
        if timeField.elementsEqual([UInt8(ascii: "-")]) {
            atNs = receivedAtNs
        } else {
            guard let parsed = decimal(timeField) else { return nil }
            atNs = parsed
        }
        // Every kind but first-frame names a phase or a task.
        if kind != .firstFrame, name.isEmpty { return nil }
        return HookEvent(kind: kind, name: kind == .firstFrame ? "" : name, atNs: atNs)
    }

    private static func decimal(_ digits: ArraySlice<UInt8>) -> UInt64? {
        guard !digits.isEmpty else { return nil }
        var value: UInt64 = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
            if overflow1 || overflow2 { return nil }
            value = sum
        }
        return value
    }
}
