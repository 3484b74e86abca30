import XCTest
@testable import Decoders
import Wire

final class AdvertisingReportsTests: XCTestCase {
    // horizon74__btsnoop_hci.log frame 133: LE Advertising Report parameters after the subevent code.
    let horizon133 = "01 00 00 ab6fbf38c1a4 1f 0d09475648353037325f36464142030388ec02010509ff88ec0002d0174200 cf"

    func testLegacyReportRealVector() {
        let params = adHex(horizon133)
        let (reports, malformed) = AdvertisingReports.parse(subevent: 0x02, params)
        XCTAssertNil(malformed)
        XCTAssertEqual(reports.count, 1)
        let r = reports[0]
        XCTAssertEqual(r.address, BDAddr(0xA4C1_38BF_6FAB))
        XCTAssertEqual(r.eventTypeName, "ADV_IND")
        XCTAssertTrue(r.isConnectable && r.isScannable && r.isLegacy && !r.isScanResponse)
        XCTAssertEqual(r.rssi, -49)
        XCTAssertEqual(r.data(in: params).count, 31)
        XCTAssertEqual(r.advertisingData(in: params).localName?.name, "GVH5072_6FAB")
        let text = adRender(AdvertisingReports.fields(subevent: 0x02, adHex(horizon133)) ?? [])
        XCTAssertTrue(text.contains("Address Type: Public Device Address (0x00)"), text)
        XCTAssertTrue(text.contains("RSSI: -49 dBm"), text)
        XCTAssertTrue(text.contains("Device Name: GVH5072_6FAB"), text)
    }

    func testLegacyTwoReports() {
        let params = adHex("""
            02
            04 01 6655443322c2 03 020a08 b0
            03 00 aabbccddeeff 00 c4
            """)
        let (reports, malformed) = AdvertisingReports.parse(subevent: 0x02, params)
        XCTAssertNil(malformed)
        XCTAssertEqual(reports.count, 2)
        XCTAssertEqual(reports[0].eventTypeName, "SCAN_RSP")
        XCTAssertTrue(reports[0].isScanResponse)
        XCTAssertEqual(reports[0].address, BDAddr(0xC222_3344_5566))
        XCTAssertEqual(reports[0].randomKind, .staticAddress)
        XCTAssertEqual(reports[0].advertisingData(in: params).txPower, 8)
        XCTAssertEqual(reports[0].rssi, -80)
        XCTAssertEqual(reports[1].eventTypeName, "ADV_NONCONN_IND")
        XCTAssertFalse(reports[1].isConnectable)
        XCTAssertEqual(reports[1].address, BDAddr(0xFFEE_DDCC_BBAA))
        XCTAssertEqual(reports[1].rssi, -60)
        let text = adRender(AdvertisingReports.fields(subevent: 0x02, params) ?? [])
        XCTAssertTrue(text.contains("Report 2"))
        XCTAssertTrue(text.contains("Random Address Kind: random static"), text)
    }

    func testLegacyTruncatedKeepsEarlierReports() {
        let params = adHex("02 00 00 665544332211 00 c4 00 00 aabb")
        let (reports, malformed) = AdvertisingReports.parse(subevent: 0x02, params)
        XCTAssertEqual(reports.count, 1)
        XCTAssertNotNil(malformed)
        XCTAssertTrue(adRender(AdvertisingReports.fields(subevent: 0x02, params) ?? []).contains("ERROR"))
    }

    func testExtendedIBeaconRealVector() {
        // btmouse__btsnoop_hci.log frame 214.
        let params = adHex("""
            01 1200 00 426abd1652b0 01 00 ff 7f ad 0000 00 000000000000 1b
            1aff4c000215 50765cb7d9ea4e2199a4fa879613a492 cebf e44a ce
            """)
        let (reports, malformed) = AdvertisingReports.parse(subevent: 0x0D, params)
        XCTAssertNil(malformed)
        let r = reports[0]
        XCTAssertEqual(r.eventTypeName, "ADV_SCAN_IND")
        XCTAssertTrue(r.isScannable && !r.isConnectable && r.isLegacy)
        XCTAssertEqual(r.dataStatus, .complete)
        XCTAssertEqual(r.sid, 0xFF)
        XCTAssertNil(r.txPowerValue)
        XCTAssertEqual(r.rssi, -83)
        let b = r.advertisingData(in: params).iBeacon
        XCTAssertEqual(b?.proximityUUID, BluetoothUUID("50765CB7-D9EA-4E21-99A4-FA879613A492"))
        XCTAssertEqual(b?.major, 0xCEBF)
        XCTAssertEqual(b?.minor, 0xE44A)
        XCTAssertEqual(b?.measuredPower, -50)
        let text = adRender(AdvertisingReports.fields(subevent: 0x0D, params) ?? [])
        XCTAssertTrue(text.contains("Company ID: Apple, Inc. (0x004C)"), text)
        XCTAssertTrue(text.contains("Major: 52927"), text)
        XCTAssertTrue(text.contains("Primary PHY: LE 1M (0x01)"), text)
        XCTAssertTrue(text.contains("TX Power: not available (127)"), text)
        XCTAssertTrue(r.summary(in: params).contains("Mfr Apple, Inc. iBeacon"), r.summary(in: params))
    }

