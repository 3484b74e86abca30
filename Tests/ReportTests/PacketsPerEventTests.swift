import XCTest
@testable import Decoders
@testable import Report
import Wire

/// Packets per connection event from an HCI log: Number of Completed Packets events within half an
/// interval of each other are one event's, and an event that left older packets waiting shows the
/// controller's own limit, which then bounds what a stream this host sends could reach.
final class PacketsPerEventTests: XCTestCase {
    /// LE Connection Complete, this host central, handle 0x0040, interval 24 (30 ms).
    static let connected: [UInt8] = [0x3E, 19, 0x01, 0x00, 0x40, 0x00, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 24, 0, 0, 0, 200, 0, 0]
    /// A Write Command of 10 octets to handle 0x0010 on the ATT channel.
    static let write: [UInt8] = [0x40, 0x00, 17, 0, 13, 0, 0x04, 0x00, 0x52, 0x10, 0x00] + [UInt8](repeating: 0xAB, count: 10)
    static func completed(_ n: UInt8) -> [UInt8] { [0x13, 5, 1, 0x40, 0x00, n, 0] }

    func links(_ frames: [(Double, Direction, HCIPacketType, [UInt8])]) -> LinkSummary? {
        let dissector = Dissector()
        let feed = AuditFeed(dissector: dissector)
        let links = LinkCollector()
        var last: FrameRef?
        for (i, (t, direction, type, bytes)) in frames.enumerated() {
            let p = Packet(number: i + 1, timestamp: Int64(t * 1e9), direction: direction, adapter: 0, kind: .hci(type),
                           payload: ArraySlice(bytes))
            let d = dissector.dissect(p)
            links.frame(d)
            feed.events(d, into: links)
            last = FrameRef(number: p.number, time: p.timestamp)
        }
        feed.finish(into: links, at: last)
        return links.finish(at: last).first
    }

    /// Six writes handed over at once, completed two by two 35, 65 and 95 ms later: three events of
    /// two PDUs, the first two with older packets left waiting.
    func testControllerLimit() throws {
        var frames: [(Double, Direction, HCIPacketType, [UInt8])] = [(0, .received, .event, Self.connected)]
        for _ in 0..<6 { frames.append((0.1, .sent, .aclData, Self.write)) }
        for t in [0.135, 0.165, 0.195] { frames.append((t, .received, .event, Self.completed(2))) }
        let l = try XCTUnwrap(links(frames))
        let p = try XCTUnwrap(l.packetsPerEvent)
        XCTAssertEqual(p.events, 3)
        XCTAssertEqual(p.median, 2)
        XCTAssertEqual(p.max, 2)
        XCTAssertEqual(p.limit, 2)
        // A stream of write commands this host sends is held to two 20-octet values an event:
        // 2 × 20 × 8 bits every 30 ms.
        XCTAssertEqual(l.mainKind, "writes_without_response")
        XCTAssertEqual(try XCTUnwrap(l.possibleBitsPerSecond), 2 * 20 * 8 / 0.030, accuracy: 1)
        let knobs = LinkCapacity.limits(try XCTUnwrap(l.parameters), acknowledged: false).map(\.name)
        XCTAssertTrue(knobs.contains("packets_per_event"), "\(knobs)")
    }

    /// Completions that come as soon as the packets: nothing waited, no limit is known.
    func testNoLimitWithoutAQueue() throws {
        var frames: [(Double, Direction, HCIPacketType, [UInt8])] = [(0, .received, .event, Self.connected)]
        for i in 0..<4 {
            let t = 0.1 + Double(i) * 0.03
            frames.append((t, .sent, .aclData, Self.write))
            frames.append((t + 0.01, .received, .event, Self.completed(1)))
        }
        let p = try XCTUnwrap(links(frames)?.packetsPerEvent)
        XCTAssertEqual(p.events, 4)
        XCTAssertEqual(p.max, 1)
        XCTAssertNil(p.limit)
    }
}
