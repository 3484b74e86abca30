import XCTest
@testable import Decoders
import Wire

/// Byte vectors are HCI payloads (after the H4 type byte) taken from the real captures in
/// `../shared/captures` with `tshark -x`; the file and frame are cited at each one. Expected values
/// were cross-checked with `tshark -V` on the same frames.
final class HCITests: XCTestCase {
    // MARK: helpers

    private func bytes(_ hex: String) -> Bytes {
        var out: [UInt8] = []
        var it = hex.filter { !$0.isWhitespace }.makeIterator()
        while let a = it.next(), let b = it.next() { out.append(UInt8(String([a, b]), radix: 16)!) }
        // Offset the slice so that code relying on 0-based indices would fail.
        return ([0xEE, 0xEE] + out)[2...]
    }

    /// First field with `label`, searching depth first.
    private func find(_ fields: [Field], _ label: String) -> Field? {
        for f in fields {
            if f.label.string == label { return f }
            if let c = find(f.children, label) { return c }
        }
        return nil
    }

    private func named(_ fields: [Field], _ label: String, file: StaticString = #filePath, line: UInt = #line) -> (UInt64, String)? {
        guard let f = find(fields, label) else { XCTFail("no field \(label)", file: file, line: line); return nil }
        guard case .named(let v, _, let n, _) = f.value else { XCTFail("\(label) is \(f.value)", file: file, line: line); return nil }
        return (v, n.string)
    }

    private func quantity(_ fields: [Field], _ label: String, file: StaticString = #filePath, line: UInt = #line) -> (UInt64, Double, String)? {
        guard let f = find(fields, label) else { XCTFail("no field \(label)", file: file, line: line); return nil }
        guard case .quantity(let raw, _, let v, let unit) = f.value else { XCTFail("\(label) is \(f.value)", file: file, line: line); return nil }
        return (raw, v, unit)
    }

    private func uint(_ fields: [Field], _ label: String, file: StaticString = #filePath, line: UInt = #line) -> UInt64? {
        guard let f = find(fields, label) else { XCTFail("no field \(label)", file: file, line: line); return nil }
        guard case .uint(let v, _) = f.value else { XCTFail("\(label) is \(f.value)", file: file, line: line); return nil }
        return v
    }

    private func address(_ fields: [Field], _ label: String) -> String? {
        guard let f = find(fields, label), case .address(let a) = f.value else { return nil }
        return a.description
    }

    private func isMalformed(_ fields: [Field]) -> Bool { find(fields, "Malformed") != nil }

    /// Splits a command packet into opcode and parameters and decodes it.
    private func command(_ hex: String) -> (UInt16, [Field]) {
        let b = bytes(hex)
        let op = b.le16(0)!
        XCTAssertEqual(Int(b.byte(2)!), b.count - 3, "parameter length")
        return (op, HCICommands.parameters(opcode: op, b.from(3)))
    }

    private func event(_ hex: String) -> (UInt8, [Field]) {
        let b = bytes(hex)
        let code = b.byte(0)!
        XCTAssertEqual(Int(b.byte(1)!), b.count - 2, "parameter length")
        return (code, HCIEvents.parameters(code: code, b.from(2)))
    }

    // MARK: names

    func testCommandNames() {
        XCTAssertEqual(HCICommands.name(0x200C), "LE Set Scan Enable")
        XCTAssertEqual(HCICommands.name(0x0C03), "Reset")
        XCTAssertEqual(HCICommands.name(0x0406), "Disconnect")
        XCTAssertEqual(HCICommands.name(0x1009), "Read BD_ADDR")
        XCTAssertEqual(HCICommands.name(0x2043), "LE Extended Create Connection")
        XCTAssertEqual(HCICommands.name(0x2085), "LE Extended Create Connection [v2]")
        XCTAssertEqual(HCICommands.name(0xFD57), "Vendor Command (OCF 0x0157)")
        XCTAssertEqual(HCICommands.name(0x20FF), "Unknown Command (0x20FF)")
        XCTAssertEqual(HCICommands.name(0x0000), "No Operation")
        XCTAssertEqual(HCICommands.ogf(0x2041), 0x08)
        XCTAssertEqual(HCICommands.ocf(0x2041), 0x041)
        XCTAssertTrue(HCICommands.isKnown(0x2041))
        XCTAssertFalse(HCICommands.isKnown(0xFC01))
    }