    func testExtendedNonLegacyFields() {
        // fossibot__btsnoop_hci.log frame 271 header, data shortened to a TX power structure.
        let params = adHex("01 0100 01 4a2ba6a90008 01 01 01 7f ae 0000 00 000000000000 03 020af7")
        let r = AdvertisingReports.parse(subevent: 0x0D, params).reports[0]
        XCTAssertEqual(r.sid, 1)
        XCTAssertEqual(r.secondaryPHY, 1)
        XCTAssertEqual(r.randomKind, .nonResolvablePrivate)
        XCTAssertEqual(r.rssi, -82)
        let text = adRender(r.fields(in: params))
        XCTAssertTrue(text.contains("Event Type: 0x0001 Connectable, Data Status: Complete"), text)
        XCTAssertTrue(text.contains("Advertising SID: 0x01"), text)
    }

    /// A report's fixed fields are checked at once; cut anywhere, the fault names the field that
    /// does not fit and what was left for it, as reading them one by one does.
    func testTruncatedReportNamesTheFieldCut() {
        // Subevent, one whole report, and each field's width in order (data and RSSI after them).
        let layouts: [(UInt8, String, [Int])] = [
            (0x02, "01 00 01 665544332211 03 020106 c4", [1, 1, 6, 1, 3, 1]),
            (0x0B, "01 01 01 665544332211 01 aabbccddeeff c0", [1, 1, 6, 1, 6, 1]),
            (0x0D, "01 1300 01 665544332211 01 00 ff 7f c4 0000 00 000000000000 03 020106",
             [2, 1, 6, 1, 1, 1, 1, 1, 2, 1, 6, 1, 3]),
        ]
        for (subevent, whole, widths) in layouts {
            let bytes = Array(adHex(whole))
            XCTAssertNil(AdvertisingReports.parse(subevent: subevent, bytes[...]).malformed, "\(subevent)")
            for cut in 1..<bytes.count {
                // The field the cut falls in, and what of it is left.
                var start = 1, field = 0
                while start + widths[field] <= cut { start += widths[field]; field += 1 }
                let expected = "report 1 truncated: needed \(widths[field]) bytes, \(cut - start) left"
                XCTAssertEqual(AdvertisingReports.parse(subevent: subevent, bytes[..<cut]).malformed, expected,
                               "subevent \(subevent) cut at \(cut)")
            }
        }
    }

    func testDirectedAndPeriodic() {
        let d = AdvertisingReports.parse(subevent: 0x0B, adHex("01 01 01 665544332211 01 aabbccddeeff c0"))
        XCTAssertNil(d.malformed)
        XCTAssertEqual(d.reports[0].directAddress, BDAddr(0xFFEE_DDCC_BBAA))
        XCTAssertEqual(d.reports[0].eventTypeName, "ADV_DIRECT_IND")
        let periodic = adHex("0100 04 c4 ff 00 03 020a04")
        let p = AdvertisingReports.parse(subevent: 0x0F, periodic)
        XCTAssertNil(p.malformed)
        XCTAssertEqual(p.reports[0].syncHandle, 1)
        XCTAssertEqual(p.reports[0].advertisingData(in: periodic).txPower, 4)
        let p2 = AdvertisingReports.parse(subevent: 0x25, adHex("0100 04 c4 ff 0500 02 01 00"))
        XCTAssertNil(p2.malformed)
        XCTAssertEqual(p2.reports[0].periodicEventCounter, 5)
        XCTAssertEqual(p2.reports[0].dataStatus, .incompleteMore)
        XCTAssertNil(AdvertisingReports.fields(subevent: 0x03, adHex("00")))
    }

    /// An extended report of `data` added to `asm`.
    func add(_ asm: inout ExtendedAdvertisingAssembler, status: UInt16, data: [UInt8], sid: UInt8 = 1,
             addr: UInt64 = 0xC0FFEE) -> ExtendedAdvertisingAssembler.Assembled? {
        var r = AdvertisingReport(subevent: 0x0D, eventType: status << 5, properties: status << 5, addressType: 1,
                                  address: BDAddr(addr), dataRange: data.indices)
        r.sid = sid
        return asm.add(r, in: data[...])
    }

