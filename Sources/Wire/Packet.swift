/// Which way a packet crossed the host–controller interface.
public enum Direction: UInt8, Sendable {
    /// Host to controller (commands, outgoing data).
    case sent
    /// Controller to host (events, incoming data).
    case received
    case unknown

    public var arrow: String {
        switch self {
        case .sent: return "<"   // as btmon: < host to controller
        case .received: return ">"
        case .unknown: return "*"
        }
    }
}

/// HCI packet indicator (H4 UART transport type byte, Core Vol 4 Part A 2).
public enum HCIPacketType: UInt8, Sendable {
    case command = 0x01, aclData = 0x02, scoData = 0x03, event = 0x04, isoData = 0x05

    public var name: String {
        switch self {
        case .command: return "HCI Command"
        case .aclData: return "ACL Data"
        case .scoData: return "SCO Data"
        case .event: return "HCI Event"
        case .isoData: return "ISO Data"
        }
    }
}

/// What a frame carries, after its link-layer header has been taken off.
public enum PacketKind: Sendable, Equatable {
    case hci(HCIPacketType)
    /// A Linux monitor record that is not HCI traffic (New Index, System Note, ...).
    case monitor(opcode: UInt16)
    /// An H4 packet indicator that no specification defines.
    case unknownHCIType(UInt8)
    /// Over-the-air link-layer capture (link type 251, 256, 272): decoded by the LL decoder.
    case linkLayer(linkType: UInt32)
    /// A link type blesniff does not decode.
    case unsupported(linkType: UInt32)
    /// The link-layer header itself was cut short.
    case truncatedHeader
}

/// What a frame is, apart from its bytes: where and when it was captured, which way it went and
/// what it carries. Plain values only, so the decoders pass it around without reference counting.
public struct PacketHeader: Sendable {
    /// 1-based, as Wireshark counts.
    public var number: Int
    /// Nanoseconds since the Unix epoch.
    public var timestamp: Int64
    public var direction: Direction
    /// Controller index (Linux monitor) or 0.
    public var adapter: UInt16
    public var kind: PacketKind
    /// Where the record starts in the capture file and how long it is there.
    public var fileOffset: Int64
    public var fileLength: Int
    /// The capture holds fewer bytes than were on the wire (snap length, btsnooz).
    public var truncated: Bool

    @inlinable
    public init(number: Int, timestamp: Int64, direction: Direction, adapter: UInt16, kind: PacketKind,
                fileOffset: Int64 = 0, fileLength: Int = 0, truncated: Bool = false) {
        self.number = number
        self.timestamp = timestamp
        self.direction = direction
        self.adapter = adapter
        self.kind = kind
        self.fileOffset = fileOffset
        self.fileLength = fileLength
        self.truncated = truncated
    }
}

/// One frame of a capture, ready for the decoders. `payload` starts at the HCI header
/// (opcode, event code, handle) with the transport's type byte and pseudo-headers removed.
public struct Packet: Sendable {
    public var header: PacketHeader
    public var payload: Bytes

    @inlinable
    public init(number: Int, timestamp: Int64, direction: Direction, adapter: UInt16, kind: PacketKind,
                payload: Bytes, fileOffset: Int64 = 0, fileLength: Int = 0, truncated: Bool = false) {
        header = PacketHeader(number: number, timestamp: timestamp, direction: direction, adapter: adapter, kind: kind,
                              fileOffset: fileOffset, fileLength: fileLength, truncated: truncated)
        self.payload = payload
    }

    @inlinable public var number: Int { get { header.number } set { header.number = newValue } }
    @inlinable public var timestamp: Int64 { get { header.timestamp } set { header.timestamp = newValue } }
    @inlinable public var direction: Direction { get { header.direction } set { header.direction = newValue } }
    @inlinable public var adapter: UInt16 { get { header.adapter } set { header.adapter = newValue } }
    @inlinable public var kind: PacketKind { get { header.kind } set { header.kind = newValue } }
    @inlinable public var fileOffset: Int64 { get { header.fileOffset } set { header.fileOffset = newValue } }
    @inlinable public var fileLength: Int { get { header.fileLength } set { header.fileLength = newValue } }
    @inlinable public var truncated: Bool { get { header.truncated } set { header.truncated = newValue } }
}

/// Linux monitor channel opcodes (BlueZ monitor/ btsnoop 2001 flags, DLT 254 header).
public enum MonitorOpcode {
    public static let newIndex: UInt16 = 0, deleteIndex: UInt16 = 1
    public static let commandPacket: UInt16 = 2, eventPacket: UInt16 = 3
    public static let aclTX: UInt16 = 4, aclRX: UInt16 = 5, scoTX: UInt16 = 6, scoRX: UInt16 = 7
    public static let openIndex: UInt16 = 8, closeIndex: UInt16 = 9, indexInfo: UInt16 = 10
    public static let vendorDiag: UInt16 = 11, systemNote: UInt16 = 12, userLogging: UInt16 = 13
    public static let ctrlOpen: UInt16 = 14, ctrlClose: UInt16 = 15, ctrlCommand: UInt16 = 16, ctrlEvent: UInt16 = 17
    public static let isoTX: UInt16 = 18, isoRX: UInt16 = 19

