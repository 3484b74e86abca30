import Capture
import Decoders
import Foundation
import XCTest
import Wire

/// Tests/Captures, and the phone fixtures in it.
let capturesDir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Captures")
let phoneDir = capturesDir.appendingPathComponent("phone")

/// One frame as tshark read it (scripts/fixtures/generate_phone.sh).
struct TsharkFrame: Equatable {
    var time: String
    var length: Int
    var capturedLength: Int
    var h4Direction: String
    var monitorOpcode: String
    var packetLoggerType: String
    var hex: String
}

func tsharkFrames(_ file: String) throws -> [TsharkFrame] {
    let text = try String(contentsOf: phoneDir.appendingPathComponent("expected/\(file).tsv"), encoding: .utf8)
    return text.split(separator: "\n").map { line in
        let c = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        return TsharkFrame(time: c[0], length: Int(c[1]) ?? -1, capturedLength: Int(c[2]) ?? -1, h4Direction: c[3],
                           monitorOpcode: c[4], packetLoggerType: c[5], hex: c.count > 6 ? c[6] : "")
    }
}

func hex(_ b: some Sequence<UInt8>) -> String { b.map { String(format: "%02x", $0) }.joined() }

/// "seconds.nanoseconds" as tshark prints frame.time_epoch.
func epoch(_ ns: Int64) -> String { String(format: "%lld.%09lld", ns / 1_000_000_000, ns % 1_000_000_000) }

final class PacketLoggerTests: TempDirTestCase {
    static let fixtures = [
        "gatt_session.btsnoop", "gatt_session.pcap201.pcap", "gatt_session.pcap254.pcap", "gatt_session.pcapng",
        "gatt_session.btsnoop2001.btsnoop", "gatt_session.be.pklg", "gatt_session.le.pklg",
        "gatt_session.from_be_pklg.btsnoop", "bugreport_v2.btsnoop",
    ]

    func fixture(_ name: String) -> String {
        name == "gatt_session.btsnoop" ? capturesDir.appendingPathComponent(name).path : phoneDir.appendingPathComponent(name).path
    }

    /// blesniff reads every converted file as tshark does: times, lengths, directions, bytes.
    func testConvertedFilesReadAsTsharkReadsThem() throws {
        for name in Self.fixtures {
            let expected = try tsharkFrames(name)
            let r = try readAll(path: fixture(name))
            XCTAssertNil(r.truncation, name)
            XCTAssertEqual(r.records.count, expected.count, name)
            let pklg = name.hasSuffix(".pklg")
            for (i, rec) in r.records.enumerated() where i < expected.count {
                let t = expected[i]
                let p = Packet(Record(number: rec.record.number, timestamp: rec.record.timestamp, linkType: rec.record.linkType, flags: rec.record.flags, data: rec.data[...], originalLength: rec.record.originalLength))
                XCTAssertEqual(epoch(rec.record.timestamp), t.time, "\(name) #\(i + 1)")
                var bytes: [UInt8]
                var kept = p.payload.count, wire = rec.record.originalLength - (rec.data.count - p.payload.count)
                switch p.kind {
                case .hci(let type):
                    if pklg {
                        let plType = PacketLogger.type(h4: type.rawValue, received: p.direction == .received)
                        XCTAssertEqual(t.packetLoggerType, plType.map { String(format: "0x%02x", $0) }, "\(name) #\(i + 1)")
                        bytes = [plType ?? 0xFF]
                    } else if !t.monitorOpcode.isEmpty {
                        bytes = []
                        XCTAssertEqual(UInt16(t.monitorOpcode), MonitorOpcode.hciOpcode(type, p.direction), "\(name) #\(i + 1)")
                    } else {
                        bytes = [type.rawValue]
                        XCTAssertEqual(t.h4Direction, p.direction == .received ? "0x01" : "0x00", "\(name) #\(i + 1)")
                    }
                    bytes += p.payload
                    kept += bytes.count - p.payload.count
                    wire += bytes.count - p.payload.count
                default:
                    XCTFail("\(name) #\(i + 1): \(p.kind)")
                    continue
                }
                XCTAssertEqual(hex(bytes), t.hex, "\(name) #\(i + 1)")
                XCTAssertEqual(kept, t.capturedLength, "\(name) #\(i + 1)")
                XCTAssertEqual(wire, t.length, "\(name) #\(i + 1)")
            }
        }
    }

