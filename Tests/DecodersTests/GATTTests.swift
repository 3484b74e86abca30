import XCTest
@testable import Decoders
import Wire

/// A realistic session against a heart-rate sensor: discovery of every kind, a CCCD write,
/// notifications, a long read, a long write, pipelining, a timeout, the peer reading the
/// host's own database, and a second connection that reuses the first one's discovery.
final class GATTTests: XCTestCase {
    static let ms: Int64 = 1_000_000
    /// 6E400001-B5A3-F393-E0A9-E50E24DCCA9E (Nordic UART Service) and its RX characteristic, little-endian.
    static let nus = "9ecadc240ee5a9e093f3a3b50100406e"
    static let nusRX = "9ecadc240ee5a9e093f3a3b50200406e"

    struct Step {
        let frame: Int
        let side: Side
        let hex: String
        let ms: Int64
    }

    var store = GATTStore<String>()
    var results: [Int: ATTResult] = [:]

    func run(_ bearer: ATTBearer, _ steps: [Step]) {
        for s in steps {
            results[s.frame] = bearer.process(ATTPDU(bytes(s.hex)), from: s.side, frame: s.frame, time: s.ms * GATTTests.ms)
        }
    }

    func hex(_ s: String) -> String { Hex.string(Array(s.utf8)[...]) }

    /// A transaction times out 30 s after it was sent, whichever queue holds it (requests of
    /// either side, indications) and however many PDUs go by before: not a PDU sooner.
    func testTimeoutsAcrossQueues() {
        let bearer = store.bearer(local: "host", remote: "sensor")
        let L = Side.local, R = Side.remote
        func step(_ frame: Int, _ side: Side, _ hex: String, _ ms: Int64) -> [Int] {
            run(bearer, [Step(frame: frame, side: side, hex: hex, ms: ms)])
            return bearer.timedOut.map(\.frame)
        }
        XCTAssertEqual(step(1, L, "0a0300", 0), [])                 // Read Request, never answered
        XCTAssertEqual(step(2, R, "1d030001", 10_000), [])          // Handle Value Indication, never confirmed
        XCTAssertEqual(step(3, R, "1b030001", 30_000), [])          // 30 s on the dot: not yet
        XCTAssertEqual(step(4, R, "1b030001", 30_001), [1])
        XCTAssertEqual(step(5, R, "1b030001", 40_000), [1])
        XCTAssertEqual(step(6, L, "0a0300", 40_001), [1, 2])        // the indication's turn; a new request
        XCTAssertEqual(step(7, R, "0b01", 40_030), [1, 2])          // answered
        XCTAssertEqual(step(8, R, "1b030001", 90_000), [1, 2])      // nothing left to time out
        XCTAssertEqual(step(9, R, "0a0300", 90_001), [1, 2])        // the peer reads this host
        XCTAssertEqual(step(10, R, "1b030001", 120_001), [1, 2])
        XCTAssertEqual(step(11, R, "1b030001", 120_002), [1, 2, 9])
        XCTAssertTrue(results[11]?.notes.contains { if case .timedOut(let tx) = $0 { tx.frame == 9 } else { false } } ?? false)
    }

