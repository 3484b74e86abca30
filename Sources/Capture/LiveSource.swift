import CBluetooth
import Glibc
import Wire

/// Monitor header as the kernel sends it (BlueZ `struct hci_mon_hdr`, little-endian):
/// opcode, controller index, payload length.
let monitorHeaderLength = 6
/// Link-type 254 header: adapter and opcode, big-endian.
let linuxMonitorHeaderLength = 4

/// Turns kernel-framed monitor records into link-type 254 records in one reusable buffer.
struct MonitorFramer {
    private var buffer = [UInt8](repeating: 0, count: 65_536 &+ linuxMonitorHeaderLength)
    private(set) var count = 0
    /// Controller to keep (records for other controllers are dropped); global records
    /// (index 0xffff: system notes, control channel) are always kept.
    let interface: UInt16?

    init(interface: UInt16?) {
        self.interface = interface
    }

    func wanted(index: UInt16) -> Bool {
        guard let interface else { return true }
        return index == interface || index == 0xffff
    }

    /// Builds a record from a monitor header's fields and its payload, stamped with `time`
    /// (nanoseconds since the Unix epoch).
    mutating func record(opcode: UInt16, index: UInt16, payload: UnsafeRawBufferPointer,
                         fileOffset: Int64, fileLength: Int, time: Int64 = now()) -> Record {
        let total = linuxMonitorHeaderLength &+ payload.count
        if buffer.count < total { buffer.append(contentsOf: repeatElement(0, count: total &- buffer.count)) }
        buffer[0] = UInt8(truncatingIfNeeded: index >> 8)
        buffer[1] = UInt8(truncatingIfNeeded: index)
        buffer[2] = UInt8(truncatingIfNeeded: opcode >> 8)
        buffer[3] = UInt8(truncatingIfNeeded: opcode)
        buffer.withUnsafeMutableBytes { dst in
            if let d = dst.baseAddress, let s = payload.baseAddress, payload.count > 0 {
                memcpy(d + linuxMonitorHeaderLength, s, payload.count)
            }
        }
        count &+= 1
        return Record(number: count, timestamp: time, linkType: LinkType.linuxMonitor, flags: 0,
                      data: buffer[0..<total], originalLength: total, fileOffset: fileOffset, fileLength: fileLength)
    }
}

/// Wall-clock time in nanoseconds since the Unix epoch.
func now() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec)
}

/// The kernel's Bluetooth monitor channel (what btmon reads): every controller's HCI traffic,
/// plus index events and management commands, on a raw HCI socket bound to no device.
///
/// Records carry the kernel's time (SO_TIMESTAMPNS), as btmon's do: the time the kernel queued
/// the record, not the time this process got round to reading it, which lags by however long
/// the reading thread was not scheduled (milliseconds on a loaded machine).
public final class MonitorSocketSource {
    public let name = "Bluetooth monitor"
    private let fd: Int32
    private var framer: MonitorFramer
    private var packet = [UInt8](repeating: 0, count: monitorHeaderLength &+ 65_536)
    /// Where the records' times come from.
    public let clock: Clock

    public enum Clock: Sendable {
        /// The kernel's receive time, in nanoseconds.
        case kernelNanoseconds
        /// The kernel's receive time, in microseconds (SO_TIMESTAMP only).
        case kernelMicroseconds
        /// Read time: the kernel offered no timestamps.
        case readTime
    }

