import XCTest
@testable import Decoders
import Wire

/// Byte vectors from real captures (file and frame cited; compare `tshark -r F -Y btatt -V -x`)
/// and, for opcodes no capture holds, built by hand after Core 5.4 Vol 3 Part F 3.4.
final class ATTTests: XCTestCase {
    func pdu(_ hex: String) -> ATTPDU { ATTPDU(bytes(hex)) }

    func testOpcodeBits() {
        let op = ATTOpcode.signedWriteCommand
        XCTAssertEqual(op.method, 0x12)
        XCTAssertTrue(op.isCommand)
        XCTAssertTrue(op.hasSignature)
        XCTAssertEqual(op.kind, .command)
        XCTAssertEqual(ATTOpcode.writeCommand.method, 0x12)
        XCTAssertEqual(ATTOpcode.readRequest.expectedResponse, .readResponse)
        XCTAssertEqual(ATTOpcode.handleValueIndication.kind, .indication)
        XCTAssertEqual(ATTOpcode.handleValueConfirmation.kind, .confirmation)
        XCTAssertEqual(ATTOpcode(0x83).name, "Unknown Opcode 0x83")
        XCTAssertEqual(ATTOpcode(0x83).kind, .unknown)
    }

    /// Every opcode's kind agrees with its name in the specification's table (Vol 3 Part F 3.4.8),
    /// and an opcode the table does not define has none.
    func testOpcodeKindsFollowNames() {
        for raw in 0...255 {
            let op = ATTOpcode(UInt8(raw))
            let expected: ATTKind
            switch op.name {
            case let n where n.hasPrefix("Unknown"): expected = .unknown
            case let n where n.hasSuffix("Request"): expected = .request
            case let n where n.hasSuffix("Response"): expected = .response
            case let n where n.hasSuffix("Command"): expected = .command
            case let n where n.hasSuffix("Notification"): expected = .notification
            case let n where n.hasSuffix("Indication"): expected = .indication
            case let n where n.hasSuffix("Confirmation"): expected = .confirmation
            default: XCTFail(op.name); continue
            }
            XCTAssertEqual(op.kind, expected, op.name)
            if op.kind == .request { XCTAssertEqual(ATTOpcode(op.rawValue + 1).kind, .response, op.name) }
        }
    }

    // blepcapan__fitup.pcap frame 194.
    func testErrorResponse() {
        let p = pdu("010801000a")
        XCTAssertEqual(p.summary, "Error Response - Attribute Not Found, Handle: 0x0001, Request: Read By Type Request")
        XCTAssertEqual(p.error?.request, .readByTypeRequest)
        XCTAssertEqual(p.error?.code, 0x0A)
        XCTAssertEqual(p.handle, 1)
        XCTAssertEqual(ATTError.name(0x85), "Application Error 0x85")
        XCTAssertEqual(ATTError.name(0xFD), "Client Characteristic Configuration Descriptor Improperly Configured")
        XCTAssertEqual(ATTError.name(0xFE), "Procedure Already in Progress")
        XCTAssertEqual(ATTError.name(0xE5), "Reserved Common Profile Error 0xE5")
        XCTAssertEqual(ATTError.name(0xA5), "Reserved 0xA5")
        XCTAssertEqual(ATTError.name(0x13), "Value Not Allowed")
    }

    // tesible__mouse.pcapng frames 991 and 994.
    func testExchangeMTU() {
        XCTAssertEqual(pdu("020f02").summary, "Exchange MTU Request, Client Rx MTU: 527")
        XCTAssertEqual(pdu("031700").summary, "Exchange MTU Response, Server Rx MTU: 23")
        XCTAssertEqual(pdu("031700").mtu, 23)
        XCTAssertNotNil(pdu("031600").malformed)
    }

