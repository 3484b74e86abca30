import XCTest
@testable import Decoders
import Wire

final class CoreTests: XCTestCase {
    func testByteReaderNeverTraps() {
        var r = ByteReader([0x01, 0x02, 0x03][...])
        XCTAssertEqual(try r.u16(), 0x0201)
        XCTAssertThrowsError(try r.u16())
        XCTAssertEqual(try r.u8(), 0x03)
        XCTAssertThrowsError(try r.u8())
        XCTAssertThrowsError(try r.take(-1))
        XCTAssertTrue(r.isAtEnd)
    }

    func testSliceHelpersUseRelativeOffsets() {
        let a: [UInt8] = [9, 9, 0x34, 0x12, 7]
        let s = a[2...]
        XCTAssertEqual(s.le16(0), 0x1234)
        XCTAssertEqual(s.byte(2), 7)
        XCTAssertNil(s.byte(3))
        XCTAssertNil(s.le16(2))
        XCTAssertEqual(Array(s.from(2)), [7])
        XCTAssertTrue(s.from(10).isEmpty)
    }

    func testAddressPrintsMostSignificantByteFirst() {
        var r = ByteReader([0xA1, 0x32, 0x07, 0xDC, 0x1B, 0x00][...])
        XCTAssertEqual(try r.address().description, "00:1b:dc:07:32:a1")
        XCTAssertEqual(BDAddr(0xC0_00_00_00_00_01).randomKind, .staticAddress)
        XCTAssertEqual(BDAddr(0x40_00_00_00_00_01).randomKind, .resolvablePrivate)
        XCTAssertEqual(BDAddr(0x00_00_00_00_00_01).randomKind, .nonResolvablePrivate)
    }

    func testUUIDExpansionAndShrinking() {
        let hr = BluetoothUUID(uuid16: 0x180D)
        XCTAssertEqual(hr.uuidString, "0000180D-0000-1000-8000-00805F9B34FB")
        XCTAssertEqual(BluetoothUUID("0000180d-0000-1000-8000-00805f9b34fb"), hr)
        XCTAssertEqual(BluetoothUUID("0000180d-0000-1000-8000-00805f9b34fb")?.uuid16, 0x180D)
        XCTAssertEqual(hr.description, "0x180D")
        // On the air 128-bit UUIDs are little-endian.
        let le: [UInt8] = [0xFB, 0x34, 0x9B, 0x5F, 0x80, 0x00, 0x00, 0x80, 0x00, 0x10, 0x00, 0x00, 0x0D, 0x18, 0x00, 0x00]
        XCTAssertEqual(BluetoothUUID(littleEndian: le[...]), hr)
        XCTAssertEqual(AssignedNumbers.serviceName(hr), "Heart Rate")
        XCTAssertEqual(AssignedNumbers.characteristicName(BluetoothUUID(uuid16: 0x2A37)), "Heart Rate Measurement")
        XCTAssertEqual(AssignedNumbers.descriptorName(BluetoothUUID(uuid16: 0x2800)), "Primary Service")
        XCTAssertEqual(AssignedNumbers.companyName(0x004C), "Apple, Inc.")
        XCTAssertNil(BluetoothUUID("12345"))
    }

