import Capture
import Foundation
import XCTest
import Wire

/// Reads every record; returns copies so tests can look at them after the buffer moved on.
struct ReadResult {
    var records: [(record: Record, data: [UInt8])] = []
    var truncation: CaptureError?
    var drops: UInt64 = 0
    var format: CaptureFormat?
}

func readAll(_ reader: CaptureReader) throws -> ReadResult {
    var result = ReadResult(format: reader.format)
    while let r = try reader.next() { result.records.append((r, Array(r.data))) }
    result.truncation = reader.truncation
    result.drops = reader.drops
    return result
}

func readAll(path: String) throws -> ReadResult { try readAll(CaptureReader(path: path)) }

func captureError(_ body: () throws -> Void) -> CaptureError? {
    do { try body() } catch let e as CaptureError { return e } catch { XCTFail("unexpected \(error)") }
    return nil
}

final class SharedCaptureTests: XCTestCase {
    /// Every real capture reads to the end with tshark's frame count.
    func testSharedCapturesFrameCounts() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/captures")
        let manifest = root.appendingPathComponent("MANIFEST.tsv")
        guard let text = try? String(contentsOf: manifest, encoding: .utf8) else {
            throw XCTSkip("shared captures not present at \(root.path)")
        }
        var checked = 0
        for line in text.split(separator: "\n").dropFirst() {
            let cols = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard cols.count > 5, let expected = Int(cols[5]) else { continue }
            let path = root.appendingPathComponent(String(cols[0])).path
            do {
                let result = try readAll(path: path)
                XCTAssertEqual(result.records.count, expected, "\(cols[0])")
                XCTAssertNil(result.truncation, "\(cols[0])")
                // Records tile the file: each starts where the previous one ended.
                var prev: Record?
                for (r, _) in result.records {
                    if let p = prev { XCTAssertEqual(r.fileOffset, p.fileOffset + Int64(p.fileLength), "\(cols[0]) #\(r.number)"); }
                    prev = r
                }
                if let last = result.records.last, !String(cols[3]).hasPrefix("pcapng") {
                    XCTAssertEqual(last.record.fileOffset + Int64(last.record.fileLength), Int64(cols[4]), "\(cols[0]) end")
                }
                XCTAssertEqual(result.records.last?.record.number ?? 0, expected)
            } catch {
                XCTFail("\(cols[0]): \(error)")
            }
            checked += 1
        }
        XCTAssertGreaterThan(checked, 20)
    }
}

final class ReaderTests: TempDirTestCase {
    func testPcapMicroAndNanoBothByteOrders() throws {
        for ns in [false, true] {
            for be in [false, true] {
                let frac: UInt32 = ns ? 123_456_789 : 123_456
                let bytes = pcapFile(nanoseconds: ns, bigEndian: be, linkType: 201, [
                    PcapRecord(seconds: 1_700_000_000, fraction: frac, data: [0, 0, 0, 1, 4, 0x0e, 0]),
                    PcapRecord(seconds: 1_700_000_001, fraction: 0, data: []),
                    PcapRecord(seconds: 1_700_000_002, fraction: 5, data: [1, 2, 3], originalLength: 10),
                ])
                let path = try write("p\(ns)\(be).pcap", bytes)
                let r = try readAll(path: path)
                XCTAssertEqual(r.format, .pcap(nanoseconds: ns, bigEndian: be))
                XCTAssertEqual(r.records.count, 3)
                XCTAssertEqual(r.records[0].record.timestamp, 1_700_000_000 * 1_000_000_000 + (ns ? 123_456_789 : 123_456_000))
                XCTAssertEqual(r.records[0].data, [0, 0, 0, 1, 4, 0x0e, 0])
                XCTAssertEqual(r.records[0].record.linkType, 201)
                XCTAssertEqual(r.records[0].record.flags, 0)
                XCTAssertEqual(r.records[0].record.fileOffset, 24)
                XCTAssertEqual(r.records[0].record.fileLength, 23)
                XCTAssertEqual(r.records[1].data, [])
                XCTAssertEqual(r.records[1].record.fileOffset, 47)
                XCTAssertEqual(r.records[2].record.number, 3)
                XCTAssertTrue(r.records[2].record.truncated)
                XCTAssertEqual(r.records[2].record.originalLength, 10)
                XCTAssertEqual(r.records[2].record.timestamp % 1_000_000_000, ns ? 5 : 5000)
            }
        }
    }

