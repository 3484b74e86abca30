import XCTest
@testable import Decoders
@testable import Report
import Wire

/// Advertising data is walked once into its facts, and each advertiser's are kept in one table.
final class AdvertiserModelTests: XCTestCase {
    private let peer = BDAddr(0xC0FF_EE00_0001)

    func testOneWalkFindsEveryFact() {
        // "HR-1" shortened, an incomplete 16-bit list with room left, then a structure whose length
        // (9) runs past the data.
        let data: [UInt8] = [0x05, 0x08, 0x48, 0x52, 0x2D, 0x31, 0x03, 0x02, 0x0D, 0x18, 0x09, 0x09, 0x41]
        let f = ADFacts(data[...], scanResponse: false, legacy: true)
        XCTAssertEqual(f.kinds, [.shortenedName, .malformed])
        XCTAssertEqual(f.shortenedName(in: data[...]), "HR-1")
        XCTAssertEqual(f.faultOffset, 10)
        XCTAssertEqual(f.faultLength, 9)
        // The same bytes as a scan response: the fault is the scan response's.
        XCTAssertEqual(ADFacts(data[...], scanResponse: true, legacy: true).kinds, [.shortenedName, .malformedScanResponse])
    }

    /// Data read where it lies in a larger buffer (a frame) has the facts of the same data alone;
    /// every kind of fact at once, so both walks (types, then places) run.
    func testFactsOfDataInPlace() {
        let name: [UInt8] = [0x05, 0x08, 0x48, 0x52, 0x2D, 0x31]
        let overflow: [UInt8] = [0x14, 0xFF, 0x4C, 0x00, 0x01] + [0x81] + [UInt8](repeating: 0, count: 14) + [0x03]
        let list: [UInt8] = [0x03, 0x02, 0x0D, 0x18]
        let data = name + [0x03, 0x09, 0x41, 0x42] + overflow + list
        let frame: [UInt8] = [0x3E, 0x00, 0x02] + data + [0xC4]
        let alone = ADFacts(data[...], scanResponse: false, legacy: false)
        let inPlace = ADFacts(frame[...], 3..<(3 + data.count), scanResponse: false, legacy: false)
        XCTAssertEqual(alone.kinds, [.shortenedName, .completeName, .overflowArea])
        XCTAssertEqual(inPlace.kinds, alone.kinds)
        XCTAssertEqual(inPlace.nameOffset, 2)
        XCTAssertEqual(inPlace.shortenedName(in: frame[3...]), "HR-1")
        XCTAssertEqual(inPlace.overflowOffset, alone.overflowOffset)
        XCTAssertEqual(inPlace.overflowOffset, 12)
        XCTAssertEqual(inPlace.overflowBits, 4)
        // Legacy: 35 bytes are too long, and the list had no room; its UUIDs are read in place.
        let legacy = ADFacts(frame[...], 3..<(3 + data.count), scanResponse: false, legacy: true)
        XCTAssertEqual(legacy.kinds, [.shortenedName, .completeName, .overflowArea, .tooLong, .incompleteList])
        XCTAssertEqual(legacy.listedUUIDs(in: frame[3...]), [BluetoothUUID(uuid16: 0x180D)])
        // A fault in place is at the same offset, with the length it claims.
        let cut = frame[...].prefix(3 + 8)
        let faulty = ADFacts(cut, 3..<cut.endIndex, scanResponse: false, legacy: true)
        XCTAssertEqual(faulty.kinds, [.shortenedName, .malformed])
        XCTAssertEqual(faulty.faultOffset, 6)
        XCTAssertEqual(faulty.faultLength, 3)
    }

    /// An incomplete list is an overflow only with no room for one more UUID of its width; then
    /// the first such list in the data counts.
    func testIncompleteListThatOverflowed() {
        let name: [UInt8] = [0x11, 0x09] + Array("Heart rate strap".utf8)  // 18 bytes
        let data: [UInt8] = [0x07, 0x02, 0x0D, 0x18, 0x0F, 0x18, 0x0A, 0x18] + name + [0x03, 0x04, 0x01, 0x02]  // 30 bytes
        let f = ADFacts(data[...], scanResponse: false, legacy: true)
        // One byte of room: neither a 16-bit nor a 32-bit UUID fits; the 16-bit list comes first.
        XCTAssertTrue(f.kinds.contains(.incompleteList))
        XCTAssertEqual(f.listWidth, 2)
        XCTAssertEqual(f.listedUUIDs(in: data[...]), [0x180D, 0x180F, 0x180A].map { BluetoothUUID(uuid16: $0) })
        // In extended data there is room: nothing overflowed.
        XCTAssertFalse(ADFacts(data[...], scanResponse: false, legacy: false).kinds.contains(.incompleteList))
    }