    func testEventAndErrorNames() {
        XCTAssertEqual(HCIEvents.name(0x0E), "Command Complete")
        XCTAssertEqual(HCIEvents.name(0x3E), "LE Meta")
        XCTAssertEqual(HCIEvents.name(0xFF), "Vendor")
        XCTAssertEqual(HCIEvents.name(0x05), "Disconnection Complete")
        XCTAssertEqual(HCIEvents.name(0x59), "Encryption Change [v2]")
        XCTAssertEqual(HCIEvents.name(0x24), "Unknown Event (0x24)")
        XCTAssertEqual(HCIEvents.leSubeventName(0x01), "LE Connection Complete")
        XCTAssertEqual(HCIEvents.leSubeventName(0x14), "LE Channel Selection Algorithm")
        XCTAssertEqual(HCIEvents.leSubeventName(0x22), "LE BIGInfo Advertising Report")
        XCTAssertEqual(HCIEvents.leSubeventName(0xF0), "Unknown LE Subevent (0xF0)")
        XCTAssertEqual(HCIErrors.name(0x00), "Success")
        XCTAssertEqual(HCIErrors.name(0x13), "Remote User Terminated Connection")
        XCTAssertEqual(HCIErrors.name(0x3E), "Connection Failed to be Established / Synchronization Timeout")
        XCTAssertEqual(HCIErrors.name(0x45), "Packet Too Long")
        XCTAssertEqual(HCIErrors.name(0x99), "Unknown Error (0x99)")
    }

    /// A summary line copies a known name as its literal and spells an unknown one: the same text
    /// as the String every field holds, for every code.
    func testNamesWrittenIntoALineAreTheNames() {
        func written(_ body: (inout TextLine) -> Void) -> String { TextLine.make(body) }
        for code in UInt8.min...UInt8.max {
            XCTAssertEqual(written { HCIEvents.writeName(code, to: &$0) }, HCIEvents.name(code))
            XCTAssertEqual(written { HCIEvents.writeLESubeventName(code, to: &$0) }, HCIEvents.leSubeventName(code))
            XCTAssertEqual(written { HCIErrors.writeName(code, to: &$0) }, HCIErrors.name(code))
            XCTAssertEqual(written { ATTOpcode(code).writeName(to: &$0) }, ATTOpcode(code).name)
        }
        var opcodes = HCICommands.table.map(\.opcode)
        opcodes += [0x0000, 0x03FF, 0x2FFF, 0xFC01, 0xFFFF]
        for op in opcodes {
            XCTAssertEqual(written { HCICommands.writeName(op, to: &$0) }, HCICommands.name(op))
        }
    }

    /// Every opcode in the table appears once, lies in a defined OGF and names back to its entry.
    func testCommandTableRoundTrips() {
        var seen = Set<UInt16>()
        var names = Set<String>()
        for e in HCICommands.table {
            let name = e.name.description
            XCTAssertTrue(seen.insert(e.opcode).inserted, "duplicate opcode \(Hex.prefixed(e.opcode, width: 4))")
            XCTAssertTrue(names.insert(name).inserted, "duplicate name \(name)")
            XCTAssertTrue([0, 1, 2, 3, 4, 5, 6, 8].contains(HCICommands.ogf(e.opcode)), name)
            XCTAssertEqual(HCICommands.ogf(e.opcode) << 10 | HCICommands.ocf(e.opcode), e.opcode)
            XCTAssertEqual(HCICommands.name(e.opcode), name)
            XCTAssertTrue(HCICommands.isKnown(e.opcode))
            // LE commands, and only they, carry the "LE " prefix.
            XCTAssertEqual(HCICommands.ogf(e.opcode) == 8, name.hasPrefix("LE "), name)
        }
        XCTAssertGreaterThan(seen.count, 300)
        var codes = Set<UInt8>()
        for e in HCIEvents.events {
            XCTAssertTrue(codes.insert(e.code).inserted)
            XCTAssertEqual(HCIEvents.name(e.code), e.name.description)
        }
        var subs = Set<UInt8>()
        for e in HCIEvents.subevents {
            XCTAssertTrue(subs.insert(e.code).inserted)
            XCTAssertEqual(HCIEvents.leSubeventName(e.code), e.name.description)
            XCTAssertTrue(e.name.description.hasPrefix("LE "))
        }
        for sub in 1...0x29 { XCTAssertTrue(HCIEvents.isKnownLESubevent(UInt8(sub)), "subevent \(sub)") }
    }

