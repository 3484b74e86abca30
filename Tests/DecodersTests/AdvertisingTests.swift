import XCTest
@testable import Decoders
import Wire

/// Bytes from a hex string ("04 3e 2b ..."), spaces ignored.
func adHex(_ s: String) -> Bytes {
    let digits = Array(s.filter { !$0.isWhitespace })
    var out: [UInt8] = []
    var i = 0
    while i + 1 < digits.count {
        out.append(UInt8(String(digits[i...i + 1]), radix: 16)!)
        i += 2
    }
    return out[...]
}

/// All labels and values of a field tree, one line each, for assertions.
func adRender(_ fields: [Field], depth: Int = 0) -> String {
    var s = ""
    for f in fields {
        s += String(repeating: "  ", count: depth) + f.label.string + ": " + adValue(f.value) + "\n"
        s += adRender(f.children, depth: depth + 1)
    }
    return s
}

func adValue(_ v: FieldValue) -> String {
    switch v {
    case .none: return ""
    case .uint(let x, let hex): return hex > 0 ? Hex.prefixed(x, width: hex) : String(x)
    case .int(let x): return String(x)
    case .bool(let b): return String(b)
    case .text(let t): return t
    case .derived(let t): return t.string
    case .received(let b): return String(decoding: b, as: UTF8.self)
    case .bytes(let b): return Hex.string(b)
    case .named(let x, let hex, let n, _): return n.string + " (" + (hex > 0 ? Hex.prefixed(x, width: hex) : String(x)) + ")"
    case .quantity(let x, _, let d, let unit): return "\(x) = \(d) \(unit)"
    case .signed(let x, let unit): return "\(x) \(unit)"
    case .address(let a): return a.description
    case .uuid(let u): return u.description
    case .flags(let x, let hex, let names): return Hex.prefixed(x, width: hex) + " " + names.joined(separator: ", ")
    case .error(let e): return "ERROR " + e.string
    }
}

final class AdvertisingDataTests: XCTestCase {
    // horizon74__btsnoop_hci.log frame 133: LE Advertising Report data (31 bytes).
    let horizon133 = "0d09475648353037325f36464142 030388ec 020105 09ff88ec0002d0174200"

    func testLegacyRealVector() {
        let ad = AdvertisingData(adHex(horizon133), legacy: true)
        XCTAssertEqual(ad.problems, [])
        XCTAssertEqual(ad.structures.map(\.type), [0x09, 0x03, 0x01, 0xFF])
        XCTAssertEqual(ad.localName?.name, "GVH5072_6FAB")
        XCTAssertEqual(ad.localName?.complete, true)
        XCTAssertEqual(ad.flags, 0x05)
        XCTAssertEqual(ad.serviceUUIDs, [ListedUUID(uuid: BluetoothUUID(uuid16: 0xEC88), complete: true)])
        XCTAssertEqual(ad.manufacturerData.first?.company, 0xEC88)
        XCTAssertEqual(Array(ad.manufacturerData.first!.data), [0x00, 0x02, 0xd0, 0x17, 0x42, 0x00])
        XCTAssertEqual(ad.summary, "Flags 0x05, Name \"GVH5072_6FAB\", UUIDs 0xEC88, Mfr 0xEC88")
        let text = adRender(ad.fields)
        XCTAssertTrue(text.contains("LE Limited Discoverable Mode: true"))
        XCTAssertTrue(text.contains("BR/EDR Not Supported: true"))
        XCTAssertTrue(text.contains("UUID 128: 0000EC88-0000-1000-8000-00805F9B34FB"))
    }

    func testFlagsNamedAndAppearance() {
        // blepcapan__fitup.pcap frame 147.
        let ad = AdvertisingData(adHex("031941 03 020106 0303e7fe 09fff8f817196fa562ce 0509563039 53"))
        XCTAssertEqual(ad.appearance, 0x0341)
        XCTAssertEqual(ad.flags, 0x06)
        let text = adRender(ad.fields)
        XCTAssertTrue(text.contains("Flags: 0x06 LE General Discoverable Mode, BR/EDR Not Supported"), text)
        XCTAssertTrue(text.contains("Appearance: Heart Rate Sensor: Heart Rate Belt (0x0341)"), text)
        XCTAssertTrue(text.contains("UUID: 0xFEE7"), text)
        XCTAssertEqual(ad.localName?.name, "V09S")
    }

    func testConnectionIntervalRangeAndTxPower() {
        // horizon74__btsnoop_hci.log frame 182 (scan response).
        let ad = AdvertisingData(adHex("0909485041383335304205125000600902 0a00"))
        XCTAssertEqual(ad.txPower, 0)
        let text = adRender(ad.fields)
        XCTAssertTrue(text.contains("Connection Interval Min: 80 = 100.0 ms"), text)
        XCTAssertTrue(text.contains("Connection Interval Max: 2400 = 3000.0 ms"), text)
    }

