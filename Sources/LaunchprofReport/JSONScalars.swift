/// The scalar values of a JSON document by their dotted path (`model.calibration.cpu`), for
/// reading a few fields of a larger document: JSONDecoder's first use instantiates its generic
/// machinery, which costs more than `inspect` of a small program (inspect is benchmarked against
/// `ldd`). Values inside arrays are checked but not kept. Strict JSON (RFC 8259); a document that
/// is not JSON throws with the byte offset where it stops being JSON.
public struct JSONScalars: Sendable {
    public enum Value: Sendable, Equatable {
        case string(String)
        case integer(Int)
        case number(Double)
        case bool(Bool)
        case null
    }

    public struct SyntaxError: Error, Sendable, CustomStringConvertible {
        public let offset: Int
        public let expected: String
        public var description: String { "not JSON at byte \(offset): expected \(expected)" }
    }

    private var values: [String: Value] = [:]

    public init(_ bytes: [UInt8]) throws(SyntaxError) {
        var parser = Parser(bytes: bytes)
        try parser.value(path: "", keep: true, into: &values)
        parser.skipSpace()
        guard parser.offset == bytes.count else { throw SyntaxError(offset: parser.offset, expected: "the end of the document") }
    }

    public subscript(path: String) -> Value? { values[path] }

    public func integer(_ path: String) -> Int? {
        if case .integer(let value) = values[path] { return value }
        return nil
    }

    public func string(_ path: String) -> String? {
        if case .string(let value) = values[path] { return value }
        return nil
    }

    /// Whether `path` names an object (some scalar lies under it) rather than null or nothing.
    public func hasObject(_ path: String) -> Bool {
        let prefix = path + "."
        return values.keys.contains { $0.hasPrefix(prefix) }
    }

    private struct Parser {
        let bytes: [UInt8]
        var offset = 0

        mutating func skipSpace() {
            while offset < bytes.count {
                switch bytes[offset] {
                case 0x20, 0x09, 0x0A, 0x0D: offset += 1
                default: return
                }
            }
        }

        func fail(_ expected: String) -> SyntaxError { SyntaxError(offset: offset, expected: expected) }

        mutating func expect(_ byte: UInt8, _ expected: String) throws(SyntaxError) {
            skipSpace()
            guard offset < bytes.count, bytes[offset] == byte else { throw fail(expected) }
            offset += 1
        }