    /// The arrays read by index answer as the tables do, for every company identifier and every
    /// 16-bit UUID in either form, and for 32- and 128-bit UUIDs past them.
    func testNamesByIndexAreTheTablesNames() {
        // The companies below 0x1000 parsed as a dictionary, with the table of those from 0x1000.
        let companies = AssignedNumbers.parseHex(AssignedNumbers.companyTable).merging(AssignedNumbers.companies) { a, _ in a }
        XCTAssertGreaterThan(companies.count, 3_000)
        XCTAssertNotNil(AssignedNumbers.companies[0xFFFF])
        for id in 0...0xFFFF {
            XCTAssertEqual(AssignedNumbers.companyName(UInt16(id)), companies[UInt32(id)], "\(id)")
            XCTAssertEqual(AssignedNumbers.companyLabel(UInt16(id))?.string, companies[UInt32(id)], "\(id)")
            let short = BluetoothUUID(uuid16: UInt16(id)), long = BluetoothUUID(high: short.high, low: short.low)
            XCTAssertEqual(AssignedNumbers.name(short), AssignedNumbers.anyName[short], "\(id)")
            XCTAssertEqual(AssignedNumbers.name(long), AssignedNumbers.anyName[short], "\(id)")
        }
        XCTAssertEqual(AssignedNumbers.companyName(0x004C), "Apple, Inc.")
        XCTAssertEqual(AssignedNumbers.name(BluetoothUUID(uuid16: 0x2A37)), "Heart Rate Measurement")
        XCTAssertEqual(AssignedNumbers.name(BluetoothUUID(uuid16: 0xFE2C)), AssignedNumbers.anyName[BluetoothUUID(uuid16: 0xFE2C)])
        XCTAssertNotNil(AssignedNumbers.name(BluetoothUUID(uuid16: 0xFE2C)))
        XCTAssertEqual(AssignedNumbers.name(BluetoothUUID(uuid32: 0x1_180D)), nil)
        let nordic = BluetoothUUID("00001523-1212-EFDE-1523-785FEABCD123")!
        XCTAssertEqual(AssignedNumbers.name(nordic), "Nordic LED and Button Service")
    }

    /// A UUID's short and long forms are one key (hashed by value, each half with its own seed),
    /// and UUIDs that differ in one half only are different keys.
    func testUUIDHashingFollowsEquality() {
        let short = BluetoothUUID(uuid16: 0x2A37), long = BluetoothUUID(high: short.high, low: short.low)
        XCTAssertEqual(short._rawHashValue(seed: 7), long._rawHashValue(seed: 7))
        var names: [BluetoothUUID: String] = [short: "Heart Rate Measurement"]
        XCTAssertEqual(names[long], "Heart Rate Measurement")
        let swapped = BluetoothUUID(high: short.low, low: short.high)
        names[swapped] = "swapped"
        XCTAssertEqual(names.count, 2)
        XCTAssertNotEqual(swapped._rawHashValue(seed: 7), short._rawHashValue(seed: 7))
        XCTAssertGreaterThan(Set((0..<4096).map { BluetoothUUID(uuid16: UInt16($0))._rawHashValue(seed: 1) & 0xFFF }).count, 2000)
    }

    func testFieldKeys() {
        XCTAssertEqual(Field.key(for: "LE Scan Interval"), "le_scan_interval")
        XCTAssertEqual(Field.key(for: "Peer_Address (type)"), "peer_address_type")
    }

    /// A label is its bytes, wherever they live: a literal's, a one-character literal's and an
    /// interned text's are equal and hash alike when the text is, and one text is interned once.
    /// A field list keeps every kind of value as it was given: the plain ones it rebuilds case by
    /// case, the others it copies whole.
    func testFieldListKeepsEveryValue() {
        let values: [FieldValue] = [
            .none, .uint(0x1B, hex: 2), .uint(UInt64.max, hex: 0), .int(-5), .bool(true),
            .text("a name"), .derived(.truncatedPayload(have: 3, of: 9)), .received(Bytes([0x41, 0xFF])),
            .bytes(Bytes([1, 2, 3])), .named(2, hex: 1, "First Automatically Flushable"),
            .quantity(0x10, hex: 4, 10, unit: "ms"), .signed(-60, unit: "dBm"),
            .address(BDAddr(0xC000_0000_0002)), .uuid(BluetoothUUID(uuid16: 0x180D)),
            .flags(6, hex: 2, ["LE General Discoverable Mode"]), .error(.reason("cut short")),
        ]
        let list = FieldList()
        for (i, v) in values.enumerated() {
            if i % 2 == 0 { list.add("Field", v) } else { list.begin("Group", v); list.end() }
        }
        XCTAssertEqual(list.nodes.map { "\($0.value)" }, values.map { "\($0)" })
        // Past its first storage and emptied again, frame after frame.
        for round in 0..<3 {
            list.removeAll()
            XCTAssertEqual(list.nodes.count, 0)
            let many = (0..<(100 * (round + 1))).map { values[$0 % values.count] }
            list.begin("Group", .none)
            for v in many { list.add("Field", v) }
            list.close()
            XCTAssertEqual(list.nodes.dropFirst().map { "\($0.value)" }, many.map { "\($0)" })
            XCTAssertEqual(list.nodes[0].end, many.count + 1)
            XCTAssertEqual(list.tree.first?.children.count, many.count)
        }
    }