    func testEventMaskBitsFollowEventCodes() {
        XCTAssertEqual(HCIEvents.eventMaskBits[0], "Inquiry Complete")
        XCTAssertEqual(HCIEvents.eventMaskBits[4], "Disconnection Complete")
        XCTAssertEqual(HCIEvents.eventMaskBits[47], "Encryption Key Refresh Complete")
        XCTAssertEqual(HCIEvents.eventMaskBits[61], "LE Meta")
        XCTAssertEqual(HCIEvents.eventMaskPage2Bits[23], "Authenticated Payload Timeout Expired")
        XCTAssertEqual(HCIEvents.leEventMaskBits[0], "LE Connection Complete")
        XCTAssertEqual(HCIEvents.leEventMaskBits[19], "LE Channel Selection Algorithm")
    }

    // MARK: commands

    /// blesecpoc__hci_capture_20260306_121058.snoop frame 10.
    /// The link facts `links` and `diff` follow: LE Data Length Change (§7.7.65.7), LE PHY Update
    /// Complete (§7.7.65.12) and Number Of Completed Packets (§7.7.19), with a list cut short.
    func testLinkEventViews() {
        guard case .leDataLengthChange(let dl)? = HCIEvent(code: 0x3E, bytes("07 4020 FB00 4808 1B00 4801")) else { return XCTFail() }
        XCTAssertEqual([dl.connectionHandle, dl.maxTxOctets, dl.maxTxTime, dl.maxRxOctets, dl.maxRxTime], [0x040, 251, 2120, 27, 328])
        guard case .lePHYUpdateComplete(let phy)? = HCIEvent(code: 0x3E, bytes("0C 00 4020 02 03")) else { return XCTFail() }
        XCTAssertEqual([phy.status, phy.txPHY, phy.rxPHY], [0, 2, 3])
        XCTAssertEqual(phy.connectionHandle, 0x040)
        XCTAssertNil(HCIEvent(code: 0x3E, bytes("0C 00 4020 02")), "too short for the view")
        var completed: [[UInt16]] = []
        NumberOfCompletedPackets(code: 0x13, bytes("02 4020 0300 4100"))?.forEach { completed.append([$0, $1]) }
        XCTAssertEqual(completed, [[0x040, 3]], "the second entry is cut short")
        XCTAssertNil(NumberOfCompletedPackets(code: 0x0E, bytes("01")))
    }

    func testLESetScanParameters() {
        let (op, f) = command("0b2007 01 1200 1200 01 00")
        XCTAssertEqual(HCICommands.name(op), "LE Set Scan Parameters")
        XCTAssertEqual(named(f, "LE Scan Type")?.1, "Active")
        XCTAssertEqual(quantity(f, "LE Scan Interval")?.0, 0x12)
        XCTAssertEqual(quantity(f, "LE Scan Interval")?.1, 11.25)
        XCTAssertEqual(quantity(f, "LE Scan Window")?.2, "ms")
        XCTAssertEqual(named(f, "Own Address Type")?.1, "Random Device Address")
        XCTAssertEqual(named(f, "Scanning Filter Policy")?.0, 0)
        XCTAssertFalse(isMalformed(f))
        XCTAssertEqual(f.count, 5)
    }

    func testScanIntervalUnits() {
        let (_, f) = command("0b2007 00 1000 1000 00 00")
        XCTAssertEqual(quantity(f, "LE Scan Interval")?.1, 10)
        XCTAssertEqual(named(f, "LE Scan Type")?.1, "Passive")
    }

    /// btmouse__btsnoop_hci.log frame 374: three initiating PHYs.
    func testExtendedCreateConnectionThreePHYs() {
        let (op, f) = command("""
            43203a 01 00 00 000000000000 07
            6000 3000 1800 2800 0000 f401 0000 0000
            6000 1800 1800 2800 0000 f401 0000 0000
            6000 1800 1800 2800 0000 f401 0000 0000
            """)
        XCTAssertEqual(HCICommands.name(op), "LE Extended Create Connection")
        XCTAssertEqual(named(f, "Initiator Filter Policy")?.1, "Use Filter Accept List")
        guard let phys = find(f, "Initiating PHYs"), case .flags(let v, _, let names) = phys.value else { return XCTFail() }
        XCTAssertEqual(v, 7)
        XCTAssertEqual(names, ["LE 1M", "LE 2M", "LE Coded"])
        let coded = f.first { $0.label == "LE Coded" }
        XCTAssertNotNil(coded)
        XCTAssertEqual(quantity(coded?.children ?? [], "Scan Window")?.1, 15)
        XCTAssertEqual(quantity(f, "Connection Interval Min")?.1, 30)     // 0x18 × 1.25 ms
        XCTAssertEqual(quantity(f, "Supervision Timeout")?.1, 5000)       // 0x1f4 × 10 ms
        XCTAssertFalse(isMalformed(f))
    }

