import XCTest
import Wire

/// A btsnoop (H4, datalink 1002) capture built record by record: HCI events from the controller,
/// ACL data both ways, 10 ms apart.
struct H4Capture {
    private(set) var bytes: [UInt8] = Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x03, 0xEA]
    private var time: Int64 = 0x00dc_ddb3_0f2f_8000 + 1_717_200_000_000_000

    static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xff), UInt8(v >> 8 & 0xff)] }
    static func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xff), UInt8(v >> 16 & 0xff), UInt8(v >> 8 & 0xff), UInt8(v & 0xff)] }

    private mutating func record(_ packet: [UInt8], flags: Int) {
        bytes += Self.be32(packet.count) + Self.be32(packet.count) + Self.be32(flags) + Self.be32(0)
        bytes += Self.be32(Int(time >> 32)) + Self.be32(Int(time & 0xffff_ffff)) + packet
        time += 10_000
    }

    mutating func event(_ code: UInt8, _ params: [UInt8]) {
        record([0x04, code, UInt8(params.count)] + params, flags: 3)
    }

    /// One L2CAP frame on `cid` in one ACL packet; `sent` by this host, else received.
    mutating func l2cap(handle: Int, cid: Int, _ payload: [UInt8], sent: Bool) {
        let frame = Self.le16(payload.count) + Self.le16(cid) + payload
        record([0x02] + Self.le16(handle | 0x2000) + Self.le16(frame.count) + frame, flags: sent ? 0 : 1)
    }

    func write(to path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }
}

/// Decode gaps real captures showed: ATT over BR/EDR, include declarations.
final class GATTDecodeGapTests: XCTestCase {
    var dir = ""

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "blesniff-gaps-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    /// `attPDUs` on one channel.
    static func discovery(_ c: inout H4Capture, handle: Int, cid: Int) {
        for (pdu, sent) in attPDUs { c.l2cap(handle: handle, cid: cid, pdu, sent: sent) }
    }

    func testIncludeDeclarationsDecodedAndInTheTree() throws {
        var c = H4Capture()
        // LE Connection Complete: handle 0x0040, central, peer public 11:22:33:44:55:66.
        c.event(0x3E, [0x01, 0x00, 0x40, 0x00, 0x00, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x18, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x00])
        Self.discovery(&c, handle: 0x40, cid: 0x0004)
        let path = dir + "/include.btsnoop"
        try c.write(to: path)

        let read = try CLI.run(["read", "-v", path])
        XCTAssertEqual(read.status, 0, read.err)
        XCTAssertFalse(read.out.contains("[malformed]"), read.out)
        let response = read.out.components(separatedBy: "\n     5 ").last ?? ""
        XCTAssertTrue(response.contains("Include"), response)
        XCTAssertTrue(response.contains("Included Service Handle: 0x0001"), response)
        XCTAssertTrue(response.contains("End Group Handle: 0x0005"), response)
        XCTAssertTrue(response.contains("0x180F"), response)

        let gatt = try CLI.run(["gatt", path])
        XCTAssertEqual(gatt.status, 0, gatt.err)
        XCTAssertTrue(gatt.out.contains("Include"), gatt.out)
        XCTAssertTrue(gatt.out.contains("Battery Service"), gatt.out)
    }

