import Wire

/// Plain pcap (version 2.4, standard record header) read straight from the `ByteSource` buffer:
/// records are slices of it, with no stdio copy and no `ftell` per record. libpcap still checks the
/// file header, and takes over at the first record that is not plainly well-formed (cut short,
/// longer than the snapshot length, captured length above the original), so such files give
/// the messages and cuts libpcap gives.
final class PcapReader {
    static let fileHeaderLength = 24
    static let recordHeaderLength = 16

    let source: ByteSource
    private let libpcap: LibpcapReader
    private let bigEndian: Bool
    private let nanoseconds: Bool
    /// Longest captured length read here: libpcap cuts longer records to the snapshot length and
    /// rejects those over its limit for the link types blesniff reads (256 KiB).
    private let limit: UInt32
    /// libpcap reads the rest of the file.
    private var delegated = false

    var linkType: UInt32 { libpcap.linkType }
    var truncation: CaptureError? { libpcap.truncation }

    /// nil when the header is not one this reader handles (another version, the modified record
    /// header) or libpcap read past it: then libpcap reads the whole file.
    init?(source: ByteSource, libpcap: LibpcapReader, bigEndian: Bool, nanoseconds: Bool) {
        guard libpcap.streamPosition == Int64(Self.fileHeaderLength), source.offset == Int64(Self.fileHeaderLength),
              libpcap.snapshot > 0 else { return nil }
        self.source = source
        self.libpcap = libpcap
        self.bigEndian = bigEndian
        self.nanoseconds = nanoseconds
        limit = min(UInt32(clamping: libpcap.snapshot), 262_144)
    }

    /// True for the header `PcapReader` reads records of: standard magic (µs or ns, either byte
    /// order) and version 2.4, whose record headers hold caplen then len, 16 bytes in all.
    static func handles(_ header: ArraySlice<UInt8>) -> Bool {
        guard header.count >= fileHeaderLength else { return false }
        let magic = header.le32(at: 0)
        guard [0xA1B2_C3D4, 0xD4C3_B2A1, 0xA1B2_3C4D, 0x4D3C_B2A1].contains(magic) else { return false }
        let s = header.startIndex
        let bigEndian = magic == 0xD4C3_B2A1 || magic == 0x4D3C_B2A1
        let major = bigEndian ? UInt16(header[s + 4]) << 8 | UInt16(header[s + 5]) : UInt16(header[s + 5]) << 8 | UInt16(header[s + 4])
        let minor = bigEndian ? UInt16(header[s + 6]) << 8 | UInt16(header[s + 7]) : UInt16(header[s + 7]) << 8 | UInt16(header[s + 6])
        return major == 2 && minor == 4
    }

    func next(number: Int) throws(CaptureError) -> Record? {
        if delegated { return try libpcap.next(number: number) }
        let at = source.offset
        guard try source.require(Self.recordHeaderLength) else {
            // A clean end; a partial header is libpcap's to report.
            return source.available == 0 ? nil : try delegate(number)
        }
        let caplen = source.u32(at: 8, bigEndian: bigEndian)
        let len = source.u32(at: 12, bigEndian: bigEndian)
        guard caplen <= limit, caplen <= len else { return try delegate(number) }
        let total = Self.recordHeaderLength &+ Int(caplen)
        guard try source.require(total) else { return try delegate(number) }
        // As libpcap reads them: signed 32-bit in host order, unsigned when it swaps the bytes;
        // microseconds are scaled to nanoseconds. Read in place, before the record is consumed.
        let secWord = source.u32(at: 0, bigEndian: bigEndian), fracWord = source.u32(at: 4, bigEndian: bigEndian)
        let sec = bigEndian ? Int64(secWord) : Int64(Int32(bitPattern: secWord))
        let frac = bigEndian ? Int64(fracWord) : Int64(Int32(bitPattern: fracWord))
        let ns = sec &* 1_000_000_000 &+ (nanoseconds ? frac : frac &* 1000)
        let data = source.consume(total, after: Self.recordHeaderLength)
        return Record(number: number, timestamp: ns, linkType: libpcap.linkType, flags: 0,
                      data: data, originalLength: Int(len),
                      fileOffset: at, fileLength: total)
    }

    private func delegate(_ number: Int) throws(CaptureError) -> Record? {
        delegated = true
        libpcap.resync()
        return try libpcap.next(number: number)
    }
}