    func testSolicitation128() {
        // lightctl__btsnoop_hci.log frame 2160.
        let ad = AdvertisingData(adHex("1115d0002d121e4b0fa4994eceb531f40579 09ffeff0da4471376df6"))
        XCTAssertEqual(ad.solicitedUUIDs, [BluetoothUUID("7905f431-b5ce-4e99-a40f-4b1e122d00d0")!])
        XCTAssertEqual(ad.problems, [])
    }

    func testServiceDataAndEddystoneReal() {
        // fossibot__btsnoop_hci.log frame 271: TX power, Fast Pair service data, flags, Eddystone (frame 0x40).
        let ad = AdvertisingData(adHex("""
            020af7 16162cfe1052d432106415215e0b2afb78c02d7f4dacd6 020106
            1916aafe40c2022adaebaa7de1fc0d63538cd9ff722a2a72be9b
            """))
        XCTAssertEqual(ad.txPower, -9)
        XCTAssertEqual(ad.serviceData.map(\.uuid), [BluetoothUUID(uuid16: 0xFE2C), BluetoothUUID(uuid16: 0xFEAA)])
        let text = adRender(ad.fields)
        XCTAssertTrue(text.contains("Name: Fast Pair Service"), text)
        XCTAssertTrue(text.contains("Frame Type: Unknown (0x40)"), text)
        XCTAssertTrue(ad.summary.contains("Service data 0xFEAA (Eddystone)"))
    }

    func testEddystoneFrames() {
        let url = adRender(Eddystone.fields(adHex("10 eb 03 676f6f676c65 07")))
        XCTAssertTrue(url.contains("URL: https://google.com"), url)
        XCTAssertTrue(url.contains("TX Power at 0 m: -21 dBm"), url)
        XCTAssertEqual(Eddystone.url(adHex("00 77 65 62 00 74")), "http://www.web.com/t")
        let uid = adRender(Eddystone.fields(adHex("00 e7 0102030405060708090a 0b0c0d0e0f10 0000")))
        XCTAssertTrue(uid.contains("Namespace: 0102030405060708090a") && uid.contains("Instance: 0b0c0d0e0f10"), uid)
        let tlm = adRender(Eddystone.fields(adHex("20 00 0bb8 1980 00000010 0000000a")))
        XCTAssertTrue(tlm.contains("Battery Voltage: 3000 = 3000.0 mV"), tlm)
        XCTAssertTrue(tlm.contains("Temperature: 6528 = 25.5 °C"), tlm)
        XCTAssertTrue(tlm.contains("Time Since Power-on: 10 = 1.0 s"), tlm)
        let eid = adRender(Eddystone.fields(adHex("30 f0 1122334455667788")))
        XCTAssertTrue(eid.contains("Ephemeral Identifier: 1122334455667788"), eid)
        XCTAssertTrue(adRender(Eddystone.fields(adHex("00 e7 01"))).contains("ERROR"))
    }

    func testUUIDForms() {
        // 32-bit list and a 128-bit UUID on the base, which is shown in its short form and named.
        let ad = AdvertisingData(adHex("05050d180000 1107fb349b5f80000080001000000d180000"))
        XCTAssertEqual(ad.serviceUUIDs.count, 2)
        XCTAssertEqual(ad.serviceUUIDs[1].uuid.uuid16, 0x180D)
        let text = adRender(ad.fields)
        XCTAssertEqual(ad.serviceUUIDs[0].uuid.width, 4)
        XCTAssertTrue(text.contains("UUID 128: 0000180D-0000-1000-8000-00805F9B34FB"), text)
        XCTAssertTrue(text.contains("Short Form: 0x180D"), text)
        XCTAssertTrue(text.contains("Name: Heart Rate"), text)
    }

    func testSummaryExample() {
        let ad = AdvertisingData(adHex("020106 0909485220537472617003030d18"))
        XCTAssertEqual(ad.summary, "Flags 0x06, Name \"HR Strap\", UUIDs 0x180D")
    }

