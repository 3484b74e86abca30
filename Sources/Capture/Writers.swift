import Glibc
import Wire

/// An output file opened for capture writing: created or truncated, never followed through a
/// symbolic link (a link planted at the path would redirect root's writes). "-" is standard output.
/// Each record goes out in one `write`, unbuffered, so a reader at the other end of a pipe
/// sees whole records as soon as they are written.
final class OutputFile {
    let fd: Int32
    let name: String
    private let owned: Bool
    /// Reused for every record: header and data are assembled here, then written at once.
    var scratch: [UInt8] = []

    init(path: String) throws(CaptureError) {
        if path == "-" {
            fd = STDOUT_FILENO
            name = "standard output"
            owned = false
            return
        }
        name = path
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let e = errno
            if e == ELOOP {
                throw CaptureError(.io, file: path, "refusing to write through a symbolic link")
            }
            throw CaptureError(.io, file: path, "cannot create: \(String(cString: strerror(e)))")
        }
        owned = true
    }

    deinit {
        if owned { close(fd) }
    }

    /// Writes `scratch` whole.
    func flushScratch() throws(CaptureError) {
        var done = 0
        while done < scratch.count {
            let n = scratch.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return Glibc.write(fd, base + done, raw.count &- done)
            }
            if n > 0 { done &+= n }
            else if n < 0 && errno == EINTR { continue }
            else { throw CaptureError(.io, file: name, "write error: \(String(cString: strerror(errno)))") }
        }
        scratch.removeAll(keepingCapacity: true)
    }

    func le16(_ v: UInt16) { scratch.append(UInt8(truncatingIfNeeded: v)); scratch.append(UInt8(truncatingIfNeeded: v >> 8)) }
    func le32(_ v: UInt32) { le16(UInt16(truncatingIfNeeded: v)); le16(UInt16(truncatingIfNeeded: v >> 16)) }
    func be32(_ v: UInt32) {
        scratch.append(UInt8(truncatingIfNeeded: v >> 24)); scratch.append(UInt8(truncatingIfNeeded: v >> 16))
        scratch.append(UInt8(truncatingIfNeeded: v >> 8)); scratch.append(UInt8(truncatingIfNeeded: v))
    }
    func be64(_ v: UInt64) { be32(UInt32(truncatingIfNeeded: v >> 32)); be32(UInt32(truncatingIfNeeded: v)) }

    func checkLength(_ count: Int) throws(CaptureError) {
        guard count <= maxRecordLength else {
            throw CaptureError(.recordTooLarge, file: name, "record of \(count) bytes exceeds the 16 MiB limit")
        }
    }
}

/// Splits nanoseconds since the epoch into whole seconds and a remainder, rounding down.
@inline(__always) func splitNanoseconds(_ ns: Int64) -> (seconds: Int64, nanoseconds: Int64) {
    var s = ns / 1_000_000_000, r = ns % 1_000_000_000
    if r < 0 { s &-= 1; r &+= 1_000_000_000 }
    return (s, r)
}

/// Classic pcap, microsecond timestamps, little-endian.
public final class PcapWriter {
    private let out: OutputFile
    public let linkType: UInt32

    public init(path: String, linkType: UInt32, snapLength: UInt32 = 262_144) throws(CaptureError) {
        out = try OutputFile(path: path)
        self.linkType = linkType
        out.le32(0xa1b2_c3d4)
        out.le16(2)
        out.le16(4)
        out.le32(0)  // thiszone
        out.le32(0)  // sigfigs
        out.le32(snapLength)
        out.le32(linkType)
        try out.flushScratch()
    }

    /// - Parameter originalLength: length on the wire when `data` was cut short; defaults to `data.count`.
    public func write(timestamp: Int64, data: ArraySlice<UInt8>, originalLength: Int? = nil) throws(CaptureError) {
        try out.checkLength(data.count)
        let (s, ns) = splitNanoseconds(timestamp)
        out.le32(UInt32(truncatingIfNeeded: s))
        out.le32(UInt32(truncatingIfNeeded: ns / 1000))
        out.le32(UInt32(truncatingIfNeeded: data.count))
        out.le32(UInt32(truncatingIfNeeded: max(originalLength ?? data.count, data.count)))
        out.scratch.append(contentsOf: data)
        try out.flushScratch()
    }
}