    func testFieldLabelsAreTheirText() {
        let literal: FieldLabel = "Packet Boundary Flag"
        let interned = FieldLabel(["Packet", "Boundary", "Flag"].joined(separator: " "))
        XCTAssertEqual(literal, interned)
        XCTAssertEqual(literal.hashValue, interned.hashValue)
        XCTAssertEqual(interned.string, "Packet Boundary Flag")
        XCTAssertEqual(FieldLabel(String(interned.string)).address, interned.address)
        XCTAssertNotEqual(literal, "Packet Boundary")
        let x: FieldLabel = "X"
        XCTAssertEqual(x.string, "X")
        XCTAssertEqual(x, FieldLabel("X"))
        let empty: FieldLabel = ""
        XCTAssertTrue(empty.isEmpty)
        XCTAssertEqual(empty, FieldLabel(""))
        XCTAssertEqual(FieldLabel("Ünïcode").string, "Ünïcode")
        XCTAssertEqual(Field("Report 3", .none).label, AdvertisingReports.numberedReports[3])
    }

    func testLinkHeaders() {
        // DLT 201: 4-byte direction (1 = received), then H4 event.
        let rec: [UInt8] = [0, 0, 0, 1, 0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
        let p = Packet(Record(number: 1, timestamp: 0, linkType: LinkType.h4WithPHDR, data: rec[...], fileLength: rec.count))
        XCTAssertEqual(p.kind, .hci(.event))
        XCTAssertEqual(p.direction, .received)
        XCTAssertEqual(Array(p.payload), [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
        // btsnoop 2001: adapter in the high half of the flags, opcode in the low half.
        let mon = Packet(Record(number: 1, timestamp: 0, linkType: LinkType.btsnoopMonitor, flags: 0x0001_0005, data: [0x40, 0x20, 0, 0][...], fileLength: 4))
        XCTAssertEqual(mon.kind, .hci(.aclData))
        XCTAssertEqual(mon.adapter, 1)
        XCTAssertEqual(mon.direction, .received)
        // DLT 254: big-endian adapter and opcode.
        let note = Packet(Record(number: 1, timestamp: 0, linkType: LinkType.linuxMonitor, data: [0, 0, 0, 12, 0x41, 0][...], fileLength: 6))
        XCTAssertEqual(note.kind, .monitor(opcode: 12))
        // H1: flags carry the type.
        let h1 = Packet(Record(number: 1, timestamp: 0, linkType: LinkType.btsnoopH1, flags: 3, data: [0x0E][...], fileLength: 1))
        XCTAssertEqual(h1.kind, .hci(.event))
        let short = Packet(Record(number: 1, timestamp: 0, linkType: LinkType.h4WithPHDR, data: [0, 0][...], fileLength: 2))
        XCTAssertEqual(short.kind, .truncatedHeader)
        let unknown = Packet(Record(number: 1, timestamp: 0, linkType: LinkType.h4, data: [0x09, 1][...], fileLength: 2))
        XCTAssertEqual(unknown.kind, .unknownHCIType(9))
    }

    /// A decode's problems, lost links and key note share one box: a copy that adds a problem gets
    /// its own, and a frame with none of them reads as empty.
    func testDecodeCopiesKeepTheirOwnProblems() {
        let packet = { (kind: PacketKind) in
            Packet(number: 1, timestamp: 0, direction: .unknown, adapter: 0, kind: kind, payload: [])
        }
        let d = Dissector().dissect(packet(.truncatedHeader))
        XCTAssertEqual(d.problems.map(\.code), [.linkHeader])
        var copy = d
        copy.problem(.att, "added to the copy")
        XCTAssertEqual(copy.problems.map(\.code), [.linkHeader, .att])
        XCTAssertEqual(d.problems.map(\.code), [.linkHeader])
        XCTAssertTrue(d.hasProblems && d.isMalformed)

        let clean = Dissector().dissect(packet(.unsupported(linkType: 0)))
        XCTAssertFalse(clean.hasProblems)
        XCTAssertTrue(clean.problems.isEmpty && clean.lostConnections.isEmpty)
        XCTAssertNil(clean.keyNote)
        XCTAssertFalse(clean.isMalformed)
    }
}

/// A value that does not decode as its characteristic's format marks the frame malformed, whether
/// it was judged as it was notified or read back from the result (a read response).
final class ValueFaultTests: XCTestCase {
    /// LE Connection Complete, this host central, handle 0x0040.
    static let connected: [UInt8] = [0x3E, 19, 0x01, 0x00, 0x40, 0x00, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 24, 0, 0, 0, 200, 0, 0]

    /// An ATT PDU on handle 0x0040's fixed channel, in one ACL packet.
    static func acl(_ att: [UInt8]) -> [UInt8] {
        let l2cap = [UInt8(att.count), 0, 0x04, 0x00] + att
        return [0x40, 0x20, UInt8(l2cap.count), 0] + l2cap
    }

    func testHeartRateValuesThatDoNotDecodeAreMalformed() {
        let dissector = Dissector()
        var number = 0
        func frame(_ direction: Direction, _ type: HCIPacketType, _ bytes: [UInt8]) -> Decoded {
            number += 1
            return dissector.dissect(Packet(number: number, timestamp: Int64(number) * 1_000_000, direction: direction,
                                            adapter: 0, kind: .hci(type), payload: ArraySlice(bytes)))
        }
        _ = frame(.received, .event, Self.connected)
        // Characteristic discovery: Heart Rate Measurement (0x2A37) at value handle 0x0003, notify.
        _ = frame(.sent, .aclData, Self.acl([0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28]))
        _ = frame(.received, .aclData, Self.acl([0x09, 7, 0x02, 0x00, 0x10, 0x03, 0x00, 0x37, 0x2A]))
        // Flags 0 (8-bit rate) then 72 bpm; flags 1 (16-bit rate) with one octet; no rate at all.
        XCTAssertFalse(frame(.received, .aclData, Self.acl([0x1B, 0x03, 0x00, 0x00, 72])).isMalformed)
        XCTAssertTrue(frame(.received, .aclData, Self.acl([0x1B, 0x03, 0x00, 0x01, 72])).isMalformed)
        XCTAssertTrue(frame(.received, .aclData, Self.acl([0x1B, 0x03, 0x00, 0x00])).isMalformed)
        // The same value read: the result's entries are judged when asked.
        _ = frame(.sent, .aclData, Self.acl([0x0A, 0x03, 0x00]))
        XCTAssertTrue(frame(.received, .aclData, Self.acl([0x0B, 0x01, 72])).isMalformed)
        _ = frame(.sent, .aclData, Self.acl([0x0A, 0x03, 0x00]))
        XCTAssertFalse(frame(.received, .aclData, Self.acl([0x0B, 0x00, 72])).isMalformed)
    }
}

final class L2CAPTests: XCTestCase {
    func testSinglePacketNeedsNoCopy() {
        var r = L2CAPReassembler()
        let data: [UInt8] = [0x03, 0x00, 0x04, 0x00, 0x0A, 0x03, 0x00]
        guard case .frame(let f, let payload) = r.add(data[...], start: true, frame: 1).0 else { return XCTFail() }
        XCTAssertEqual(f.cid, 4)
        XCTAssertEqual(f.captured, 3)
        XCTAssertEqual(Array(payload), [0x0A, 0x03, 0x00])
        XCTAssertTrue(f.fragments.isEmpty)
    }

    func testFragmentsReassembleAndRememberTheirFrames() {
        var r = L2CAPReassembler()
        let first: [UInt8] = [0x05, 0x00, 0x04, 0x00, 0x1B]
        let second: [UInt8] = [0x12, 0x00, 0x48]
        let third: [UInt8] = [0x49]
        guard case .pending(3 + 2, 9) = r.add(first[...], start: true, frame: 7).0 else { return XCTFail() }
        guard case .pending(8, 9) = r.add(second[...], start: false, frame: 8).0 else { return XCTFail() }
        guard case .frame(let f, let payload) = r.add(third[...], start: false, frame: 10).0 else { return XCTFail() }
        XCTAssertEqual(Array(payload), [0x1B, 0x12, 0x00, 0x48, 0x49])
        XCTAssertEqual(f.captured, 5)
        XCTAssertEqual(f.fragments, [7, 8, 10])
    }

    /// A connection ended with a PDU half reassembled; the next one on its handle reuses its
    /// buffers but none of its state: a continuation has no start to join, a start drops nothing,
    /// and a reassembled PDU lists only its own frames.
    func testANewConnectionInheritsNoPendingPDU() {
        let dissector = Dissector()
        var number = 0
        func frame(_ kind: HCIPacketType, _ bytes: [UInt8]) -> Decoded {
            number += 1
            return dissector.dissect(Packet(number: number, timestamp: Int64(number) * 1_000_000, direction: .received,
                                            adapter: 0, kind: .hci(kind), payload: Bytes(bytes)))
        }
        func start(_ l2cap: [UInt8]) -> Decoded { frame(.aclData, [0x40, 0x20, UInt8(l2cap.count), 0] + l2cap) }
        func continuation(_ l2cap: [UInt8]) -> Decoded { frame(.aclData, [0x40, 0x10, UInt8(l2cap.count), 0] + l2cap) }
        func disconnect() { _ = frame(.event, [0x05, 0x04, 0x00, 0x40, 0x00, 0x13]) }

        // Ten octets of ATT announced, three sent.
        XCTAssertNotNil(start([0x0A, 0x00, 0x04, 0x00, 0x1B, 0x10, 0x00]).fragment)
        disconnect()
        XCTAssertEqual(continuation([1, 2, 3, 4, 5, 6, 7]).problems.map(\.reason), ["continuation fragment without a start"])
        XCTAssertNotNil(start([0x0A, 0x00, 0x04, 0x00, 0x1B, 0x10, 0x00]).fragment)
        disconnect()
        let first = start([0x05, 0x00, 0x04, 0x00, 0x1B, 0x10, 0x00])
        XCTAssertTrue(first.problems.isEmpty, "\(first.problems)")
        let whole = continuation([0x0A, 0x0B])
        XCTAssertTrue(whole.problems.isEmpty, "\(whole.problems)")
        XCTAssertEqual(whole.l2cap?.fragments, [number - 1, number])
        XCTAssertEqual(whole.l2cap?.captured, 5)
        guard case .att(let r, _)? = whole.upper else { return XCTFail("no ATT PDU") }
        XCTAssertEqual(Array(r.pdu.bytes), [0x1B, 0x10, 0x00, 0x0A, 0x0B])
    }

    func testContinuationWithoutStartIsReportedNotMerged() {
        var r = L2CAPReassembler()
        guard case .malformed(_, let dropped) = r.add([1, 2][...], start: false, frame: 3).0 else { return XCTFail() }
        XCTAssertEqual(dropped, [3])
        XCTAssertFalse(r.isPending)
    }

    func testNewStartDropsIncompletePDU() {
        var r = L2CAPReassembler()
        _ = r.add([0x10, 0x00, 0x04, 0x00, 1][...], start: true, frame: 1)
        let (res, dropped) = r.add([0x01, 0x00, 0x04, 0x00, 0x1E][...], start: true, frame: 2)
        guard case .malformed(_, let frames)? = dropped else { return XCTFail() }
        XCTAssertEqual(frames, [1])
        guard case .frame(_, let payload) = res else { return XCTFail() }
        XCTAssertEqual(Array(payload), [0x1E])
    }

    func testLyingLengthsNeverMerge() {
        var r = L2CAPReassembler()
        _ = r.add([0x02, 0x00, 0x04, 0x00, 1][...], start: true, frame: 1)
        guard case .malformed = r.add([2, 3, 4][...], start: false, frame: 2).0 else { return XCTFail() }
        XCTAssertFalse(r.isPending)
        guard case .malformed = r.add([0x00, 0x00, 0x04, 0x00, 9][...], start: true, frame: 3).0 else { return XCTFail() }
    }

    func testStartShorterThanLengthField() {
        var r = L2CAPReassembler()
        guard case .pending = r.add([0x03][...], start: true, frame: 1).0 else { return XCTFail() }
        guard case .frame(let f, let payload) = r.add([0x00, 0x04, 0x00, 1, 2, 3][...], start: false, frame: 2).0 else { return XCTFail() }
        XCTAssertEqual(f.cid, 4)
        XCTAssertEqual(Array(payload), [1, 2, 3])
    }
}
