import Testing

@testable import LaunchprofReport

/// The one duration formatter and its styles, at the unit boundaries.
@Suite("Duration text")
struct DurationTextTests {
    @Test("text: three significant digits, rounded half up exactly")
    func text() {
        #expect(DurationText.text(999) == "999 ns")
        #expect(DurationText.text(1_000) == "1.00 µs")
        #expect(DurationText.text(1_005) == "1.01 µs")
        #expect(DurationText.text(41_240) == "41.2 µs")
        #expect(DurationText.text(999_999) == "1000 µs")
        #expect(DurationText.text(3_454_999) == "3.45 ms")
        #expect(DurationText.text(1_230_000_000) == "1.23 s")
        #expect(DurationText.signed(-300_000) == "-300 µs")
        #expect(DurationText.signed(1_200_000) == "+1.20 ms")
    }

    @Test("the truncating styles of inspect and calibration")
    func truncating() {
        #expect(DurationText.wholeMicroseconds(9_999, from: 10_000) == "9999 ns")
        #expect(DurationText.wholeMicroseconds(12_999, from: 10_000) == "12 µs")
        #expect(DurationText.wholeMicroseconds(1_000, from: 1_000) == "1 µs")
        #expect(DurationText.truncatedMilliseconds(999_999, decimals: 2) == "999 µs")
        #expect(DurationText.truncatedMilliseconds(4_069_999, decimals: 2) == "4.06 ms")
        #expect(DurationText.truncatedMilliseconds(4_069_999, decimals: 1) == "4.0 ms")
        #expect(DurationText.truncatedMilliseconds(12_345_678, decimals: 1) == "12.3 ms")
        #expect(DurationText.picoseconds(1_250_000) == "1.25 µs")
        #expect(DurationText.picoseconds(812_409) == "812.40 ns")
        #expect(DurationText.picoseconds(5_050) == "5.05 ns")
    }
}
