import CLaunchprof
import Foundation
import Testing

/// The one perf ring read loop (perf_ring.c) that the sampler, the thread-state events, the
/// uprobe observer and the monitor share, on a real ring: this thread's context switches, in a
/// one-page data area that the records wrap around many times: 24-byte records in 4,096 bytes,
/// so at two wraps in three a record is cut in two.
@Suite("perf ring reader")
struct PerfRingReaderTests {
    /// PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT; a switch record with PERF_SAMPLE_TID |
    /// TIME is its header, pid and tid, and the time.
    static let switchRecord: UInt32 = 14
    static let switchOut: UInt16 = 0x2000
    static let recordBytes = 8 + 8 + 8

    @Test("every record read whole and in order across the wrap, and the space given back")
    func readsSwitchRecordsAcrossTheWrap() throws {
        let tid = lp_sched_thread_id()
        var fd: Int32 = -1
        var base: UnsafeMutableRawPointer?
        var length = 0
        let opened = lp_ring_open_switches(tid, 1, &fd, &base, &length)
        try #require(opened == 0, "perf_event_open of a context-switch ring: errno \(opened) (perf_event_paranoid, root?)")
        defer {
            lp_perf_ring_unmap(base!, length)
            close(fd)
        }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let dataBytes = UInt64(length - page)
        var previousTime: UInt64 = 0
        var totalBytes: UInt64 = 0
        var cutByTheWrap = 0
        let sleeps = 40
        for _ in 0..<30 {
            let begin = lp_now_ns()
            // Each sleep blocks this thread: one switch out and one back in (100 µs: a timer
            // that short could expire before the thread blocks). The sleeps make records; they
            // synchronise nothing. 40 of them fill less than the 4 KiB ring.
            for _ in 0..<sleeps {
                var request = timespec(tv_sec: 0, tv_nsec: 100_000)
                nanosleep(&request, nil)
            }
            let end = lp_now_ns()
            var reader = lp_ring_begin(base!, page, Int(dataBytes))
            var outs = 0
            var ins = 0
            while true {
                let framed = lp_ring_next(&reader)
                try #require(framed >= 0, "a record the reader could not frame at \(reader.tail)")
                if framed == 0 { break }
                #expect(reader.type == Self.switchRecord, "only switch records (no lost ones): type \(reader.type)")
                #expect(Int(reader.record_size) == Self.recordBytes)
                if reader.tail % dataBytes + UInt64(reader.record_size) > dataBytes { cutByTheWrap += 1 }
                var fields = (UInt32(0), UInt32(0), UInt64(0))
                withUnsafeMutableBytes(of: &fields) { lp_ring_copy(&reader, 8, $0.baseAddress!, 16) }
                #expect(fields.0 == UInt32(getpid()) && fields.1 == UInt32(tid), "pid \(fields.0) tid \(fields.1)")
                // Records of this burst come after the last one read (and a few from between
                // bursts: the reading itself may be preempted).
                #expect(fields.2 >= previousTime && fields.2 <= end, "time \(fields.2) after \(previousTime), by \(end)")
                previousTime = fields.2
                if reader.misc & Self.switchOut != 0 { outs += 1 } else { ins += 1 }
                totalBytes += UInt64(reader.record_size)
                lp_ring_advance(&reader)
            }
            lp_ring_end(&reader)
            #expect(outs >= sleeps && ins >= sleeps, "every sleep switched out and back in: \(outs) out, \(ins) in")
            #expect(previousTime >= begin, "the burst's records were read")
            // The tail given back is where the next read starts.
            let next = lp_ring_begin(base!, page, Int(dataBytes))
            #expect(next.tail == reader.tail)
        }
        #expect(totalBytes > 10 * dataBytes, "the records went round the ring many times: \(totalBytes) bytes")
        #expect(cutByTheWrap >= 6, "records cut in two by the wrap were read whole: \(cutByTheWrap)")
    }
}