    func testReconstruction() {
        let t = self
        let bearer = t.store.bearer(local: "host", remote: "sensor")
        let L = Side.local, R = Side.remote
        t.run(bearer, [
            Step(frame: 1, side: L, hex: "02f700", ms: 0),
            Step(frame: 2, side: R, hex: "031700", ms: 30),
            Step(frame: 3, side: L, hex: "100100ffff0028", ms: 100),
            Step(frame: 4, side: R, hex: "1106" + "010009000018" + "0a0011000d18" + "120016000f18", ms: 130),
            Step(frame: 5, side: L, hex: "101700ffff0028", ms: 200),
            Step(frame: 6, side: R, hex: "011017000a", ms: 230),
            Step(frame: 7, side: L, hex: "060100ffff0028" + GATTTests.nus, ms: 300),
            Step(frame: 8, side: R, hex: "071700ffff", ms: 330),
            Step(frame: 9, side: L, hex: "080a0011000228", ms: 400),
            Step(frame: 10, side: R, hex: "09080b00120016000f18", ms: 430),
            Step(frame: 11, side: L, hex: "080100ffff0328", ms: 500),
            Step(frame: 12, side: R, hex: "0907" + "0200020300002a" + "0400020500012a" + "0c00100d00372a", ms: 530),
            Step(frame: 13, side: L, hex: "080d00ffff0328", ms: 600),
            Step(frame: 14, side: R, hex: "0907" + "0f00021000382a" + "1300121400192a", ms: 630),
            Step(frame: 15, side: L, hex: "081400ffff0328", ms: 700),
            Step(frame: 16, side: R, hex: "0915" + "18000a1900" + GATTTests.nusRX, ms: 730),
            Step(frame: 17, side: L, hex: "081900ffff0328", ms: 800),
            Step(frame: 18, side: R, hex: "010819000a", ms: 830),
            Step(frame: 19, side: L, hex: "040e000e00", ms: 900),
            Step(frame: 20, side: R, hex: "05010e000229", ms: 930),
            Step(frame: 21, side: L, hex: "0411001100", ms: 1000),
            Step(frame: 22, side: R, hex: "050111000129", ms: 1030),
            Step(frame: 23, side: L, hex: "0415001600", ms: 1100),
            Step(frame: 24, side: R, hex: "05011500022916000429", ms: 1130),
            Step(frame: 25, side: L, hex: "120e000100", ms: 1200),
            Step(frame: 26, side: R, hex: "13", ms: 1230),
            Step(frame: 27, side: R, hex: "1b0d00164852035203", ms: 1300),
            Step(frame: 28, side: L, hex: "0a1000", ms: 1400),
            Step(frame: 29, side: R, hex: "0b01", ms: 1430),
            Step(frame: 30, side: L, hex: "0a1100", ms: 1500),
            Step(frame: 31, side: R, hex: "0b" + hex("Strap"), ms: 1530),
            // Long read: 22 bytes (ATT_MTU 23 − 1), then the rest by Read Blob.
            Step(frame: 32, side: L, hex: "0a1900", ms: 1600),
            Step(frame: 33, side: R, hex: "0b" + hex("Hello, this is a long "), ms: 1630),
            Step(frame: 34, side: L, hex: "0c19001600", ms: 1700),
            Step(frame: 35, side: R, hex: "0d" + hex("value!"), ms: 1730),
            // Long write: two prepared pieces, then execute.
            Step(frame: 36, side: L, hex: "1619000000" + hex("ABCDEFGHIJKLMNOPQR"), ms: 1800),
            Step(frame: 37, side: R, hex: "1719000000" + hex("ABCDEFGHIJKLMNOPQR"), ms: 1830),
            Step(frame: 38, side: L, hex: "1619001200" + hex("STUVWXYZ"), ms: 1900),
            Step(frame: 39, side: R, hex: "1719001200" + hex("STUVWXYZ"), ms: 1930),
            Step(frame: 40, side: L, hex: "1801", ms: 2000),
            Step(frame: 41, side: R, hex: "19", ms: 2030),
            // Pipelined reads.
            Step(frame: 42, side: L, hex: "0a0300", ms: 2100),
            Step(frame: 43, side: L, hex: "0a0500", ms: 2110),
            Step(frame: 44, side: R, hex: "0b" + hex("Polar H10"), ms: 2150),
            Step(frame: 45, side: R, hex: "0b4103", ms: 2160),
            // A CCCD write the server rejects leaves the subscription as it was.
            Step(frame: 46, side: L, hex: "1215000200", ms: 2200),
            Step(frame: 47, side: R, hex: "01121500fd", ms: 2230),
            // A read that never gets its response; the next PDU, 35 s later, notices.
            Step(frame: 48, side: L, hex: "0a1400", ms: 10_000),
            Step(frame: 49, side: R, hex: "1b140055", ms: 45_000),
            Step(frame: 50, side: R, hex: "1b300001", ms: 45_100),
            // The sensor reads the host's Device Name: the host's own database.
            Step(frame: 51, side: R, hex: "080100ffff002a", ms: 46_000),
            Step(frame: 52, side: L, hex: "0909030050686f6e653132", ms: 46_010),
        ])

        XCTAssertEqual(bearer.mtu, 23)
        XCTAssertEqual(bearer.localRxMTU, 247)
        XCTAssertEqual(bearer.remoteRxMTU, 23)
        XCTAssertEqual(t.results[2]?.request?.frame, 1)
        XCTAssertEqual(t.results[2]?.request?.rtt, 30 * GATTTests.ms)
        XCTAssertEqual(t.results[35]?.request?.frame, 34)
        XCTAssertEqual(t.results[35]?.request?.opcode, .readBlobRequest)

        // Pipelining: frame 43 went out before 42 was answered; responses pair in order.
        XCTAssertTrue(t.results[43]?.notes.contains { if case .pipelined(42) = $0 { true } else { false } } ?? false)
        XCTAssertEqual(t.results[43]?.pipelined, true)
        XCTAssertEqual(t.results[42]?.pipelined, false)
        // The note's text is written when printed.
        let notes = t.results[43]?.fields.filter { $0.label == "Note" }.map { f -> String in
            if case .derived(let text) = f.value { return text.string } else { return "not derived" }
        }
        XCTAssertEqual(notes, ["pipelined: request sent before the response to frame 42"])
        XCTAssertEqual(t.results[44]?.request?.frame, 42)
        XCTAssertEqual(t.results[45]?.request?.frame, 43)
        XCTAssertEqual(t.results[45]?.request?.rtt, 50 * GATTTests.ms)

        // Timeout noticed lazily when frame 49 arrives.
        XCTAssertTrue(t.results[49]?.notes.contains { if case .timedOut(let tx) = $0 { tx.frame == 48 } else { false } } ?? false)
        XCTAssertEqual(bearer.timedOut.map(\.frame), [48])
        XCTAssertTrue(t.results[50]?.notes.contains { if case .undiscoveredHandle(0x30) = $0 { true } else { false } } ?? false)

        // Naming.
        XCTAssertEqual(t.results[27]?.attribute?.description, "Heart Rate Measurement (0x2A37) in Heart Rate (0x180D)")
        XCTAssertEqual(t.results[27]?.summary,
                       "Handle Value Notification, Handle: 0x000d, Value: 164852035203 — Heart Rate Measurement (0x2A37) in Heart Rate (0x180D): Heart Rate 72 bpm, RR 0.830 0.830 s")
        XCTAssertEqual(t.results[25]?.attribute?.description,
                       "Client Characteristic Configuration (0x2902) of Heart Rate Measurement (0x2A37) in Heart Rate (0x180D)")
        XCTAssertEqual(t.results[35].flatMap { $0.value.map { String(decoding: $0, as: UTF8.self) } }, "Hello, this is a long value!")
        XCTAssertEqual(t.results[44]?.summary,
                       "Read Response, Value: 506f6c617220483130 — Device Name (0x2A00) in Generic Access (0x1800): Device Name \"Polar H10\"")

        XCTAssertEqual(t.results[4]?.summary, "Read By Group Type Response, Attribute List Length: 3, Length: 6 — "
                       + "Generic Access (0x1800), Heart Rate (0x180D), Battery Service (0x180F)")
        XCTAssertEqual(t.results[12]?.summary, "Read By Type Response, Attribute List Length: 3, Length: 7 — "
                       + "Device Name (0x2A00), Appearance (0x2A01), Heart Rate Measurement (0x2A37)")

        let remote = t.store.database(for: "sensor")
        XCTAssertEqual(remote.subscription(0x0D), GATTSubscription(notify: true, indicate: false, frame: 25))
        XCTAssertNil(remote.subscription(0x14))
        XCTAssertNil(remote.lastValue(0x15))
        XCTAssertTrue(t.results[46]?.notes.contains { if case .subscription(let s) = $0 { s.indicate } else { false } } ?? false)
        XCTAssertEqual(remote.textTree(), """
            Service 0x1800 Generic Access (handles 0x0001–0x0009)
              Characteristic 0x2A00 Device Name [read] value 0x0003
                Last value (frame 44): Device Name "Polar H10"
              Characteristic 0x2A01 Appearance [read] value 0x0005
                Last value (frame 45): Appearance Heart Rate Sensor: Heart Rate Belt (0x0341)
            Service 0x180D Heart Rate (handles 0x000A–0x0011)
              Include 0x180F Battery Service (handles 0x0012–0x0016) at 0x000B
              Characteristic 0x2A37 Heart Rate Measurement [notify] value 0x000D
                Descriptor 0x2902 Client Characteristic Configuration (handle 0x000E): notifications on (frame 25)
                Last value (frame 27): Heart Rate 72 bpm, RR 0.830 0.830 s
              Characteristic 0x2A38 Body Sensor Location [read] value 0x0010
                Descriptor 0x2901 Characteristic User Descriptor (handle 0x0011): Characteristic User Description "Strap" (frame 31)
                Last value (frame 29): Body Sensor Location Chest
            Service 0x180F Battery Service (handles 0x0012–0x0016)
              Characteristic 0x2A19 Battery Level [read, notify] value 0x0014
                Descriptor 0x2902 Client Characteristic Configuration (handle 0x0015)
                Descriptor 0x2904 Characteristic Presentation Format (handle 0x0016)
                Last value (frame 49): Battery Level 85 %
            Service 6E400001-B5A3-F393-E0A9-E50E24DCCA9E Nordic UART Service (handles 0x0017–0xFFFF)
              Characteristic 6E400002-B5A3-F393-E0A9-E50E24DCCA9E UART RX Characteristic [read, write] value 0x0019
                Last value (frame 40): 4142434445464748494a4b4c4d4e4f505152535455565758595a ("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
            Handles never discovered
              Handle 0x0030 last value (frame 50): 01

            """)

        let local = t.store.database(for: "host")
        XCTAssertEqual(local.textTree(), """
            Handles never discovered
              Handle 0x0003 Device Name (0x2A00) last value (frame 52): Device Name "Phone12"

            """)

        // A second connection to the same sensor: nothing is rediscovered, yet reads are named.
        let again = t.store.bearer(local: "host", remote: "sensor")
        XCTAssertEqual(again.mtu, 23)
        t.run(again, [
            Step(frame: 100, side: L, hex: "0a1000", ms: 100_000),
            Step(frame: 101, side: R, hex: "0b02", ms: 100_040),
            Step(frame: 102, side: L, hex: "0a0300", ms: 101_000),
        ])
        XCTAssertEqual(t.results[100]?.attribute?.description, "Body Sensor Location (0x2A38) in Heart Rate (0x180D)")
        XCTAssertEqual(t.results[101]?.request?.rtt, 40 * GATTTests.ms)
        XCTAssertTrue(t.results[101]?.summary.hasSuffix(": Body Sensor Location Wrist") ?? false)
        XCTAssertEqual(remote.lastValue(0x10)?.frame, 101)
        XCTAssertEqual(again.finish(at: 120_000 * GATTTests.ms).map(\.frame), [])
        XCTAssertEqual(again.finish(at: 131_001 * GATTTests.ms).map(\.frame), [102])
        XCTAssertEqual(t.store.databases.count, 2)
        XCTAssertFalse(remote.fields.isEmpty)
    }