    func testPcapngTwoLinkTypesAndUnknownBlock() throws {
        for be in [false, true] {
            var bytes = pcapngSHB(be: be)
            bytes += pcapngIDB(linkType: 201, be: be)  // µs default
            bytes += pcapngEPB(interface: 0, timestamp: 1_700_000_000_000_001, [0, 0, 0, 1, 4, 0x0e], be: be)
            bytes += pcapngIDB(linkType: 254, tsresol: 9, be: be)
            bytes += pcapngBlock(0x0BAD, [1, 2, 3], be: be)
            bytes += pcapngEPB(interface: 1, timestamp: 1_700_000_000_000_000_007, [0, 0, 0, 3, 9], be: be)
            bytes += pcapngEPB(interface: 0, timestamp: 1_700_000_000_000_002, [0, 0, 0, 0, 1], originalLength: 9, be: be)
            let path = try write("two\(be).pcapng", bytes)
            let r = try readAll(path: path)
            XCTAssertEqual(r.format, .pcapng)
            XCTAssertEqual(r.records.map { $0.record.linkType }, [201, 254, 201])
            XCTAssertEqual(r.records.map { $0.record.number }, [1, 2, 3])
            XCTAssertEqual(r.records.map { $0.record.timestamp },
                           [1_700_000_000_000_001_000, 1_700_000_000_000_000_007, 1_700_000_000_000_002_000])
            XCTAssertEqual(r.records[1].data, [0, 0, 0, 3, 9])
            XCTAssertEqual(r.records[2].record.originalLength, 9)
            XCTAssertNil(r.truncation)
            // Offsets: SHB 28, IDB 20, EPB 40 (6 bytes padded to 8).
            XCTAssertEqual(r.records[0].record.fileOffset, 48)
            XCTAssertEqual(r.records[0].record.fileLength, 40)
            XCTAssertEqual(r.records[1].record.fileOffset, 48 + 40 + 32 + 16)
            XCTAssertEqual(r.records[1].record.fileLength, 40)
        }
    }

    func testPcapngSingleLinkTypeThroughLibpcap() throws {
        var bytes = pcapngSHB()
        bytes += pcapngIDB(linkType: 272, tsresol: 9)
        bytes += pcapngBlock(0x0BAD, [1, 2, 3])
        bytes += pcapngEPB(interface: 0, timestamp: 1_700_000_000_123_456_789, [1, 2, 3, 4, 5])
        bytes += pcapngIDB(linkType: 272)
        bytes += pcapngEPB(interface: 1, timestamp: 1_700_000_000_000_002, [])
        let r = try readAll(path: try write("one.pcapng", bytes))
        XCTAssertEqual(r.records.count, 2)
        XCTAssertEqual(r.records[0].record.timestamp, 1_700_000_000_123_456_789)
        XCTAssertEqual(r.records[1].record.timestamp, 1_700_000_000_000_002_000)
        XCTAssertEqual(r.records[1].data, [])
        XCTAssertEqual(r.records[0].record.linkType, 272)
    }

    func testBtsnoopDatalinks() throws {
        for datalink: UInt32 in [1001, 1002, 2001] {
            let bytes = btsnoopFile(datalink: datalink, [
                BtsnoopRecord(micros: 1_700_000_000_000_001, flags: 3, data: [4, 0x0e, 0]),
                BtsnoopRecord(micros: 1_700_000_000_000_002, flags: 0x0001_0002, data: [], drops: 7),
            ])
            let r = try readAll(path: try write("b\(datalink).log", bytes))
            XCTAssertEqual(r.format, .btsnoop(datalink: datalink))
            XCTAssertEqual(r.records.count, 2)
            XCTAssertEqual(r.records[0].record.linkType, 0x10000 + datalink)
            XCTAssertEqual(r.records[0].record.timestamp, 1_700_000_000_000_001_000)
            XCTAssertEqual(r.records[0].record.flags, 3)
            XCTAssertEqual(r.records[0].data, [4, 0x0e, 0])
            XCTAssertEqual(r.records[0].record.fileOffset, 16)
            XCTAssertEqual(r.records[0].record.fileLength, 27)
            XCTAssertEqual(r.records[1].record.flags, 0x0001_0002)
            XCTAssertEqual(r.records[1].data, [])
            XCTAssertEqual(r.drops, 7)
        }
        let empty = try readAll(path: try write("empty.log", btsnoopFile(datalink: 1002, [])))
        XCTAssertEqual(empty.records.count, 0)
        XCTAssertNil(empty.truncation)
    }