    /// Two PHYs (1M and Coded) built by hand from the layout above.
    func testExtendedCreateConnectionTwoPHYs() {
        let (_, f) = command("""
            43202a 00 01 01 c0a1b2c3d4e5 05
            6000 3000 1800 2800 0000 f401 0000 0000
            6000 6000 1800 2800 0000 f401 0000 0000
            """)
        XCTAssertEqual(address(f, "Peer Address"), "E5:D4:C3:B2:A1:C0".lowercased())
        XCTAssertEqual(named(f, "Peer Address Type")?.1, "Random Device Address")
        XCTAssertEqual(f.filter { $0.label == "LE 1M" || $0.label == "LE Coded" }.count, 2)
        XCTAssertFalse(isMalformed(f))
    }

    /// mabip__btsnoop_hci.log frame 55: Scanning PHYs says LE 1M but the parameters stop there.
    func testTruncatedExtendedScanParametersIsMalformed() {
        let (op, f) = command("412003 01 00 01")
        XCTAssertEqual(op, 0x2041)
        XCTAssertEqual(named(f, "Own Address Type")?.1, "Random Device Address")
        XCTAssertTrue(isMalformed(f))
        XCTAssertNotNil(f.first { $0.label == "LE 1M" }, "the partial group is kept")
    }

    /// btmouse__btsnoop_hci.log frame 132.
    func testExtendedScanParameters() {
        let (_, f) = command("412008 01 00 01 01 c012 c012")
        XCTAssertEqual(named(f, "Scan Type")?.1, "Active")
        XCTAssertEqual(quantity(f, "Scan Interval")?.1, 3000)
        XCTAssertFalse(isMalformed(f))
    }

    func testDisconnectAndExtraBytes() {
        let (op, f) = command("060403 4000 13")
        XCTAssertEqual(HCICommands.name(op), "Disconnect")
        XCTAssertEqual(uint(f, "Connection Handle"), 0x40)
        XCTAssertEqual(named(f, "Reason")?.1, "Remote User Terminated Connection")
        let extra = HCICommands.parameters(opcode: 0x0406, bytes("4000 13 aabb"))
        XCTAssertNotNil(find(extra, "Unexpected Data"))
        XCTAssertTrue(isMalformed(extra))
    }

    func testSetEventMaskFlags() {
        let f = HCICommands.parameters(opcode: 0x0C01, bytes("ffffffffffff3f20"))
        guard let m = find(f, "Event Mask"), case .flags(let v, let hex, let names) = m.value else { return XCTFail() }
        XCTAssertEqual(v, 0x203F_FFFF_FFFF_FFFF)
        XCTAssertEqual(hex, 16)
        XCTAssertTrue(names.contains("Disconnection Complete"))
        XCTAssertTrue(names.contains("LE Meta"))
        let le = HCICommands.parameters(opcode: 0x2001, bytes("1f00000000000000"))
        guard case .flags(_, _, let leNames)? = find(le, "LE Event Mask")?.value else { return XCTFail() }
        XCTAssertEqual(leNames, ["LE Connection Complete", "LE Advertising Report", "LE Connection Update Complete",
                                 "LE Read Remote Features Complete", "LE Long Term Key Request"])
    }

    func testAdvertisingDataCommands() {
        // Legacy: one length octet, then 31 octets of which the first `length` are significant.
        let legacy = HCICommands.parameters(opcode: 0x2008, bytes("03 020106" + String(repeating: "00", count: 28)))
        XCTAssertEqual(uint(legacy, "Advertising Data Length"), 3)
        guard case .bytes(let d)? = find(legacy, "Advertising Data")?.value else { return XCTFail() }
        XCTAssertEqual(Array(d), [2, 1, 6])
        XCTAssertFalse(isMalformed(legacy))
        XCTAssertTrue(isMalformed(HCICommands.parameters(opcode: 0x2008, bytes("03 020106"))), "31 octets required")
        let ext = HCICommands.parameters(opcode: 0x2037, bytes("01 03 01 03 020106"))
        XCTAssertEqual(named(ext, "Operation")?.1, "Complete data")
        XCTAssertEqual(named(ext, "Fragment Preference")?.1, "Controller should not fragment")
        XCTAssertFalse(isMalformed(ext))
        let short = HCICommands.parameters(opcode: 0x2037, bytes("01 03 01 05 0201"))
        XCTAssertTrue(isMalformed(short))
        guard case .bytes(let partial)? = find(short, "Advertising Data")?.value else { return XCTFail() }
        XCTAssertEqual(Array(partial), [2, 1], "what is there is shown")
    }

