import Glibc
import Wire

/// Reads a capture file or stream record by record: pcap and pcapng through libpcap (and a fast
/// path of its own for plain pcap), btsnoop, PacketLogger and Android bug reports with parsers of
/// their own. The format comes from the content, never from the file name.
public final class CaptureReader {
    /// Name used in messages: the path, or "standard input".
    public let name: String
    public let format: CaptureFormat
    /// Set when the input ended in the middle of a record after some good frames: a warning
    /// (everything before it was read), which a strict caller may turn into a failure.
    public private(set) var truncation: CaptureError?

    private enum Backend {
        case pcap(PcapReader)
        case libpcap(LibpcapReader)
        case pcapng(PcapngReader)
        case btsnoop(BtsnoopReader)
        case packetLogger(PacketLoggerReader)
        case btsnooz(BtsnoozReader)
        case bugReportZip(BugReportZipReader)
    }

    private var backend: Backend
    /// The parser of our own that is the backend for the whole input, when there is one: reached
    /// through a constant and unwrapped in place, a call needs no retain and release of it, which
    /// reading it out of `backend` (or binding it) costs a record.
    private let btsnoop: BtsnoopReader?
    private let pcap: PcapReader?
    private let source: ByteSource
    private var count = 0
    private var finished = false

    /// Opens `path`; "-" is standard input.
    public convenience init(path: String) throws(CaptureError) {
        if path == "-" {
            try self.init(fileDescriptor: STDIN_FILENO, name: "standard input")
            return
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CaptureError(.io, file: path, "cannot open: \(String(cString: strerror(errno)))")
        }
        try self.init(fileDescriptor: fd, name: path, closeWhenDone: true)
    }

    /// Reads from an open descriptor (a file, pipe, FIFO or socket), from its current position.
    /// Records are returned as soon as they are complete, so a live pipe streams.
    public init(fileDescriptor fd: Int32, name: String, closeWhenDone: Bool = false) throws(CaptureError) {
        let source = ByteSource(fd: fd, name: name, closeWhenDone: closeWhenDone)
        self.source = source
        self.name = name
        (format, backend) = try Self.openFormat(source, name: name)
        if case .btsnoop(let r) = backend { btsnoop = r } else { btsnoop = nil }
        if case .pcap(let r) = backend { pcap = r } else { pcap = nil }
    }

    /// Recognises the format from the first bytes and opens its parser: the magic numbers of
    /// pcap, pcapng and btsnoop first; then, for formats without one, a zip (bug report),
    /// plausible PacketLogger records, and text holding a btsnooz section.
    private static func openFormat(_ source: ByteSource, name: String) throws(CaptureError) -> (CaptureFormat, Backend) {
        _ = try source.require(16)
        let head = source.pending
        if let format = magicFormat(head) {
            switch format {
            case .btsnoop:
                return (format, .btsnoop(try BtsnoopReader(source: source)))
            case .pcap(let nanoseconds, let bigEndian):
                guard try source.require(24) else {
                    throw CaptureError(.truncatedHeader, file: name, "truncated pcap file header (\(source.available) of 24 bytes)")
                }
                let own = PcapReader.handles(source.pending)
                let libpcap = try LibpcapReader(source: source, pcapng: false, bigEndian: bigEndian, unbuffered: own)
                if own, let r = PcapReader(source: source, libpcap: libpcap, bigEndian: bigEndian, nanoseconds: nanoseconds) {
                    return (format, .pcap(r))
                }
                return (format, .libpcap(libpcap))
            default:
                guard try source.require(28) else {
                    throw CaptureError(.truncatedHeader, file: name, "truncated pcapng section header (\(source.available) of 28 bytes)")
                }
                let bigEndian = source.pending.dropFirst(8).prefix(4).elementsEqual([0x1A, 0x2B, 0x3C, 0x4D])
                return (format, .libpcap(try LibpcapReader(source: source, pcapng: true, bigEndian: bigEndian)))
            }
        }
        if head.count >= 8, head.prefix(8).elementsEqual(btsnoopMagic) {
            throw CaptureError(.truncatedHeader, file: name, "truncated btsnoop file header (\(head.count) of 16 bytes)")
        }
        if head.starts(with: ZipArchive.localHeaderSignature) {
            return (.bugReportZip, .bugReportZip(try BugReportZipReader(source: source)))
        }
        _ = try source.require(4096)
        let start = source.pending
        if let bigEndian = PacketLogger.detect(start) {
            return (.packetLogger(bigEndian: bigEndian), .packetLogger(PacketLoggerReader(source: source, bigEndian: bigEndian)))
        }
        // Text: no NUL in the first bytes. Scanning stops at the first btsnooz section.
        if !start.isEmpty, !start.contains(0), let reader = try readBtsnoozSection(source, name: source.name) {
            return (.btsnooz(version: reader.version), .btsnooz(reader))
        }
        throw CaptureError.notACapture(name)
    }

