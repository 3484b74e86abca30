import XCTest
import Capture
import Decoders
import Report
import Wire

/// Memory stays flat however long the capture: what the decoders and the audit keep past a frame
/// must not be a slice of that frame's bytes, or it keeps the whole block of the capture the reader
/// read the frame into (a quiet connection's last ATT result once kept one block per connection).
/// Here each frame gets bytes of its own; once the capture is read, writing to them must copy
/// nothing, but for the few frames the decoders still hand out as the latest of their kind.
final class FrameBytesTests: XCTestCase {
    /// Frames the passes may still hold at the end: the latest with an ATT PDU (each pass's GATT
    /// store reuses one result) and the latest link-layer frame (the tracker reuses it).
    static let latestKept = 2

    func testCommittedCapturesKeepNoFramesBytes() throws {
        for name in Fixtures.committed { try check(Fixtures.captures + "/" + name) }
    }

    func testSharedCapturesKeepNoFramesBytes() throws {
        for name in try Fixtures.sharedOrSkip() { try check(Fixtures.shared + "/" + name) }
    }

    /// Reads `path` as `read` (ended connections kept), `diff` (the audit and the metrics, none
    /// kept), `report` (audit, advertisers, links and the page's tables) and `mock` do, side by side.
    private func check(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        // Files of the shared set no reader opens (a README, a bug report's text) have no frames.
        guard let reader = try? CaptureReader(path: path) else { return }
        var frames: [[UInt8]] = []
        let read = Dissector()
        let audited = Dissector(keepEnded: 0, findsFieldFaults: false)
        let configuration = AuditConfiguration()
        let feed = AuditFeed(dissector: audited, configuration: configuration)
        let auditor = Auditor(configuration: configuration, capturePath: path)
        let metrics = MetricsCollector(passingTo: auditor, devices: configuration.devices)
        let report = ReportPass(path: path)
        let mocked = Dissector(trackAdvertisers: true, findsFieldFaults: false)
        let mock = MockCollector(gatt: mocked.gatt)
        while var r = try? reader.next() {
            frames.append(Array(r.data))
            r.data = frames[frames.count - 1][...]
            let p = Packet(r)
            _ = read.dissect(p)
            let d = audited.dissect(p)
            metrics.frame(d)
            feed.events(d, into: metrics)
            report.add(p)
            mock.add(mocked.dissect(p))
        }
        var held: [Int] = []
        for i in frames.indices where !frames[i].isEmpty {
            let before = frames[i].withUnsafeBufferPointer { $0.baseAddress }
            let after = frames[i].withUnsafeMutableBufferPointer { UnsafePointer($0.baseAddress) }
            if before != after { held.append(i + 1) }
        }
        // The passes end as their commands end them, once the check has seen what they held.
        feed.finish(into: metrics, at: nil)
        _ = report.finish()
        withExtendedLifetime((read, audited, mocked, mock)) {}
        XCTAssertLessThanOrEqual(held.count, Self.latestKept,
                                 "\(path): frames whose bytes are still held: \(held.prefix(20))", file: file, line: line)
    }
}