    func testExtendedAdvertisingEnableArray() {
        let f = HCICommands.parameters(opcode: 0x2039, bytes("01 02 00 0000 00 01 6400 05"))
        XCTAssertEqual(uint(f, "Num Sets"), 2)
        let sets = f.filter { $0.label == "Advertising Set" }
        XCTAssertEqual(sets.count, 2)
        XCTAssertEqual(quantity(sets[1].children, "Duration")?.1, 1000)
        XCTAssertFalse(isMalformed(f))
    }

    func testExtendedAdvertisingParameters() {
        let f = HCICommands.parameters(opcode: 0x2036, bytes("00 1300 a00000 a00000 07 01 00 000000000000 00 7f 01 00 01 00 00"))
        guard case .flags(_, _, let props)? = find(f, "Advertising Event Properties")?.value else { return XCTFail() }
        XCTAssertEqual(props, ["Connectable", "Scannable", "Use legacy advertising PDUs"])
        XCTAssertEqual(quantity(f, "Primary Advertising Interval Min")?.1, 100)
        XCTAssertEqual(named(f, "Advertising TX Power")?.1, "Not available")
        XCTAssertEqual(named(f, "Primary Advertising PHY")?.1, "LE 1M")
        XCTAssertFalse(isMalformed(f))
    }

    func testSetEventFilterShapes() {
        XCTAssertEqual(HCICommands.parameters(opcode: 0x0C05, bytes("00")).count, 1)
        let f = HCICommands.parameters(opcode: 0x0C05, bytes("02 02 112233445566 02"))
        XCTAssertEqual(address(f, "BD_ADDR"), "66:55:44:33:22:11")
        XCTAssertEqual(named(f, "Auto Accept Flag")?.1, "Auto-accept, role switch disabled")
        XCTAssertFalse(isMalformed(f))
    }

    /// bk300__btsnoop_hci.log.last frame 80: the last structure (length 0x81) is mostly zeros, which
    /// are its data, not padding; the significant part ends at the first zero length octet.
    func testExtendedInquiryResponseSignificantPart() {
        let eir = "0f09504f434f2058342050726f203547 0103 0105 8107" + String(repeating: "00", count: 128 + 90)
        let f = HCICommands.parameters(opcode: 0x0C52, bytes("01" + eir))
        guard case .bytes(let d)? = find(f, "Extended Inquiry Response")?.value else { return XCTFail() }
        XCTAssertEqual(d.count, 150)
        XCTAssertFalse(isMalformed(f))
        // A structure running past the end keeps everything that is there.
        let cut = HCICommands.parameters(opcode: 0x0C52, bytes("01 0509414243"))
        guard case .bytes(let c)? = find(cut, "Extended Inquiry Response")?.value else { return XCTFail() }
        XCTAssertEqual(c.count, 5)
    }

    func testWriteLocalName() {
        let name = Array("blesniff".utf8).map { Hex.padded($0, width: 2) }.joined()
        let f = HCICommands.parameters(opcode: 0x0C13, bytes(name + String(repeating: "00", count: 240)))
        guard case .received(let s)? = find(f, "Local Name")?.value else { return XCTFail() }
        XCTAssertEqual(String(decoding: s, as: UTF8.self), "blesniff")
        XCTAssertFalse(isMalformed(f))
    }

    /// bk300__btsnoop_hci.log.last frame 17: btmon lists 237 supported commands for this mask,
    /// including the reserved octet 25 bit 3 and octet 29 bits 1 and 2.
    func testReadLocalSupportedCommands() {
        let (_, f) = event("0e44 01 0210 00 ffffff03ceffefffffffff7ff20fe8fe3ff783ff1c00040061ffffff7ffe20f5fff0ffffffffff07000800000000000000000000000000000000000000000000")
        guard let sc = find(f, "Supported Commands") else { return XCTFail() }
        XCTAssertEqual(sc.children.count, 237)
        let names = sc.children.compactMap { c -> String? in if case .named(_, _, let n, _) = c.value { return n.string } else { return nil } }
        XCTAssertEqual(names.first, "Inquiry")
        XCTAssertTrue(names.contains("LE Set Extended Advertising Parameters"))
        XCTAssertTrue(names.contains("Read Local Version Information"))
        XCTAssertEqual(sc.children.filter { if case .text = $0.value { return true } else { return false } }.count, 3)
        XCTAssertFalse(isMalformed(f))
    }

