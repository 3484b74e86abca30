import Capture
import Foundation
import XCTest
import Wire

/// The live pipeline (source thread → LiveCapture → RotatingWriter) fed monitor records through a
/// socketpair, as the kernel's monitor socket would hand them over.
final class LiveCaptureTests: TempDirTestCase {
    static let monitorCapture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Captures/gatt_session.monitor.btsnoop").path

    /// (adapter, opcode, payload, timestamp) of every record of the committed btsnoop 2001 capture.
    func monitorRecords() throws -> [(adapter: UInt16, opcode: UInt16, payload: [UInt8])] {
        let r = try readAll(path: Self.monitorCapture)
        XCTAssertEqual(r.format, .btsnoop(datalink: 2001))
        return r.records.map { (UInt16(truncatingIfNeeded: $0.record.flags >> 16), UInt16(truncatingIfNeeded: $0.record.flags), $0.data) }
    }

    /// Kernel framing: opcode, index, length (little-endian), payload.
    func kernelFrame(_ r: (adapter: UInt16, opcode: UInt16, payload: [UInt8])) -> [UInt8] {
        var w = ByteWriter()
        w.u16(r.opcode); w.u16(r.adapter); w.u16(UInt16(r.payload.count)); w.raw(r.payload)
        return w.b
    }

    final class Pair: @unchecked Sendable {
        let read: Int32, write: Int32
        init() {
            var fds: [Int32] = [0, 0]
            precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
            read = fds[0]
            write = fds[1]
        }
        func send(_ b: [UInt8]) { _ = b.withUnsafeBytes { Glibc.write(write, $0.baseAddress, b.count) } }
        func closeWrite() { close(write) }
    }

    /// Runs the pipeline to its end, writing `paths` in their formats; returns how it ended and the frame count.
    func capture(_ source: RecordSource, stop: StopSwitch? = nil, into writers: [RotatingWriter],
                 count: Int = .max) throws -> (LiveCapture.End, Int) {
        let live = LiveCapture(source: source)
        var frames = 0
        let end = try live.run(stop: stop, deadline: LiveCapture.deadline(after: 20)) { r in
            frames += 1
            for w in writers { try w.write(r) }
            return frames < count
        }
        for w in writers { w.close() }
        return (end, frames)
    }

    func testEveryFrameWrittenAsItCame() throws {
        let input = try monitorRecords()
        let pair = Pair()
        let writers = [try RotatingWriter(path: path("out.pcap"), format: .pcap, linkType: 254),
                       try RotatingWriter(path: path("out.log"), format: .btsnoop, linkType: nil),
                       try RotatingWriter(path: path("out.pcapng"), format: .pcapng, linkType: 254)]
        // The sender splits records across writes, as a stream may.
        let bytes = input.flatMap(kernelFrame)
        Thread.detachNewThread {
            var at = 0
            while at < bytes.count {
                let n = min(333, bytes.count - at)
                pair.send(Array(bytes[at..<(at + n)]))
                at += n
            }
            pair.closeWrite()
        }
        let (end, frames) = try capture(FileDescriptorSource(fileDescriptor: pair.read, name: "relay", closeWhenDone: true), into: writers)
        XCTAssertEqual(end, .sourceEnded(error: nil))
        XCTAssertEqual(frames, input.count)

        let pcap = try readAll(path: path("out.pcap"))
        XCTAssertNil(pcap.truncation)
        XCTAssertEqual(pcap.records.map { $0.data },
                       input.map { [UInt8($0.adapter >> 8), UInt8($0.adapter & 0xff), UInt8($0.opcode >> 8), UInt8($0.opcode & 0xff)] + $0.payload })
        XCTAssertEqual(Set(pcap.records.map { $0.record.linkType }), [254])
        let pcapng = try readAll(path: path("out.pcapng"))
        XCTAssertEqual(pcapng.records.map { $0.data }, pcap.records.map { $0.data })
        let snoop = try readAll(path: path("out.log"))
        XCTAssertEqual(snoop.format, .btsnoop(datalink: 2001))
        XCTAssertEqual(snoop.records.map { $0.data }, input.map { $0.payload })
        XCTAssertEqual(snoop.records.map { $0.record.flags }, input.map { UInt32($0.adapter) << 16 | UInt32($0.opcode) })
        XCTAssertEqual(writers[0].framesWritten, input.count)
        XCTAssertEqual(writers[0].bytesWritten, Int64(try FileManager.default.attributesOfItem(atPath: path("out.pcap"))[.size] as! Int))
        for p in ["out.pcap", "out.log", "out.pcapng"] { try checkTshark(path(p), count: input.count) }
    }