    /// An Include declaration too short for one (2 bytes where 4 or 6 are due) is found only
    /// knowing the request's type: the frame is marked malformed like any other.
    func testDeclarationTooShortForItsTypeIsMalformed() throws {
        var c = H4Capture()
        c.event(0x3E, [0x01, 0x00, 0x40, 0x00, 0x00, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x18, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x00])
        c.l2cap(handle: 0x40, cid: 4, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x02, 0x28], sent: true)
        c.l2cap(handle: 0x40, cid: 4, [0x09, 0x04, 0x07, 0x00, 0x01, 0x00], sent: false)
        let path = dir + "/short.btsnoop"
        try c.write(to: path)
        let r = try CLI.run(["read", "--quiet", path])
        XCTAssertEqual(r.out, "3 frames, 1 malformed\n")
        let v = try CLI.run(["read", "-v", path]).out
        XCTAssertTrue(v.contains("include declaration at 0x0007 too short"), v)
    }

    /// GATT over Classic: the L2CAP Connection Request/Response for PSM 0x001F give the channel
    /// ids, and that channel's B-frames are ATT PDUs (tshark decodes them alike).
    func testATTOverBREDR() throws {
        var c = H4Capture()
        // Connection Complete (BR/EDR): status 0, handle 0x000B, peer 11:22:33:44:55:66, ACL, no encryption.
        c.event(0x03, [0x00, 0x0B, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x01, 0x00])
        // Connection Request PSM 0x001F, source CID 0x0040; Connection Response: destination 0x0041.
        c.l2cap(handle: 0x0B, cid: 0x0001, [0x02, 0x01, 0x04, 0x00, 0x1F, 0x00, 0x40, 0x00], sent: true)
        c.l2cap(handle: 0x0B, cid: 0x0001, [0x03, 0x01, 0x08, 0x00, 0x41, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00], sent: false)
        // Each side sends to the other's CID: this host to 0x0041, the peer to 0x0040.
        let frames = Self.attPDUs
        for (pdu, sent) in frames { c.l2cap(handle: 0x0B, cid: sent ? 0x0041 : 0x0040, pdu, sent: sent) }
        let path = dir + "/bredr.btsnoop"
        try c.write(to: path)

        let read = try CLI.run(["read", path])
        XCTAssertEqual(read.status, 0, read.err)
        let lines = read.out.split(separator: "\n")
        XCTAssertEqual(lines.count, 3 + frames.count)
        XCTAssertTrue(lines[3].contains("ATT Read By Group Type Request"), String(lines[3]))
        XCTAssertTrue(lines[4].contains("ATT Read By Group Type Response"), String(lines[4]))
        XCTAssertTrue(lines.last?.contains("ATT Handle Value Notification") ?? false, read.out)
        XCTAssertFalse(read.out.contains("[malformed]"), read.out)

        let gatt = try CLI.run(["gatt", path])
        XCTAssertTrue(gatt.out.contains("Heart Rate Measurement"), gatt.out)
        XCTAssertTrue(gatt.out.contains("Peer 11:22:33:44:55:66"), gatt.out)

        // tshark, where installed, finds the same ATT PDUs.
        guard let tshark = try? Subprocess.run("tshark", ["-r", path, "-Y", "btatt", "-T", "fields", "-e", "btatt.opcode"]),
              tshark.status == 0 else { return }
        XCTAssertEqual(tshark.out.split(separator: "\n").count, frames.count, tshark.out)
    }

    /// GATT discovery with an included service, with whether this host sent each PDU: Battery
    /// Service (0x0001-0x0005) included by Heart Rate (0x0006-0x000A) at handle 0x0007; Find
    /// Included Services (Read By Type 0x2802), characteristics (0x2803), a notification.
    static let attPDUs: [([UInt8], Bool)] = [
        ([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28], true),
        ([0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x0F, 0x18, 0x06, 0x00, 0x0A, 0x00, 0x0D, 0x18], false),
        ([0x08, 0x06, 0x00, 0x0A, 0x00, 0x02, 0x28], true),
        ([0x09, 0x08, 0x07, 0x00, 0x01, 0x00, 0x05, 0x00, 0x0F, 0x18], false),
        ([0x08, 0x06, 0x00, 0x0A, 0x00, 0x03, 0x28], true),
        ([0x09, 0x07, 0x08, 0x00, 0x10, 0x09, 0x00, 0x37, 0x2A], false),
        ([0x1B, 0x09, 0x00, 0x00, 0x48], false),
    ]
}