    func testBtsnoopWrongVersionAndDatalink() throws {
        let v2 = captureError { _ = try readAll(path: try write("v2.log", btsnoopFile(datalink: 1002, version: 2, []))) }
        XCTAssertEqual(v2?.kind, .unsupportedVersion)
        XCTAssertTrue(v2?.description.contains("unsupported btsnoop version 2") ?? false)
        let dl = captureError { _ = try readAll(path: try write("dl.log", btsnoopFile(datalink: 1003, []))) }
        XCTAssertEqual(dl?.kind, .unsupportedLinkType(0x10000 + 1003))
    }

    func testNotACapture() throws {
        let path = try write("text.pcap", Array("hello, this is not a capture".utf8))
        let e = captureError { _ = try readAll(path: path) }
        XCTAssertEqual(e?.kind, .notACapture)
        XCTAssertEqual(e?.description, "\(path): not a capture file (pcap, pcapng or btsnoop)")
        XCTAssertEqual(captureError { _ = try readAll(path: try write("zero", [])) }?.kind, .notACapture)
        XCTAssertEqual(captureError { _ = try readAll(path: self.path("missing")) }?.kind, .io)
    }

    func testUnsupportedPcapLinkType() throws {
        let path = try write("eth.pcap", pcapFile(nanoseconds: false, bigEndian: false, linkType: 1, []))
        let e = captureError { _ = try readAll(path: path) }
        XCTAssertEqual(e?.kind, .unsupportedLinkType(1))
        XCTAssertEqual(e?.message, "unsupported link type 1 (EN10MB)")
    }

    func testTruncatedHeaders() throws {
        let pcap = pcapFile(nanoseconds: false, bigEndian: false, linkType: 201, [])
        XCTAssertEqual(captureError { _ = try readAll(path: try write("h.pcap", Array(pcap.prefix(10)))) }?.kind, .truncatedHeader)
        let snoop = btsnoopFile(datalink: 1002, [])
        XCTAssertEqual(captureError { _ = try readAll(path: try write("h.log", Array(snoop.prefix(12)))) }?.kind, .truncatedHeader)
        let ng = pcapngSHB()
        XCTAssertEqual(captureError { _ = try readAll(path: try write("h.pcapng", Array(ng.prefix(20)))) }?.kind, .truncatedHeader)
    }

    func testTruncatedLastRecord() throws {
        let rec = [PcapRecord(seconds: 1, fraction: 0, data: Array(repeating: 7, count: 20)),
                   PcapRecord(seconds: 2, fraction: 0, data: Array(repeating: 8, count: 20))]
        let full = pcapFile(nanoseconds: false, bigEndian: false, linkType: 201, rec + [rec[0]])
        // Cut inside the third record's data, then inside its header.
        for cut in [full.count - 10, full.count - 30] {
            let r = try readAll(path: try write("t\(cut).pcap", Array(full.prefix(cut))))
            XCTAssertEqual(r.records.count, 2)
            XCTAssertEqual(r.truncation?.kind, .truncatedRecord)
            XCTAssertEqual(r.truncation?.frame, 3)
            XCTAssertEqual(r.truncation?.offset, 24 + 72)
        }
        let snoop = btsnoopFile(datalink: 1002, Array(repeating: BtsnoopRecord(micros: 5, flags: 0, data: [1, 2, 3, 4]), count: 3))
        for cut in [snoop.count - 2, snoop.count - 20] {
            let r = try readAll(path: try write("t\(cut).log", Array(snoop.prefix(cut))))
            XCTAssertEqual(r.records.count, 2)
            XCTAssertEqual(r.truncation?.frame, 3)
            XCTAssertEqual(r.truncation?.offset, 16 + 56)
            XCTAssertTrue(r.truncation?.description.contains("frame 3 at byte offset 72") ?? false, "\(String(describing: r.truncation))")
        }
        var ng = pcapngSHB() + pcapngIDB(linkType: 201)
        ng += pcapngEPB(interface: 0, timestamp: 1, [1, 2, 3, 4]) + pcapngEPB(interface: 0, timestamp: 2, [1, 2, 3, 4])
        let r = try readAll(path: try write("t.pcapng", Array(ng.prefix(ng.count - 5))))
        XCTAssertEqual(r.records.count, 1)
        XCTAssertEqual(r.truncation?.frame, 2)
    }