    func testInterruptedMidStreamKeepsEveryWholeRecord() throws {
        let input = try monitorRecords()
        let half = input.count / 2
        let pair = Pair()
        let stop = StopSwitch()
        let writer = try RotatingWriter(path: path("cut.pcap"), format: .pcap, linkType: 254)
        // Half the records, then the start of the next one; the stream stays open; then stop.
        let bytes = input.prefix(half).flatMap(kernelFrame) + kernelFrame(input[half]).prefix(5)
        Thread.detachNewThread {
            pair.send(bytes)
            Thread.sleep(forTimeInterval: 0.3)
            stop.trigger()
        }
        let (end, frames) = try capture(FileDescriptorSource(fileDescriptor: pair.read, name: "relay"), stop: stop, into: [writer])
        XCTAssertEqual(end, .stopped(signal: nil))
        XCTAssertEqual(frames, half)
        let r = try readAll(path: path("cut.pcap"))
        XCTAssertNil(r.truncation)
        XCTAssertEqual(r.records.map { Array($0.data.dropFirst(4)) }, input.prefix(half).map { $0.payload })
        try checkTshark(path("cut.pcap"), count: half)
        pair.closeWrite()
        close(pair.read)
    }

    /// Records sent just before the stop request are still handled (the queue is drained).
    func testStopLosesNothingAlreadySent() throws {
        let input = try monitorRecords()
        let pair = Pair()
        let stop = StopSwitch()
        pair.send(input.flatMap(kernelFrame))
        stop.trigger()
        let writer = try RotatingWriter(path: path("all.pcap"), format: .pcap, linkType: 254)
        let (end, frames) = try capture(FileDescriptorSource(fileDescriptor: pair.read, name: "relay"), stop: stop, into: [writer])
        XCTAssertEqual(end, .stopped(signal: nil))
        XCTAssertEqual(frames, input.count)
        pair.closeWrite()
        close(pair.read)
    }

    func testCountStopsAndTheRestWaitsForTheNextRun() throws {
        let input = try monitorRecords()
        let pair = Pair()
        pair.send(input.prefix(10).flatMap(kernelFrame))
        pair.closeWrite()
        let live = LiveCapture(source: FileDescriptorSource(fileDescriptor: pair.read, name: "relay", closeWhenDone: true))
        var seen: [Int] = []
        XCTAssertEqual(live.run(stop: nil) { seen.append($0.number); return seen.count < 3 }, .handlerStopped)
        XCTAssertEqual(live.run(stop: nil) { seen.append($0.number); return true }, .sourceEnded(error: nil))
        XCTAssertEqual(seen, Array(1...10))
    }