    func testValueBoundsAndPrepareQueue() {
        let bearer = ATTBearer(local: GATTDatabase(), remote: GATTDatabase(), serial: 1)
        // 600-byte notification is cut to 512 bytes when stored.
        let big = "1b0100" + String(repeating: "ab", count: 600)
        let n = bearer.process(ATTPDU(bytes(big)), from: .remote, frame: 1, time: 0)
        XCTAssertEqual(bearer.remote.lastValue(1)?.bytes.count, 512)
        XCTAssertTrue(n.notes.contains { if case .exceedsMTU(603, 23) = $0 { true } else { false } })
        XCTAssertTrue(n.summary.hasSuffix("[PDU of 603 bytes exceeds ATT_MTU 23]"))
        for i in 0..<70 {
            let r = bearer.process(ATTPDU(bytes("160200" + Hex.string([UInt8(i), 0][...]) + "01")), from: .local, frame: 2 + i, time: 0)
            if i >= ATTBearer.maxPreparedWrites {
                XCTAssertTrue(r.notes.contains { if case .prepareQueueFull = $0 { true } else { false } })
            }
        }
        // A blob that does not continue the value is reported, not stored.
        let fresh = ATTBearer(local: GATTDatabase(), remote: GATTDatabase(), serial: 1)
        _ = fresh.process(ATTPDU(bytes("0c03000a00")), from: .local, frame: 100, time: 0)
        let r = fresh.process(ATTPDU(bytes("0d0102")), from: .remote, frame: 101, time: 0)
        XCTAssertTrue(r.notes.contains { if case .offsetGap(0, 10) = $0 { true } else { false } })
        XCTAssertNil(fresh.remote.lastValue(3))
    }

