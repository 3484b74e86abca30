import XCTest
import Capture
import Decoders
import Report

/// Frames the capture cut short (btsnooz keeps only the start of ACL payloads) are not malformed
/// traffic: they are shown as truncated and kept out of reassembly, with their continuations.
final class TruncationTests: XCTestCase {
    func testBtsnoozTruncatedACLIsNotMalformed() throws {
        var frames = 0, truncated = 0, malformed: [Int] = []
        try Fixtures.decode(Fixtures.captures + "/phone/bugreport_v2.txt") { d in
            frames += 1
            if d.packet.truncated { truncated += 1 }
            if d.isMalformed { malformed.append(d.packet.number) }
        }
        XCTAssertEqual(frames, 184)
        XCTAssertGreaterThan(truncated, 0)
        XCTAssertEqual(malformed, [])
    }

    /// A start fragment whose L2CAP basic header was kept shows its length and channel (as tshark
    /// does for Android's filtered logs), and nothing above it is decoded from the cut payload.
    func testTruncatedStartKeepsItsL2CAPHeader() throws {
        var seen = false
        try Fixtures.decode(Fixtures.captures + "/phone/bugreport_v2.txt") { d in
            guard d.packet.number == 45 else { return }
            seen = true
            XCTAssertTrue(d.packet.truncated)
            XCTAssertEqual(d.l2cap?.cid, 0x0004)
            XCTAssertEqual(d.l2cap?.length, 32)
            XCTAssertNil(d.upper)
            XCTAssertFalse(d.isMalformed)
            XCTAssertTrue(try! DisplayFilter("l2cap.cid == 4").matches(d))
        }
        XCTAssertTrue(seen)
        let line = try CLI.run(["read", "-Y", "frame == 45", Fixtures.captures + "/phone/bugreport_v2.txt"]).out
        XCTAssertTrue(line.hasSuffix("L2CAP ATT, 6 of 32 bytes (truncated in the capture)\n"), line)
    }

    func testSameCaptureUntruncatedDecodesATT() throws {
        var att = 0
        try Fixtures.decode(Fixtures.captures + "/phone/bugreport_v2.btsnoop") { d in
            if case .att? = d.upper { att += 1 }
        }
        XCTAssertGreaterThan(att, 50)
    }

    /// Android's on-device btsnooz_hci.log: a btsnoop header, then btsnooz version 2 records as
    /// they are. Made here from the bug report's section (the same records, base64 and deflate
    /// undone), it decodes to the same frames.
    func testOnDeviceBtsnoozLog() throws {
        let report = Fixtures.captures + "/phone/bugreport_v2.txt"
        let reader = try CaptureReader(path: report)
        var file: [UInt8] = Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x03, 0xEA]
        var previous: Int64?
        let types: [UInt8: (sent: UInt8, received: UInt8)] = [1: (0x20, 0x20), 2: (0x21, 0x11), 3: (0x22, 0x12), 4: (0x10, 0x10), 5: (0x2D, 0x17)]
        while let r = try reader.next() {
            let data = Array(r.data)
            let type = r.flags & 1 == 1 ? types[data[0]]!.received : types[data[0]]!.sent
            let delta = UInt32(previous.map { (r.timestamp - $0) / 1000 } ?? 0)
            previous = r.timestamp
            let length = UInt16(data.count), packet = UInt16(max(r.originalLength, data.count))
            file += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(packet & 0xFF), UInt8(packet >> 8)]
            file += [UInt8(delta & 0xFF), UInt8(delta >> 8 & 0xFF), UInt8(delta >> 16 & 0xFF), UInt8(delta >> 24), type]
            file += data.dropFirst()
        }
        let path = NSTemporaryDirectory() + "btsnooz_hci-\(getpid()).log"
        try Data(file).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let ours = try CLI.run(["read", path]), theirs = try CLI.run(["read", report])
        XCTAssertEqual(ours.status, 0, ours.err)
        XCTAssertEqual(ours.out.split(separator: "\n").count, 184)
        XCTAssertEqual(ours.out, theirs.out)
    }
}
