import Glibc
import Wire

/// File format written by `blesniff capture -w`.
public enum WriteFormat: String, CaseIterable, Sendable {
    /// Classic pcap: Wireshark and tcpdump open it.
    case pcap
    /// pcapng, one interface.
    case pcapng
    /// btsnoop datalink 2001 (Linux monitor), what `btmon -w` writes and `btmon -r` reads.
    case btsnoop

    /// The format a file name asks for: .pcap, .pcapng, .btsnoop or .log; nil for anything else.
    public static func forPath(_ path: String) -> WriteFormat? {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
        switch path[path.index(after: dot)...].lowercased() {
        case "pcap", "cap": return .pcap
        case "pcapng": return .pcapng
        case "btsnoop", "log", "snoop": return .btsnoop
        default: return nil
        }
    }

    /// The pcap link type a record of link type `input` is stored under: pcap link types are
    /// kept (H4 with or without direction, monitor, over-the-air); btsnoop datalinks become
    /// Linux monitor (254), which carries adapter and direction.
    public static func pcapLinkType(for input: UInt32) -> UInt32 {
        input >= LinkType.btsnoopBase ? LinkType.linuxMonitor : input
    }
}

/// A record in Linux monitor terms: controller index, monitor opcode and payload (HCI packet
/// without its H4 type byte). This is what btsnoop 2001 and link type 254 store.
public struct MonitorFrame {
    public var adapter: UInt16
    public var opcode: UInt16
    public var payload: ArraySlice<UInt8>

    /// Monitor opcodes of H4 packet types 1-5 (command, ACL, SCO, event, ISO), sent and received
    /// (BlueZ monitor opcodes: command 2, event 3, ACL 4/5, SCO 6/7, ISO 18/19).
    private static let h4Opcodes: [(sent: UInt16, received: UInt16)] = [
        (0xffff, 0xffff), (2, 2), (4, 5), (6, 7), (3, 3), (18, 19),
    ]

    private static func fromH4(_ bytes: ArraySlice<UInt8>, received: Bool) -> MonitorFrame? {
        guard let type = bytes.first, Int(type) < h4Opcodes.count, type != 0 else { return nil }
        let op = h4Opcodes[Int(type)]
        return MonitorFrame(adapter: 0, opcode: received ? op.received : op.sent, payload: bytes.dropFirst())
    }

    /// Converts an HCI record of any link type blesniff reads; nil for over-the-air captures
    /// and records too short for their own header. H4 without direction (187) counts data as sent.
    public init?(_ r: Record) {
        let d = r.data
        switch r.linkType {
        case LinkType.linuxMonitor:
            guard d.count >= linuxMonitorHeaderLength else { return nil }
            let s = d.startIndex
            adapter = UInt16(d[s]) << 8 | UInt16(d[s + 1])
            opcode = UInt16(d[s + 2]) << 8 | UInt16(d[s + 3])
            payload = d.dropFirst(linuxMonitorHeaderLength)
        case LinkType.btsnoopMonitor:
            adapter = UInt16(truncatingIfNeeded: r.flags >> 16)
            opcode = UInt16(truncatingIfNeeded: r.flags)
            payload = d
        case LinkType.h4:
            // Commands go down and events come up whatever the flag; data has no direction here.
            guard let f = Self.fromH4(d, received: false) else { return nil }
            self = f
        case LinkType.h4WithPHDR:
            guard d.count > 4 else { return nil }
            let s = d.startIndex
            guard let f = Self.fromH4(d.dropFirst(4), received: d[s + 3] & 1 == 1) else { return nil }
            self = f
        case LinkType.btsnoopH4:
            guard let f = Self.fromH4(d, received: r.flags & 1 == 1) else { return nil }
            self = f
        case LinkType.btsnoopH1:
            // H1: flags bit 1 tells command/event from data, bit 0 the direction.
            let received = r.flags & 1 == 1
            adapter = 0
            opcode = r.flags & 2 != 0 ? (received ? 3 : 2) : (received ? 5 : 4)
            payload = d
        default:
            return nil
        }
    }

    public init(adapter: UInt16, opcode: UInt16, payload: ArraySlice<UInt8>) {
        self.adapter = adapter
        self.opcode = opcode
        self.payload = payload
    }
}

/// Writes records as they arrive into FILE, rotating like tcpdump `-C`/`-W`: when the next record
/// would take the file past `fileSize` bytes, the file is closed and the next one opened:
/// FILE, FILE.1, FILE.2, ...; with `files` N the names cycle through FILE ... FILE.(N-1), each
/// reuse starting the file afresh. Every record goes out whole in one `write`, so a capture
/// interrupted at any point leaves valid files.
public final class RotatingWriter {
    private enum Backend {
        case pcap(PcapWriter)
        case pcapng(PcapngWriter)
        case btsnoop(BtsnoopWriter)
    }

    public let path: String
    public let format: WriteFormat
    /// Link type of pcap and pcapng files; nil until the first record when not given.
    public private(set) var linkType: UInt32?
    public let fileSize: Int64?
    public let files: Int?

    private var backend: Backend?
    /// Position in the ring: 0 is FILE, n is FILE.n.
    private var index = 0
    private var currentBytes: Int64 = 0
    private var currentRecords = 0