    /// - Parameter interface: keep only this controller index (hciN), plus global records.
    public convenience init(interface: UInt16? = nil) throws(CaptureError) {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else { throw Self.openError(errno) }
        var addr = sockaddr_hci()
        addr.hci_family = sa_family_t(AF_BLUETOOTH)
        addr.hci_dev = UInt16(HCI_DEV_NONE)
        addr.hci_channel = UInt16(HCI_CHANNEL_MONITOR)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size)) }
        }
        guard rc == 0 else {
            let e = errno
            close(fd)
            throw Self.openError(e)
        }
        self.init(datagramSocket: fd, interface: interface)
    }

    /// Reads an already open socket that delivers one kernel-framed monitor record per datagram
    /// (a monitor socket opened elsewhere and handed over; a socketpair in tests). Takes
    /// ownership of `fd` and asks it for receive timestamps.
    public init(datagramSocket fd: Int32, interface: UInt16? = nil) {
        self.fd = fd
        framer = MonitorFramer(interface: interface)
        switch blesniff_enable_receive_time(fd) {
        case 2: clock = .kernelNanoseconds
        case 1: clock = .kernelMicroseconds
        default: clock = .readTime
        }
    }

    deinit {
        close(fd)
    }

    static func openError(_ e: Int32) -> CaptureError {
        let name = "Bluetooth monitor"
        switch e {
        case EAFNOSUPPORT, EPROTONOSUPPORT:
            return CaptureError(.unsupportedSystem, file: name, "this kernel has no Bluetooth support (load the bluetooth module)")
        case EPERM, EACCES:
            return CaptureError(.permission, file: name, "run as root or give CAP_NET_RAW")
        default:
            return CaptureError(.io, file: name, "cannot open the monitor socket: \(String(cString: strerror(e)))")
        }
    }

    public func next() throws(CaptureError) -> Record? {
        while true {
            // One datagram is one monitor record.
            var kernelTime: Int64 = -1
            let got = packet.withUnsafeMutableBytes { blesniff_recv_timed(fd, $0.baseAddress, $0.count, &kernelTime) }
            if got < 0 {
                if errno == EINTR { continue }
                throw CaptureError(.io, file: name, "read error: \(String(cString: strerror(errno)))")
            }
            if got == 0 { return nil }
            guard got >= monitorHeaderLength else { continue }
            let opcode = UInt16(packet[0]) | UInt16(packet[1]) << 8
            let index = UInt16(packet[2]) | UInt16(packet[3]) << 8
            let length = min(Int(UInt16(packet[4]) | UInt16(packet[5]) << 8), got &- monitorHeaderLength)
            guard framer.wanted(index: index) else { continue }
            return packet.withUnsafeBytes { raw in
                framer.record(opcode: opcode, index: index,
                              payload: UnsafeRawBufferPointer(rebasing: raw[monitorHeaderLength..<(monitorHeaderLength &+ length)]),
                              fileOffset: 0, fileLength: monitorHeaderLength &+ length,
                              time: kernelTime >= 0 ? kernelTime : now())
            }
        }
    }
}

/// Monitor records in the kernel's framing (6-byte little-endian header: opcode, index, length;
/// then the payload) read from any descriptor: a socket relayed from another machine, a pipe
/// from `btmon`-like tools, a socketpair in tests.
public final class FileDescriptorSource {
    public let name: String
    private let source: ByteSource
    private var framer: MonitorFramer

    public init(fileDescriptor fd: Int32, name: String, interface: UInt16? = nil, closeWhenDone: Bool = false) {
        self.name = name
        // Small blocks: records are small and arrive one at a time.
        source = ByteSource(fd: fd, name: name, closeWhenDone: closeWhenDone, blockSize: 65_536)
        framer = MonitorFramer(interface: interface)
    }

    public func next() throws(CaptureError) -> Record? {
        while true {
            let at = source.offset
            guard try source.require(monitorHeaderLength) else {
                if source.available > 0 {
                    throw CaptureError(.truncatedRecord, file: name, frame: framer.count &+ 1, offset: at,
                                       "stream ends inside a monitor header")
                }
                return nil
            }
            let h = source.pending
            let b = h.startIndex
            let opcode = UInt16(h[b]) | UInt16(h[b + 1]) << 8
            let index = UInt16(h[b + 2]) | UInt16(h[b + 3]) << 8
            let length = Int(UInt16(h[b + 4]) | UInt16(h[b + 5]) << 8)
            let total = monitorHeaderLength &+ length
            guard try source.require(total) else {
                throw CaptureError(.truncatedRecord, file: name, frame: framer.count &+ 1, offset: at,
                                   "stream ends inside a monitor record")
            }
            let bytes = source.consume(total)
            guard framer.wanted(index: index) else { continue }
            return bytes.dropFirst(monitorHeaderLength).withUnsafeBytes { payload in
                framer.record(opcode: opcode, index: index, payload: payload, fileOffset: at, fileLength: total)
            }
        }
    }
}
