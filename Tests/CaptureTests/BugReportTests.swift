import Capture
import Decoders
import Foundation
import XCTest
import Wire

/// Android bug reports built by scripts/fixtures/make_bugreport.py from gatt_session.btsnoop.
final class BugReportTests: TempDirTestCase {
    var original: ReadResult!

    override func setUpWithError() throws {
        try super.setUpWithError()
        original = try readAll(path: capturesDir.appendingPathComponent("gatt_session.btsnoop").path)
    }

    func phone(_ name: String) -> String { phoneDir.appendingPathComponent(name).path }

    /// The records equal the original's, ACL cut to 15 bytes (type byte + 14) when `aclCut`.
    func assertSameFrames(_ r: ReadResult, count: Int? = nil, aclCut: Bool, exactTimes: Bool = true,
                          file: StaticString = #filePath, line: UInt = #line) {
        let n = count ?? original.records.count
        XCTAssertEqual(r.records.count, n, file: file, line: line)
        for (i, (got, want)) in zip(r.records, original.records.prefix(n)).enumerated() {
            XCTAssertEqual(got.record.number, i + 1, file: file, line: line)
            XCTAssertEqual(got.record.linkType, 0x10000 + 1002, file: file, line: line)
            XCTAssertEqual(got.record.flags & 1, want.record.flags & 1, "#\(i + 1) direction", file: file, line: line)
            if exactTimes { XCTAssertEqual(got.record.timestamp, want.record.timestamp, "#\(i + 1)", file: file, line: line) }
            let cut = aclCut && want.data.first == 0x02 && want.data.count > 15
            XCTAssertEqual(got.data, cut ? Array(want.data.prefix(15)) : want.data, "#\(i + 1)", file: file, line: line)
            XCTAssertEqual(got.record.originalLength, want.data.count, "#\(i + 1)", file: file, line: line)
            XCTAssertEqual(got.record.truncated, cut, "#\(i + 1)", file: file, line: line)
        }
    }

    func testBtsnoozVersion1() throws {
        let r = try readAll(path: phone("bugreport_v1.txt"))
        XCTAssertEqual(r.format, .btsnooz(version: 1))
        XCTAssertNil(r.truncation)
        assertSameFrames(r, aclCut: false)
    }

    func testBtsnoozVersion2MarksCutACLTruncated() throws {
        let r = try readAll(path: phone("bugreport_v2.txt"))
        XCTAssertEqual(r.format, .btsnooz(version: 2))
        assertSameFrames(r, aclCut: true)
        // The decoders are told: the packet is short because the capture cut it.
        let (rec, data) = try XCTUnwrap(r.records.first { $0.record.truncated })
        let p = Packet(Record(number: rec.number, timestamp: rec.timestamp, linkType: rec.linkType, flags: rec.flags, data: data[...], originalLength: rec.originalLength, fileOffset: rec.fileOffset, fileLength: rec.fileLength))
        XCTAssertTrue(p.truncated)
        XCTAssertEqual(p.kind, .hci(.aclData))
    }

    func testZipReadsLastThenCurrentLog() throws {
        let r = try readAll(path: phone("bugreport.zip"))
        XCTAssertEqual(r.format, .bugReportZip)
        XCTAssertNil(r.truncation)
        assertSameFrames(r, aclCut: false)
    }

    func testZipWithoutLogsUsesBtsnooz() throws {
        let r = try readAll(path: phone("bugreport_textonly.zip"))
        XCTAssertEqual(r.format, .bugReportZip)
        assertSameFrames(r, aclCut: true)
    }