    /// Supported-commands bits name commands of the table, each at most once.
    func testSupportedCommandBitsAreKnownOpcodes() {
        let ops = HCICommands.supportedCommandBits.filter { $0 != 0 }
        XCTAssertEqual(Set(ops).count, ops.count)
        for op in ops { XCTAssertTrue(HCICommands.isKnown(op), Hex.prefixed(op, width: 4)) }
        XCTAssertEqual(HCICommands.supportedCommandBits[14 * 8 + 4], 0x1002)
        XCTAssertEqual(HCICommands.supportedCommandBits[37 * 8 + 7], 0x2043)
    }

    /// bk300__btsnoop_hci.log.last frame 68 (Write Class of Device) and frame 19 (page 0 features).
    func testClassOfDeviceAndExtendedFeatures() {
        let f = HCICommands.parameters(opcode: 0x0C24, bytes("0c025a"))
        guard let cod = find(f, "Class of Device") else { return XCTFail() }
        XCTAssertEqual(uint(f, "Class of Device"), 0x5A020C)
        XCTAssertEqual(named(cod.children, "Major Device Class")?.1, "Phone")
        XCTAssertEqual(uint(cod.children, "Minor Device Class"), 3)
        guard case .flags(_, _, let services)? = find(cod.children, "Major Service Classes")?.value else { return XCTFail() }
        XCTAssertEqual(services, ["Networking", "Capturing", "Object Transfer", "Telephony"])
        let page1 = HCICommands.returnParameters(opcode: 0x1004, bytes("00 01 02 0b00000000000000"))
        guard case .flags(_, _, let names)? = find(page1, "Extended LMP Features")?.value else { return XCTFail() }
        XCTAssertEqual(names, ["Secure Simple Pairing (Host Support)", "LE Supported (Host)", "Secure Connections (Host Support)"])
    }

    /// fossibot__btsnoop_hci.log frames 53 and 72.
    func testHostFeatureAndChannelSoundingCapabilities() {
        let host = HCICommands.parameters(opcode: 0x2074, bytes("20 01"))
        XCTAssertEqual(named(host, "Bit Number")?.1, "Connected Isochronous Stream (Host Support)")
        let (_, cs) = event("0e20 01 8920 00 04 0000 02 04 03 01 07 04 04 04 0000 0000 06 0e00 7e00 7e00 c001 0300 02 1f")
        XCTAssertEqual(named(cs, "Command Opcode")?.1, "LE CS Read Local Supported Capabilities")
        XCTAssertEqual(uint(cs, "Num Config Supported"), 4)
        guard case .flags(_, _, let roles)? = find(cs, "Roles Supported")?.value else { return XCTFail() }
        XCTAssertEqual(roles, ["Initiator", "Reflector"])
        XCTAssertFalse(isMalformed(cs))
    }

    // MARK: events

    /// btmouse__btsnoop_hci.log frame 52: Command Complete for Read BD_ADDR.
    func testCommandCompleteReadBDADDR() {
        let (code, f) = event("0e0a 01 0910 00 50da85f9a264")
        XCTAssertEqual(HCIEvents.name(code), "Command Complete")
        XCTAssertEqual(uint(f, "Num HCI Command Packets"), 1)
        XCTAssertEqual(named(f, "Command Opcode")?.0, 0x1009)
        XCTAssertEqual(named(f, "Command Opcode")?.1, "Read BD_ADDR")
        XCTAssertEqual(named(f, "Status")?.1, "Success")
        XCTAssertEqual(address(f, "BD_ADDR"), "64:a2:f9:85:da:50")
        XCTAssertFalse(isMalformed(f))
    }

    /// btmouse__btsnoop_hci.log frame 10: Read Local Version Information (tshark: HCI 5.0 (0x09),
    /// Qualcomm (0x001d), LMP subversion 0x02be).
    func testCommandCompleteLocalVersion() {
        let (_, f) = event("0e0c 01 0110 00 09 0000 09 1d00 be02")
        XCTAssertEqual(named(f, "HCI Version")?.1, "Bluetooth Core Specification 5.0")
        XCTAssertEqual(named(f, "Company Identifier")?.0, 0x1D)
        XCTAssertEqual(uint(f, "LMP Subversion"), 0x02BE)
        XCTAssertFalse(isMalformed(f))
    }