    func testOtherTypes() {
        let cases: [(String, String)] = [
            ("040d0c0220", "Major Device Class: Phone (0x02)"),            // class of device
            ("0211 0b", "Address Type: Random (0x1)"),                        // OOB flags
            ("021a 2000", "Advertising Interval: 32 = 20.0 ms"),
            ("042f 400600", "Advertising Interval: 1600 = 1000.0 ms"),        // long
            ("081b 665544332211 01", "BD_ADDR: 11:22:33:44:55:66"),
            ("021c 02", "Peripheral Role preferred"),
            ("0f24 17 2f2f6578616d706c652e636f6d", "URI: https://example.com"),
            ("0524 01616263", "Scheme:  (0x0001)"),
            ("0524 01616263", "URI: abc"),
            ("0427 01 01 00", "LE 2M PHY"),
            ("0828 ffffffff1f 1000", "Used Channels: 37"),
            ("072e 010203 040506", "Hash: 0x030201"),
            ("033d 01 14", "Association Notification"),
            ("0717 112233445566", "BD_ADDR: 66:55:44:33:22:11"),
            ("1110 00112233445566778899aabbccddeeff", "TK Value: 00112233445566778899aabbccddeeff"),
            ("0910 0100 4c00 0100 0200", "Vendor ID: Apple, Inc. (0x004C)"),
            ("111e 00112233445566778899aabbccddeeff", "Randomizer R"),
            ("0e31 0102030405 aabbcc dd 01020304", "MIC: 01020304"),
            ("0932 78563412 05 10 02 04", "SubeventInterval: 16 = 20.0 ms"),
            ("052b 00112233", "Mesh Beacon"),
            ("0523 01020304", "Random Value"),
            ("040a", "Tx Power Level"),
            ("0630 41424344 45", "Broadcast Name: ABCDE"),
            ("0e34 0102030405 aabbcc dd 01020304", "Electronic Shelf Label"),
            ("0229 00", "PB-ADV"),
            ("0260 00", "Unknown AD Type (0x60)"),
        ]
        for (hex, expect) in cases {
            let text = adRender(AdvertisingData(adHex(hex)).fields)
            XCTAssertTrue(text.contains(expect), "\(hex): \(text)")
        }
    }

    func testBIGInfo() {
        // 33 bytes; check it decodes without faults and names the PHY.
        var b = [UInt8](repeating: 0, count: 33)
        b[28] = 0x00; b[32] = 0
        b[27] = 0x20  // PHY bits 37..39 of ChM+PHY (byte 4 of that field, bits 5..7) → LE 2M
        let ad = AdvertisingData(([34, 0x2C] + b)[...])
        XCTAssertEqual(ad.problems, [])
        XCTAssertTrue(adRender(ad.fields).contains("PHY: LE 2M"), adRender(ad.fields))
    }

    // MARK: Malformations

    func testLengthPastEnd() {
        let ad = AdvertisingData(adHex("020106 0509414243"))
        XCTAssertEqual(ad.structures.count, 1)
        XCTAssertEqual(ad.flags, 0x06)
        XCTAssertEqual(ad.problems, [ADProblem(.lengthPastEnd, offset: 3, type: 0x09, length: 5)])
        XCTAssertTrue(adRender(ad.fields).contains("ERROR"))
        XCTAssertTrue(ad.summary.contains("malformed"))
        // The reason is written when printed, from the problem's numbers.
        XCTAssertEqual(adRender(ad.fields).components(separatedBy: "\n").filter { $0.contains("ERROR") },
                       ["Malformed: ERROR AD structure at offset 3 Complete Local Name (0x09) with length 5 runs past the end of the data"])
        XCTAssertEqual(ADProblem(.badUUIDListLength, offset: 0, type: 0x03, length: 3).description,
                       "UUID list Complete List of 16-bit Service or Service Class UUIDs (0x03) at offset 0 of 3 bytes is not a multiple of the UUID size")
        XCTAssertEqual(ADProblem(.tooLongForLegacy, offset: 31, type: nil, length: 40).description,
                       "legacy advertising data of 40 bytes exceeds 31")
    }

    func testZeroPaddingIsNotMalformed() {
        let ad = AdvertisingData(adHex("020106 000000000000"), legacy: true)
        XCTAssertEqual(ad.problems, [])
        XCTAssertEqual(ad.paddingLength, 6)
        XCTAssertTrue(adRender(ad.fields).contains("Padding: 6"))
    }

    func testZeroLengthBeforeData() {
        let ad = AdvertisingData(adHex("020106 00 020a04"))
        XCTAssertEqual(ad.structures.count, 1)
        XCTAssertEqual(ad.problems, [ADProblem(.dataAfterTerminator, offset: 3, type: nil, length: 4)])
    }

    func testUUIDListNotMultiple() {
        let ad = AdvertisingData(adHex("0403 0d1801 020a04"))
        XCTAssertEqual(ad.problems.map(\.kind), [.badUUIDListLength])
        XCTAssertEqual(ad.problems.first?.offset, 0)
        XCTAssertEqual(ad.serviceUUIDs.map(\.uuid), [BluetoothUUID(uuid16: 0x180D)])
        XCTAssertEqual(ad.txPower, 4, "structures after the fault are still decoded")
        XCTAssertTrue(adRender(ad.fields).contains("Trailing Bytes: 01"))
    }

