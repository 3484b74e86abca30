import CPcap
import Wire

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

extension LinkType {
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
                     "unsupported link type \(LinkType.describe(linkType))")
    }
}

/// Largest record blesniff accepts: longer lengths come from corrupt headers.
public let maxRecordLength = 16 << 20

let btsnoopMagic: [UInt8] = Array("btsnoop".utf8) + [0]