    func testCommandCompleteStatusOnlyFailure() {
        let (_, f) = event("0e04 01 0910 0c")
        XCTAssertEqual(named(f, "Status")?.1, "Command Disallowed")
        XCTAssertFalse(isMalformed(f))
        let vendor = HCIEvents.parameters(code: 0x0E, bytes("01 57fd 00 0102"))
        XCTAssertEqual(named(vendor, "Command Opcode")?.1, "Vendor Command (OCF 0x0157)")
        XCTAssertNotNil(find(vendor, "Return Parameters"))
    }

    func testCommandStatus() {
        let (_, f) = event("0f04 00 01 4320")
        XCTAssertEqual(named(f, "Status")?.1, "Success")
        XCTAssertEqual(named(f, "Command Opcode")?.1, "LE Extended Create Connection")
        XCTAssertFalse(isMalformed(f))
    }

    /// blesecpoc__hci_capture_20260306_121058.snoop frame 170.
    func testDisconnectionComplete() {
        let (code, f) = event("0504 00 4000 16")
        XCTAssertEqual(HCIEvents.name(code), "Disconnection Complete")
        XCTAssertEqual(named(f, "Status")?.0, 0)
        XCTAssertEqual(uint(f, "Connection Handle"), 0x40)
        XCTAssertEqual(named(f, "Reason")?.1, "Connection Terminated By Local Host")
    }

    /// blesecpoc__hci_capture_20260306_121058.snoop frame 125.
    func testLEConnectionComplete() {
        let (_, f) = event("3e13 01 00 4000 00 00 b24dacae3d98 2700 0000 2a00 05")
        XCTAssertEqual(named(f, "Subevent Code")?.1, "LE Connection Complete")
        XCTAssertEqual(named(f, "Status")?.1, "Success")
        XCTAssertEqual(uint(f, "Connection Handle"), 0x40)
        XCTAssertEqual(named(f, "Role")?.1, "Central")
        XCTAssertEqual(named(f, "Peer Address Type")?.1, "Public Device Address")
        XCTAssertEqual(address(f, "Peer Address"), "98:3d:ae:ac:4d:b2")
        XCTAssertEqual(quantity(f, "Connection Interval")?.1, 48.75)
        XCTAssertEqual(uint(f, "Peripheral Latency"), 0)
        XCTAssertEqual(quantity(f, "Supervision Timeout")?.1, 420)
        XCTAssertEqual(named(f, "Central Clock Accuracy")?.1, "50 ppm")
        XCTAssertFalse(isMalformed(f))
    }

    /// btmouse__btsnoop_hci.log frame 376.
    func testLEEnhancedConnectionComplete() {
        let (_, f) = event("3e1f 0a 00 0200 00 00 0d895ba12628 000000000000 000000000000 2400 0000 f401 00")
        XCTAssertEqual(named(f, "Subevent Code")?.1, "LE Enhanced Connection Complete")
        XCTAssertEqual(address(f, "Peer Address"), "28:26:a1:5b:89:0d")
        XCTAssertEqual(quantity(f, "Connection Interval")?.1, 45)
        XCTAssertEqual(quantity(f, "Supervision Timeout")?.1, 5000)
        XCTAssertEqual(named(f, "Central Clock Accuracy")?.1, "500 ppm")
        XCTAssertFalse(isMalformed(f))
    }

    /// btpcaptest__bluetooth.pcap frame 1 (tshark: legacy ADV_IND from d0:04:b0:9a:26:9e, RSSI -63 dBm).
    /// Only this file's own header decode is checked when no advertising report decoder claims it.
    func testExtendedAdvertisingReportHeader() throws {
        let (_, f) = event("3e39 0d 01 1300 02 9e269ab004d0 01 00 ff 7f c1 0000 00 000000000000 1f 0201021bff7500021861a1b2e8b4d0e379d73c66f7e9eebb3ad5a7c9c25628")
        XCTAssertEqual(named(f, "Subevent Code")?.1, "LE Extended Advertising Report")
        try XCTSkipIf(AdvertisingReports.fields(subevent: 0x0D, bytes("00")) != nil, "decoded by the advertising report decoder")
        guard case .flags(_, _, let type)? = find(f, "Event Type")?.value else { return XCTFail() }
        XCTAssertEqual(type, ["Connectable", "Scannable", "Legacy PDU"])
        XCTAssertEqual(named(f, "Address Type")?.1, "Public Identity Address")
        XCTAssertEqual(address(f, "Address"), "d0:04:b0:9a:26:9e")
        XCTAssertEqual(named(f, "TX Power")?.1, "Not available")
        guard case .signed(let rssi, _)? = find(f, "RSSI")?.value else { return XCTFail() }
        XCTAssertEqual(rssi, -63)
        XCTAssertEqual(uint(f, "Data Length"), 31)
        XCTAssertFalse(isMalformed(f))
    }

