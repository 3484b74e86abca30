import XCTest
@testable import Decoders
@testable import Report
import Wire

/// Extended advertising data the controller hands over in fragments (data status "incomplete, more
/// to come") is one advertising event: the feed reports it once, with the whole data.
final class ExtendedFragmentsTests: XCTestCase {
    final class Events: AuditEventSink {
        var reports = 0
        var data: [[UInt8]] = []
        func observe(_ event: AuditEvent, at frame: FrameRef) {
            switch event {
            case .advertisingData(let o) where !o.key.host:
                reports += 1
                data.append(Array(o.data))
            default: break
            }
        }
    }

    /// An LE Extended Advertising Report event with one report.
    static func event(status: UInt16, _ data: [UInt8]) -> [UInt8] {
        let type = status << 5 // connectable off, scannable off, legacy off: data status in bits 5-6
        var p: [UInt8] = [0x0D, 1, UInt8(type & 0xFF), UInt8(type >> 8), 1, 0x01, 0x02, 0x03, 0x04, 0x05, 0xC6,
                          1, 2, 3, 0x7F, 0xC4, 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8(data.count)]
        p += data
        return [0x3E, UInt8(p.count)] + p
    }

    func testFragmentsMakeOneReport() {
        let dissector = Dissector()
        let feed = AuditFeed(dissector: dissector)
        let sink = Events()
        let frames = [Self.event(status: 1, [0x02, 0x01, 0x06, 0x05, 0x09]), Self.event(status: 0, [0x41, 0x42, 0x43, 0x44])]
        for (i, bytes) in frames.enumerated() {
            let p = Packet(number: i + 1, timestamp: Int64(i) * 1000, direction: .received, adapter: 0,
                           kind: .hci(.event), payload: bytes[...])
            feed.events(dissector.dissect(p), into: sink)
        }
        feed.finish(into: sink, at: nil)
        XCTAssertEqual(sink.reports, 1)
        XCTAssertEqual(sink.data, [[0x02, 0x01, 0x06, 0x05, 0x09, 0x41, 0x42, 0x43, 0x44]])
    }
}
