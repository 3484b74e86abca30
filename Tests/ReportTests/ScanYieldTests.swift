import XCTest
@testable import Decoders
@testable import Report
import Wire

/// What a scan brought in is counted by the scan model, once, and handed on with the scan when it
/// stops or the capture ends; a sink that looks at no report is told only the time of each.
final class ScanYieldTests: XCTestCase {
    final class Events: AuditEventSink {
        var interest = AdvertisingInterest.every
        var stopped: [Scan] = []
        var atEnd: [(Scan, FrameRef)] = []
        var observations = 0
        var advanced: [Int] = []
        var advertisingInterest: AdvertisingInterest { interest }
        func advance(to frame: FrameRef) { advanced.append(frame.number) }
        func observe(_ event: AuditEvent, at frame: FrameRef) {
            switch event {
            case .scanStopped(let s): stopped.append(s)
            case .scanAtEnd(let s): atEnd.append((s, frame))
            case .advertisingData: observations += 1
            default: break
            }
        }
    }

    static let a: UInt64 = 0xC0FF_EE00_000A, b: UInt64 = 0xC0FF_EE00_000B

    /// LE Set Scan Enable with duplicate filtering off.
    static func scanEnable(_ on: Bool) -> [UInt8] { [0x0C, 0x20, 2, on ? 1 : 0, 0] }

    /// An LE Advertising Report event with one legacy report: ADV_IND, or SCAN_RSP.
    static func report(from address: UInt64, scanResponse: Bool = false) -> [UInt8] {
        let data: [UInt8] = [0x02, 0x01, 0x06]
        var p: [UInt8] = [0x02, 1, scanResponse ? 0x04 : 0x00, 0x01]
        p += (0..<6).map { UInt8(truncatingIfNeeded: address >> (8 * $0)) }
        p += [UInt8(data.count)] + data + [0xC4]
        return [0x3E, UInt8(p.count)] + p
    }

    /// Feeds `frames` (commands sent, events received) one millisecond apart and finishes.
    static func run(_ frames: [[UInt8]], into sink: Events) {
        let dissector = Dissector()
        let feed = AuditFeed(dissector: dissector)
        var last: FrameRef?
        for (i, bytes) in frames.enumerated() {
            let command = bytes[0] != 0x3E
            let p = Packet(number: i + 1, timestamp: Int64(i) * 1_000_000, direction: command ? .sent : .received,
                           adapter: 0, kind: .hci(command ? .command : .event), payload: bytes[...])
            feed.events(dissector.dissect(p), into: sink)
            last = FrameRef(number: p.number, time: p.timestamp)
        }
        feed.finish(into: sink, at: last)
    }

    func testStoppedScanCarriesWhatItBroughtIn() throws {
        let sink = Events()
        Self.run([Self.scanEnable(true), Self.report(from: Self.a), Self.report(from: Self.b), Self.report(from: Self.a),
                  Self.report(from: Self.a, scanResponse: true), Self.report(from: Self.b), Self.report(from: Self.a),
                  Self.scanEnable(false)], into: sink)
        let s = try XCTUnwrap(sink.stopped.first)
        XCTAssertEqual(sink.stopped.count, 1)
        XCTAssertTrue(sink.atEnd.isEmpty)
        // The scan response answers this host's scan request: no report of its own.
        XCTAssertEqual(s.yield.reports, 5)
        XCTAssertEqual(s.yield.advertisers, 2)
        XCTAssertEqual(s.yield.top?.address, BDAddr(Self.a))
        XCTAssertEqual(s.yield.top?.reports, 3)
        XCTAssertEqual(s.yield.lastReport?.number, 7)
        XCTAssertEqual(sink.observations, 6)
    }

    func testScanStillOnAtTheEndIsHandedOnAsItStands() throws {
        let sink = Events()
        Self.run([Self.scanEnable(true), Self.report(from: Self.b), Self.report(from: Self.b), Self.report(from: Self.a)],
                 into: sink)
        XCTAssertTrue(sink.stopped.isEmpty)
        let (s, at) = try XCTUnwrap(sink.atEnd.first)
        XCTAssertEqual(at.number, 4)
        XCTAssertEqual(s.yield.reports, 3)
        XCTAssertEqual(s.yield.advertisers, 2)
        XCTAssertEqual(s.yield.top?.address, BDAddr(Self.b))
        XCTAssertEqual(s.yield.top?.reports, 2)
    }

    /// Ties go to the lowest address, whatever the order the reports came in.
    func testTiedAdvertisersKeepTheLowestAddress() throws {
        let sink = Events()
        Self.run([Self.scanEnable(true), Self.report(from: Self.b), Self.report(from: Self.a)], into: sink)
        let (s, _) = try XCTUnwrap(sink.atEnd.first)
        XCTAssertEqual(s.yield.top?.address, BDAddr(Self.a))
        XCTAssertEqual(s.yield.top?.reports, 1)
    }

    /// A sink that looks at no report gets no observation, only each report's time; the scan still
    /// counts them.
    func testReportsNobodyLooksAtAreOnlyTimed() throws {
        let sink = Events()
        sink.interest = .none
        Self.run([Self.scanEnable(true), Self.report(from: Self.a), Self.report(from: Self.b), Self.scanEnable(false)],
                 into: sink)
        XCTAssertEqual(sink.observations, 0)
        XCTAssertEqual(sink.advanced, [2, 3])
        XCTAssertEqual(sink.stopped.first?.yield.reports, 2)
    }

    /// Data that shows its advertiser something new is observed by a sink that asks for it; the
    /// same data again is not.
    func testInterestInNewFactsSeesTheFirstShowingOnly() {
        let sink = Events()
        sink.interest = .new([.completeName])
        let named: [UInt8] = {
            let data: [UInt8] = [0x03, 0x09, 0x41, 0x42]
            var p: [UInt8] = [0x02, 1, 0x00, 0x01]
            p += (0..<6).map { UInt8(truncatingIfNeeded: Self.a >> (8 * $0)) }
            p += [UInt8(data.count)] + data + [0xC4]
            return [0x3E, UInt8(p.count)] + p
        }()
        Self.run([Self.scanEnable(true), named, named, Self.report(from: Self.b)], into: sink)
        XCTAssertEqual(sink.observations, 1)
        XCTAssertEqual(sink.advanced, [3, 4])
    }
}