    static let names: [String] = [
        "New Index", "Delete Index", "Command", "Event", "ACL TX", "ACL RX", "SCO TX", "SCO RX",
        "Open Index", "Close Index", "Index Info", "Vendor Diagnostic", "System Note", "User Logging",
        "Control Open", "Control Close", "Control Command", "Control Event", "ISO TX", "ISO RX",
    ]

    public static func name(_ op: UInt16) -> String {
        Int(op) < names.count ? names[Int(op)] : "Monitor opcode \(op)"
    }

    /// HCI packet type and direction of the opcodes that carry HCI traffic.
    static let hci: [UInt16: (HCIPacketType, Direction)] = [
        commandPacket: (.command, .sent), eventPacket: (.event, .received),
        aclTX: (.aclData, .sent), aclRX: (.aclData, .received),
        scoTX: (.scoData, .sent), scoRX: (.scoData, .received),
        isoTX: (.isoData, .sent), isoRX: (.isoData, .received),
    ]
}

extension Packet {
    /// Takes the link-layer framing off a captured record: the one step from what a file or
    /// socket holds to what the decoders read.
    public init(_ record: Record) {
        let data = record.data, linkType = record.linkType, flags = record.flags
        // The fields are worked out first and the packet built once: filling in a `var Packet`
        // from a nested function copied it.
        var direction = Direction.unknown
        var adapter: UInt16 = 0
        var kind = PacketKind.truncatedHeader
        var payload = data[data.endIndex...]
        switch linkType {
        case LinkType.h4:
            (kind, payload) = Self.h4(data, or: payload)
            // No direction on the wire: commands go down, events come up; data stays unknown.
            if case .hci(let t) = kind { direction = t == .command ? .sent : t == .event ? .received : .unknown }
        case LinkType.h4WithPHDR:
            guard data.count >= 4 else { break }
            // 4-byte direction, network byte order: 0 sent, 1 received.
            let dir = UInt32(data.byte(0)!) << 24 | UInt32(data.byte(1)!) << 16 | UInt32(data.byte(2)!) << 8 | UInt32(data.byte(3)!)
            direction = dir == 0 ? .sent : dir == 1 ? .received : .unknown
            (kind, payload) = Self.h4(data.from(4), or: payload)
        case LinkType.linuxMonitor:
            guard data.count >= 4 else { break }
            adapter = UInt16(data.byte(0)!) << 8 | UInt16(data.byte(1)!)
            let opcode = UInt16(data.byte(2)!) << 8 | UInt16(data.byte(3)!)
            payload = data.from(4)
            (kind, direction) = Self.monitor(opcode)
        case LinkType.btsnoopH4:
            direction = flags & 1 == 0 ? .sent : .received
            (kind, payload) = Self.h4(data, or: payload)
        case LinkType.btsnoopH1:
            // Flags: bit 0 direction (1 = received), bit 1 command/event (1) or data (0).
            direction = flags & 1 == 0 ? .sent : .received
            kind = .hci(flags & 2 == 0 ? .aclData : (flags & 1 == 0 ? .command : .event))
            payload = data
        case LinkType.btsnoopMonitor:
            adapter = UInt16(truncatingIfNeeded: flags >> 16)
            payload = data
            (kind, direction) = Self.monitor(UInt16(truncatingIfNeeded: flags))
        case LinkType.leLL, LinkType.leLLWithPHDR, LinkType.nordicBLE, LinkType.ppi:
            kind = .linkLayer(linkType: linkType)
            payload = data
        default:
            kind = .unsupported(linkType: linkType)
            payload = data
        }
        self.init(number: record.number, timestamp: record.timestamp, direction: direction, adapter: adapter, kind: kind,
                  payload: payload, fileOffset: record.fileOffset, fileLength: record.fileLength, truncated: record.truncated)
    }

    /// The H4 packet indicator and what follows it; `empty` when there is no indicator.
    private static func h4(_ bytes: Bytes, or empty: Bytes) -> (PacketKind, Bytes) {
        guard let t = bytes.first else { return (.truncatedHeader, empty) }
        return (HCIPacketType(rawValue: t).map { .hci($0) } ?? .unknownHCIType(t), bytes.dropFirst())
    }

    private static func monitor(_ opcode: UInt16) -> (PacketKind, Direction) {
        if let (type, dir) = MonitorOpcode.hci[opcode] { return (.hci(type), dir) }
        // Control commands go down to the kernel, the rest comes up from it.
        return (.monitor(opcode: opcode), opcode == MonitorOpcode.ctrlCommand ? .sent : .received)
    }
}