    /// Every format carries the same frames: same times and packets as the original, per tshark.
    func testEveryFormatKeepsFramesDirectionsAndTimes() throws {
        let original = try tsharkFrames("gatt_session.btsnoop")
        for name in Self.fixtures where name != "bugreport_v2.btsnoop" {
            let frames = try tsharkFrames(name)
            XCTAssertEqual(frames.map(\.time), original.map(\.time), name)
            // Without the transport's type byte (monitor formats have none), the bytes are the same.
            let strip = frames.first?.monitorOpcode.isEmpty ?? true
            XCTAssertEqual(frames.map { strip ? String($0.hex.dropFirst(2)) : $0.hex }, original.map { String($0.hex.dropFirst(2)) }, name)
        }
        let pklg = try tsharkFrames("gatt_session.be.pklg")
        XCTAssertEqual(try tsharkFrames("gatt_session.le.pklg"), pklg)
        // PacketLogger types agree with the original's H4 types and directions.
        for (o, p) in zip(original, pklg) {
            let h4 = UInt8(o.hex.prefix(2), radix: 16) ?? 0
            let t = PacketLogger.type(h4: h4, received: o.h4Direction == "0x01")
            XCTAssertEqual(p.packetLoggerType, t.map { String(format: "0x%02x", $0) })
        }
    }