    public private(set) var framesWritten = 0
    /// Bytes written to all files, headers included.
    public private(set) var bytesWritten: Int64 = 0
    /// Records the output format cannot carry (an over-the-air frame in btsnoop, a record of a
    /// second link type in pcap).
    public private(set) var framesSkipped = 0
    /// Files opened so far (one more per rotation).
    public private(set) var filesOpened = 0

    /// - Parameters:
    ///   - linkType: for pcap and pcapng, the link type of the file (see `WriteFormat.pcapLinkType`);
    ///     nil to take it from the first record (the file is then created at the first record).
    ///   - fileSize: rotate before a file would exceed this many bytes (each file holds at least one record).
    ///   - files: keep at most this many files, reusing the oldest name.
    public init(path: String, format: WriteFormat, linkType: UInt32?, fileSize: Int64? = nil, files: Int? = nil) throws(CaptureError) {
        if let fileSize, fileSize <= 0 { throw CaptureError(.io, file: path, "the file size limit must be positive") }
        if let files, files <= 0 { throw CaptureError(.io, file: path, "the number of files must be positive") }
        self.path = path
        self.format = format
        self.linkType = linkType
        self.fileSize = fileSize
        self.files = files
        if linkType != nil || format == .btsnoop { try open() }
    }

    /// Name of ring position `n`.
    public func fileName(_ n: Int) -> String { n == 0 ? path : path + "." + String(n) }

    /// The file being written.
    public var currentPath: String { fileName(index) }

    /// Closes the current file; a later `write` opens the next one.
    public func close() {
        backend = nil
    }

    /// Writes one record; false when the format cannot carry it (it is counted in `framesSkipped`).
    @discardableResult
    public func write(_ r: Record) throws(CaptureError) -> Bool {
        if linkType == nil, format != .btsnoop { linkType = WriteFormat.pcapLinkType(for: r.linkType) }
        // What goes into the file: the record as it is, or converted to monitor framing.
        var flags: UInt32 = 0
        var data = r.data
        switch format {
        case .btsnoop:
            guard let m = MonitorFrame(r) else { framesSkipped &+= 1; return false }
            flags = UInt32(m.adapter) << 16 | UInt32(m.opcode)
            data = m.payload
        case .pcap, .pcapng:
            if r.linkType != linkType {
                guard linkType == LinkType.linuxMonitor, let m = MonitorFrame(r) else { framesSkipped &+= 1; return false }
                var b = [UInt8](repeating: 0, count: linuxMonitorHeaderLength)
                b[0] = UInt8(truncatingIfNeeded: m.adapter >> 8); b[1] = UInt8(truncatingIfNeeded: m.adapter)
                b[2] = UInt8(truncatingIfNeeded: m.opcode >> 8); b[3] = UInt8(truncatingIfNeeded: m.opcode)
                b.append(contentsOf: m.payload)
                data = b[...]
            }
        }
        let original = max(r.originalLength &- (r.data.count &- data.count), data.count)
        let size = recordSize(data.count)
        if backend != nil, let fileSize, currentRecords > 0, currentBytes &+ size > fileSize {
            backend = nil
            index &+= 1
            if let files, index >= files { index = 0 }
        }
        if backend == nil { try open() }
        switch backend {
        case .pcap(let w): try w.write(timestamp: r.timestamp, data: data, originalLength: original)
        case .pcapng(let w): try w.write(interface: 0, timestamp: r.timestamp, data: data, originalLength: original)
        case .btsnoop(let w): try w.write(timestamp: r.timestamp, flags: flags, data: data, originalLength: original)
        case nil: return false
        }
        currentBytes &+= size
        currentRecords &+= 1
        bytesWritten &+= size
        framesWritten &+= 1
        return true
    }

    private func headerSize() -> Int64 {
        switch format {
        case .pcap: return 24
        case .pcapng: return 28 + 32
        case .btsnoop: return 16
        }
    }

    private func recordSize(_ count: Int) -> Int64 {
        switch format {
        case .pcap: return 16 &+ Int64(count)
        case .pcapng: return 32 &+ Int64((count &+ 3) & ~3)
        case .btsnoop: return 24 &+ Int64(count)
        }
    }

    private func open() throws(CaptureError) {
        let name = fileName(index)
        try Self.refuseSymlink(name)
        switch format {
        case .pcap: backend = .pcap(try PcapWriter(path: name, linkType: linkType ?? LinkType.linuxMonitor))
        case .pcapng: backend = .pcapng(try PcapngWriter(path: name, linkTypes: [linkType ?? LinkType.linuxMonitor]))
        case .btsnoop: backend = .btsnoop(try BtsnoopWriter(path: name, datalink: 2001))
        }
        let h = headerSize()
        currentBytes = h
        currentRecords = 0
        bytesWritten &+= h
        filesOpened &+= 1
    }

    /// An existing symbolic link at the output path is refused outright, with a clear message
    /// (the writers' O_NOFOLLOW also closes the race with a link planted afterwards).
    public static func refuseSymlink(_ path: String) throws(CaptureError) {
        guard path != "-" else { return }
        var st = stat()
        if lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFLNK {
            throw CaptureError(.io, file: path, "is a symbolic link; refusing to write through it (remove it or choose another name)")
        }
    }
}
