import CPcap
import Glibc
import Wire

/// pcap and pcapng read through libpcap (nanosecond timestamps), from a `ReplayStream` so the
/// bytes already read to detect the format are seen again and standard input works too.
final class LibpcapReader {
    /// Raised by libpcap 1.10 when a pcapng file has interfaces with different link types.
    static let mixedLinkTypesMessage = "different from the type of the first interface"

    let source: ByteSource
    private let stream: ReplayStream
    private let pcap: OpaquePointer
    private let file: UnsafeMutablePointer<FILE>
    let linkType: UInt32
    private let pcapng: Bool
    private let bigEndian: Bool
    /// Packet bytes are copied here: libpcap reuses its own buffer on the next call. It grows to
    /// the largest record read (nothing when plain pcap records are read without libpcap).
    private var buffer: [UInt8] = []
    /// Stream offset where the next record starts (end of the previous one).
    private var offset: Int64
    /// Added to libpcap's stream position to make it a stream offset of `source`: non-zero once
    /// libpcap takes over from `PcapReader`, which reads from `source` directly.
    private var base: Int64 = 0
    private(set) var truncation: CaptureError?
    /// Set when libpcap stops at a second interface with another link type.
    private(set) var mixedLinkTypes = false

    /// - Parameter unbuffered: libpcap reads only what it needs, so others can read `source` after it.
    init(source: ByteSource, pcapng: Bool, bigEndian: Bool, unbuffered: Bool = false) throws(CaptureError) {
        self.source = source
        self.pcapng = pcapng
        self.bigEndian = bigEndian
        stream = ReplayStream(source, unbuffered: unbuffered)
        guard let fp = stream.file else {
            throw CaptureError(.io, file: source.name, "cannot open a stream: \(String(cString: strerror(errno)))")
        }
        var errbuf = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
        guard let p = pcap_fopen_offline_with_tstamp_precision(fp, UInt32(PCAP_TSTAMP_PRECISION_NANO), &errbuf) else {
            fclose(fp)
            let message = String(decoding: errbuf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw CaptureError(message.contains("truncated") ? .truncatedHeader : .malformed, file: source.name, message)
        }
        let dlt = UInt32(bitPattern: pcap_datalink(p))
        guard LinkType.isSupported(dlt) else {
            pcap_close(p)
            throw CaptureError.unsupported(source.name, dlt)
        }
        pcap = p
        file = fp
        linkType = dlt
        offset = Int64(ftell(fp))
        // The header's snap length is untrusted: start at 256 KiB and grow for larger packets.
    }

    deinit {
        pcap_close(pcap)
    }

    /// The file header's snapshot length as libpcap adjusted it: longer records are cut to it.
    var snapshot: Int { Int(pcap_snapshot(pcap)) }

    /// Bytes libpcap has taken from the stream.
    var streamPosition: Int64 { Int64(ftell(file)) }

    /// Continues where `source` stands, after others read records from it directly (an unbuffered
    /// stream holds nothing read ahead).
    func resync() {
        base = source.offset &- Int64(ftell(file))
        offset = source.offset
    }

    func next(number: Int) throws(CaptureError) -> Record? {
        var header: UnsafeMutablePointer<pcap_pkthdr>?
        var bytes: UnsafePointer<UInt8>?
        let at = offset
        switch pcap_next_ex(pcap, &header, &bytes) {
        case 1:
            break
        case PCAP_ERROR_BREAK:
            return nil
        default:
            let message = String(cString: pcap_geterr(pcap))
            if message.contains(Self.mixedLinkTypesMessage) {
                mixedLinkTypes = true
                return nil
            }
            if message.contains("invalid packet capture length") || message.contains("> maximum") {
                throw CaptureError(.recordTooLarge, file: source.name, frame: number, offset: at, message)
            }
            if message.contains("truncated") {
                if let lie = lyingLength(at: at) {
                    throw CaptureError(.recordTooLarge, file: source.name, frame: number, offset: at, lie)
                }
                truncation = source.endsInside("this record", frame: number, at: at)
                return nil
            }
            throw CaptureError(.malformed, file: source.name, frame: number, offset: at, message)
        }
        guard let h = header?.pointee, let bytes else { return nil }
        let captured = Int(h.caplen)
        if h.caplen > h.len {
            throw CaptureError(.recordTooLarge, file: source.name, frame: number, offset: at,
                               "captured length \(h.caplen) exceeds original length \(h.len)")
        }
        if buffer.count < captured {
            buffer.append(contentsOf: repeatElement(0, count: captured &- buffer.count))
        }
        buffer.withUnsafeMutableBufferPointer { p in
            if let base = p.baseAddress, captured > 0 { memcpy(base, bytes, captured) }
        }
        let end = base &+ Int64(ftell(file))
        offset = end
        // With nanosecond precision libpcap puts nanoseconds in tv_usec.
        let ns = Int64(h.ts.tv_sec) &* 1_000_000_000 &+ Int64(h.ts.tv_usec)
        return Record(number: number, timestamp: ns, linkType: linkType, flags: 0, data: buffer[0..<captured],
                      originalLength: Int(h.len), fileOffset: at, fileLength: Int(end &- at))
    }

    /// For a regular file cut short: a record whose stated length exceeds the whole file is a
    /// corrupt header rather than a truncated last record.
    private func lyingLength(at: Int64) -> String? {
        guard let size = source.fileSize else { return nil }
        let length: UInt32
        if pcapng {
            // The record starts after the blocks libpcap skipped; only a packet block right here can be judged.
            guard let h = source.peek(at: at, count: 8) else { return nil }
            length = bigEndian ? h.be32(at: 4) : h.le32(at: 4)
        } else {
            guard let h = source.peek(at: at, count: 16) else { return nil }
            length = bigEndian ? h.be32(at: 8) : h.le32(at: 8)
        }
        return Int64(length) > size ? "record length \(length) exceeds the file size \(size)" : nil
    }
}
