@testable import LaunchprofELF
import Testing

/// A read fault maps a 64 KiB window (16 pages) of cached file pages: pages a lookup reads
/// close together cost one fault, scattered ones a fault each.
@Suite("Calibration: symbol-table read faults")
struct FaultWindowTests {
    static func windows(_ pages: [Int], of count: Int) -> Int {
        let flags = UnsafeMutableBufferPointer<Bool>.allocate(capacity: count)
        flags.initialize(repeating: false)
        defer { flags.deallocate() }
        for page in pages { flags[page] = true }
        return LoaderWorkAnalyzer.faultWindows(flags)
    }

    @Test("sixteen neighbouring pages are one fault; sixteen pages 64 KiB apart are sixteen")
    func denseAndSparse() {
        #expect(Self.windows(Array(0..<16), of: 256) == 1)
        #expect(Self.windows(Array(16..<48), of: 256) == 2)
        #expect(Self.windows((0..<16).map { $0 * 16 }, of: 256) == 16)
        #expect(Self.windows([], of: 256) == 0)
    }

    @Test("a last, partial window counts")
    func partialWindow() {
        #expect(Self.windows([19], of: 20) == 1)
        #expect(Self.windows([0, 19], of: 20) == 2)
    }
}