    /// The format a magic number at the start names (4 bytes are enough for pcap and pcapng,
    /// btsnoop needs 16 for its datalink).
    static func magicFormat(_ firstBytes: ArraySlice<UInt8>) -> CaptureFormat? {
        let b = Array(firstBytes.prefix(16))
        guard b.count >= 4 else { return nil }
        switch (b[0], b[1], b[2], b[3]) {
        case (0xd4, 0xc3, 0xb2, 0xa1), (0x34, 0xcd, 0xb2, 0xa1): return .pcap(nanoseconds: false, bigEndian: false)
        case (0xa1, 0xb2, 0xc3, 0xd4), (0xa1, 0xb2, 0xcd, 0x34): return .pcap(nanoseconds: false, bigEndian: true)
        case (0x4d, 0x3c, 0xb2, 0xa1): return .pcap(nanoseconds: true, bigEndian: false)
        case (0xa1, 0xb2, 0x3c, 0x4d): return .pcap(nanoseconds: true, bigEndian: true)
        case (0x0a, 0x0d, 0x0d, 0x0a): return .pcapng
        default: break
        }
        guard b.count >= 16, b[0..<8].elementsEqual(btsnoopMagic) else { return nil }
        return .btsnoop(datalink: b[...].be32(at: 12))
    }

    /// btsnoop cumulative drop count of the last record read (0 for other formats).
    public var drops: UInt64 {
        if case .btsnoop(let r) = backend { return r.drops }
        return 0
    }

    /// Link type of the file (pcap, btsnoop) or of its first interface (pcapng, which can
    /// mix them: each `Record` carries its own).
    public var linkType: UInt32 {
        switch backend {
        case .pcap(let r): return r.linkType
        case .libpcap(let r): return r.linkType
        case .btsnoop(let r): return LinkType.btsnoop(r.datalink)
        case .pcapng: return 0
        case .packetLogger, .btsnooz, .bugReportZip: return LinkType.btsnoopH4
        }
    }

    /// The next record, or nil at the end of the input (check `truncation` then).
    /// The record's `data` is valid until the next call.
    public func next() throws(CaptureError) -> Record? {
        guard !finished else { return nil }
        do {
            if let record = try step(number: count &+ 1) {
                count &+= 1
                return record
            }
        } catch {
            finished = true
            throw error
        }
        finished = true
        return nil
    }

    /// Readers set `truncation` only when they return the end, so it is copied only then.
    @inline(__always)
    private func step(number: Int) throws(CaptureError) -> Record? {
        if btsnoop != nil { return try pull(btsnoop!, number) }
        if pcap != nil { return try pull(pcap!, number) }
        switch backend {
        case .pcap(let r): return try pull(r, number)
        case .btsnoop(let r): return try pull(r, number)
        case .pcapng(let r): return try pull(r, number)
        case .libpcap(let r):
            if let record = try pull(r, number) { return record }
            return r.mixedLinkTypes ? try switchToOwnPcapngParser(number: number) : nil
        case .packetLogger(let r): return try pull(r, number)
        case .btsnooz(let r): return try pull(r, number)
        case .bugReportZip(let r): return try pull(r, number)
        }
    }

    @inline(__always)
    private func pull(_ reader: some FormatParser, _ number: Int) throws(CaptureError) -> Record? {
        if let record = try reader.next(number: number) { return record }
        truncation = reader.truncation
        return nil
    }

    /// libpcap stopped at an interface with a second link type: read the file again with the
    /// block parser, skipping the frames already returned.
    private func switchToOwnPcapngParser(number: Int) throws(CaptureError) -> Record? {
        guard source.rewind() else {
            throw CaptureError(.unsupportedLinkType(0), file: name, frame: number,
                               "pcapng interfaces with different link types can only be read from a regular file")
        }
        let parser = PcapngReader(source: source)
        backend = .pcapng(parser)
        for n in 1..<number {
            guard try parser.next(number: n) != nil else {
                throw CaptureError(.io, file: name, frame: n, "file changed while being read")
            }
        }
        return try pull(parser, number)
    }
}

/// One format's parser inside `CaptureReader` (which numbers the records and is the
/// `RecordSource` the rest sees): the next record, and why the input ended early (set only when
/// `next` returns nil).
protocol FormatParser: AnyObject {
    func next(number: Int) throws(CaptureError) -> Record?
    var truncation: CaptureError? { get }
}

extension PcapReader: FormatParser {}
extension LibpcapReader: FormatParser {}
extension PcapngReader: FormatParser {}
extension BtsnoopReader: FormatParser {}
extension PacketLoggerReader: FormatParser {}
extension BtsnoozReader: FormatParser {}
extension BugReportZipReader: FormatParser {}