    func testLyingAndOversizedLengths() throws {
        // A length longer than the whole file is a corrupt header, not a cut.
        var snoop = btsnoopFile(datalink: 1002, [BtsnoopRecord(micros: 5, flags: 0, data: [1, 2, 3])])
        snoop += btsnoopFile(datalink: 1002, [BtsnoopRecord(micros: 5, flags: 0, data: [1], originalLength: 100_000, includedLength: 100_000)]).dropFirst(16)
        var e = captureError { _ = try readAll(path: try write("lie.log", snoop)) }
        XCTAssertEqual(e?.kind, .recordTooLarge)
        XCTAssertEqual(e?.frame, 2)
        XCTAssertEqual(e?.offset, 16 + 27)

        let big = btsnoopFile(datalink: 1002, [BtsnoopRecord(micros: 5, flags: 0, data: [1], originalLength: 20 << 20, includedLength: 20 << 20)])
        e = captureError { _ = try readAll(path: try write("big.log", big)) }
        XCTAssertEqual(e?.kind, .recordTooLarge)
        XCTAssertTrue(e?.message.contains("16 MiB") ?? false)

        let incl = btsnoopFile(datalink: 1002, [BtsnoopRecord(micros: 5, flags: 0, data: [1, 2], originalLength: 1)])
        e = captureError { _ = try readAll(path: try write("incl.log", incl)) }
        XCTAssertEqual(e?.kind, .recordTooLarge)
        XCTAssertEqual(e?.frame, 1)

        let pcapLie = pcapFile(nanoseconds: false, bigEndian: false, linkType: 201, [
            PcapRecord(seconds: 1, fraction: 0, data: [1, 2]),
            PcapRecord(seconds: 1, fraction: 0, data: [1, 2], originalLength: 100_000, capturedLength: 100_000)])
        e = captureError { _ = try readAll(path: try write("lie.pcap", pcapLie)) }
        XCTAssertEqual(e?.kind, .recordTooLarge)
        XCTAssertEqual(e?.frame, 2)
        XCTAssertEqual(e?.offset, 24 + 18)

        let pcapBig = pcapFile(nanoseconds: false, bigEndian: false, linkType: 201, [
            PcapRecord(seconds: 1, fraction: 0, data: [1, 2], originalLength: 20 << 20, capturedLength: 20 << 20)])
        e = captureError { _ = try readAll(path: try write("big.pcap", pcapBig)) }
        XCTAssertEqual(e?.kind, .recordTooLarge)
        XCTAssertEqual(e?.frame, 1)

        let pcapIncl = pcapFile(nanoseconds: false, bigEndian: false, linkType: 201, [
            PcapRecord(seconds: 1, fraction: 0, data: [1, 2], originalLength: 1)])
        e = captureError { _ = try readAll(path: try write("incl.pcap", pcapIncl)) }
        XCTAssertEqual(e?.kind, .recordTooLarge)
    }

    func testLargeRecordAcrossBlocks() throws {
        // Records bigger than the 1 MiB read block, and many records crossing block edges.
        let large = [UInt8]((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0) })
        var recs = [BtsnoopRecord(micros: 1, flags: 0, data: large)]
        for i in 0..<50_000 { recs.append(BtsnoopRecord(micros: Int64(i), flags: 1, data: Array(repeating: UInt8(i & 0xff), count: i % 97))) }
        let r = try readAll(path: try write("large.log", btsnoopFile(datalink: 1002, recs)))
        XCTAssertEqual(r.records.count, recs.count)
        XCTAssertEqual(r.records[0].data, large)
        for (i, rec) in r.records.enumerated().dropFirst() where i % 997 == 0 { XCTAssertEqual(rec.data, recs[i].data) }
    }
}

