import Foundation
import XCTest

/// Builds capture files byte by byte for the reader tests.
struct ByteWriter {
    var b: [UInt8] = []
    mutating func u8(_ v: UInt8) { b.append(v) }
    mutating func u16(_ v: UInt16, be: Bool = false) {
        let x = [UInt8(v & 0xff), UInt8(v >> 8)]
        b += be ? x.reversed() : x
    }
    mutating func u32(_ v: UInt32, be: Bool = false) {
        let x = (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) }
        b += be ? x.reversed() : x
    }
    mutating func u64(_ v: UInt64, be: Bool = false) {
        let x = (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) }
        b += be ? x.reversed() : x
    }
    mutating func raw(_ d: [UInt8]) { b += d }
}

struct PcapRecord {
    var seconds: UInt32
    var fraction: UInt32
    var data: [UInt8]
    var originalLength: Int? = nil
    var capturedLength: UInt32? = nil
}

func pcapFile(nanoseconds: Bool, bigEndian be: Bool, linkType: UInt32, _ records: [PcapRecord]) -> [UInt8] {
    var w = ByteWriter()
    w.u32(nanoseconds ? 0xa1b2_3c4d : 0xa1b2_c3d4, be: be)
    w.u16(2, be: be); w.u16(4, be: be); w.u32(0, be: be); w.u32(0, be: be); w.u32(262_144, be: be); w.u32(linkType, be: be)
    for r in records {
        w.u32(r.seconds, be: be); w.u32(r.fraction, be: be)
        w.u32(r.capturedLength ?? UInt32(r.data.count), be: be)
        w.u32(UInt32(r.originalLength ?? r.data.count), be: be)
        w.raw(r.data)
    }
    return w.b
}

struct BtsnoopRecord {
    var micros: Int64
    var flags: UInt32
    var data: [UInt8]
    var drops: UInt32 = 0
    var originalLength: UInt32? = nil
    var includedLength: UInt32? = nil
}

let btsnoopEpoch: Int64 = 0x00dc_ddb3_0f2f_8000

func btsnoopFile(datalink: UInt32, version: UInt32 = 1, _ records: [BtsnoopRecord]) -> [UInt8] {
    var w = ByteWriter()
    w.raw(Array("btsnoop".utf8) + [0]); w.u32(version, be: true); w.u32(datalink, be: true)
    for r in records {
        w.u32(r.originalLength ?? UInt32(r.data.count), be: true)
        w.u32(r.includedLength ?? UInt32(r.data.count), be: true)
        w.u32(r.flags, be: true); w.u32(r.drops, be: true)
        w.u64(UInt64(bitPattern: r.micros + btsnoopEpoch), be: true)
        w.raw(r.data)
    }
    return w.b
}

/// pcapng blocks (little-endian unless `be`).
func pcapngBlock(_ type: UInt32, _ body: [UInt8], be: Bool = false) -> [UInt8] {
    var padded = body
    while padded.count % 4 != 0 { padded.append(0) }
    var w = ByteWriter()
    let length = UInt32(12 + padded.count)
    w.u32(type, be: be); w.u32(length, be: be); w.raw(padded); w.u32(length, be: be)
    return w.b
}

func pcapngSHB(be: Bool = false) -> [UInt8] {
    var w = ByteWriter()
    w.u32(0x1A2B_3C4D, be: be); w.u16(1, be: be); w.u16(0, be: be); w.u64(UInt64.max, be: be)
    return pcapngBlock(0x0A0D_0D0A, w.b, be: be)
}

func pcapngIDB(linkType: UInt16, tsresol: UInt8? = nil, be: Bool = false) -> [UInt8] {
    var w = ByteWriter()
    w.u16(linkType, be: be); w.u16(0, be: be); w.u32(0, be: be)
    if let tsresol { w.u16(9, be: be); w.u16(1, be: be); w.raw([tsresol, 0, 0, 0]); w.u16(0, be: be); w.u16(0, be: be) }
    return pcapngBlock(1, w.b, be: be)
}

func pcapngEPB(interface: UInt32, timestamp: UInt64, _ data: [UInt8], originalLength: Int? = nil, be: Bool = false) -> [UInt8] {
    var w = ByteWriter()
    w.u32(interface, be: be); w.u32(UInt32(timestamp >> 32), be: be); w.u32(UInt32(timestamp & 0xffff_ffff), be: be)
    w.u32(UInt32(data.count), be: be); w.u32(UInt32(originalLength ?? data.count), be: be); w.raw(data)
    return pcapngBlock(6, w.b, be: be)
}

/// A fresh temporary directory per test, removed afterwards.
class TempDirTestCase: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("blesniff-capture-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let url = dir.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
}