    // blepcapan__fitup.pcap frames 216 and 236.
    func testFindInformation() {
        XCTAssertEqual(pdu("040e000f00").summary, "Find Information Request, Handles: 0x000e..0x000f")
        let r = pdu("05011600022917000129")
        XCTAssertEqual(r.summary, "Find Information Response, Handle: 0x0016 Client Characteristic Configuration (0x2902), "
                       + "Handle: 0x0017 Characteristic User Descriptor (0x2901)")  // the SIG table's wording
        XCTAssertEqual(r.information.map(\.handle), [0x16, 0x17])
        XCTAssertEqual(r.information.map(\.uuid), [BluetoothUUID(uuid16: 0x2902), BluetoothUUID(uuid16: 0x2901)])
        // Format 2: a 128-bit UUID.
        let r2 = pdu("0502" + "2000" + "9ecadc240ee5a9e093f3a3b50100406e")
        XCTAssertEqual(r2.information.first?.uuid.uuidString, "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
        XCTAssertEqual(pdu("0503").malformed, "invalid format 3")
        // Partial entry left out, reported.
        let bad = pdu("05011600022917")
        XCTAssertEqual(bad.information.count, 1)
        XCTAssertNotNil(bad.malformed)
    }

    // tesible__mouse.pcapng frames 1201 and 1204.
    func testFindByTypeValue() {
        let q = pdu("060100ffff0028d0002d121e4b0fa4994eceb531f40579")
        XCTAssertEqual(q.range, ATTHandleRange(1, 0xFFFF))
        XCTAssertEqual(q.attributeType, BluetoothUUID(uuid16: 0x2800))
        XCTAssertEqual(q.value?.count, 16)
        XCTAssertTrue(q.summary.hasPrefix("Find By Type Value Request, Handles: 0x0001..0xffff, UUID: Primary Service (0x2800), Value: d0002d12"))
        let r = pdu("0748005100")
        XCTAssertEqual(r.summary, "Find By Type Value Response, Handles: 0x0048..0x0051")
        XCTAssertEqual(r.groups.map(\.start), [0x48])
        XCTAssertEqual(r.groups.map(\.end), [0x51])
    }

    // blepcapan__fitup.pcap frames 189 and 197.
    func testReadByType() {
        let q = pdu("08010009000228")
        XCTAssertEqual(q.summary, "Read By Type Request, Handles: 0x0001..0x0009, UUID: Include (0x2802)")
        let r = pdu("090702000a0300002a0400020500012a0600020700042a")
        XCTAssertEqual(r.summary, "Read By Type Response, Attribute List Length: 3, Length: 7")
        XCTAssertEqual(r.attributeData.map(\.handle), [2, 4, 6])
        XCTAssertEqual(Array(r.attributeData[0].value), [0x0A, 0x03, 0x00, 0x00, 0x2A])
        // tesible__mouse.pcapng frame 1010: read by UUID (Device Name) with a 13-byte value.
        let name = pdu("090d03004254352e30204d6f757365")
        XCTAssertEqual(name.attributeData.first.map { String(decoding: $0.value, as: UTF8.self) }, "BT5.0 Mouse")
        XCTAssertEqual(pdu("0901").malformed, "attribute data length 1")
        XCTAssertEqual(pdu("0801000900022801").malformed, "attribute type of 3 bytes (must be 2 or 16)")
    }

    // tesible__mouse.pcapng frames 1071, 1203, 1206, 1211.
    func testReadAndBlob() {
        XCTAssertEqual(pdu("0a2000").summary, "Read Request, Handle: 0x0020")
        XCTAssertEqual(pdu("0b05010902").summary, "Read Response, Value: 05010902")
        XCTAssertEqual(pdu("0c20001600").summary, "Read Blob Request, Handle: 0x0020, Offset: 22")
        XCTAssertEqual(pdu("0c20001600").offset, 22)
        XCTAssertEqual(pdu("0d018100c0").summary, "Read Blob Response, Value: 018100c0")
        XCTAssertEqual(pdu("0a20").malformed, "truncated: needed 2 bytes, 1 left")
        XCTAssertEqual(pdu("0a200000").malformed, "1 unexpected trailing byte")
        XCTAssertEqual(pdu("0a200000").handle, 0x20)
    }

    func testReadMultiple() {
        let q = pdu("0e03000500")
        XCTAssertEqual(q.summary, "Read Multiple Request, Handles: 0x0003, 0x0005")
        XCTAssertEqual(q.handles, [3, 5])
        XCTAssertEqual(pdu("0e0300").malformed, "fewer than two handles")
        XCTAssertEqual(pdu("0f01020304").summary, "Read Multiple Response, Value: 01020304")
        XCTAssertEqual(pdu("2003000500").summary, "Read Multiple Variable Request, Handles: 0x0003, 0x0005")
        let r = pdu("21020001020300030405")
        XCTAssertEqual(r.lengthValues.map { Array($0) }, [[1, 2], [3, 4, 5]])
        XCTAssertEqual(r.summary, "Read Multiple Variable Response, Values: 0102, 030405")
        let cut = pdu("210200010203000304")
        XCTAssertEqual(cut.lengthValues.count, 1)
        XCTAssertEqual(cut.malformed, "tuple truncated at offset 4")
    }

    // blepcapan__fitup.pcap frames 175, 178.
    func testReadByGroupType() {
        let q = pdu("100100ffff0028")
        XCTAssertEqual(q.summary, "Read By Group Type Request, Handles: 0x0001..0xffff, UUID: Primary Service (0x2800)")
        let r = pdu("11060100090000180a000a000118")
        XCTAssertEqual(r.groups.map(\.start), [1, 0x0A])
        XCTAssertEqual(r.groups.map(\.end), [9, 0x0A])
        XCTAssertEqual(r.groups.compactMap { BluetoothUUID(littleEndian: $0.value) },
                       [BluetoothUUID(uuid16: 0x1800), BluetoothUUID(uuid16: 0x1801)])
        XCTAssertEqual(r.summary, "Read By Group Type Response, Attribute List Length: 2, Length: 6")
        // Frame 181: 128-bit service UUIDs, length 20.
        let r128 = pdu("11140b00120000000000000000b000405104010008f0")
        XCTAssertEqual(r128.groups.first.flatMap { BluetoothUUID(littleEndian: $0.value) }?.uuidString,
                       "F0080001-0451-4000-B000-000000000000")
    }

    // blepcapan__fitup.pcap frames 288, 290, 291; tesible__mouse.pcapng frame 1739.
    func testWritesAndNotifications() {
        let w = pdu("120e000100")
        XCTAssertEqual(w.summary, "Write Request, Handle: 0x000e, Value: 0100")
        XCTAssertEqual(w.kind, .request)
        XCTAssertEqual(pdu("13").summary, "Write Response")
        XCTAssertEqual(pdu("521100a000").summary, "Write Command, Handle: 0x0011, Value: a000")
        let n = pdu("1b2200010000000000")
        XCTAssertEqual(n.summary, "Handle Value Notification, Handle: 0x0022, Value: 010000000000")
        XCTAssertEqual(n.handleValues.first?.handle, 0x22)
        // fossibot__btsnoop_hci.log frames 4542 and 4562.
        XCTAssertEqual(pdu("1d03000100ffff").summary, "Handle Value Indication, Handle: 0x0003, Value: 0100ffff")
        XCTAssertEqual(pdu("1e").summary, "Handle Value Confirmation")
        XCTAssertEqual(pdu("1e").kind, .confirmation)
    }

    func testSignedWrite() {
        let p = pdu("d20500aa010203040506070809101112")
        guard case .signedWrite(let h, let v, let sig) = p.parameters else { return XCTFail("\(p.parameters)") }
        XCTAssertEqual(h, 5)
        XCTAssertEqual(Array(p[v]), [0xAA])
        XCTAssertEqual(sig.count, 12)
        // Sign counter as tshark shows it: 67305985.
        let counter = p.fields.first { $0.label == "Authentication Signature" }?.children.first
        if case .uint(let c, _)? = counter?.value { XCTAssertEqual(c, 67_305_985) } else { XCTFail() }
        XCTAssertEqual(pdu("d2050001").malformed, "authentication signature shorter than 12 bytes")
    }

    func testPrepareExecute() {
        let q = pdu("160500000001020304")
        XCTAssertEqual(q.summary, "Prepare Write Request, Handle: 0x0005, Offset: 0, Value: 01020304")
        XCTAssertEqual(pdu("170500120001").offset, 0x12)
        XCTAssertEqual(pdu("1801").summary, "Execute Write Request, Flags: Immediately write all pending values (0x01)")
        XCTAssertEqual(pdu("1800").summary, "Execute Write Request, Flags: Cancel all prepared writes (0x00)")
        XCTAssertNotNil(pdu("1802").malformed)
        XCTAssertEqual(pdu("19").summary, "Execute Write Response")
    }

    func testMultipleHandleValueNotification() {
        let p = pdu("2303000200010205000100aa")
        XCTAssertEqual(p.handleValues.map(\.handle), [3, 5])
        XCTAssertEqual(p.handleValues.map { Array($0.value) }, [[1, 2], [0xAA]])
        XCTAssertEqual(p.summary, "Multiple Handle Value Notification, Handle: 0x0003, Value: 0102, Handle: 0x0005, Value: aa")
    }

    // sweyn__capture_cypress_psoc6_crash_llid.pcapng carries junk opcodes such as 0x83.
    func testUnknownAndEmpty() {
        let p = pdu("83010203")
        XCTAssertEqual(p.summary, "Unknown Opcode 0x83, Data: 010203")
        XCTAssertNil(p.malformed)
        XCTAssertEqual(ATTPDU(bytes("")[...]).malformed, "empty ATT PDU")
    }

    func testFieldsHaveOpcodeBits() {
        let f = pdu("0a2000").fields
        XCTAssertEqual(f.first?.label, "Opcode")
        XCTAssertEqual(f.first?.children.map(\.label), ["Authentication Signature Flag", "Command Flag", "Method"])
        XCTAssertEqual(f.last?.label, "Handle")
    }

    /// Every prefix and single-byte change of every vector decodes without trapping.
    func testNeverCrashes() {
        let vectors = ["010801000a", "020f02", "05011600022917000129", "060100ffff0028d0002d", "0748005100",
                       "090702000a0300002a0400020500012a0600020700042a", "11060100090000180a000a000118",
                       "21020001020300030405", "2303000200010205000100aa", "d20500010203040506070809101112",
                       "160500000001020304", "0e03000500", "0c20001600"]
        for v in vectors {
            let b = Array(bytes(v))
            for n in 0...b.count {
                let p = ATTPDU(b[0..<n])
                _ = p.summary
                _ = p.fields
                for i in 0..<n {
                    var m = b
                    m[i] = m[i] ^ 0xFF
                    let q = ATTPDU(m[0..<n])
                    _ = q.summary
                    _ = q.fields
                    _ = q.handles
                    _ = q.lengthValues
                }
            }
        }
    }
}

/// Bytes from hex text, as a slice that does not start at index 0 (as frames do).
func bytes(_ hex: String) -> Bytes {
    var out: [UInt8] = [0xEE]
    var it = hex.makeIterator()
    while let a = it.next(), let b = it.next() {
        out.append(UInt8(String([a, b]), radix: 16)!)
    }
    return out[1...]
}
