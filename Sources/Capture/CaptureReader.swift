import Glibc
import Wire

/// A reader of one of the formats without a magic number or header that libpcap knows.
protocol FormatBackend: AnyObject {
    var linkType: UInt32 { get }
    var truncation: CaptureError? { get }
    func next(number: Int) throws(CaptureError) -> Record?
}

/// Reads a capture file or stream record by record: pcap and pcapng through libpcap, btsnoop
/// with its own parser. The format comes from the first bytes, never from the file name.
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
        /// PacketLogger, Android bug reports (see `openPhoneCapture`).
        case other(FormatBackend)
    }

    private var backend: Backend
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
        _ = try source.require(16)
        let head = source.pending
        guard let format = detectFormat(head) else {
            if head.count >= 8, head.prefix(8).elementsEqual(btsnoopMagic) {
                throw CaptureError(.truncatedHeader, file: name, "truncated btsnoop file header (\(head.count) of 16 bytes)")
            }
            if let (format, reader) = try openPhoneCapture(source) {
                self.format = format
                backend = .other(reader)
                return
            }
            throw CaptureError.notACapture(name)
        }
        self.format = format
        switch format {
        case .btsnoop:
            backend = .btsnoop(try BtsnoopReader(source: source))
        case .pcap(let nanoseconds, let bigEndian):
            guard try source.require(24) else {
                throw CaptureError(.truncatedHeader, file: name, "truncated pcap file header (\(source.available) of 24 bytes)")
            }
            let own = PcapReader.handles(source.pending)
            let libpcap = try LibpcapReader(source: source, pcapng: false, bigEndian: bigEndian, unbuffered: own)
            if own, let r = PcapReader(source: source, libpcap: libpcap, bigEndian: bigEndian, nanoseconds: nanoseconds) {
                backend = .pcap(r)
            } else {
                backend = .libpcap(libpcap)
            }
        case .pcapng:
            guard try source.require(28) else {
                throw CaptureError(.truncatedHeader, file: name, "truncated pcapng section header (\(source.available) of 28 bytes)")
            }
            let bigEndian = source.pending.dropFirst(8).prefix(4).elementsEqual([0x1A, 0x2B, 0x3C, 0x4D])
            backend = .libpcap(try LibpcapReader(source: source, pcapng: true, bigEndian: bigEndian))
        case .packetLogger, .btsnooz, .bugReportZip:
            // Recognised by content above, never by `detectFormat`.
            throw CaptureError.notACapture(name)
        }
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
        case .other(let r): return r.linkType
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
    private func step(number: Int) throws(CaptureError) -> Record? {
        switch backend {
        case .pcap(let r):
            if let record = try r.next(number: number) { return record }
            truncation = r.truncation
            return nil
        case .btsnoop(let r):
            if let record = try r.next(number: number) { return record }
            truncation = r.truncation
            return nil
        case .pcapng(let r):
            if let record = try r.next(number: number) { return record }
            truncation = r.truncation
            return nil
        case .libpcap(let r):
            if let record = try r.next(number: number) { return record }
            truncation = r.truncation
            if r.mixedLinkTypes { return try switchToOwnPcapngParser(number: number) }
            return nil
        case .other(let r):
            if let record = try r.next(number: number) { return record }
            truncation = r.truncation
            return nil
        }
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
        let record = try parser.next(number: number)
        truncation = parser.truncation
        return record
    }
}
