import Decoders
import Wire

/// Where a piece of evidence is in the capture.
public struct FrameRef: Sendable, Hashable {
    public var number: Int
    /// Nanoseconds since the Unix epoch.
    public var time: Int64
    public var fileOffset: Int64
    public var fileLength: Int

    public init(number: Int, time: Int64, fileOffset: Int64 = 0, fileLength: Int = 0) {
        self.number = number
        self.time = time
        self.fileOffset = fileOffset
        self.fileLength = fileLength
    }
}

/// What the auditor sees of the traffic: the decoded frames reduced to the facts rules need.
/// The dissector's output is turned into these by `AuditFeed`; rules never parse bytes.
public enum AuditEvent {
    /// A scan started or stopped (`Scan` holds the one definition of when: the scan model in
    /// `ScanModel`). A scan still on at the end of the capture gets no `scanStopped` but a
    /// `scanAtEnd`, as it stood then (what it brought in, `Scan.yield`), before the rules close.
    /// Held in place, not boxed: a box is a heap allocation per scan event, and the larger event
    /// costs the other events nothing measurable (events are lent, not copied).
    case scanStarted(Scan)
    case scanStopped(Scan)
    case scanAtEnd(Scan)
    /// LE Create Connection or LE Extended Create Connection (v1, v2) sent by the host.
    case createConnection(adapter: UInt16, peer: BDAddr?, peerType: UInt8?)
    /// Connection Complete with success; `connection.isCentral` tells whether this host initiated it.
    case connected(Connection)
    /// HCI Disconnect sent by the host for a handle.
    case disconnectCommand(adapter: UInt16, handle: UInt16, peer: BDAddr?)
    case disconnected(Connection, reason: UInt8)
    case encryptionChanged(Connection, on: Bool)
    /// An ATT PDU on a connection, with what the GATT tracking knows of its attribute.
    case att(Connection, ATTObservation)
    /// What a discovery response listed, said just before the response's own `.att`. Apart from
    /// the observation, which then holds no reference and is copied as plain bytes. Not boxed: it
    /// is smaller than `.att`.
    case discovery(Connection, DiscoveryObservation)
    /// A pairing that finished (or failed) on a connection.
    case pairing(Connection, PairingObservation)
    /// A Pairing Public Key that is LE Secure Connections' published debug key, sent by the
    /// pairing's initiator (the central) or its responder.
    case pairingDebugKey(Connection, fromInitiator: Bool)
    /// Advertising data this host set (LE Set Advertising / Scan Response / Extended Advertising Data),
    /// or an advertising report received (legacy or extended, `report` set), with what it and its
    /// advertiser showed (`AdvertiserModel`): one event per report.
    case advertisingData(AdvertisingDataObservation)
    /// This host started or stopped advertising on an adapter (`HostAdvertisingModel`: an enable
    /// while off, a disable while on, a central connecting to it).
    case advertisingStarted(HostAdvertising)
    case advertisingStopped(HostAdvertising)
    /// How the host set an adapter (or an advertising set) to advertise.
    case advertisingParameters(HostAdvertisingParameters)
    /// L2CAP traffic other than ATT on a connection (SMP, signalling, SDP, RFCOMM, ...): the link is
    /// in use. Sent once per frame carrying it.
    case linkData(Connection)
    /// Something in the capture tells which host stack made it (`PlatformGuess`).
    case platform(PlatformGuess)
    /// Whose a connection is (the app's, the OS's, another app's), told when it opens and again
    /// when later evidence changes it.
    case connectionOwner(Connection, ConnectionOrigin)
}

/// An ATT PDU as the auditor sees it.
public struct ATTObservation: Sendable {
    /// Who sent it: this host (the capture's side) or the peer.
    public var origin: Side
    public var opcode: ATTOpcode
    /// The opcode's role (`opcode.kind`, kept at hand: rules test it on every PDU).
    public var kind: ATTKind
    /// The handle the PDU concerns (Read, Write, Notification...), or the starting handle of a range.
    public var handle: UInt16?
    /// Ending handle of a range request (Read By Group Type, Read By Type, Find Information, Find By Type Value).
    public var endHandle: UInt16?
    /// Attribute type of a range request (0x2800 primary service, 0x2803 characteristic, ...).
    public var attributeType: BluetoothUUID?
    /// Value bytes carried (Read Response, Write, Notification...): length only.
    public var valueLength: Int = 0
    /// ATT_MTU in force on the bearer when the PDU was sent.
    public var mtu: Int = 23
    /// What the GATT tracking knows about `handle`: the characteristic's UUID, its service's UUID and
    /// its declared properties (Core Vol 3 Part G 3.3.1.1 bits), nil when never discovered.
    public var characteristic: BluetoothUUID?
    public var service: BluetoothUUID?
    public var properties: UInt8?
    /// True when the handle is a Client Characteristic Configuration descriptor; `cccdValue` is the
    /// value written (bit 0 notify, bit 1 indicate) for writes. For a 2-octet Write Request of 0x0001
    /// or 0x0002 to a handle discovery never named, `cccdValue` is set and `isCCCD` false: a CCCD
    /// written from a cached database, once notifications or indications follow.
    public var isCCCD: Bool = false
    public var cccdValue: UInt16?
    /// For a response: the frame of the request it answers. For a request: nil.
    public var answers: FrameRef?
    /// For a client's read of a value (Read, Read Blob, Read By Type of a value): true for a new read,
    /// false for a Read Blob continuing a long read (`ReadTracker`); nil for other PDUs.
    public var newRead: Bool?
    /// For a request: sent while another was outstanding. On a sniffed link only where the link
    /// layer shows the sniffer missed nothing in between (else the response was more likely lost).
    public var pipelined = false
}

/// A discovery response's list: the UUIDs of the services a Read By Group Type Response names, or
/// of the characteristics a Read By Type Response (of 0x2803) declares.
public struct DiscoveryObservation: Sendable {
    public var origin: Side
    /// `.readByGroupTypeResponse` or `.readByTypeResponse`.
    public var opcode: ATTOpcode
    /// The service of the response's first attribute, when the GATT tracking knows it.
    public var service: BluetoothUUID?
    public var found: [BluetoothUUID]

    public init(origin: Side, opcode: ATTOpcode, service: BluetoothUUID? = nil, found: [BluetoothUUID]) {
        self.origin = origin
        self.opcode = opcode
        self.service = service
        self.found = found
    }
}

/// The result of an SMP pairing.
public struct PairingObservation: Sendable {
    public enum Method: String, Sendable { case justWorks = "Just Works", passkey = "Passkey Entry", numericComparison = "Numeric Comparison", oob = "Out of Band", unknown }
    public var method: Method
    public var secureConnections: Bool
    /// Both sides set the SC bit in their AuthReq (so legacy pairing was avoidable).
    public var bothSupportSecureConnections: Bool
    public var failed: Bool

    public init(method: Method, secureConnections: Bool, bothSupportSecureConnections: Bool, failed: Bool = false) {
        self.method = method
        self.secureConnections = secureConnections
        self.bothSupportSecureConnections = bothSupportSecureConnections
        self.failed = failed
    }
}
