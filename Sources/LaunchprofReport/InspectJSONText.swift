/// Writes JSON text directly: two-space indentation, `"key" : value`, integers as integers,
/// slashes unescaped. Callers write keys in sorted order (tests check the result against
/// Foundation's `JSONEncoder` with `.sortedKeys`).
///
/// `inspect` is benchmarked against `ldd`; encoding through `Codable` cost a fifth of its run
/// time on gdb (generic metadata and one node per value), writing text directly almost none.
struct InspectJSONText {
    /// The text so far: written straight into the memory of the array `jsonBytes` returns (an
    /// array's own appends cost a uniqueness and capacity check each, most of the encoding's time
    /// on gdb's report). When it runs out of room the rest is dropped and `overflowed` is set:
    /// the caller writes again into a larger one.
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0
    private(set) var overflowed = false
    /// One entry per open container: whether it has no element yet.
    private var empty: [Bool] = []

    init(into buffer: UnsafeMutableBufferPointer<UInt8>) {
        self.buffer = buffer
        empty.reserveCapacity(8)
    }

    /// Ends the text with a newline.
    mutating func endLine() {
        append(UInt8(ascii: "\n"))
    }

    private mutating func append(_ byte: UInt8) {
        guard count < buffer.count else {
            overflowed = true
            return
        }
        buffer[count] = byte
        count += 1
    }

    private mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count <= buffer.count - count else {
            overflowed = true
            return
        }
        if let source = bytes.baseAddress, let target = buffer.baseAddress {
            (target + count).initialize(from: source.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        }
        count += bytes.count
    }

    private mutating func newline() {
        append(UInt8(ascii: "\n"))
        var indent = empty.count * 2
        while indent > 0 {
            let run = min(indent, Self.spaces.utf8CodeUnitCount)
            append(Self.spaces, count: run)
            indent -= run
        }
    }

    // Constant text as static strings, copied from their bytes: a static array is retained and
    // released at every use.
    private static let spaces: StaticString = "                                "
    private static let keyEnd: StaticString = "\" : "

    private mutating func append(_ text: StaticString, count: Int? = nil) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: count ?? text.utf8CodeUnitCount))
    }

    /// Separates an element from the previous one and indents it.
    private mutating func element() {
        guard !empty.isEmpty else { return }
        if empty[empty.count - 1] {
            empty[empty.count - 1] = false
        } else {
            append(UInt8(ascii: ","))
        }
        newline()
    }

    private mutating func open(_ bracket: UInt8) {
        append(bracket)
        empty.append(true)
    }

    private mutating func close(_ bracket: UInt8) {
        let wasEmpty = empty.removeLast()
        if !wasEmpty { newline() }
        append(bracket)
    }

    mutating func object(_ body: (inout InspectJSONText) -> Void) {
        open(UInt8(ascii: "{"))
        body(&self)
        close(UInt8(ascii: "}"))
    }

    mutating func array<Element>(_ elements: [Element], _ body: (inout InspectJSONText, Element) -> Void) {
        open(UInt8(ascii: "["))
        for item in elements {
            element()
            body(&self, item)
        }
        close(UInt8(ascii: "]"))
    }

    /// Starts a member of the current object; the value follows.
    mutating func key(_ name: StaticString) {
        element()
        append(UInt8(ascii: "\""))
        append(name)
        append(Self.keyEnd)
    }

    mutating func string(_ text: String) {
        // Most strings (paths, names) need no escape: copied whole.
        var text = text
        let copied: Bool = text.withUTF8 { utf8 in
            guard !utf8.contains(where: JSONBytes.needsEscape) else { return false }
            append(UInt8(ascii: "\""))
            append(UnsafeRawBufferPointer(utf8))
            append(UInt8(ascii: "\""))
            return true
        }
        guard !copied else { return }
        var escaped: [UInt8] = []
        JSONBytes.appendString(text, to: &escaped)
        escaped.withUnsafeBytes { append($0) }
    }

    mutating func integer(_ value: some BinaryInteger) {
        // Digits written in place: a String per number was most of the report's encoding.
        var magnitude = value.magnitude
        if value < 0 { append(UInt8(ascii: "-")) }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 40) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude != 0
            append(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(digits)[start...]))
        }
    }

    mutating func bool(_ value: Bool) {
        append(value ? "true" : "false")
    }

    // Members: nil optionals are omitted, as Codable's synthesized encoding does.
    mutating func member(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    mutating func member(_ name: StaticString, _ value: Int) {
        key(name)
        integer(value)
    }

    mutating func member(_ name: StaticString, _ value: UInt64) {
        key(name)
        integer(value)
    }

    mutating func member(_ name: StaticString, _ value: Bool) {
        key(name)
        bool(value)
    }

    mutating func member(_ name: StaticString, _ values: [String]) {
        key(name)
        array(values) { json, value in json.string(value) }
    }
}
