import Wire

/// btsnoop (RFC 1761 snoop derivative used by Android and btmon): 16-byte file header
/// "btsnoop\0", version 1, datalink; then records with a 24-byte big-endian header
/// (original length, included length, flags, cumulative drops, µs since 0 AD).
final class BtsnoopReader {
    static let fileHeaderLength = 16
    static let recordHeaderLength = 24
    /// 0 AD to 1970 in microseconds.
    static let epochDelta: Int64 = 0x00dc_ddb3_0f2f_8000

    let source: ByteSource
    let datalink: UInt32
    private(set) var drops: UInt64 = 0
    private(set) var truncation: CaptureError?

    /// `source` holds at least the 16-byte header (checked by the caller), not yet consumed.
    init(source: ByteSource) throws(CaptureError) {
        self.source = source
        let header = source.pending
        let version = header.be32(at: 8)
        datalink = header.be32(at: 12)
        guard version == 1 else {
            throw CaptureError(.unsupportedVersion, file: source.name, "unsupported btsnoop version \(version)")
        }
        guard LinkType.btsnoopSupported.contains(datalink) else {
            throw CaptureError(.unsupportedLinkType(LinkType.btsnoop(datalink)), file: source.name,
                               "unsupported btsnoop datalink \(datalink) (H1 1001, H4 1002, Linux monitor 2001 are read)")
        }
        _ = source.consume(Self.fileHeaderLength)
    }

    func next(number: Int) throws(CaptureError) -> Record? {
        let at = source.offset
        guard try source.require(Self.recordHeaderLength) else {
            if source.available > 0 {
                truncation = CaptureError(.truncatedRecord, file: source.name, frame: number, offset: at,
                                          "file ends inside a record header, after \(number &- 1) complete frames")
            }
            return nil
        }
        let h = source.pending
        let originalLength = h.be32(at: 0)
        let includedLength = h.be32(at: 4)
        let flags = h.be32(at: 8)
        let cumulativeDrops = h.be32(at: 12)
        let micros = Int64(bitPattern: h.be64(at: 16))
        if includedLength > originalLength {
            throw CaptureError(.recordTooLarge, file: source.name, frame: number, offset: at,
                               "included length \(includedLength) exceeds original length \(originalLength)")
        }
        if Int(includedLength) > maxRecordLength {
            throw CaptureError(.recordTooLarge, file: source.name, frame: number, offset: at,
                               "record length \(includedLength) exceeds the 16 MiB limit")
        }
        if let size = source.fileSize, Int64(includedLength) > size {
            throw CaptureError(.recordTooLarge, file: source.name, frame: number, offset: at,
                               "record length \(includedLength) exceeds the file size \(size)")
        }
        let total = Self.recordHeaderLength &+ Int(includedLength)
        guard try source.require(total) else {
            truncation = CaptureError(.truncatedRecord, file: source.name, frame: number, offset: at,
                                      "file ends inside this record (\(source.available) of \(total) bytes), after \(number &- 1) complete frames")
            return nil
        }
        let bytes = source.consume(total)
        drops = UInt64(cumulativeDrops)
        return Record(number: number, timestamp: (micros &- Self.epochDelta) &* 1000,
                      linkType: LinkType.btsnoop(datalink), flags: flags,
                      data: bytes.dropFirst(Self.recordHeaderLength), originalLength: Int(originalLength),
                      fileOffset: at, fileLength: total)
    }
}
