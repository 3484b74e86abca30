import Capture
import Foundation
import XCTest

final class WriterTests: TempDirTestCase {
    let frames: [(ts: Int64, data: [UInt8], original: Int?)] = [
        (1_700_000_000_123_456_000, [0, 0, 0, 1, 4, 0x0e, 4, 1, 3, 0x0c, 0], nil),
        // Wireshark rejects frames shorter than the link type's pseudo-header, so none is empty here.
        (1_700_000_001_000_000_000, [0, 0, 0, 1], nil),
        (1_700_000_002_000_001_000, [0, 0, 0, 0, 1, 3, 0x0c, 0], 20),
    ]

    func testPcapRoundTrip() throws {
        for linkType: UInt32 in [201, 254, 187, 272] {
            let path = self.path("w\(linkType).pcap")
            let w = try PcapWriter(path: path, linkType: linkType)
            for f in frames { try w.write(timestamp: f.ts, data: f.data[...], originalLength: f.original) }
            let r = try readAll(path: path)
            XCTAssertEqual(r.format, .pcap(nanoseconds: false, bigEndian: false))
            XCTAssertEqual(r.records.map { $0.data }, frames.map { $0.data })
            XCTAssertEqual(r.records.map { $0.record.timestamp }, frames.map { $0.ts })
            XCTAssertEqual(r.records.map { $0.record.linkType }, [linkType, linkType, linkType])
            XCTAssertEqual(r.records[2].record.originalLength, 20)
            try checkTshark(path, count: frames.count)
        }
    }

    func testBtsnoopRoundTrip() throws {
        for datalink: UInt32 in [1002, 2001, 1001] {
            let path = self.path("w\(datalink).log")
            let w = try BtsnoopWriter(path: path, datalink: datalink)
            for (i, f) in frames.enumerated() {
                try w.write(timestamp: f.ts, flags: UInt32(i), data: f.data[...], originalLength: f.original, drops: UInt32(i * 2))
            }
            let r = try readAll(path: path)
            XCTAssertEqual(r.format, .btsnoop(datalink: datalink))
            XCTAssertEqual(r.records.map { $0.data }, frames.map { $0.data })
            XCTAssertEqual(r.records.map { $0.record.timestamp }, frames.map { $0.ts })
            XCTAssertEqual(r.records.map { $0.record.flags }, [0, 1, 2])
            XCTAssertEqual(r.records[2].record.originalLength, 20)
            XCTAssertEqual(r.drops, 4)
            try checkTshark(path, count: frames.count)
        }
        XCTAssertEqual(captureError { _ = try BtsnoopWriter(path: self.path("x.log"), datalink: 1003) }?.kind,
                       .unsupportedLinkType(0x10000 + 1003))
    }

    func testPcapngRoundTripTwoInterfaces() throws {
        let path = self.path("w.pcapng")
        let w = try PcapngWriter(path: path, linkTypes: [201, 254])
        for (i, f) in frames.enumerated() { try w.write(interface: i % 2, timestamp: f.ts + 7, data: f.data[...], originalLength: f.original) }
        let r = try readAll(path: path)
        XCTAssertEqual(r.records.map { $0.data }, frames.map { $0.data })
        XCTAssertEqual(r.records.map { $0.record.timestamp }, frames.map { $0.ts + 7 })
        XCTAssertEqual(r.records.map { $0.record.linkType }, [201, 254, 201])
        try checkTshark(path, count: frames.count)
    }

    func testRefusesSymlink() throws {
        let target = try write("target", [1, 2, 3])
        try FileManager.default.createSymbolicLink(atPath: path("link.pcap"), withDestinationPath: target)
        let e = captureError { _ = try PcapWriter(path: self.path("link.pcap"), linkType: 201) }
        XCTAssertEqual(e?.kind, .io)
        XCTAssertTrue(e?.message.contains("symbolic link") ?? false)
        XCTAssertNotNil(captureError { _ = try BtsnoopWriter(path: self.path("link.pcap"), datalink: 1002) })
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: target)), Data([1, 2, 3]))
    }
}

extension XCTestCase {
    /// Wireshark opens what we write, with the same frame count (checked where tshark is installed).
    func checkTshark(_ path: String, count: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let candidates = ["/usr/bin/tshark", "/usr/local/bin/tshark"]
        guard let tshark = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tshark)
        p.arguments = ["-r", path, "-T", "fields", "-e", "frame.number"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        try? out.fileHandleForReading.close()
        XCTAssertEqual(p.terminationStatus, 0, "tshark -r \(path)", file: file, line: line)
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        XCTAssertEqual(lines.count, count, "tshark frame count for \(path)", file: file, line: line)
    }
}
