import Wire

/// One ACL connection as seen across the capture: from its Connection Complete (or its first
/// data when the capture starts mid-connection) to its Disconnection Complete.
public final class Connection {
    /// Sequential number of the connection in the capture (1-based).
    public let id: Int
    public let adapter: UInt16
    public let handle: UInt16
    public internal(set) var peer: BDAddr?
    /// Peer address type as HCI reports it (0 public, 1 random, 2 public identity, 3 random identity).
    public internal(set) var peerAddressType: UInt8?
    /// Role of this host's controller: true when it is the central.
    public internal(set) var isCentral: Bool?
    public internal(set) var isLE: Bool
    /// Seen by a sniffer over the air rather than in an HCI log (packets may be missing).
    public internal(set) var overTheAir = false
    /// Connection interval in units of 1.25 ms, latency in events, supervision timeout in 10 ms.
    public internal(set) var interval: UInt16?
    public internal(set) var latency: UInt16?
    public internal(set) var supervisionTimeout: UInt16?
    public internal(set) var createdFrame: Int?
    public internal(set) var createdTime: Int64?
    /// First frame of this connection in the capture (its Connection Complete or its first data).
    public let firstFrame: Int
    public internal(set) var endedFrame: Int?
    public internal(set) var endedTime: Int64?
    public internal(set) var endReason: UInt8?
    public internal(set) var encrypted = false
    /// Frame of the first Encryption Change with encryption on.
    public internal(set) var encryptedFrame: Int?
    /// Connection parameter updates: (frame, its time, interval, latency, timeout).
    public internal(set) var updates: [(frame: Int, time: Int64, interval: UInt16, latency: UInt16, timeout: UInt16)] = []
    public internal(set) var lastActivity: Int64
    /// Frame of the last packet of a sniffed link (for `lastActivity`).
    public internal(set) var lastPacketFrame: Int?
    /// Sniffed links: gaps the link layer saw (`LLFrame.linkGaps`: skipped events, a side out of
    /// turn, damaged PDUs) and L2CAP PDUs that never completed, seen when the next one started.
    var linkGaps = 0, unfinishedPDUs = 0
    /// How many times the sniffer is known to have missed packets, so ATT can tell a lost response
    /// from pipelining.
    var linkLosses: Int { linkGaps &+ unfinishedPDUs }
    /// A sniffed link that ended without a disconnect the sniffer saw: a new CONNECT_IND between the
    /// same devices, or no packet for longer than its supervision timeout. It ended at its last packet.
    public internal(set) var lost = false

    var reassembly: (sent: L2CAPReassembler, received: L2CAPReassembler) = (.init(), .init())
    /// A PDU whose start the capture truncated is being skipped in that direction (sent, received).
    var skippingTruncated: (sent: Bool, received: Bool) = (false, false)
    /// SMP pairings on this connection and the method each used.
    public private(set) lazy var pairing = PairingTracker()
    /// Credit-based and BR/EDR channels opened through signaling.
    public private(set) lazy var channels = DynamicChannels()
    /// The ATT bearer on the fixed channel, and those on EATT channels by the local CID.
    public internal(set) var att: ATTBearer?
    var eatt: [UInt16: ATTBearer] = [:]

    init(id: Int, adapter: UInt16, handle: UInt16, isLE: Bool, frame: Int, time: Int64) {
        self.id = id
        self.adapter = adapter
        self.handle = handle
        self.isLE = isLE
        firstFrame = frame
        lastActivity = time
    }

    /// Identity used to carry a peer's GATT database across connections.
    public var peerKey: PeerKey { PeerKey(address: peer, type: peerAddressType.map { $0 & 1 }, connection: peer == nil ? id : 0) }

    public var label: String {
        var s = "#\(id) handle " + Hex.prefixed(handle, width: 4)
        if let p = peer { s += " " + p.description }
        return s
    }
}

/// Identifies a peer across connections: its address and address type (public or random), or,
/// when the capture never showed the address, the one connection it was seen in.
public struct PeerKey: Hashable, Sendable, CustomStringConvertible {
    public let address: BDAddr?
    public let type: UInt8?
    let connection: Int

    public var description: String {
        guard let a = address else { return "connection #\(connection) (address unknown)" }
        return a.description + (type == 1 ? " (random)" : type == 0 ? " (public)" : "")
    }
}