final class StreamTests: XCTestCase {
    private func pipeReader(_ chunks: [[UInt8]], afterEach: ((CaptureReader) throws -> Void)? = nil) throws -> ReadResult {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]) }
        for c in chunks { XCTAssertEqual(c.withUnsafeBytes { Glibc.write(fds[1], $0.baseAddress, c.count) }, c.count) }
        close(fds[1])
        return try readAll(CaptureReader(fileDescriptor: fds[0], name: "standard input"))
    }

    func testPipeAllFormats() throws {
        let pcap = pcapFile(nanoseconds: true, bigEndian: false, linkType: 201, [
            PcapRecord(seconds: 1, fraction: 2, data: [0, 0, 0, 1, 4]), PcapRecord(seconds: 3, fraction: 4, data: [])])
        var r = try pipeReader([pcap])
        XCTAssertEqual(r.records.count, 2)
        XCTAssertEqual(r.records[0].record.timestamp, 1_000_000_002)
        XCTAssertEqual(r.records[1].record.fileOffset, 24 + 21)

        let ng = pcapngSHB() + pcapngIDB(linkType: 272) + pcapngEPB(interface: 0, timestamp: 9, [5, 6, 7])
        r = try pipeReader([ng])
        XCTAssertEqual(r.records.count, 1)
        XCTAssertEqual(r.records[0].data, [5, 6, 7])
        XCTAssertEqual(r.records[0].record.fileOffset, 48)
        XCTAssertEqual(r.records[0].record.fileLength, 36)

        let snoop = btsnoopFile(datalink: 2001, [BtsnoopRecord(micros: 1, flags: 12, data: Array("note".utf8))])
        r = try pipeReader([Array(snoop.prefix(3)), Array(snoop.dropFirst(3))])
        XCTAssertEqual(r.records.count, 1)
        XCTAssertEqual(r.records[0].data, Array("note".utf8))

        // Truncated input on a pipe: same warning as a file.
        r = try pipeReader([Array(snoop.dropLast(1))])
        XCTAssertEqual(r.records.count, 0)
        XCTAssertEqual(r.truncation?.frame, 1)

        let e = captureError { _ = try self.pipeReader([Array("garbage!garbage!".utf8)]) }
        XCTAssertEqual(e?.description, "standard input: not a capture file (pcap, pcapng or btsnoop)")
    }

    /// A record is handed out as soon as it is complete, without waiting for more input.
    func testStreamingDoesNotBlock() throws {
        for format in 0..<3 {
            var fds: [Int32] = [0, 0]
            XCTAssertEqual(pipe(&fds), 0)
            defer { close(fds[0]) }
            let records: [[UInt8]]
            let header: [UInt8]
            switch format {
            case 0:
                let f = btsnoopFile(datalink: 1002, [BtsnoopRecord(micros: 1, flags: 0, data: [4, 1, 2])])
                header = Array(f.prefix(16)); records = [Array(f.dropFirst(16)), Array(f.dropFirst(16))]
            case 1:
                let f = pcapFile(nanoseconds: false, bigEndian: false, linkType: 201, [PcapRecord(seconds: 1, fraction: 0, data: [0, 0, 0, 1, 4])])
                header = Array(f.prefix(24)); records = [Array(f.dropFirst(24)), Array(f.dropFirst(24))]
            default:
                header = pcapngSHB() + pcapngIDB(linkType: 201)
                let epb = pcapngEPB(interface: 0, timestamp: 1, [0, 0, 0, 1, 4])
                records = [epb, epb]
            }
            func send(_ b: [UInt8]) { _ = b.withUnsafeBytes { Glibc.write(fds[1], $0.baseAddress, b.count) } }
            send(header + records[0])
            let reader = try CaptureReader(fileDescriptor: fds[0], name: "fifo")
            XCTAssertNotNil(try reader.next(), "format \(format)")
            send(records[1])
            XCTAssertEqual(try reader.next()?.number, 2)
            close(fds[1])
            XCTAssertNil(try reader.next())
            XCTAssertNil(reader.truncation)
        }
    }
}