    /// A fault is listed right after the structure at its offset; one at an offset no structure
    /// has (legacy data past 31 bytes), and every fault found after it, after the last structure.
    func testFaultsAreListedAfterTheirStructure() {
        func topLevel(_ ad: AdvertisingData) -> [String] {
            adRender(ad.fields).components(separatedBy: "\n").filter { !$0.isEmpty && !$0.hasPrefix(" ") }
                .map { String($0.prefix { $0 != ":" }) }
        }
        let list = AdvertisingData(adHex("0403 0d1801 020a04"))
        XCTAssertEqual(list.problemCount, 1)
        XCTAssertEqual(topLevel(list), ["Complete List of 16-bit Service or Service Class UUIDs", "Malformed", "Tx Power Level"])
        let data = [UInt8](adHex("0403 0d1801 1dff4c00")) + [UInt8](repeating: 0x11, count: 26)
        let long = AdvertisingData(data[...], legacy: true)
        XCTAssertEqual(long.problems.map(\.kind), [.tooLongForLegacy, .badUUIDListLength], "in the walk's order")
        XCTAssertEqual(topLevel(long), ["Complete List of 16-bit Service or Service Class UUIDs", "Manufacturer Specific Data",
                                        "Malformed", "Malformed"])
        XCTAssertTrue(adRender(long.fields).contains("legacy advertising data of 35 bytes exceeds 31\nMalformed: ERROR UUID list"),
                      adRender(long.fields))
    }

    func testLegacyTooLong() {
        let data = [UInt8]([0x21, 0xFF, 0x4C, 0x00]) + [UInt8](repeating: 0x11, count: 30)
        let ad = AdvertisingData(data[...], legacy: true)
        XCTAssertEqual(ad.problems.map(\.kind), [.tooLongForLegacy])
        XCTAssertEqual(ad.manufacturerData.count, 1)
        XCTAssertEqual(AdvertisingData(data[...]).problems, [])
    }

    func testBadFixedLength() {
        let ad = AdvertisingData(adHex("03010600"))
        XCTAssertEqual(ad.problems.map(\.kind), [.badLength])
    }

    func testNeverTraps() {
        // Every short input and a pseudo-random sweep must decode without trapping.
        var seed: UInt64 = 0x1234_5678
        for n in 0..<2000 {
            var bytes: [UInt8] = []
            for _ in 0..<(n % 64) {
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                bytes.append(UInt8(truncatingIfNeeded: seed >> 33))
            }
            let ad = AdvertisingData(bytes.dropFirst(n % 3), legacy: n % 2 == 0)
            _ = ad.summary
            _ = adRender(ad.fields)
            _ = (ad.serviceData.count, ad.manufacturerData.count, ad.iBeacon, ad.overflowArea, ad.localName)
            for t: UInt8 in [0x02, 0x0B, 0x0D, 0x0F, 0x25] {
                _ = AdvertisingReports.fields(subevent: t, bytes[...])
            }
        }
    }

    func testHasProblemsAgreesWithTheFullWalk() {
        // The quick check every report gets must say what the decode's problems say, on the edge
        // cases (padding, data after a terminator, lengths past the end, bad list lengths, too
        // long for legacy) and on a pseudo-random sweep.
        let cases = ["", "00000000", "0201060000", "02010600ff", "05ff4c00", "03020d18", "0302", "0401020300",
                     "03010600", "0dff4c000215" + String(repeating: "ab", count: 12)]
        for hex in cases {
            for legacy in [false, true] {
                let d = adHex(hex)
                XCTAssertEqual(AdvertisingData.hasProblems(d, legacy: legacy), !AdvertisingData(d, legacy: legacy).problems.isEmpty, hex)
            }
        }
        var seed: UInt64 = 0x9E37_79B9
        for n in 0..<5000 {
            var bytes: [UInt8] = []
            for _ in 0..<(n % 48) {
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                // Small values often, so lengths fit and zero terminators appear.
                let b = UInt8(truncatingIfNeeded: seed >> 33)
                bytes.append(n % 3 == 0 ? b & 0x07 : b)
            }
            let d = bytes.dropFirst(n % 2)
            XCTAssertEqual(AdvertisingData.hasProblems(d, legacy: n % 4 < 2), !AdvertisingData(d, legacy: n % 4 < 2).problems.isEmpty, "\(bytes)")
        }
    }
}