    func testDeadlineEndsAnIdleCapture() throws {
        let pair = Pair()
        let live = LiveCapture(source: FileDescriptorSource(fileDescriptor: pair.read, name: "relay"))
        let t0 = Date()
        XCTAssertEqual(live.run(stop: nil, deadline: LiveCapture.deadline(after: 0.2)) { _ in true }, .deadline)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(t0), 0.19)
        pair.closeWrite()
    }

    func testTruncatedSourceReportsItsError() throws {
        let pair = Pair()
        pair.send(Array(kernelFrame((0, 3, [0x0e, 4, 1, 3, 0x0c, 0])).prefix(8)))
        pair.closeWrite()
        let live = LiveCapture(source: FileDescriptorSource(fileDescriptor: pair.read, name: "relay", closeWhenDone: true))
        guard case .sourceEnded(let e?) = live.run(stop: nil, handle: { _ in true }) else { return XCTFail("no error") }
        XCTAssertEqual(e.kind, .truncatedRecord)
    }

    func testStreamFromFIFOWaitsForItsWriterAndStops() throws {
        let fifo = path("fifo")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let stop = StopSwitch()
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.2)
            stop.trigger()
        }
        // Nobody writes: opening must not block, and the stop request ends the wait.
        XCTAssertNil(try CaptureReader.openStream(path: fifo, stop: stop))
    }

    // MARK: rotation

    func testRotationRing() throws {
        let input = try monitorRecords()
        let base = path("ring.pcap")
        let limit: Int64 = 600
        let w = try RotatingWriter(path: base, format: .pcap, linkType: 254, fileSize: limit, files: 3)
        for (i, m) in input.enumerated() {
            let data = [UInt8(m.adapter >> 8), UInt8(m.adapter & 0xff), UInt8(m.opcode >> 8), UInt8(m.opcode & 0xff)] + m.payload
            try w.write(Record(number: i + 1, timestamp: Int64(i) * 1_000_000_000, linkType: 254, flags: 0, data: data[...],
                               originalLength: data.count, fileOffset: 0, fileLength: 0))
        }
        w.close()
        XCTAssertGreaterThan(w.filesOpened, 3)
        XCTAssertFalse(FileManager.default.fileExists(atPath: base + ".3"))
        var frames: [[Int64]] = []
        for name in [base, base + ".1", base + ".2"] {
            let size = try FileManager.default.attributesOfItem(atPath: name)[.size] as! Int
            let r = try readAll(path: name)
            XCTAssertNil(r.truncation)
            XCTAssertGreaterThan(r.records.count, 0)
            if r.records.count > 1 { XCTAssertLessThanOrEqual(Int64(size), limit, name) }
            frames.append(r.records.map { $0.record.timestamp / 1_000_000_000 })
            try checkTshark(name, count: r.records.count)
        }
        // The three files hold consecutive runs of frames; the newest holds the last frame.
        let all = frames.flatMap { $0 }.sorted()
        XCTAssertEqual(all, Array(all.first!...all.last!))
        XCTAssertTrue(frames.contains { $0.last == Int64(input.count - 1) })
    }

    func testRotationWithoutRingKeepsEverything() throws {
        let base = path("all.log")
        let w = try RotatingWriter(path: base, format: .btsnoop, linkType: nil, fileSize: 100)
        let data: [UInt8] = [0, 0, 0, 3] + Array(repeating: 0xee, count: 40)
        for i in 0..<5 {
            try w.write(Record(number: i + 1, timestamp: 0, linkType: 254, flags: 0, data: data[...], originalLength: data.count,
                               fileOffset: 0, fileLength: 0))
        }
        // Header 16 + record 24 + 40: one record per file.
        XCTAssertEqual(w.filesOpened, 5)
        for n in 0..<5 { XCTAssertEqual(try readAll(path: w.fileName(n)).records.count, 1) }
    }

    // MARK: conversion and safety

    func testMonitorFramingOfEveryHCILinkType() throws {
        func rec(_ lt: UInt32, _ flags: UInt32, _ d: [UInt8]) -> Record {
            Record(number: 1, timestamp: 0, linkType: lt, flags: flags, data: d[...], originalLength: d.count, fileOffset: 0, fileLength: 0)
        }
        func check(_ r: Record, _ adapter: UInt16, _ opcode: UInt16, _ payload: [UInt8], line: UInt = #line) {
            guard let m = MonitorFrame(r) else { return XCTFail("nil", line: line) }
            XCTAssertEqual(m.adapter, adapter, line: line)
            XCTAssertEqual(m.opcode, opcode, line: line)
            XCTAssertEqual(Array(m.payload), payload, line: line)
        }
        check(rec(201, 0, [0, 0, 0, 1, 2, 0x40, 0, 0]), 0, 5, [0x40, 0, 0])  // ACL received
        check(rec(201, 0, [0, 0, 0, 0, 5, 1]), 0, 18, [1])                  // ISO sent
        check(rec(187, 0, [1, 3, 0x0c, 0]), 0, 2, [3, 0x0c, 0])
        check(rec(187, 0, [4, 0x0e]), 0, 3, [0x0e])
        check(rec(0x10000 + 1002, 1, [3, 9]), 0, 7, [9])
        check(rec(0x10000 + 1001, 3, [0x0e]), 0, 3, [0x0e])
        check(rec(0x10000 + 1001, 0, [0x40]), 0, 4, [0x40])
        check(rec(0x10000 + 2001, 0x0002_000c, [0x41]), 2, 12, [0x41])
        check(rec(254, 0, [0, 1, 0, 3, 0x0e]), 1, 3, [0x0e])
        XCTAssertNil(MonitorFrame(rec(254, 0, [0, 1, 0])))
        XCTAssertNil(MonitorFrame(rec(201, 0, [0, 0, 0, 1])))
        XCTAssertNil(MonitorFrame(rec(187, 0, [9, 1])))
        XCTAssertNil(MonitorFrame(rec(256, 0, [1, 2, 3])))

        // btsnoop H4 input written as pcap becomes link type 254; an over-the-air frame is skipped.
        XCTAssertEqual(WriteFormat.pcapLinkType(for: 0x10000 + 1002), 254)
        XCTAssertEqual(WriteFormat.pcapLinkType(for: 201), 201)
        let w = try RotatingWriter(path: path("conv.pcap"), format: .pcap, linkType: 254)
        XCTAssertTrue(try w.write(rec(0x10000 + 1002, 1, [4, 0x0e, 0])))
        XCTAssertFalse(try w.write(rec(256, 0, [1, 2, 3])))
        XCTAssertEqual(w.framesSkipped, 1)
        w.close()
        XCTAssertEqual(try readAll(path: path("conv.pcap")).records.map { $0.data }, [[0, 0, 0, 3, 0x0e, 0]])
        // A pcapng stream's link type is taken from its first record.
        let lazy = try RotatingWriter(path: path("lazy.pcap"), format: .pcap, linkType: nil)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("lazy.pcap")))
        try lazy.write(rec(201, 0, [0, 0, 0, 1, 4, 0x0e]))
        XCTAssertEqual(lazy.linkType, 201)
        XCTAssertEqual(WriteFormat.forPath("x/y.LOG"), .btsnoop)
        XCTAssertEqual(WriteFormat.forPath("y.pcapng"), .pcapng)
        XCTAssertNil(WriteFormat.forPath("dir.pcap/out"))
    }

    func testRefusesAnExistingSymlink() throws {
        let target = try write("target", [1, 2, 3])
        try FileManager.default.createSymbolicLink(atPath: path("link.pcap"), withDestinationPath: target)
        let e = captureError { _ = try RotatingWriter(path: self.path("link.pcap"), format: .pcap, linkType: 254) }
        XCTAssertEqual(e?.message, "is a symbolic link; refusing to write through it (remove it or choose another name)")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: target)), Data([1, 2, 3]))
        // A rotated name that is a link is refused as well.
        try FileManager.default.createSymbolicLink(atPath: path("r.pcap.1"), withDestinationPath: target)
        let w = try RotatingWriter(path: path("r.pcap"), format: .pcap, linkType: 254, fileSize: 30)
        let d: [UInt8] = [0, 0, 0, 3, 0x0e]
        let r = Record(number: 1, timestamp: 0, linkType: 254, flags: 0, data: d[...], originalLength: 5, fileOffset: 0, fileLength: 0)
        try w.write(r)
        XCTAssertNotNil(captureError { try w.write(r) })
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: target)), Data([1, 2, 3]))
    }

    func testPrivilegeTarget() throws {
        let env: [String: String] = ["SUDO_UID": "65534", "SUDO_GID": "65534"]
        let id = try Privileges.target(user: nil, environment: { env[$0] })
        if geteuid() == 0 {
            XCTAssertEqual(id?.uid, 65534)
            XCTAssertEqual(id?.gid, 65534)
            XCTAssertNil(try Privileges.target(user: nil, environment: { _ in nil }), "root without sudo keeps its ids")
            XCTAssertNil(try Privileges.target(user: "root"))
            if let nobody = try Privileges.target(user: "nobody") { XCTAssertNotEqual(nobody.uid, 0) }
        } else {
            XCTAssertNil(id, "nothing to drop without root")
        }
        XCTAssertEqual(captureError { _ = try Privileges.target(user: "no-such-user-blesniff") }?.message, "no user named no-such-user-blesniff")
    }
}
