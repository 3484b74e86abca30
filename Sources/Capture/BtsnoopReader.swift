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

    /// Android's on-device btsnooz_hci.log: a btsnoop file header, then btsnooz version 2
    /// records (`Btsnooz`) as they are, not base64 or deflated. Decided at the first record.
    private(set) var snooz = false
    /// µs since the first snooz record: the file holds only each record's delta.
    private var snoozMicros: Int64 = 0

    func next(number: Int) throws(CaptureError) -> Record? {
        if number == 1, datalink == 1002, try Self.looksLikeSnooz(source) { snooz = true }
        if snooz { return try nextSnooz(number: number) }
        let at = source.offset
        guard try source.requireStart(Self.recordHeaderLength, of: "a record header", frame: number, truncation: &truncation) else {
            return nil
        }
        // Read in place: a slice of the pending bytes costs a retain and a release per record.
        let originalLength = source.u32(at: 0, bigEndian: true)
        let includedLength = source.u32(at: 4, bigEndian: true)
        let flags = source.u32(at: 8, bigEndian: true)
        let cumulativeDrops = source.u32(at: 12, bigEndian: true)
        let micros = Int64(bitPattern: UInt64(source.u32(at: 16, bigEndian: true)) << 32 | UInt64(source.u32(at: 20, bigEndian: true)))
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
        guard try source.requireWhole(total, of: "this record", frame: number, at: at, truncation: &truncation) else {
            return nil
        }
        let data = source.consume(total, after: Self.recordHeaderLength)
        drops = UInt64(cumulativeDrops)
        return Record(number: number, timestamp: (micros &- Self.epochDelta) &* 1000,
                      linkType: LinkType.btsnoop(datalink), flags: flags,
                      data: data, originalLength: Int(originalLength),
                      fileOffset: at, fileLength: total)
    }

    /// Whether the first record is a btsnooz version 2 record: known type, length at least 1 and
    /// at most the original packet length, and the same for the record after it when there is
    /// one. A btsnoop record never is: its first two octets, the high half of a big-endian
    /// length under 64 KiB, are zero, which is a btsnooz length of 0.
    static func looksLikeSnooz(_ source: ByteSource) throws(CaptureError) -> Bool {
        guard try source.require(9) else { return false }
        let h = source.pending
        func plausible(_ at: Int) -> Int? {
            guard at &+ 9 <= h.count else { return nil }
            let length = Int(h[h.startIndex &+ at]) | Int(h[h.startIndex &+ at &+ 1]) << 8
            let packet = Int(h[h.startIndex &+ at &+ 2]) | Int(h[h.startIndex &+ at &+ 3]) << 8
            let type = h[h.startIndex &+ at &+ 8]
            guard length >= 1, length <= packet, Btsnooz.table[Int(type)].h4 != 0 else { return nil }
            return at &+ 8 &+ length
        }
        guard let second = plausible(0) else { return false }
        _ = try source.require(second &+ 9)
        return source.pending.count < second &+ 9 || plausible(second) != nil
    }

    private func nextSnooz(number: Int) throws(CaptureError) -> Record? {
        let at = source.offset
        guard try source.requireStart(9, of: "a btsnooz record header", frame: number, truncation: &truncation) else {
            return nil
        }
        let h = Array(source.pending.prefix(9))
        let length = Int(h[0]) | Int(h[1]) << 8
        let packetLength = Int(h[2]) | Int(h[3]) << 8
        let delta = Int64(UInt32(h[4]) | UInt32(h[5]) << 8 | UInt32(h[6]) << 16 | UInt32(h[7]) << 24)
        let entry = Btsnooz.table[Int(h[8])]
        guard entry.h4 != 0 else {
            throw CaptureError(.malformed, file: source.name, frame: number, offset: at, "unknown btsnooz record type 0x\(Hex.lower(UInt64(h[8]), width: 2))")
        }
        guard length >= 1 else {
            throw CaptureError(.malformed, file: source.name, frame: number, offset: at, "btsnooz record length 0")
        }
        let total = 8 &+ length
        guard try source.requireWhole(total, of: "this record", frame: number, at: at, truncation: &truncation) else {
            return nil
        }
        let bytes = source.consume(total)
        snoozMicros &+= delta
        // The record's type byte becomes the H4 packet indicator, as in a btsnoop H4 record.
        let data = [entry.h4] + bytes.dropFirst(9)
        return Record(number: number, timestamp: snoozMicros &* 1000, linkType: LinkType.btsnoopH4, flags: entry.flags,
                      data: data[...], originalLength: max(packetLength, length), fileOffset: at, fileLength: total)
    }
}
