import XCTest
@testable import Decoders
import Wire

final class AdvertisingOverflowTests: XCTestCase {
    func testCRC8CheckValue() {
        XCTAssertEqual(OverflowArea.crc8(Array("123456789".utf8)), 0x09)
    }

    func testHardcodedVectors() {
        // From overflow-area-vectors.tsv (the first three come from raw captures).
        XCTAssertEqual(OverflowArea.bit(for: BluetoothUUID("2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")!), 83)
        XCTAssertEqual(OverflowArea.bit(for: BluetoothUUID(uuid16: 0x3333)), 57)
        XCTAssertEqual(OverflowArea.bit(for: BluetoothUUID(uuid16: 0x1001)), 57)
        XCTAssertEqual(OverflowArea.bit(for: BluetoothUUID(uuid16: 0x180D)), 61)
    }

    func testVectorsFile() throws {
        // <package root>/../shared/notes/overflow-area-vectors.tsv
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let url = root.deletingLastPathComponent().appendingPathComponent("shared/notes/overflow-area-vectors.tsv")
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { throw XCTSkip("no vectors file at \(url.path)") }
        var checked = 0
        for line in text.split(separator: "\n").dropFirst() {
            let cols = line.split(separator: "\t").map(String.init)
            guard cols.count >= 4, let u = BluetoothUUID(cols[0]), let bit = Int(cols[1]), let index = Int(cols[2]),
                  let mask = UInt8(cols[3].dropFirst(2), radix: 16) else { continue }
            XCTAssertEqual(OverflowArea.bit(for: u), bit, cols[0])
            let area = OverflowArea(bits: [bit])
            XCTAssertEqual(area.bytes[index], mask, cols[0])
            XCTAssertEqual(area.matches([u]).map(\.uuid), [u])
            checked += 1
        }
        XCTAssertEqual(checked, 133)
    }

    func testBitmapFromCaptureAndCollisions() {
        // btmouse__btsnoop_hci.log frame 221: Apple overflow area with one bit set (byte 12 mask 0x80).
        let ad = AdvertisingData(adHex("14ff4c0001 000000000000000000000000800000 00"))
        XCTAssertEqual(ad.problems, [])
        let o = ad.overflowArea
        XCTAssertEqual(o?.bits, [103])
        XCTAssertTrue(ad.summary.contains("Overflow Area"), ad.summary)
        // Candidates: 0x1001 and 0x3333 share bit 57, 0x180D is bit 61.
        let area = OverflowArea(bits: [57, 83])
        let m = area.matches([BluetoothUUID(uuid16: 0x1001), BluetoothUUID(uuid16: 0x3333), BluetoothUUID(uuid16: 0x180D),
                              BluetoothUUID("2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")!])
        XCTAssertEqual(m.map(\.bit), [57, 57, 83])
        XCTAssertEqual(m[0].collidesWith, [BluetoothUUID(uuid16: 0x3333)])
        XCTAssertEqual(m[2].collidesWith, [])
        XCTAssertEqual(area.unexplainedBits([BluetoothUUID(uuid16: 0x1001)]), [83])
        let text = adRender(area.fields(candidates: [BluetoothUUID(uuid16: 0x1001), BluetoothUUID(uuid16: 0x3333)]))
        XCTAssertTrue(text.contains("Collision: same bit as 0x3333"), text)
    }

    func testAppleContinuityAndMicrosoft() {
        // happyleaf__btsnoop_hci_happyleaf_fail.log style Nearby Info, then a truncated TLV.
        let apple = adRender(ManufacturerData.fields(company: 0x004C, data: adHex("10020b1c 0c0e")))
        XCTAssertTrue(apple.contains("Type: Nearby Info (0x10)"), apple)
        XCTAssertTrue(apple.contains("Type: Handoff (0x0C)") && apple.contains("ERROR"), apple)
        // horizon74__btsnoop_hci.log frame 174: Microsoft CDP beacon.
        let ms = adRender(ManufacturerData.fields(company: 0x0006, data: adHex("01092002214956538c571cb099c6ee1bd189af6331ebb576f44ade")))
        XCTAssertTrue(ms.contains("Scenario Type: Connected Devices Platform (0x01)"), ms)
        XCTAssertTrue(ms.contains("Device Type: Windows 10 Desktop (0x09)"), ms)
        let sp = adRender(ManufacturerData.fields(company: 0x0006, data: adHex("030080 4d6f757365")))
        XCTAssertTrue(sp.contains("Swift Pair"), sp)
    }
}