/// btsnoop version 1 (datalink 1001 H1, 1002 H4 or 2001 Linux monitor).
public final class BtsnoopWriter {
    private let out: OutputFile
    public let datalink: UInt32

    public init(path: String, datalink: UInt32) throws(CaptureError) {
        guard LinkType.btsnoopSupported.contains(datalink) else {
            throw CaptureError(.unsupportedLinkType(LinkType.btsnoop(datalink)), file: path,
                               "btsnoop datalink \(datalink) cannot be written (1001, 1002 or 2001)")
        }
        out = try OutputFile(path: path)
        self.datalink = datalink
        out.scratch.append(contentsOf: btsnoopMagic)
        out.be32(1)
        out.be32(datalink)
        try out.flushScratch()
    }

    /// - Parameters:
    ///   - flags: bit 0 direction (1 = received), bit 1 command/event; for 2001, adapter << 16 | opcode.
    ///   - drops: cumulative count of records lost so far.
    public func write(timestamp: Int64, flags: UInt32, data: ArraySlice<UInt8>, originalLength: Int? = nil,
                      drops: UInt32 = 0) throws(CaptureError) {
        try out.checkLength(data.count)
        let (s, ns) = splitNanoseconds(timestamp)
        let micros = s &* 1_000_000 &+ ns / 1000 &+ BtsnoopReader.epochDelta
        out.be32(UInt32(truncatingIfNeeded: max(originalLength ?? data.count, data.count)))
        out.be32(UInt32(truncatingIfNeeded: data.count))
        out.be32(flags)
        out.be32(drops)
        out.be64(UInt64(bitPattern: micros))
        out.scratch.append(contentsOf: data)
        try out.flushScratch()
    }
}

/// pcapng with nanosecond timestamps: one section, one interface per link type given.
public final class PcapngWriter {
    private let out: OutputFile
    public let linkTypes: [UInt32]

    public init(path: String, linkTypes: [UInt32]) throws(CaptureError) {
        out = try OutputFile(path: path)
        self.linkTypes = linkTypes
        // Section Header Block, section length unknown (-1).
        out.le32(0x0A0D_0D0A); out.le32(28); out.le32(0x1A2B_3C4D); out.le16(1); out.le16(0)
        out.le32(0xffff_ffff); out.le32(0xffff_ffff); out.le32(28)
        for t in linkTypes {
            // Interface Description Block with if_tsresol = 9 (nanoseconds) and end of options.
            out.le32(1); out.le32(32); out.le16(UInt16(truncatingIfNeeded: t)); out.le16(0); out.le32(0)
            out.le16(9); out.le16(1); out.scratch.append(contentsOf: [9, 0, 0, 0])
            out.le16(0); out.le16(0); out.le32(32)
        }
        try out.flushScratch()
    }

    /// Writes an Enhanced Packet Block on interface `interface` (an index into `linkTypes`).
    public func write(interface: Int, timestamp: Int64, data: ArraySlice<UInt8>, originalLength: Int? = nil) throws(CaptureError) {
        try out.checkLength(data.count)
        guard interface >= 0, interface < linkTypes.count else {
            throw CaptureError(.malformed, file: out.name, "no interface \(interface)")
        }
        let padded = (data.count &+ 3) & ~3
        let total = UInt32(truncatingIfNeeded: 32 &+ padded)
        let ts = UInt64(bitPattern: timestamp)
        out.le32(6); out.le32(total); out.le32(UInt32(interface))
        out.le32(UInt32(truncatingIfNeeded: ts >> 32)); out.le32(UInt32(truncatingIfNeeded: ts))
        out.le32(UInt32(truncatingIfNeeded: data.count))
        out.le32(UInt32(truncatingIfNeeded: max(originalLength ?? data.count, data.count)))
        out.scratch.append(contentsOf: data)
        out.scratch.append(contentsOf: repeatElement(0, count: padded &- data.count))
        out.le32(total)
        try out.flushScratch()
    }
}
