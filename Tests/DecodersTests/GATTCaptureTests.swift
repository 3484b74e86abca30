import XCTest
@testable import Decoders
import Wire

/// Replays the ATT traffic of real captures through `ATTBearer` and checks the rebuilt databases
/// against what tshark shows for the same frames. The captures live outside the repository.
final class GATTCaptureTests: XCTestCase {
    static let captures: String = {
        var p = #filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")
        p += "/../shared/captures/"
        return p
    }()

    func load(_ name: String) throws -> [UInt8] {
        guard let f = fopen(GATTCaptureTests.captures + name, "rb") else { throw XCTSkip("capture \(name) not present") }
        defer { fclose(f) }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buf, 1, buf.count, f)
            if n <= 0 { break }
            out += buf[0..<n]
        }
        return out
    }

    struct Record { var frame: Int; var time: Int64; var sent: Bool; var h4: Bytes }

    /// Classic pcap, link type 201 (H4 with a 4-byte direction header).
    func pcap201(_ d: [UInt8]) -> [Record] {
        let b = d[...]
        var out: [Record] = []
        var o = 24
        while let _ = b.le16(o + 14) {
            let le32 = { (i: Int) -> Int in Int(b.le16(i) ?? 0) | Int(b.le16(i + 2) ?? 0) << 16 }
            let secs = Int64(le32(o)), usec = Int64(le32(o + 4)), incl = le32(o + 8)
            let data = b.from(o + 16).prefix(incl)
            guard data.count == incl, incl > 5 else { break }
            out.append(Record(frame: out.count + 1, time: secs * 1_000_000_000 + usec * 1000, sent: data.byte(3) == 0, h4: data.from(4)))
            o += 16 + incl
        }
        return out
    }

    /// btsnoop version 1, datalink 1002 (H4); flags bit 0 set = received.
    func btsnoop(_ d: [UInt8]) -> [Record] {
        let b = d[...]
        func be32(_ i: Int) -> Int { (0..<4).reduce(0) { $0 << 8 | Int(b.byte(i + $1) ?? 0) } }
        var out: [Record] = []
        var o = 16
        while o + 24 <= b.count {
            let incl = be32(o + 4), flags = be32(o + 8)
            let usec = Int64(be32(o + 16)) << 32 | Int64(be32(o + 20))
            let data = b.from(o + 24).prefix(incl)
            guard data.count == incl else { break }
            out.append(Record(frame: out.count + 1, time: usec &* 1000, sent: flags & 1 == 0, h4: data))
            o += 24 + incl
        }
        return out
    }

    /// Reassembles L2CAP on ACL and yields ATT PDUs (CID 0x0004). Fragments are kept per handle
    /// and direction: both directions interleave on one handle (lightctl frames 7207–7209).
    func attPDUs(_ records: [Record]) -> [(Record, Bytes)] {
        var partial: [UInt16: (Record, [UInt8], Int)] = [:]
        var out: [(Record, Bytes)] = []
        for r in records where r.h4.byte(0) == 2 {
            guard let hf = r.h4.le16(1), let len = r.h4.le16(3) else { continue }
            let handle = hf & 0x0FFF | (r.sent ? 0x8000 : 0), pb = hf >> 12 & 3
            let data = r.h4.from(5).prefix(Int(len))
            var acc: [UInt8]
            var total: Int
            if pb == 1 {
                guard let p = partial[handle] else { continue }
                acc = p.1 + data
                total = p.2
            } else {
                guard let l = data.le16(0) else { continue }
                acc = Array(data)
                total = Int(l) + 4
            }
            if acc.count < total { partial[handle] = (r, acc, total); continue }
            partial[handle] = nil
            let a = acc[...]
            if a.le16(2) == 4 { out.append((r, a.from(4).prefix(total - 4))) }
        }
        return out
    }

    // blepcapan__fitup.pcap: full discovery of a fitness band, CCCD write in frame 288, notifications.
    func testFitUpDiscovery() throws {
        let records = pcap201(try load("blepcapan__fitup.pcap"))
        XCTAssertEqual(records.count, 527)
        let store = GATTStore<String>()
        let bearer = store.bearer(local: "host", remote: "band")
        var results: [Int: ATTResult] = [:]
        let pdus = attPDUs(records)
        XCTAssertEqual(pdus.count, 223)  // tshark: 223 frames with ATT
        for (r, pdu) in pdus {
            results[r.frame] = bearer.process(ATTPDU(pdu), from: r.sent ? .local : .remote, frame: r.frame, time: r.time)
        }
        let tree = store.database(for: "band").textTree()
        XCTAssertTrue(tree.hasPrefix("""
            Service 0x1800 Generic Access (handles 0x0001–0x0009)
              Characteristic 0x2A00 Device Name [read, write] value 0x0003
              Characteristic 0x2A01 Appearance [read] value 0x0005
              Characteristic 0x2A04 Peripheral Preferred Connection Parameters [read] value 0x0007
              Characteristic 0x2AA6 Central Address Resolution [read] value 0x0009
            Service 0x1801 Generic Attribute (handles 0x000A–0x000A)
            Service F0080001-0451-4000-B000-000000000000 Unknown Service (handles 0x000B–0x0012)
            """), tree)
        // Frame 288 writes 0x0100 to the CCCD at 0x000e (found by Find Information in frame 218).
        XCTAssertEqual(results[288]?.attribute?.role, .descriptor)
        XCTAssertEqual(results[290]?.request?.frame, 288)
        XCTAssertEqual(store.database(for: "band").subscription(0x0D)?.frame, 288)
        XCTAssertEqual(results[293]?.attribute?.handle, 0x0D)
        XCTAssertEqual(results[293]?.attribute?.role, .characteristicValue)
        XCTAssertTrue(tree.contains("(handle 0x000E): notifications on (frame 288)"), tree)
        // Every PDU of the capture is well formed.
        XCTAssertEqual(results.values.filter { $0.pdu.malformed != nil }.count, 0)
    }

    // fossibot__btsnoop_hci.log: the host indicates Service Changed (frame 4542, confirmed in 4562)
    // and exchanges MTU 517 (frames 4634/4635); tshark pairs the same frames.
    func testFossibotIndicationAndMTU() throws {
        let records = btsnoop(try load("fossibot__btsnoop_hci.log"))
        XCTAssertEqual(records.count, 9227)
        let store = GATTStore<String>()
        let bearer = store.bearer(local: "phone", remote: "station")
        var results: [Int: ATTResult] = [:]
        for (r, pdu) in attPDUs(records) {
            results[r.frame] = bearer.process(ATTPDU(pdu), from: r.sent ? .local : .remote, frame: r.frame, time: r.time)
        }
        XCTAssertEqual(results.count, 249)
        XCTAssertEqual(results[4562]?.request?.frame, 4542)
        XCTAssertEqual(results[4562]?.request?.rtt, 147_497_000)
        XCTAssertEqual(results[4635]?.request?.frame, 4634)
        XCTAssertEqual(results[4635]?.request?.rtt, 60_040_000)
        XCTAssertTrue(results[4635]?.notes.contains { if case .mtu(517) = $0 { true } else { false } } ?? false)
        XCTAssertEqual(bearer.mtu, 517)
        // The indication comes from the phone's own server, which the station never discovered:
        // tshark names it from the station's database (Service Changed at 0x0003 there), which
        // mixes up the two servers. Each side keeps its own database here.
        XCTAssertEqual(results[4542]?.attribute?.role, .unknown)
        XCTAssertEqual(store.database(for: "station").attribute(3).description, "Service Changed (0x2A05) in Generic Attribute (0x1801)")
        XCTAssertEqual(results[4542].map { CharacteristicValues.describe(BluetoothUUID(uuid16: 0x2A05), $0.value ?? []) },
                       "Service Changed 0x0001–0xFFFF")
    }

    /// Every btsnoop (H4) capture: the number of ATT PDUs matches tshark's count in MANIFEST.tsv,
    /// and replaying them through a bearer per ACL handle decodes every PDU, summary and tree.
    func testAllBtsnoopCaptures() throws {
        let manifest = try load("MANIFEST.tsv")
        var checked = 0
        for line in String(decoding: manifest, as: UTF8.self).split(separator: "\n").dropFirst() {
            let cols = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard cols.count > 6, cols[3].contains("1002"), let expected = Int(cols[6]) else { continue }
            let records = btsnoop(try load(cols[0]))
            let store = GATTStore<String>()
            var bearers: [UInt16: ATTBearer] = [:]
            var count = 0
            for (r, pdu) in attPDUs(records) {
                let handle = (r.h4.le16(1) ?? 0) & 0x0FFF
                let bearer = bearers[handle] ?? store.bearer(local: "host", remote: "handle \(handle)")
                bearers[handle] = bearer
                let result = bearer.process(ATTPDU(pdu), from: r.sent ? .local : .remote, frame: r.frame, time: r.time)
                _ = result.summary
                _ = result.fields
                count += 1
            }
            for (_, d) in store.databases {
                _ = d.textTree()
                _ = d.fields
            }
            XCTAssertEqual(count, expected, cols[0])
            checked += 1
        }
        XCTAssertGreaterThan(checked, 3)
    }
}