        mutating func value(path: String, keep: Bool, into values: inout [String: Value]) throws(SyntaxError) {
            skipSpace()
            guard offset < bytes.count else { throw fail("a value") }
            let scalar: Value
            switch bytes[offset] {
            case UInt8(ascii: "{"):
                offset += 1
                skipSpace()
                if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") {
                    offset += 1
                    return
                }
                repeat {
                    skipSpace()
                    // Under an array nothing is kept: keys and paths are checked, not built.
                    let key = try string(keeping: keep)
                    try expect(UInt8(ascii: ":"), "':'")
                    try value(path: keep ? (path.isEmpty ? key : path + "." + key) : "", keep: keep, into: &values)
                    skipSpace()
                } while try more(closing: UInt8(ascii: "}"))
                return
            case UInt8(ascii: "["):
                offset += 1
                skipSpace()
                if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") {
                    offset += 1
                    return
                }
                repeat {
                    try value(path: path, keep: false, into: &values)
                    skipSpace()
                } while try more(closing: UInt8(ascii: "]"))
                return
            case UInt8(ascii: "\""): scalar = .string(try string(keeping: keep))
            case UInt8(ascii: "t"): scalar = .bool(try literal("true"))
            case UInt8(ascii: "f"): scalar = .bool(!(try literal("false")))
            case UInt8(ascii: "n"):
                _ = try literal("null")
                scalar = .null
            default: scalar = try number()
            }
            if keep { values[path] = scalar }
        }

        /// After a member or element: true at ',', false at the closing bracket.
        mutating func more(closing: UInt8) throws(SyntaxError) -> Bool {
            guard offset < bytes.count else { throw fail("',' or '\(Character(Unicode.Scalar(closing)))'") }
            offset += 1
            if bytes[offset - 1] == UInt8(ascii: ",") { return true }
            if bytes[offset - 1] == closing { return false }
            offset -= 1
            throw fail("',' or '\(Character(Unicode.Scalar(closing)))'")
        }

        mutating func literal(_ word: StaticString) throws(SyntaxError) -> Bool {
            let text = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            guard bytes.count - offset >= text.count, bytes[offset..<offset + text.count].elementsEqual(text) else {
                throw fail("\(word)")
            }
            offset += text.count
            return true
        }

        mutating func number() throws(SyntaxError) -> Value {
            let start = offset
            var integral = true
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            let digitsStart = offset
            while offset < bytes.count {
                let byte = bytes[offset]
                if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                    offset += 1
                } else if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
                    || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
                {
                    integral = false
                    offset += 1
                } else {
                    break
                }
            }
            guard offset > digitsStart else { throw fail("a value") }
            // RFC 8259: no leading zeros ("01").
            if bytes[digitsStart] == UInt8(ascii: "0"), offset > digitsStart + 1,
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[digitsStart + 1])
            {
                offset = digitsStart
                throw fail("a number without leading zeros")
            }
            let text = String(decoding: bytes[start..<offset], as: UTF8.self)
            if integral, let value = Int(text) { return .integer(value) }
            guard let value = Double(text) else {
                offset = start
                throw fail("a number")
            }
            return .number(value)
        }

        /// A string, checked; its text only when `keeping` (else "").
        mutating func string(keeping: Bool = true) throws(SyntaxError) -> String {
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { throw fail("a string") }
            offset += 1
            var utf8: [UInt8] = []
            while offset < bytes.count {
                let byte = bytes[offset]
                offset += 1
                switch byte {
                case UInt8(ascii: "\""): return keeping ? String(decoding: utf8, as: UTF8.self) : ""
                case UInt8(ascii: "\\"):
                    guard offset < bytes.count else { throw fail("an escape") }
                    let escape = bytes[offset]
                    offset += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                    case UInt8(ascii: "b"): utf8.append(0x08)
                    case UInt8(ascii: "f"): utf8.append(0x0C)
                    case UInt8(ascii: "n"): utf8.append(0x0A)
                    case UInt8(ascii: "r"): utf8.append(0x0D)
                    case UInt8(ascii: "t"): utf8.append(0x09)
                    case UInt8(ascii: "u"):
                        var code = try hexQuad()
                        if (0xD800..<0xDC00).contains(code) {
                            // A surrogate pair: the low half must follow as its own escape.
                            try expectEscapeU()
                            let low = try hexQuad()
                            guard (0xDC00..<0xE000).contains(low) else { throw fail("a low surrogate") }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(code) else { throw fail("a Unicode scalar") }
                        utf8.append(contentsOf: String(Character(scalar)).utf8)
                    default:
                        offset -= 1
                        throw fail("an escape")
                    }
                case 0..<0x20:
                    offset -= 1
                    throw fail("no control character in a string")
                default: if keeping { utf8.append(byte) }
                }
            }
            throw fail("'\"'")
        }

        mutating func expectEscapeU() throws(SyntaxError) {
            guard bytes.count - offset >= 2, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") else {
                throw fail("a low surrogate")
            }
            offset += 2
        }

        mutating func hexQuad() throws(SyntaxError) -> UInt32 {
            guard bytes.count - offset >= 4 else { throw fail("four hex digits") }
            var code: UInt32 = 0
            for _ in 0..<4 {
                guard let digit = Character(Unicode.Scalar(bytes[offset])).hexDigitValue else { throw fail("four hex digits") }
                code = code << 4 | UInt32(digit)
                offset += 1
            }
            return code
        }
    }
}
