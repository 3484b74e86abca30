/// One captured frame as stored in the file, link-layer framing still on.
/// `data` is a slice of the reader's reusable buffer: it stays valid until the next call to
/// `next()`; copy it (`Array(record.data)`) to keep it longer without pinning the buffer.
public struct Record: Sendable {
    /// 1-based, as Wireshark counts (every record, including monitor notes).
    public var number: Int
    /// Nanoseconds since the Unix epoch.
    public var timestamp: Int64
    /// pcap LINKTYPE_ value, or btsnoop datalink + 0x10000 (see `LinkType`).
    public var linkType: UInt32
    /// btsnoop record flags; 0 for pcap and pcapng.
    public var flags: UInt32
    public var data: ArraySlice<UInt8>
    /// Length of the frame on the wire; more than `data.count` when the capture cut it short.
    public var originalLength: Int
    /// Byte offset of the record (its header) in the file or stream.
    public var fileOffset: Int64
    /// Bytes the record occupies there (header + data + padding).
    public var fileLength: Int

    public var truncated: Bool { data.count < originalLength }

    /// - Parameter originalLength: nil when the frame was captured whole.
    @inlinable
    public init(number: Int, timestamp: Int64, linkType: UInt32, flags: UInt32 = 0, data: ArraySlice<UInt8>,
                originalLength: Int? = nil, fileOffset: Int64 = 0, fileLength: Int = 0) {
        self.number = number
        self.timestamp = timestamp
        self.linkType = linkType
        self.flags = flags
        self.data = data
        self.originalLength = originalLength ?? data.count
        self.fileOffset = fileOffset
        self.fileLength = fileLength
    }
}