    func testFragmentReassembly() {
        var asm = ExtendedAdvertisingAssembler()
        XCTAssertNil(add(&asm, status: 1, data: [0x02, 0x01]))
        XCTAssertNil(add(&asm, status: 1, data: [0x99], sid: 2))  // another set interleaved
        XCTAssertNil(add(&asm, status: 1, data: [0x06, 0x02]))
        let done = add(&asm, status: 0, data: [0x0A, 0x04])
        XCTAssertEqual(done?.data, [0x02, 0x01, 0x06, 0x02, 0x0A, 0x04])
        XCTAssertEqual(done?.fragments, 3)
        XCTAssertEqual(done?.truncated, false)
        XCTAssertEqual(AdvertisingData(done!.data[...]).txPower, 4)
        let t = add(&asm, status: 2, data: [0x01], sid: 2)
        XCTAssertEqual(t?.data, [0x99, 0x01])
        XCTAssertEqual(t?.truncated, true)
        XCTAssertEqual(asm.pendingCount, 0)
        // A whole report is its own data; one past the cap is cut to it.
        let whole = add(&asm, status: 0, data: [0x02, 0x01, 0x06], sid: 3)
        XCTAssertEqual(whole?.data, [0x02, 0x01, 0x06])
        XCTAssertEqual(whole?.fragments, 1)
        XCTAssertEqual(whole?.truncated, false)
        var small = ExtendedAdvertisingAssembler(maxLength: 31)
        XCTAssertEqual(add(&small, status: 0, data: [UInt8](repeating: 0, count: 40))?.data.count, 31)
        XCTAssertEqual(asm.pendingCount, 0)
    }

    func testAssemblerBounded() {
        var asm = ExtendedAdvertisingAssembler(maxPending: 4, maxLength: 40)
        for a in 0..<10 { _ = add(&asm, status: 1, data: [1], addr: UInt64(a)) }
        XCTAssertEqual(asm.pendingCount, 4)
        XCTAssertEqual(asm.evicted, 6)
        for _ in 0..<10 { _ = add(&asm, status: 1, data: [UInt8](repeating: 0, count: 20), addr: 9) }
        let r = add(&asm, status: 0, data: [1], addr: 9)
        XCTAssertEqual(r?.data.count, 40)
        XCTAssertEqual(r?.truncated, true)
    }
}

extension AdvertisingReportsTests {
    /// The malformed verdict steps over each report's fixed fields to its data; it must say what
    /// reading every report does: a fault in the list, or a report's data with problems. Checked on
    /// lists made at random, well formed and cut, padded, miscounted, with data of every shape.
    func testFaultVerdictAgreesWithReadingEachReport() {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ n: Int) -> Int {
            seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17
            return Int(seed % UInt64(n))
        }
        func data() -> [UInt8] {
            var d: [UInt8] = []
            for _ in 0..<next(5) {
                let length = [0, 1, 2, 3, 5, 17, next(40)][next(7)]
                d += [UInt8(length), [0x01, 0x02, 0x03, 0x07, 0x08, 0x09, 0x16, 0xFF, UInt8(next(256))][next(9)]]
                d += (0..<max(0, length - 1)).map { _ in UInt8(next(256)) }
            }
            if next(5) == 0 { d += [UInt8](repeating: 0, count: next(3)) }
            if next(10) == 0 { d = Array(d.prefix(next(d.count + 1))) }
            return d
        }
        var faulty = 0
        for _ in 0..<3000 {
            let extended = next(2) == 0
            let n = next(4)
            var p: [UInt8] = [UInt8(next(10) == 0 ? next(5) : n)]
            for _ in 0..<n {
                let d = data(), length = UInt8(truncatingIfNeeded: next(10) == 0 ? next(256) : d.count)
                if extended {
                    let type = [0x13, 0x10, 0x1B, 0x00, 0x05, 0x20, UInt16(next(65536))][next(7)]
                    p += [UInt8(type & 0xFF), UInt8(type >> 8), 1] + [UInt8](repeating: 7, count: 6)
                    p += [1, 0, 0xFF, 0x7F, 0xC0, 0, 0, 0] + [UInt8](repeating: 0, count: 6) + [length] + d
                } else {
                    p += [UInt8(next(6)), 1] + [UInt8](repeating: 7, count: 6) + [length] + d + [0xC0]
                }
            }
            if next(7) == 0 { p = Array(p.prefix(next(p.count + 1))) }
            if next(10) == 0 { p += [UInt8](repeating: 0, count: 1 + next(3)) }
            let subevent: UInt8 = extended ? 0x0D : 0x02
            var bad = false
            let listFault = AdvertisingReports.forEach(subevent: subevent, p[...]) { r, bytes in
                if AdvertisingData.hasProblems(r.data(in: bytes), legacy: r.subevent == 0x02 || r.isLegacy) { bad = true }
            }
            let expected = bad || listFault != nil
            if expected { faulty += 1 }
            XCTAssertEqual(AdvertisingReports.hasFaults(subevent: subevent, p[...]), expected, "\(p)")
        }
        // Both verdicts are exercised.
        XCTAssertGreaterThan(faulty, 300)
        XCTAssertLessThan(faulty, 2700)
    }
}