    /// The audit's bearers keep no attribute value, notified, indicated, read (whole or in blobs)
    /// or written, yet each PDU's result still names its handle, and a CCCD write still subscribes.
    /// A notification's or a whole read's entry then holds no value (nothing that keeps none reads
    /// it); a blob's still does.
    func testValuesNotKeptWhereNothingReadsThem() {
        let bearer = ATTBearer(local: GATTDatabase(), remote: GATTDatabase(), serial: 1)
        bearer.keepsValues = false
        bearer.remote.addCharacteristic(declaration: 0x0F, properties: 0x10, valueHandle: 0x10, uuid: BluetoothUUID(uuid16: 0x2A37))
        bearer.remote.addInformation(handle: 0x11, uuid: BluetoothUUID(uuid16: 0x2902))
        let n = bearer.process(ATTPDU(bytes("1b1000063c")), from: .remote, frame: 1, time: 0)
        XCTAssertEqual(n.entries.first?.attribute.handle, 0x10)
        XCTAssertEqual(n.entries.count, 1)
        XCTAssertNil(n.entries.first?.value)
        _ = bearer.process(ATTPDU(bytes("1d11000102")), from: .remote, frame: 2, time: 0)
        XCTAssertNil(bearer.remote.lastValue(0x10))
        _ = bearer.process(ATTPDU(bytes("0a1200")), from: .local, frame: 3, time: 0)
        let read = bearer.process(ATTPDU(bytes("0b07")), from: .remote, frame: 4, time: 0)
        XCTAssertEqual(read.entries.first?.attribute.handle, 0x12)
        XCTAssertEqual(read.entries.count, 1)
        XCTAssertNil(read.entries.first?.value)
        XCTAssertNil(bearer.remote.lastValue(0x12))
        _ = bearer.process(ATTPDU(bytes("0c12000100")), from: .local, frame: 5, time: 0)
        let blob = bearer.process(ATTPDU(bytes("0d0809")), from: .remote, frame: 6, time: 0)
        XCTAssertEqual(blob.entries.first?.value.map(Array.init), [0x08, 0x09])
        XCTAssertNil(bearer.remote.lastValue(0x12))
        _ = bearer.process(ATTPDU(bytes("12110001")), from: .local, frame: 7, time: 0)
        _ = bearer.process(ATTPDU(bytes("13")), from: .remote, frame: 8, time: 0)
        XCTAssertNil(bearer.remote.lastValue(0x11))
        XCTAssertEqual(bearer.remote.subscription(0x10)?.notify, true)
        XCTAssertEqual(bearer.remote.subscription(0x10)?.frame, 7)

        let kept = ATTBearer(local: GATTDatabase(), remote: GATTDatabase(), serial: 1)
        let shown = kept.process(ATTPDU(bytes("1b1000063c")), from: .remote, frame: 1, time: 0)
        XCTAssertEqual(shown.entries.first?.value.map(Array.init), [0x06, 0x3C])
        XCTAssertEqual(kept.remote.lastValue(0x10)?.bytes, [0x06, 0x3C])
    }