    func testNumberOfCompletedPackets() {
        let (_, f) = event("130902 0200 0100 4000 0300")
        let handles = f.filter { $0.label == "Handle" }
        XCTAssertEqual(handles.count, 2)
        XCTAssertEqual(uint(handles[1].children, "Connection Handle"), 0x40)
        XCTAssertEqual(uint(handles[1].children, "Num Completed Packets"), 3)
        XCTAssertFalse(isMalformed(f))
    }

    func testEncryptionChangeAndDataLength() {
        let (_, enc) = event("5905 00 4000 01 10")
        XCTAssertEqual(named(enc, "Encryption Enabled")?.0, 1)
        XCTAssertEqual(quantity(enc, "Encryption Key Size")?.1, 16)
        let (_, dl) = event("3e0b 07 4000 fb00 4808 fb00 4808")
        XCTAssertEqual(quantity(dl, "Max TX Octets")?.0, 251)
        XCTAssertEqual(quantity(dl, "Max RX Time")?.1, 2120)
        XCTAssertFalse(isMalformed(dl))
    }

    func testChannelSelectionAndPHYUpdate() {
        let (_, cs) = event("3e04 14 4000 01")
        XCTAssertEqual(named(cs, "Channel Selection Algorithm")?.1, "LE Channel Selection Algorithm #2")
        let (_, phy) = event("3e06 0c 00 4000 02 01")
        XCTAssertEqual(named(phy, "TX PHY")?.1, "LE 2M")
        XCTAssertEqual(named(phy, "RX PHY")?.1, "LE 1M")
    }

    func testTransmitPowerReportingSigned() {
        let (_, f) = event("3e09 21 00 4000 00 01 f6 00 fd")
        guard case .signed(let p, let unit)? = find(f, "TX Power Level")?.value else { return XCTFail() }
        XCTAssertEqual(p, -10)
        XCTAssertEqual(unit, "dBm")
        guard case .signed(let d, _)? = find(f, "Delta")?.value else { return XCTFail() }
        XCTAssertEqual(d, -3)
    }

    func testVendorEventIsRaw() {
        let f = HCIEvents.parameters(code: 0xFF, bytes("5501020304"))
        XCTAssertEqual(f.count, 1)
        XCTAssertEqual(f.first?.label, "Vendor Data")
    }

    func testMalformedShortEvents() {
        XCTAssertTrue(isMalformed(HCIEvents.parameters(code: 0x05, bytes("00 40"))))
        XCTAssertTrue(isMalformed(HCIEvents.parameters(code: 0x0E, bytes(""))))
        XCTAssertTrue(isMalformed(HCIEvents.parameters(code: 0x0E, bytes("01 09"))))
        XCTAssertTrue(isMalformed(HCIEvents.parameters(code: 0x3E, bytes(""))))
        XCTAssertTrue(isMalformed(HCIEvents.parameters(code: 0x3E, bytes("01 00 4000"))))
        // A count that promises more elements than there are bytes.
        XCTAssertTrue(isMalformed(HCIEvents.parameters(code: 0x13, bytes("ff 4000 0100"))))
    }

    /// Every opcode, event and subevent with random-length garbage: no trap, and short input never
    /// passes silently for a described parameter list.
    func testNoCrashOnAnyInput() {
        var rng = SystemRandomNumberGenerator()
        for e in HCICommands.table {
            for n in [0, 1, 2, 3, 7, 31, 64, 255] {
                let b = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
                _ = HCICommands.parameters(opcode: e.opcode, b[...])
                _ = HCICommands.returnParameters(opcode: e.opcode, b[...])
            }
        }
        for code in 0...255 {
            for n in [0, 1, 2, 3, 5, 16, 64, 255] {
                let b = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
                _ = HCIEvents.parameters(code: UInt8(code), b[...])
                _ = HCIEvents.parameters(code: 0x3E, ([UInt8(code)] + b)[...])
            }
        }
    }
}
