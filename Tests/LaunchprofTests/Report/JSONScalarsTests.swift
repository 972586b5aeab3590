import Foundation
import LaunchprofReport
import Testing

/// JSONScalars against Foundation's JSONSerialization: the same scalars outside arrays, by
/// path, and the same documents refused. Integers beyond a double's 53 bits are exact in
/// JSONScalars only, so the documents keep below them.
@Suite("JSONScalars")
struct JSONScalarsTests {
    /// Every scalar of `object` outside arrays, by dotted path, as JSONSerialization reads it.
    static func flatten(_ value: Any, path: String, into scalars: inout [String: JSONScalars.Value]) {
        switch value {
        case let object as [String: Any]:
            for (key, member) in object { flatten(member, path: path.isEmpty ? key : path + "." + key, into: &scalars) }
        case is [Any]: break
        case let string as String: scalars[path] = .string(string)
        case is NSNull: scalars[path] = .null
        case let number as NSNumber:
            // Booleans come back as NSNumbers too: told apart by their Objective-C type code.
            if String(cString: number.objCType) == "c" {
                scalars[path] = .bool(number.boolValue)
            } else {
                scalars[path] = .number(number.doubleValue)
            }
        default: Issue.record("unexpected \(type(of: value)) at \(path)")
        }
    }

    @Test(arguments: [
        #"{"schemaVersion": 2, "model": {"perLaunchPs": 1200000, "source": "a \"fit\"\n\u00e9 \ud83d\ude00 \/ \\", "calibration": null}}"#,
        #"{"a": {"b": {"c": -3, "d": 2.5, "e": 1e3, "f": true, "g": false}}, "points": [{"a": 1}, [2, {"x": "y"}], []], "h": {}}"#,
        " \t\n{ \"spaced\" : [ ] , \"n\" : -0.125E-2 } \n",
        #"{"large": 2500000000000, "neg": -42, "zero": 0}"#,
    ])
    func readsWhatFoundationReads(_ document: String) throws {
        let foundation = try JSONSerialization.jsonObject(with: Data(document.utf8))
        var expected: [String: JSONScalars.Value] = [:]
        Self.flatten(foundation, path: "", into: &expected)
        let scalars = try JSONScalars(Array(document.utf8))
        for (path, value) in expected {
            // Foundation reads every number as a double; JSONScalars keeps integers exact.
            var read = scalars[path]
            if case .integer(let integer) = read { read = .number(Double(integer)) }
            #expect(read == value, "\(path)")
        }
        #expect(scalars[""] == nil)
        #expect(scalars["points.a"] == nil, "values inside arrays are not kept")
    }

    @Test(arguments: [
        #"{"a" 1}"#, #"{"a": tru}"#, #"{"a": "unterminated}"#, #"{"a": "\x"}"#, #"{"a": "\ud83d"}"#,
        #"{"a": 1} 2"#, #"[1, 2"#, "{\"a\": \"tab\there\"}", #"{"a": -}"#, "",
    ])
    func refusesWhatFoundationRefuses(_ document: String) throws {
        #expect(throws: (any Error).self) { try JSONSerialization.jsonObject(with: Data(document.utf8)) }
        #expect(throws: JSONScalars.SyntaxError.self) { try JSONScalars(Array(document.utf8)) }
    }

    /// Foundation accepts a trailing comma; RFC 8259 (and JSONScalars) does not, nor a leading zero.
    @Test func refusesATrailingCommaAndALeadingZeroWithTheirOffsets() throws {
        #expect {
            try JSONScalars(Array(#"{"a": 1,}"#.utf8))
        } throws: { error in
            "\(error)" == "not JSON at byte 8: expected a string"
        }
        #expect {
            try JSONScalars(Array(#"{"a": -012}"#.utf8))
        } throws: { error in
            "\(error)" == "not JSON at byte 7: expected a number without leading zeros"
        }
        #expect(try JSONScalars(Array(#"{"a": [0, -0, 0.5, 10]}"#.utf8))["a"] == nil)
    }
}
