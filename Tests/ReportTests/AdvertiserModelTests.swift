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
        func report(_ k: AdvertiserKey, _ data: [UInt8], scanResponse: Bool) -> AdvertisingDataObservation {
            model.received(k, data: data[...], scanResponse: scanResponse, legacy: true, addressType: 0, rssi: nil, scan: nil)
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
            model.received(key, data: data[...], scanResponse: scanResponse, legacy: true, addressType: 1, rssi: -60,
                           scan: scan.map { (number: $0.0, app: $0.1) })
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