    /// Requests over and over reuse their storage (the requests workload): each answer must still
    /// be the request's own. Long reads in blobs put the whole value together every time, Read
    /// Multiple names its handles, and pipelined Write Requests each apply their own value.
    func testRequestsOverAndOverKeepTheirOwnValues() {
        let bearer = ATTBearer(local: GATTDatabase(), remote: GATTDatabase(), serial: 1)
        _ = bearer.process(ATTPDU(bytes("02f700")), from: .local, frame: 1, time: 0)
        _ = bearer.process(ATTPDU(bytes("03f700")), from: .remote, frame: 2, time: 0)
        var frame = 3
        func send(_ hex: String, from side: Side) -> ATTResult {
            frame += 1
            return bearer.process(ATTPDU(bytes(hex)), from: side, frame: frame, time: 0)
        }
        for round in 0..<3 {
            let head = (0..<246).map { UInt8(truncatingIfNeeded: $0 + round) }, tail = (0..<54).map { UInt8(truncatingIfNeeded: 7 * $0 + round) }
            _ = send("0a2200", from: .local)
            _ = send("0b" + hex(head), from: .remote)
            _ = send("0c2200f600", from: .local)
            let blob = send("0d" + hex(tail), from: .remote)
            XCTAssertEqual(blob.entries.first?.value.map(Array.init), head + tail, "round \(round)")
            XCTAssertTrue(blob.notes.contains(.reassembled(length: 300, complete: true)))
            XCTAssertEqual(bearer.remote.lastValue(0x22)?.bytes, head + tail)

            let multiple = send("0e13002000", from: .local)
            XCTAssertEqual(multiple.entries.map(\.attribute.handle), [0x13, 0x20])
            XCTAssertEqual(send("0f0102", from: .remote).entries.map(\.attribute.handle), [0x13, 0x20])

            // Two writes pipelined: each response applies its own request's value.
            _ = send("12200001" + hex([UInt8(round)]), from: .local)
            _ = send("122100aabbcc" + hex([UInt8(round)]), from: .local)
            XCTAssertEqual(send("13", from: .remote).request?.frame, frame - 2)
            XCTAssertEqual(bearer.remote.lastValue(0x20)?.bytes, [0x01, UInt8(round)])
            XCTAssertNotEqual(bearer.remote.lastValue(0x21)?.bytes, [0xAA, 0xBB, 0xCC, UInt8(round)], "not applied before its response")
            _ = send("13", from: .remote)
            XCTAssertEqual(bearer.remote.lastValue(0x21)?.bytes, [0xAA, 0xBB, 0xCC, UInt8(round)])
        }
    }

    func hex(_ b: [UInt8]) -> String { Hex.string(b[...]) }

    func testUnsolicitedAndUnexpected() {
        let bearer = ATTBearer(local: GATTDatabase(), remote: GATTDatabase(), serial: 1)
        let r1 = bearer.process(ATTPDU(bytes("0b01")), from: .remote, frame: 1, time: 0)
        XCTAssertTrue(r1.notes.contains { if case .unsolicited = $0 { true } else { false } })
        _ = bearer.process(ATTPDU(bytes("0a0300")), from: .local, frame: 2, time: 0)
        let r2 = bearer.process(ATTPDU(bytes("13")), from: .remote, frame: 3, time: 0)
        XCTAssertTrue(r2.notes.contains { if case .unexpectedResponse(.readResponse) = $0 { true } else { false } })
        // Indication and confirmation pair too.
        _ = bearer.process(ATTPDU(bytes("1d03000100ffff")), from: .remote, frame: 4, time: 0)
        let c = bearer.process(ATTPDU(bytes("1e")), from: .local, frame: 5, time: 7 * GATTTests.ms)
        XCTAssertEqual(c.request?.frame, 4)
        XCTAssertEqual(c.request?.rtt, 7 * GATTTests.ms)
    }
}
