import Capture
import Foundation
import XCTest

final class LiveSourceTests: XCTestCase {
    func testMonitorSocketExplainsWhyItCannotOpen() throws {
        do {
            _ = try MonitorSocketSource()
            throw XCTSkip("this machine has a Bluetooth monitor socket the test user may open")
        } catch let e as CaptureError {
            switch e.kind {
            case .unsupportedSystem:
                XCTAssertEqual(e.message, "this kernel has no Bluetooth support (load the bluetooth module)")
            case .permission:
                XCTAssertEqual(e.message, "run as root or give CAP_NET_RAW")
            default:
                XCTFail("unexpected \(e)")
            }
        }
    }

    private func monitorFrame(opcode: UInt16, index: UInt16, _ payload: [UInt8]) -> [UInt8] {
        var w = ByteWriter()
        w.u16(opcode); w.u16(index); w.u16(UInt16(payload.count)); w.raw(payload)
        return w.b
    }

    /// The monitor socket's records carry the kernel's time from the recvmsg control message
    /// (as btmon's do), not the time they were read: a datagram sent, then read 200 ms later,
    /// keeps its send-side time.
    func testMonitorSocketSourceUsesKernelReceiveTime() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0, &fds), 0)
        defer { close(fds[1]) }
        let source = MonitorSocketSource(datagramSocket: fds[0], interface: 1)
        XCTAssertEqual(source.clock, .kernelNanoseconds)
        func send(_ b: [UInt8]) { _ = b.withUnsafeBytes { Glibc.send(fds[1], $0.baseAddress, b.count, 0) } }
        var t = timespec()
        clock_gettime(CLOCK_REALTIME, &t)
        let before = Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
        send(monitorFrame(opcode: 3, index: 0, [0x0e, 1, 2]))
        send(monitorFrame(opcode: 3, index: 1, [0x0e, 4, 1, 3, 0x0c, 0]))
        usleep(200_000)
        let r = try XCTUnwrap(try source.next())
        clock_gettime(CLOCK_REALTIME, &t)
        let after = Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
        XCTAssertEqual(Array(r.data), [0, 1, 0, 3, 0x0e, 4, 1, 3, 0x0c, 0])
        XCTAssertGreaterThanOrEqual(r.timestamp, before - 1_000_000)
        XCTAssertLessThan(r.timestamp, after - 100_000_000, "stamped when read, not when queued")
    }

    func testFileDescriptorSourceOverSocketpair() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        defer { close(fds[0]) }
        func send(_ b: [UInt8]) { _ = b.withUnsafeBytes { Glibc.write(fds[1], $0.baseAddress, b.count) } }
        let source = FileDescriptorSource(fileDescriptor: fds[0], name: "relay", interface: 1)
        // Event on hci0 (filtered out), event on hci1, system note (global), split mid-record.
        send(monitorFrame(opcode: 3, index: 0, [0x0e, 1, 2]))
        send(monitorFrame(opcode: 3, index: 1, [0x0e, 4, 1, 3, 0x0c, 0]))
        var r = try XCTUnwrap(try source.next())
        XCTAssertEqual(r.linkType, 254)
        XCTAssertEqual(Array(r.data), [0, 1, 0, 3, 0x0e, 4, 1, 3, 0x0c, 0])
        XCTAssertEqual(r.number, 1)
        XCTAssertEqual(r.fileOffset, 9)
        let note = monitorFrame(opcode: 12, index: 0xffff, Array("hi".utf8) + [0])
        send(Array(note.prefix(4)))
        send(Array(note.dropFirst(4)))
        r = try XCTUnwrap(try source.next())
        XCTAssertEqual(Array(r.data), [0xff, 0xff, 0, 12] + Array("hi".utf8) + [0])
        XCTAssertEqual(r.number, 2)
        XCTAssertGreaterThan(r.timestamp, 1_600_000_000_000_000_000)
        send(Array(monitorFrame(opcode: 2, index: 1, [1, 2, 3]).prefix(7)))
        close(fds[1])
        XCTAssertEqual(captureError { _ = try source.next() }?.kind, .truncatedRecord)
    }

    func testFileDescriptorSourceEndsCleanly() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        let source = FileDescriptorSource(fileDescriptor: fds[0], name: "relay", closeWhenDone: true)
        let f = monitorFrame(opcode: 0, index: 0, Array(repeating: 0, count: 16))
        _ = f.withUnsafeBytes { Glibc.write(fds[1], $0.baseAddress, f.count) }
        close(fds[1])
        XCTAssertEqual(try source.next()?.data.count, 20)
        XCTAssertNil(try source.next())
    }
}