    /// The writer reproduces the committed files (checked by tshark) byte for byte, both orders.
    func testWriterReproducesFixtures() throws {
        let r = try readAll(path: fixture("gatt_session.btsnoop"))
        for bigEndian in [true, false] {
            let out = path("out.pklg")
            let w = try PacketLoggerWriter(path: out, bigEndian: bigEndian)
            for (rec, data) in r.records {
                let type = try XCTUnwrap(PacketLogger.type(h4: data[0], received: rec.flags & 1 == 1))
                try w.write(timestamp: rec.timestamp, type: type, payload: data[1...])
            }
            let expected = try Data(contentsOf: URL(fileURLWithPath: fixture(bigEndian ? "gatt_session.be.pklg" : "gatt_session.le.pklg")))
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)), expected, "bigEndian \(bigEndian)")
            let back = try readAll(path: out)
            XCTAssertEqual(back.format, .packetLogger(bigEndian: bigEndian))
            XCTAssertEqual(back.records.map(\.data), r.records.map(\.data))
            XCTAssertEqual(back.records.map(\.record.flags), r.records.map(\.record.flags))
            XCTAssertEqual(back.records.map(\.record.timestamp), r.records.map(\.record.timestamp))
            XCTAssertEqual(back.records.map(\.record.linkType), r.records.map(\.record.linkType))
        }
    }

    func pklg(_ records: [(type: UInt8, payload: [UInt8])], bigEndian: Bool, seconds: UInt32 = 1_700_000_000) -> [UInt8] {
        var w = ByteWriter()
        for (i, r) in records.enumerated() {
            w.u32(UInt32(9 + r.payload.count), be: bigEndian)
            w.u32(seconds + UInt32(i), be: bigEndian)
            w.u32(123_456, be: bigEndian)
            w.u8(r.type)
            w.raw(r.payload)
        }
        return w.b
    }

    func testNotesBecomeMonitorNotes() throws {
        let text = Array("Bluetooth power on".utf8)
        let path = try write("notes.pklg", pklg([(0xFC, text), (0xFA, Array("oops".utf8)), (0x00, [3, 0x0c, 0]),
                                                 (0x0A, [1, 2, 3]), (0xF8, Array("kernel".utf8))], bigEndian: false))
        let r = try readAll(path: path)
        XCTAssertEqual(r.format, .packetLogger(bigEndian: false))
        XCTAssertEqual(r.records.count, 5)
        func packet(_ i: Int) -> Packet {
            let (rec, data) = r.records[i]
            return Packet(Record(number: rec.number, timestamp: rec.timestamp, linkType: rec.linkType, flags: rec.flags, data: data[...]))
        }
        XCTAssertEqual(packet(0).kind, .monitor(opcode: MonitorOpcode.systemNote))
        XCTAssertEqual(Array(packet(0).payload), text)
        XCTAssertEqual(packet(1).kind, .monitor(opcode: MonitorOpcode.userLogging))
        // User Logging: priority 3 (error), identifier "Error\0", message.
        XCTAssertEqual(Array(packet(1).payload), [3, 6] + Array("Error".utf8) + [0] + Array("oops".utf8))
        XCTAssertEqual(packet(2).kind, .hci(.command))
        XCTAssertEqual(packet(2).direction, .sent)
        XCTAssertEqual(packet(3).kind, .monitor(opcode: MonitorOpcode.vendorDiag))
        XCTAssertEqual(packet(4).kind, .monitor(opcode: MonitorOpcode.userLogging))
        XCTAssertEqual(r.records[1].record.timestamp, 1_700_000_001_123_456_000)

        // Back to PacketLogger types.
        let note = PacketLogger.noteRecord(monitorOpcode: 13, payload: packet(1).payload)
        XCTAssertEqual(note?.type, 0xFA)
        XCTAssertEqual(note.map { Array($0.text) }, Array("oops".utf8))
        XCTAssertEqual(PacketLogger.noteRecord(monitorOpcode: 12, payload: packet(0).payload)?.type, 0xFC)
        XCTAssertNil(PacketLogger.noteRecord(monitorOpcode: 2, payload: []))
        XCTAssertEqual(PacketLogger.noteRecord(monitorOpcode: 13, payload: [6])?.type, 0xFC)
        XCTAssertEqual(PacketLogger.noteRecord(monitorOpcode: 13, payload: [6, 200, 1])?.type, 0xFC)
    }

    func testDetection() {
        let be = pklg([(0x00, [3, 0x0c, 0]), (0x01, [0x0e, 4, 1, 3, 0x0c, 0])], bigEndian: true)
        XCTAssertEqual(PacketLogger.detect(be[...]), true)
        XCTAssertEqual(PacketLogger.detect(pklg([(0x03, [1, 2, 3, 4])], bigEndian: false)[...]), false)
        XCTAssertNil(PacketLogger.detect(Array("hello, this is not a capture".utf8)[...]))
        XCTAssertNil(PacketLogger.detect([]))
        // Microseconds of a million or more, unknown types, lengths under 9: not PacketLogger.
        var bad = be
        bad[8...11] = [0, 0x0f, 0x42, 0x40]
        XCTAssertNil(PacketLogger.detect(bad[...]))
        XCTAssertNil(PacketLogger.detect(pklg([(0x42, [1])], bigEndian: true)[...]))
        XCTAssertNil(PacketLogger.detect([0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0]))
        // The second record is checked too.
        var second = be
        second[be.count - 7] = 0x42
        XCTAssertNil(PacketLogger.detect(second[...]))
    }

    func testTruncatedAndMalformed() throws {
        let good = pklg([(0x00, [3, 0x0c, 0]), (0x01, [0x0e, 4, 1, 3, 0x0c, 0])], bigEndian: true)
        var r = try readAll(path: try write("cut.pklg", Array(good.dropLast(2))))
        XCTAssertEqual(r.records.count, 1)
        XCTAssertEqual(r.truncation?.kind, .truncatedRecord)
        XCTAssertEqual(r.truncation?.frame, 2)

        r = try readAll(path: try write("cut2.pklg", good + [0, 0]))
        XCTAssertEqual(r.records.count, 2)
        XCTAssertEqual(r.truncation?.frame, 3)

        // A record length under 9 after good frames: an error naming the frame and offset.
        let path = try write("bad.pklg", good + [0, 0, 0, 4, 1, 2, 3, 4])
        let reader = try CaptureReader(path: path)
        XCTAssertNotNil(try reader.next())
        XCTAssertNotNil(try reader.next())
        let e = captureError { _ = try reader.next() }
        XCTAssertEqual(e?.kind, .malformed)
        XCTAssertEqual(e?.frame, 3)
        XCTAssertEqual(e?.offset, Int64(good.count))

        let huge = try write("huge.pklg", good + good + [0x00, 0xff, 0xff, 0xff] + [UInt8](repeating: 0, count: 9))
        XCTAssertEqual(captureError { _ = try readAll(path: huge) }?.kind, .recordTooLarge)
    }

    /// Cut and mutated PacketLogger input never crashes.
    func testMutations() throws {
        let base = try Array(Data(contentsOf: URL(fileURLWithPath: fixture("gatt_session.le.pklg"))))
        var rng = SystemRandomNumberGenerator()
        for i in 0..<200 {
            var b = Array(base.prefix(Int.random(in: 13...base.count, using: &rng)))
            for _ in 0..<(i % 8) { b[Int.random(in: 0..<b.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            let path = try write("m\(i).pklg", b)
            do {
                let reader = try CaptureReader(path: path)
                while let rec = try reader.next() {
                    _ = Packet(rec)
                }
            } catch {}
        }
    }
}

extension MonitorOpcode {
    /// The monitor opcode that carries an HCI packet of `type` going `direction`.
    static func hciOpcode(_ type: HCIPacketType, _ direction: Direction) -> UInt16 {
        let rx = direction == .received
        switch type {
        case .command: return commandPacket
        case .event: return eventPacket
        case .aclData: return rx ? aclRX : aclTX
        case .scoData: return rx ? scoRX : scoTX
        case .isoData: return rx ? isoRX : isoTX
        }
    }
}