    func testFactsAreNewOncePerAdvertiser() {
        var model = AdvertiserModel()
        let key = AdvertiserKey(adapter: 0, address: peer, host: false)
        let named: [UInt8] = [0x05, 0x08, 0x48, 0x52, 0x2D, 0x31]
        let empty: [UInt8] = []
        func report(_ k: AdvertiserKey, _ data: [UInt8], scanResponse: Bool) -> AdvertiserModel.Received {
            model.received(k, data: data[...], data.indices, scanResponse: scanResponse, legacy: true, scan: nil)
        }
        // A scan response before the name is known says nothing about the name.
        XCTAssertFalse(report(key, empty, scanResponse: true).advertiser.scanResponseAfterName)
        let first = report(key, named, scanResponse: false)
        XCTAssertEqual(first.new, [.shortenedName])
        XCTAssertFalse(first.advertiser.scanResponseAfterName)
        XCTAssertEqual(report(key, named, scanResponse: false).new, [])
        let response = report(key, empty, scanResponse: true)
        XCTAssertTrue(response.advertiser.scanResponseAfterName)
        XCTAssertEqual(response.advertiser.seen, [.shortenedName])
        // Another adapter's view of the same address is another advertiser.
        XCTAssertEqual(report(AdvertiserKey(adapter: 1, address: peer, host: false), named, scanResponse: false).new,
                       [.shortenedName])
        // This host's data has no address, whatever the caller passes.
        XCTAssertEqual(AdvertiserKey(adapter: 0, address: peer, host: true), AdvertiserKey(adapter: 0, address: nil, host: true))
    }

    /// Each report updates its advertiser once: the scan that found it (the app's too) and its
    /// reports in that scan, counted again from one in each new scan, scan responses aside.
    func testReportsCountPerScan() {
        var model = AdvertiserModel()
        let key = AdvertiserKey(adapter: 0, address: peer, host: false)
        let data: [UInt8] = [0x02, 0x01, 0x06]
        func report(scan: (Int, Bool)?, scanResponse: Bool = false) -> AdvertisingDataObservation {
            let s = scan.map { (number: $0.0, app: $0.1) }
            return model.received(key, data: data[...], data.indices, scanResponse: scanResponse, legacy: true, scan: s)
                .observation(key, data: data[...], scanResponse: scanResponse, legacy: true, addressType: 1, rssi: -60,
                             scan: s?.number)
        }
        XCTAssertEqual(report(scan: nil).report?.reportsInScan, 0)
        XCTAssertNil(model.advertiser(key)?.foundIn)
        XCTAssertEqual(report(scan: (1, false)).report?.reportsInScan, 1)
        XCTAssertEqual(report(scan: (1, false), scanResponse: true).report?.reportsInScan, 1)
        let third = report(scan: (1, false))
        XCTAssertEqual(third.report?.reportsInScan, 2)
        XCTAssertEqual(third.report?.scan, 1)
        XCTAssertEqual(third.report?.rssi, -60)
        XCTAssertEqual(model.advertiser(key)?.foundIn, 1)
        XCTAssertNil(model.advertiser(key)?.foundByApp)
        XCTAssertEqual(report(scan: (2, true)).report?.reportsInScan, 1)
        XCTAssertEqual(model.advertiser(key)?.foundIn, 2)
        XCTAssertEqual(model.advertiser(key)?.foundByApp, 2)
        // Another scan's report leaves the app's scan that found it.
        _ = report(scan: (3, false))
        XCTAssertEqual(model.advertiser(key)?.foundIn, 3)
        XCTAssertEqual(model.advertiser(key)?.foundByApp, 2)
    }
}