    func testZipFromStandardInputStream() throws {
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: phone("bugreport.zip"))))
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let writeEnd = fds[1]
        let writer = Thread {
            bytes.withUnsafeBytes { raw in
                var done = 0
                while done < raw.count {
                    let n = Glibc.write(writeEnd, raw.baseAddress! + done, raw.count - done)
                    if n <= 0 { break }
                    done += n
                }
            }
            close(writeEnd)
        }
        writer.start()
        let r = try readAll(CaptureReader(fileDescriptor: fds[0], name: "standard input", closeWhenDone: true))
        assertSameFrames(r, aclCut: false)
    }

    func testBadBase64KeepsFramesBefore() throws {
        let reader = try CaptureReader(path: phone("bugreport_bad_base64.txt"))
        var records: [(record: Record, data: [UInt8])] = []
        let e = captureError { while let r = try reader.next() { records.append((r, Array(r.data))) } }
        XCTAssertEqual(e?.kind, .malformed)
        XCTAssertTrue(e?.message.contains("invalid base64") ?? false, e?.description ?? "")
        XCTAssertTrue(e?.message.contains("'!'") ?? false)
        XCTAssertNotNil(e?.offset)
        XCTAssertGreaterThan(records.count, 10)
        // Times are counted back from the last record's, which was lost: only the packets compare.
        assertSameFrames(ReadResult(records: records), count: records.count, aclCut: true, exactTimes: false)
        XCTAssertNil(try reader.next())
    }

    func testTruncatedDeflateKeepsFramesBefore() throws {
        let reader = try CaptureReader(path: phone("bugreport_truncated_deflate.txt"))
        var records: [(record: Record, data: [UInt8])] = []
        let e = captureError { while let r = try reader.next() { records.append((r, Array(r.data))) } }
        XCTAssertEqual(e?.kind, .truncatedRecord)
        XCTAssertTrue(e?.message.contains("deflate stream ends early") ?? false, e?.description ?? "")
        XCTAssertEqual(e?.frame, records.count + 1)
        XCTAssertGreaterThan(records.count, 10)
        assertSameFrames(ReadResult(records: records), count: records.count, aclCut: true, exactTimes: false)
        // Time differences between frames are kept.
        for i in 1..<records.count {
            XCTAssertEqual(records[i].record.timestamp - records[i - 1].record.timestamp,
                           original.records[i].record.timestamp - original.records[i - 1].record.timestamp)
        }
    }

    func testUnknownVersion() throws {
        let e = captureError { _ = try readAll(path: self.phone("bugreport_bad_version.txt")) }
        XCTAssertEqual(e?.kind, .unsupportedVersion)
        XCTAssertEqual(e?.message, "unsupported btsnooz version 3 (1 and 2 are read)")
    }

    func testMalformedSections() throws {
        let v2 = try String(contentsOf: URL(fileURLWithPath: phone("bugreport_v2.txt")), encoding: .utf8)
        // No END marker: every frame, and a warning.
        let noEnd = v2.components(separatedBy: "--- END:")[0]
        var r = try readAll(path: try write("noend.txt", Array(noEnd.utf8)))
        XCTAssertEqual(r.records.count, original.records.count)
        XCTAssertEqual(r.truncation?.kind, .truncatedRecord)
        // Empty section: too short for its header.
        let empty = "x\n--- BEGIN:BTSNOOP_LOG_SUMMARY (0 bytes in) ---\n--- END:BTSNOOP_LOG_SUMMARY ---\n"
        XCTAssertEqual(captureError { _ = try readAll(path: try self.write("empty.txt", Array(empty.utf8))) }?.kind, .truncatedHeader)
        // Text without a section: not a capture, with the usual message.
        let plain = try write("plain.txt", Array(String(repeating: "just some text\n", count: 1000).utf8))
        XCTAssertEqual(captureError { _ = try readAll(path: plain) }?.kind, .notACapture)
        // Zip without logs or text.
        let corrupt = try Array(Data(contentsOf: URL(fileURLWithPath: phone("bugreport.zip"))))
        r = try readAll(path: try write("ok.zip", corrupt))
        XCTAssertEqual(r.records.count, original.records.count)
        // A damaged entry: a clear error, no crash.
        var damaged = corrupt
        // Inside the deflated .last log (its local header's name comes first in the file).
        let name = Array("btsnoop_hci.log.last".utf8)
        let at = try XCTUnwrap((0..<(damaged.count - name.count)).first { damaged[$0..<($0 + name.count)].elementsEqual(name) })
        for i in (at + name.count + 20)..<(at + name.count + 80) { damaged[i] ^= 0x5A }
        XCTAssertNotNil(captureError { _ = try readAll(path: try self.write("damaged.zip", damaged)) })
        XCTAssertNotNil(captureError { _ = try readAll(path: try self.write("cut.zip", Array(corrupt.prefix(3000)))) })
    }

    /// Cut and mutated bug reports never crash.
    func testMutations() throws {
        var rng = SystemRandomNumberGenerator()
        for name in ["bugreport_v2.txt", "bugreport_v1.txt", "bugreport.zip"] {
            let base = try Array(Data(contentsOf: URL(fileURLWithPath: phone(name))))
            for i in 0..<100 {
                var b = Array(base.prefix(Int.random(in: 4...base.count, using: &rng)))
                for _ in 0..<(i % 6) { b[Int.random(in: 0..<b.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
                let path = try write("m\(i)-\(name)", b)
                do {
                    let reader = try CaptureReader(path: path)
                    while try reader.next() != nil {}
                } catch {}
            }
        }
    }

    func testMergedReaderOrdersByTimeStably() throws {
        // Odd and even frames in two files; a third with copies of some timestamps.
        let odd = path("odd.log"), even = path("even.log"), same = path("same.log")
        let wo = try BtsnoopWriter(path: odd, datalink: 1002), we = try BtsnoopWriter(path: even, datalink: 1002)
        let ws = try BtsnoopWriter(path: same, datalink: 1002)
        for (i, (rec, data)) in original.records.enumerated() {
            try (i % 2 == 0 ? wo : we).write(timestamp: rec.timestamp, flags: rec.flags, data: data[...])
            if i < 3 { try ws.write(timestamp: rec.timestamp, flags: 0, data: [0xEE][...]) }
        }
        let merged = MergedReader([try CaptureReader(path: even), try CaptureReader(path: odd)])
        var out: [[UInt8]] = []
        var n = 0
        while let r = try merged.next() {
            n += 1
            XCTAssertEqual(r.number, n)
            out.append(Array(r.data))
        }
        XCTAssertEqual(out, original.records.map(\.data))

        let m2 = MergedReader([try CaptureReader(path: odd), try CaptureReader(path: same)])
        var firsts: [UInt8] = []
        var sources: [Int] = []
        while let r = try m2.next(), firsts.count < 4 {
            firsts.append(r.data.first ?? 0)
            sources.append(m2.currentReader ?? -1)
        }
        // Equal timestamps: the first reader's record comes first.
        XCTAssertEqual(sources, [0, 1, 1, 0])
        XCTAssertEqual(firsts, [original.records[0].data[0], 0xEE, 0xEE, original.records[2].data[0]])
        XCTAssertTrue(MergedReader([]).truncations.isEmpty)
        XCTAssertNil(try MergedReader([]).next())
    }
}