final class AdvertisersTests: XCTestCase {
    /// A legacy report added to `devs`.
    func add(_ devs: Advertisers, _ type: UInt8, addr: UInt64, rssi: Int8, data: String, addrType: UInt8 = 0,
             frame: Int, time: Int64) {
        let d = adHex(data)
        let address: [UInt8] = (0..<6).map { UInt8(truncatingIfNeeded: addr >> (8 * UInt64($0))) }
        let head: [UInt8] = [1, type, addrType] + address + [UInt8(d.count)]
        let params = (head + Array(d) + [UInt8(bitPattern: rssi)])[...]
        let r = AdvertisingReports.parse(subevent: 0x02, params).reports[0]
        devs.add(r, data: r.data(in: params), frame: frame, time: time)
    }

    func testScanResponseMergeMedianAndInterval() {
        let devs = Advertisers()
        let ms: Int64 = 1_000_000
        let a: UInt64 = 0x0011_2233_4455
        let rssis: [Int8] = [-70, -60, -65, -50, -80]
        for (i, r) in rssis.enumerated() {
            add(devs, 0, addr: a, rssi: r, data: "020106 03030d18", frame: 10 + 2 * i, time: 1_000 * ms + Int64(i) * 100 * ms)
            if i == 0 { add(devs, 4, addr: a, rssi: -61, data: "0909485220537472617002 0a04", frame: 11, time: 1_001 * ms) }
        }
        // An interval outlier (a missed event) does not move the median.
        add(devs, 0, addr: a, rssi: -55, data: "020106", frame: 30, time: 1_000 * ms + 900 * ms)
        add(devs, 3, addr: 0xAABB, rssi: -90, data: "", addrType: 1, frame: 40, time: 2_000 * ms)
        devs.noteConnection(to: BDAddr(a), frame: 50)
        let list = devs.devices
        XCTAssertEqual(list.count, 2)
        let d = list[0]
        XCTAssertEqual(d.address, BDAddr(a))
        XCTAssertEqual(d.completeName, "HR Strap")
        XCTAssertEqual(d.flags, 0x06)
        XCTAssertEqual(d.txPower, 4)
        XCTAssertEqual(d.services.map(\.uuid), [BluetoothUUID(uuid16: 0x180D)])
        XCTAssertEqual(d.advertisingReports, 6)
        XCTAssertEqual(d.scanResponses, 1)
        XCTAssertEqual(d.rssiMin, -80)
        XCTAssertEqual(d.rssiMax, -50)
        XCTAssertEqual(d.rssiMedian, -61)  // of -80 -70 -65 -61 -60 -55 -50
        XCTAssertEqual(d.advertisingInterval, 100 * ms)
        XCTAssertTrue(d.connectable)
        XCTAssertEqual(d.connectionFrame, 50)
        XCTAssertEqual(d.firstFrame, 10)
        XCTAssertEqual(d.lastFrame, 30)
        XCTAssertFalse(list[1].connectable)
        XCTAssertFalse(list[1].connected)
        let text = adRender(d.fields)
        XCTAssertTrue(text.contains("Complete Local Name: HR Strap"), text)
        XCTAssertTrue(text.contains("UUID 128: 0000180D-0000-1000-8000-00805F9B34FB"), text)
        XCTAssertTrue(text.contains("Median: -61 dBm"), text)
        XCTAssertTrue(text.contains("Advertising Interval: 100000000 = 100.0 ms"), text)
    }

    func testOverflowMatchingInDevices() {
        // Device A advertises a 128-bit UUID; device B (iOS in background) only its overflow bit.
        let custom = BluetoothUUID("2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")!
        let le = custom.bigEndianBytes.reversed().map { Hex.padded($0, width: 2) }.joined()
        let devs = Advertisers(candidateUUIDs: [BluetoothUUID(uuid16: 0x1001), BluetoothUUID(uuid16: 0x3333)])
        add(devs, 0, addr: 1, rssi: -40, data: "1107" + le, frame: 1, time: 0)
        let bitmap = OverflowArea(bits: [83, 57]).bytes.map { Hex.padded($0, width: 2) }.joined()
        add(devs, 0, addr: 2, rssi: -40, data: "14ff4c0001" + bitmap, frame: 2, time: 1)
        let b = devs.devices[1]
        XCTAssertEqual(b.overflowBits, [57, 83])
        XCTAssertEqual(Set(b.services.filter(\.viaOverflow).map(\.uuid)), [custom, BluetoothUUID(uuid16: 0x1001), BluetoothUUID(uuid16: 0x3333)])
        XCTAssertEqual(b.services.first { $0.uuid == BluetoothUUID(uuid16: 0x1001) }?.collidesWith, [BluetoothUUID(uuid16: 0x3333)])
        XCTAssertEqual(b.companies, [0x004C])
        XCTAssertTrue(adRender(b.fields).contains("Source: Apple overflow area (bit 83)"))
    }
}
