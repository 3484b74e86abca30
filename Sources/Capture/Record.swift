import CPcap

/// One captured frame as stored in the file, link-layer framing still on.
/// `data` is a slice of the reader's reusable buffer: it stays valid until the next call to
/// `next()`; copy it (`Array(record.data)`) to keep it longer without pinning the buffer.
public struct Record: Sendable {
    /// 1-based, as Wireshark counts (every record, including monitor notes).
    public var number: Int
    /// Nanoseconds since the Unix epoch.
    public var timestamp: Int64
    /// pcap LINKTYPE_ value, or btsnoop datalink + 0x10000 (see `CaptureLinkType`).
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

    public init(number: Int, timestamp: Int64, linkType: UInt32, flags: UInt32, data: ArraySlice<UInt8>,
                originalLength: Int, fileOffset: Int64, fileLength: Int) {
        self.number = number
        self.timestamp = timestamp
        self.linkType = linkType
        self.flags = flags
        self.data = data
        self.originalLength = originalLength
        self.fileOffset = fileOffset
        self.fileLength = fileLength
    }
}

public enum CaptureFormat: Equatable, Sendable {
    case pcap(nanoseconds: Bool, bigEndian: Bool)
    case pcapng
    case btsnoop(datalink: UInt32)
    /// Apple PacketLogger records (macOS writes them big-endian, iOS and BTstack little-endian).
    case packetLogger(bigEndian: Bool)
    /// Android bug report text with a btsnooz section (BTSNOOP_LOG_SUMMARY).
    case btsnooz(version: UInt8)
    /// Android bug report zip: its btsnoop_hci.log files, else its text's btsnooz section.
    case bugReportZip

    public var name: String {
        switch self {
        case .pcap(let ns, let be): return "pcap (\(ns ? "ns" : "µs"), \(be ? "big" : "little")-endian)"
        case .pcapng: return "pcapng"
        case .btsnoop(let dl): return "btsnoop (datalink \(dl))"
        case .packetLogger(let be): return "PacketLogger (\(be ? "big" : "little")-endian)"
        case .btsnooz(let v): return "Android bug report btsnooz (version \(v))"
        case .bugReportZip: return "Android bug report zip"
        }
    }
}

/// The link types blesniff reads, in the numbering of `Record.linkType` (same values as
/// `Decoders.LinkType`; Capture does not depend on Decoders).
public enum CaptureLinkType {
    public static let btsnoopBase: UInt32 = 0x1_0000
    /// pcap LINKTYPE_ values: H4, H4 with direction header, Linux monitor, LE LL, LE LL with
    /// radio header, Nordic BLE sniffer.
    public static let pcapSupported: [UInt32] = [187, 201, 254, 251, 256, 272]
    /// btsnoop datalinks: H1, H4, Linux monitor.
    public static let btsnoopSupported: [UInt32] = [1001, 1002, 2001]

    public static func isSupported(_ t: UInt32) -> Bool {
        t >= btsnoopBase ? btsnoopSupported.contains(t &- btsnoopBase) : pcapSupported.contains(t)
    }

    /// "192 (PPI)": the number and libpcap's name for it.
    public static func describe(_ t: UInt32) -> String {
        if t >= btsnoopBase { return "btsnoop datalink \(t &- btsnoopBase)" }
        if t <= UInt32(Int32.max), let name = pcap_datalink_val_to_name(Int32(t)) {
            return "\(t) (\(String(cString: name)))"
        }
        return "\(t)"
    }
}

public struct CaptureError: Error, CustomStringConvertible, Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case notACapture
        case unsupportedLinkType(UInt32)
        case unsupportedVersion
        case truncatedHeader
        case truncatedRecord
        /// A record length larger than the file, than 16 MiB, or captured length > original length.
        case recordTooLarge
        /// A structurally invalid record or block.
        case malformed
        case io
        /// The capture source cannot be opened for lack of privilege.
        case permission
        /// The operating system lacks what the capture source needs.
        case unsupportedSystem
    }

    public var kind: Kind
    /// Path as the user gave it ("-" is shown as "standard input").
    public var file: String
    /// Frame number (1-based) the problem is in, when it is in one.
    public var frame: Int?
    /// Byte offset in the file of the record or header at fault.
    public var offset: Int64?
    public var message: String

    public init(_ kind: Kind, file: String, frame: Int? = nil, offset: Int64? = nil, _ message: String) {
        self.kind = kind
        self.file = file
        self.frame = frame
        self.offset = offset
        self.message = message
    }

    public var description: String {
        var s = file + ": "
        if let frame { s += "frame \(frame)" + (offset.map { " at byte offset \($0)" } ?? "") + ": " }
        else if let offset { s += "at byte offset \(offset): " }
        return s + message
    }

    static func notACapture(_ file: String) -> CaptureError {
        CaptureError(.notACapture, file: file, "not a capture file (pcap, pcapng or btsnoop)")
    }

    static func unsupported(_ file: String, _ linkType: UInt32) -> CaptureError {
        CaptureError(.unsupportedLinkType(linkType), file: file,
                     "unsupported link type \(CaptureLinkType.describe(linkType))")
    }
}

/// Largest record blesniff accepts: longer lengths come from corrupt headers.
public let maxRecordLength = 16 << 20

/// Recognises a capture format from its first bytes (4 are enough for pcap and pcapng,
/// btsnoop needs 16 for its datalink). Never looks at the file name.
public func detectFormat(_ firstBytes: ArraySlice<UInt8>) -> CaptureFormat? {
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
    return .btsnoop(datalink: be32(b[...], 12))
}

let btsnoopMagic: [UInt8] = Array("btsnoop".utf8) + [0]

/// Big-endian 32 bits at `i` bytes past the start of `b`; the caller has checked the length.
@inline(__always) func be32(_ b: ArraySlice<UInt8>, _ i: Int) -> UInt32 {
    let s = b.startIndex &+ i
    return UInt32(b[s]) << 24 | UInt32(b[s + 1]) << 16 | UInt32(b[s + 2]) << 8 | UInt32(b[s + 3])
}

@inline(__always) func be64(_ b: ArraySlice<UInt8>, _ i: Int) -> UInt64 {
    UInt64(be32(b, i)) << 32 | UInt64(be32(b, i &+ 4))
}

@inline(__always) func le32(_ b: ArraySlice<UInt8>, _ i: Int) -> UInt32 {
    let s = b.startIndex &+ i
    return UInt32(b[s]) | UInt32(b[s + 1]) << 8 | UInt32(b[s + 2]) << 16 | UInt32(b[s + 3]) << 24
}
