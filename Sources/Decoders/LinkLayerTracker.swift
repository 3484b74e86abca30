import Wire

/// State across over-the-air frames: connections by access address (from CONNECT_IND or first
/// sight), direction, retransmissions (SN/NESN, Vol 6 Part B 4.5.9, `LLSequenceTracker`), CRC-24 checks, encryption
/// start/pause and, with a key, AES-CCM decryption, and what goes on to L2CAP reassembly.

/// Which side sent a data PDU.
public enum LLDirection: Sendable, Equatable {
    case centralToPeripheral, peripheralToCentral

    /// A literal: written as one, a summary line stays plain by construction (`TextLine`) and is
    /// not scanned for text to escape.
    public var arrow: StaticString { self == .centralToPeripheral ? "C→P" : "P→C" }
    var index: Int { self == .centralToPeripheral ? 0 : 1 }
}

public enum LLCRCStatus: Sendable, Equatable {
    /// Checked (by the sniffer or here) and correct.
    case valid
    case invalid
    /// No CRC in the capture or no CRCInit known yet.
    case unchecked
    /// The sniffer checked it on air and found it correct, but the CRC stored in the capture does
    /// not match the packet (tools that log the packets they send can write a made-up one). The
    /// packet is decoded as correct.
    case storedMismatch
}

public enum LLEncryption: Sendable, Equatable {
    case none
    /// Ciphertext that could not be decrypted (no key, no ENC_REQ/RSP seen, or MIC mismatch).
    case encrypted
    /// Decrypted here with a given, distributed or recovered key (`LLFrame.key`); the MIC matched.
    case decrypted
    /// The sniffer decrypted it and said the MIC was right.
    case decryptedBySniffer
    /// Plaintext in the file on an encrypted link, with no word from the sniffer's header: the
    /// tool that wrote the capture decrypted it and removed the MIC.
    case decryptedInCapture
}

/// A data PDU's payload for `L2CAPReassembler.add(_:start:frame:)`.
public struct LLL2CAPFragment: Sendable {
    public let data: Bytes
    /// LLID 0b10 (start or complete); false for a continuation (0b01).
    public let start: Bool
}

/// The PDU of a frame.
public enum LLPDU: Sendable, Dissectable {
    case advertising(LLAdvertisingPDU)
    case data(LLDataPDU)
    /// No link-layer packet could be read (record too short).
    case none

    /// `LLFrame.hasFieldFaults`, decided by the PDU itself (the frame only asks it).
    var hasFieldFaults: Bool {
        switch self {
        case .advertising(let a):
            switch a.body {
            case .connect(let c): return c.hop < 5 || c.hop > 16
            case .extended(let h, _): return h.malformed != nil
            default: return false
            }
        case .data(let d):
            return d.control?.isTruncated ?? false
        case .none: return false
        }
    }

    /// An LL control PDU's opcode.
    var controlOpcode: UInt8? {
        if case .data(let d) = self { return d.control?.opcode }
        return nil
    }

    public var summary: String { TextLine.make(writeSummary) }

    public func writeSummary(to s: inout TextLine) {
        switch self {
        case .advertising(let a): a.writeSummary(to: &s)
        case .data(let d): d.writeSummary(to: &s)
        case .none: s += "No link-layer packet"
        }
    }

    public var fields: [Field] { FieldList.build(writeFields) }

    public func writeFields(to out: FieldSink) {
        switch self {
        case .advertising(let a): a.writeFields(to: out)
        case .data(let d): d.writeFields(to: out)
        case .none: break
        }
    }
}

/// Everything the link layer says about one captured frame. A class: the decode is large, and
/// the tracker, the dissector and every output pass it on without copying it.
public final class LLFrame: Dissectable {
    public private(set) var number: Int
    public internal(set) var header: LLPseudoHeader
    public internal(set) var accessAddress: UInt32?
    public internal(set) var crcValue: UInt32?
    /// LE Coded PHY: the packet's Coding Indicator.
    public internal(set) var codingIndicator: UInt8?
    public private(set) var pdu: LLPDU = .none
    /// Index (1-based, order of appearance) of the connection this data PDU belongs to.
    public internal(set) var connection: Int?
    public internal(set) var direction: LLDirection?
    /// Whether SN and NESN make this data PDU new, a retransmission or, after missed packets,
    /// unknown (`LLSequenceTracker`).
    public internal(set) var sequence: LLSequence = .new
    /// Times the sniffer is known to have missed packets on this connection up to this frame.
    public internal(set) var linkGaps = 0
    /// On a link's first PDU that stays encrypted: why no key decrypts it.
    public internal(set) var decryptionNote: String?
    public var isRetransmission: Bool { sequence == .retransmission }
    public internal(set) var crc: LLCRCStatus = .unchecked
    /// The capture stores the CRC as a little-endian number, not in air order (`LLPacket.crcAsNumber`).
    public internal(set) var crcStoredAsNumber = false
    public internal(set) var encryption: LLEncryption = .none
    /// The key that decrypted this PDU (set when `encryption` is `.decrypted`).
    public internal(set) var key: LinkKey?
    /// Set when this PDU carries L2CAP data to reassemble (not for retransmissions, bad CRCs,
    /// ciphertext or empty PDUs).
    public internal(set) var l2cap: LLL2CAPFragment?
    /// What broke a rule (header, lengths); decoding went on.
    public internal(set) var problems: [String] = []

    /// The advertising report this PDU stands for (`LLAdvertisingPDU.report`) when its CRC is not
    /// known bad; the dissector keeps it only for the first copy of an advertising event (the
    /// advertiser repeats it on each primary channel).
    public internal(set) var report: AdvertisingReport?
    /// A CONNECT_IND's parameters (with a CRC not known bad).
    public internal(set) var connectInd: LLConnectInd?
    /// `pdu.hasFieldFaults`, decided when the PDU is stored: read back out of the frame, the PDU
    /// would be copied for it.
    private(set) var pduHasFieldFaults = false
    /// `dataPDU?.control?.opcode`, decided when the PDU is stored, for the same reason.
    public private(set) var controlOpcode: UInt8?

    init(number: Int, header: LLPseudoHeader) {
        self.number = number
        self.header = header
    }

    /// Empties it for another frame, as `init` leaves a new one, keeping the room its problems took.
    func reset(number: Int, header: LLPseudoHeader) {
        self.number = number
        self.header = header
        accessAddress = nil
        crcValue = nil
        codingIndicator = nil
        // `pdu` is left to `set`, which every path calls: assigning `.none` here copied a whole
        // PDU's size twice a frame.
        connection = nil
        direction = nil
        sequence = .new
        linkGaps = 0
        // Tested first: storing nil over nil still releases the old value, a call each a frame.
        if decryptionNote != nil { decryptionNote = nil }
        crc = .unchecked
        crcStoredAsNumber = false
        encryption = .none
        if key != nil { key = nil }
        if l2cap != nil { l2cap = nil }
        if !problems.isEmpty { problems.removeAll(keepingCapacity: true) }
        report = nil
        connectInd = nil
        pduHasFieldFaults = false
        controlOpcode = nil
    }

    /// Stores the PDU with its fault verdict and, for an LL control PDU, its opcode. Moved in:
    /// taken by value, it was copied through its value witness and the caller's destroyed.
    func set(_ pdu: consuming LLPDU) {
        pduHasFieldFaults = pdu.hasFieldFaults
        controlOpcode = pdu.controlOpcode
        self.pdu = pdu
    }

    public var isAdvertising: Bool { if case .advertising = pdu { return true } else { return false } }

    /// Whether the PDU's full decode marks a fault the tracker did not report (a CONNECT_IND hop
    /// increment outside 5-16, an extended header that does not parse, an LL control PDU cut short),
    /// checked without writing the fields: most frames are empty PDUs and data.
    public var hasFieldFaults: Bool { pduHasFieldFaults }
    public var dataPDU: LLDataPDU? { if case .data(let d) = pdu { return d } else { return nil } }
    public var advertisingPDU: LLAdvertisingPDU? { if case .advertising(let a) = pdu { return a } else { return nil } }

    public var summary: String { TextLine.make(writeSummary) }

    /// Written into the line piece by piece: a sniffer capture prints one per frame.
    public func writeSummary(to s: inout TextLine) {
        if let d = direction { s += d.arrow; s.write(byte: 32) }
        // Matched in place, each case's PDU bound alone: `pdu.writeSummary` copied the whole PDU
        // out of the frame through its value witness, and the encryption test once more.
        var encryptedData = false
        switch pdu {
        case .advertising(let a): a.writeSummary(to: &s)
        case .data(let d):
            d.writeSummary(to: &s)
            encryptedData = encryption == .encrypted && d.length > 0
        case .none: s += "No link-layer packet"
        }
        if isRetransmission { s += " [retransmission]" }
        if sequence == .unknown { s += " [after missed packets]" }
        if crc == .invalid { s += " [bad CRC]" }
        if encryptedData { s += " [encrypted]" }
        // A malformed frame is marked once, by whoever prints the frame (its problems are the frame's).
    }

    public var fields: [Field] { FieldList.build(writeFields) }

    public func writeFields(to out: FieldSink) {
        header.writeFields(to: out)
        out.begin("Bluetooth Low Energy Link Layer", .none)
        if let aa = accessAddress { out.add("Access Address", .uint(UInt64(aa), hex: 8)) }
        if let ci = codingIndicator {
            out.add("Coding Indicator", .named(UInt64(ci), hex: 0, LLPacket.codingIndicatorNames[Int(ci)]))
        }
        if let c = connection { out.add("Connection", .uint(UInt64(c), hex: 0)) }
        if let d = direction { out.add("Direction", .text(d == .centralToPeripheral ? "Central → Peripheral" : "Peripheral → Central")) }
        // Each case's PDU bound alone, as in `writeSummary`.
        switch pdu {
        case .advertising(let a): a.writeFields(to: out)
        case .data(let d): d.writeFields(to: out)
        case .none: break
        }
        if let c = crcValue {
            let status: String
            switch crc {
            case .valid: status = "correct"
            case .invalid: status = "incorrect"
            case .unchecked: status = "unchecked"
            case .storedMismatch: status = "correct by the sniffer; the stored CRC does not match the packet"
            }
            out.begin("CRC", .uint(UInt64(c), hex: 6))
            out.add("Status", .text(status))
            if crcStoredAsNumber { out.add("Byte Order", .text("stored as a little-endian number, not in air order")) }
            out.end()
        }
        if isRetransmission { out.add("Retransmission", .bool(true)) }
        if sequence == .unknown {
            out.add("Sequence", .text("unknown: the sniffer missed packets that could hold acknowledged PDUs"))
        }
        switch encryption {
        case .none: break
        case .encrypted: out.add("Encryption", .text("encrypted, not decrypted"))
        case .decrypted:
            out.begin("Encryption", .text("decrypted (MIC correct)"))
            if let key { out.add("Key", .text(key.description)) }
            out.end()
        case .decryptedBySniffer: out.add("Encryption", .text("decrypted by the sniffer (MIC correct)"))
        case .decryptedInCapture:
            out.add("Encryption", .text("decrypted by the tool that wrote the capture (no MIC; the header does not say so)"))
        }
        for p in problems { out.malformed(p) }
        out.end()
    }
}

/// Follows link-layer connections across frames. One per capture; frames in capture order.
public final class LinkLayerTracker {
    /// T_IFS (150 µs) and the timestamp jitter of host-stamped sniffers (Ubertooth's is near 1 ms):
    /// packets further apart than their air times and this are in different connection events
    /// (the shortest connection interval, 7.5 ms, is longer than two LE 1M packets and this).
    static let sameEventSlack: Int64 = 2150
    /// T_IFS and the shortest packet (an empty PDU on LE 2M is 44 µs; 200 leaves room for jitter):
    /// packets closer than this were stamped together, not sent one after the other.
    static let shortestReply: Int64 = 190
    final class ConnectionState {
        let index: Int
        let accessAddress: UInt32
        var connect: LLConnectInd?
        /// TxAdd and RxAdd of the CONNECT_IND: InitA and AdvA are random addresses.
        var initiatorRandom = false, advertiserRandom = false
        var crcInit: UInt32?
        /// CRCInit recovered from a packet; trusted once a second packet agrees.
        var crcConfirmed = false
        /// The packet (PDU and CRC) CRCInit was run back from: a byte-identical copy agrees with it
        /// whatever CRCInit is, so it confirms nothing.
        var crcSource: UInt64 = 0
        var sequence = LLSequenceTracker()
        var lastDirection: LLDirection?
        var lastChannel: UInt8?
        var lastEvent: UInt16?
        /// Capture time (ns) and air time (µs) of the last good packet, and connection events
        /// counted by time where the sniffer gives neither channel nor event counter.
        var lastTime: Int64?, lastAirTime: Int64 = 0
        /// Capture time (ns) of the first packet of the current connection event.
        var eventStart: Int64?
        var timedEvent: UInt32 = 0
        /// Connection interval in µs (CONNECT_IND, then LL_CONNECTION_UPDATE_IND as soon as it is
        /// seen): counts the events between two packets from the time between them.
        var interval: Int64?
        var encrypted = false
        /// A PDU of this link was found already decrypted in the file (see `plaintextInCapture`).
        var plaintextInCapture = false
        var skdm: [UInt8]?, ivm: [UInt8]?, skds: [UInt8]?, ivs: [UInt8]?
        var session: LLSession?
        /// The key `session` was made from.
        var sessionKey: LinkKey?
        /// EDIV and Rand of the last LL_ENC_REQ: which LTK the central asked for.
        var ediv: UInt16 = 0, rand: UInt64 = 0
        var triedKeys = false
        /// The link's first undecrypted PDU said why (once per link).
        var undecryptedNoted = false
        var counters: [UInt64] = [0, 0]
        var frames = 0

        init(index: Int, accessAddress: UInt32) {
            self.index = index
            self.accessAddress = accessAddress
        }
    }

    /// Keys to try on every connection: given ones, then those learnt from the capture.
    public private(set) var keys: [LinkKey]
    /// STKs of pairings seen, by connection index: tried on that connection only.
    private var connectionKeys: [Int: [LinkKey]] = [:]
    private var connections: [UInt32: ConnectionState] = [:]
    private var nextIndex = 1
    /// Noise can make up access addresses; past this many, unknown ones are not tracked.
    public static let maxConnections = 1024

    /// Learnt keys kept at most (a capture could distribute keys without end).
    public static let maxKeys = 4096

    /// The frame handed out last, refilled by `process` once nobody else holds it.
    private var spare: LLFrame?

    public init(keys: [LTK] = []) { self.keys = keys.map { LinkKey($0, origin: .given("given with --ltk")) } }

    public init(linkKeys: [LinkKey]) { self.keys = linkKeys }

    /// Adds a key learnt from the capture: an STK for its connection, an LTK for any. Connections
    /// whose keys all failed try again with it.
    public func add(_ key: LinkKey) {
        if let index = key.connection {
            guard connectionKeys[index, default: []].count < 16 else { return }
            connectionKeys[index, default: []].append(key)
        } else {
            guard keys.count < LinkLayerTracker.maxKeys else { return }
            keys.append(key)
        }
        for c in connections.values where c.session == nil && (key.connection == nil || key.connection == c.index) {
            c.triedKeys = false
        }
    }

    /// The CONNECT_IND of a connection and its address types, for the pairing functions (c1 takes
    /// both addresses and their types).
    public func connectRequest(of index: Int) -> (connect: LLConnectInd, initiatorRandom: Bool, advertiserRandom: Bool)? {
        guard let c = connections.values.first(where: { $0.index == index }), let ind = c.connect else { return nil }
        return (ind, c.initiatorRandom, c.advertiserRandom)
    }

    /// Connections seen so far (index, access address, CONNECT_IND if seen).
    public var knownConnections: [(index: Int, accessAddress: UInt32, connect: LLConnectInd?)] {
        connections.values.sorted { $0.index < $1.index }.map { ($0.index, $0.accessAddress, $0.connect) }
    }

    public func process(_ packet: Packet) -> LLFrame {
        let linkType: UInt32
        if case .linkLayer(let t) = packet.kind { linkType = t } else { linkType = LinkType.leLL }
        // The header parsed in place here and copied into the frame once: parsed into the frame
        // and read back, it was copied twice.
        var h = LLPseudoHeader(linkType: linkType)
        let (bytes, problem) = LLPseudoHeader.parse(packet.payload, into: &h)
        let frame: LLFrame
        if isKnownUniquelyReferenced(&spare), let s = spare {
            // The last frame handed out is held by nobody else any more: it is filled again, so
            // a stream of frames allocates none (a consumer that keeps one keeps its own).
            s.reset(number: packet.number, header: h)
            frame = s
        } else {
            frame = LLFrame(number: packet.number, header: h)
            spare = frame
        }
        if let problem { frame.problems.append(problem) }
        // Both sniffer headers that name the PHY (256 and 272) put the Coding Indicator of an LE
        // Coded packet in an octet after the access address, as tshark reads them.
        guard let p = LLPacket(bytes, coded: h.phy == 2) else {
            if !bytes.isEmpty || problem == nil { frame.problems.append("link-layer packet shorter than an access address (\(bytes.count) bytes)") }
            frame.set(.none)
            return frame
        }
        frame.accessAddress = p.accessAddress
        frame.codingIndicator = p.codingIndicator
        frame.crcValue = p.crc
        if p.pdu.count < 2 { frame.problems.append("PDU header truncated") }
        if p.crc == nil, p.pdu.count >= 2 { frame.problems.append("packet ends before its CRC") }

        if !h.dewhitened { frame.problems.append("the sniffer says the packet is still whitened") }
        if h.channelKind == .isochronous {
            frame.problems.append("isochronous PDUs are not decoded")
            frame.set(.none)
            return frame
        }
        let advertising = h.channelKind == .advertising || (h.channelKind == .unknown && p.isAdvertising)
        if advertising {
            frame.crc = crcStatus(frame, p, initial: LLPacket.advertisingCRCInit)
            let secondary = h.auxiliary || (h.channel ?? 37) < 37
            let adv = LLAdvertisingPDU(p.pdu, secondary: secondary, auxType: h.auxType)
            if case .malformed(let m) = adv.body { frame.problems.append(m) }
            if frame.crc != .invalid {
                frame.report = adv.report(rssi: h.rssi)
                if let c = adv.connectInd {
                    frame.connectInd = c
                    startConnection(c, initiatorRandom: adv.txAdd, advertiserRandom: adv.rxAdd)
                }
            }
            frame.set(.advertising(consume adv))
            return frame
        }
        dataPDU(frame, h, p, time: packet.timestamp)
        return frame
    }

    /// CRC-24 computed here from `initial` (Vol 6 Part B 3.1.1); the sniffer's verdict only when
    /// the CRC or its initial value is not known.
    private func crcStatus(_ frame: LLFrame, _ p: LLPacket, initial: UInt32?) -> LLCRCStatus {
        guard p.crc != nil, let initial else { return snifferCRC(frame.header) }
        return crcMatches(frame, p, initial: initial) ? .valid : mismatch(frame.header)
    }

    /// A computed CRC that differs: bad, unless the sniffer found it correct on air.
    private func mismatch(_ h: LLPseudoHeader) -> LLCRCStatus {
        h.crcChecked && h.crcValid ? .storedMismatch : .invalid
    }

    /// Whether the packet's CRC is the one computed from `initial`, in air order or stored as a number.
    private func crcMatches(_ frame: LLFrame, _ p: LLPacket, initial: UInt32) -> Bool {
        let computed = LLCRC.compute(p.pdu, initial: initial)
        if computed == p.crc { return true }
        guard computed == p.crcAsNumber else { return false }
        frame.crcStoredAsNumber = true
        return true
    }

    private func snifferCRC(_ h: LLPseudoHeader) -> LLCRCStatus {
        h.crcChecked ? (h.crcValid ? .valid : .invalid) : .unchecked
    }

    private func startConnection(_ c: LLConnectInd, initiatorRandom: Bool, advertiserRandom: Bool) {
        let s = ConnectionState(index: nextIndex, accessAddress: c.accessAddress)
        nextIndex += 1
        s.connect = c
        s.initiatorRandom = initiatorRandom
        s.advertiserRandom = advertiserRandom
        s.crcInit = c.crcInit
        s.crcConfirmed = true
        s.interval = c.interval > 0 ? Int64(c.interval) * 1250 : nil
        if connections.count >= LinkLayerTracker.maxConnections, connections[c.accessAddress] == nil { evictOldest() }
        connections[c.accessAddress] = s
        lastConnection = s
    }

    private func evictOldest() {
        if let oldest = connections.values.min(by: { $0.index < $1.index }) {
            connections[oldest.accessAddress] = nil
            if oldest === lastConnection { lastConnection = nil }
        }
    }

    /// Most packets are on the link of the packet before: that one is kept aside, found without hashing.
    private var lastConnection: ConnectionState?

    @inline(__always) private func connection(_ accessAddress: UInt32) -> ConnectionState? {
        if let c = lastConnection, c.accessAddress == accessAddress { return c }
        let c = connections[accessAddress]
        if c != nil { lastConnection = c }
        return c
    }

    private func dataPDU(_ frame: LLFrame, _ h: LLPseudoHeader, _ p: LLPacket, time: Int64) {
        var conn = connection(p.accessAddress)
        // CRC first: a bad CRC must not create connections or move sequence numbers. It is computed
        // from the connection's CRCInit (its CONNECT_IND's, else run back from a packet: trusted
        // once a second packet agrees, or the sniffer said the first was good).
        let sniffer = snifferCRC(h)
        // A payload the sniffer decrypted is not the ciphertext the CRC was computed over.
        if let crc = p.crc, !(h.decrypted && h.micValid) {
            if let c = conn, let initial = c.crcInit {
                if !c.crcConfirmed, LinkLayerTracker.packetHash(p.pdu, crc) == c.crcSource {
                    frame.crc = sniffer
                } else if crcMatches(frame, p, initial: initial) {
                    c.crcConfirmed = true
                    frame.crc = .valid
                } else if c.crcConfirmed {
                    frame.crc = mismatch(h)
                } else {
                    // The packet CRCInit was learnt from may have been damaged: learn again.
                    c.crcInit = LLCRC.recoverInit(p.pdu, crc: crc)
                    c.crcSource = LinkLayerTracker.packetHash(p.pdu, crc)
                    c.crcConfirmed = sniffer == .valid
                    frame.crc = sniffer
                }
            } else {
                frame.crc = sniffer
            }
        } else {
            frame.crc = sniffer
        }
        if conn == nil, frame.crc != .invalid {
            let s = ConnectionState(index: nextIndex, accessAddress: p.accessAddress)
            nextIndex += 1
            if let crc = p.crc {
                s.crcInit = LLCRC.recoverInit(p.pdu, crc: crc)
                s.crcSource = LinkLayerTracker.packetHash(p.pdu, crc)
                s.crcConfirmed = sniffer == .valid
            }
            if connections.count >= LinkLayerTracker.maxConnections { evictOldest() }
            connections[p.accessAddress] = s
            lastConnection = s
            conn = s
        }
        guard let c = conn else {
            let pdu = LLDataPDU(p.pdu)
            if let m = pdu.malformed { frame.problems.append(m) }
            frame.set(.data(pdu))
            return
        }
        frame.connection = c.index
        c.frames += 1

        // Direction: the sniffer's word, else a new connection event (channel or event counter
        // changed, or a gap longer than the two packets and T_IFS) starts with the central, else
        // the sides alternate.
        let airTime = LLPacket.airTime(pduLength: p.pdu.count, phy: h.phy ?? 0)
        let gap = c.lastTime.map { (time &- $0) / 1000 }
        let sameEvent: Bool
        if let gap, gap > c.lastAirTime + airTime + LinkLayerTracker.sameEventSlack {
            sameEvent = false
        } else if let gap, gap >= LinkLayerTracker.shortestReply, h.eventCounter == nil {
            // A reply's distance: the sniffer's channel is wrong here (bsniffhub writes invalid ones).
            sameEvent = true
        } else {
            // No time, or too little to be a reply (a host stamping a batch): the channel decides.
            sameEvent = (h.channel == nil || c.lastChannel == nil || h.channel == c.lastChannel)
                && (h.eventCounter == nil || h.eventCounter == c.lastEvent)
        }
        let direction: LLDirection
        if let ctp = h.centralToPeripheral {
            direction = ctp ? .centralToPeripheral : .peripheralToCentral
        } else if let last = c.lastDirection, sameEvent {
            direction = last == .centralToPeripheral ? .peripheralToCentral : .centralToPeripheral
        } else {
            direction = .centralToPeripheral
        }
        frame.direction = direction
        if frame.crc != .invalid {
            if !sameEvent {
                c.timedEvent &+= LinkLayerTracker.events(since: c.eventStart.map { (time &- $0) / 1000 }, interval: c.interval)
                c.eventStart = time
            }
            c.lastDirection = direction
            c.lastChannel = h.channel
            c.lastEvent = h.eventCounter
            c.lastTime = time
            c.lastAirTime = airTime
        }

        let header = p.pdu.byte(0) ?? 0
        let length = Int(p.pdu.byte(1) ?? 0)
        // A copy of the sender's last PDU after missed packets is more likely a retransmission than
        // two new PDUs alike: it is kept out of reassembly, other content goes in.
        var heldBack = false
        if frame.crc != .invalid {
            // Events counted by the sniffer, else by time against the interval, else told apart only.
            let timed = gap != nil && c.interval != nil
            let event = h.eventCounter.map(UInt32.init) ?? (timed ? c.timedEvent : h.channel.map(UInt32.init) ?? c.timedEvent)
            let (sequence, repeats) = c.sequence.receive(from: direction, header: header, hash: LinkLayerTracker.contentHash(p.pdu),
                                                         event: event, counted: h.eventCounter != nil || timed)
            frame.sequence = sequence
            heldBack = sequence == .unknown && repeats
        } else if h.centralToPeripheral != nil {
            c.sequence.damaged(from: direction)
        }
        frame.linkGaps = c.sequence.gaps

        // Encryption: payloads of non-empty PDUs after START_ENC carry a MIC.
        let decryptedBySniffer = h.decrypted && h.micValid
        // The nRF Sniffer flags every PDU it saw encrypted (and says whether it decrypted it), so
        // its word beats our START_ENC tracking (tools that log plaintext leave the flag clear).
        let onEncryptedLink = h.nordicFlags != nil ? h.micChecked : (c.encrypted || h.micChecked)
        var pdu: LLDataPDU
        if onEncryptedLink && length > 0 {
            if decryptedBySniffer {
                // The nRF Sniffer hands over plaintext with the MIC removed and the length adjusted.
                // The PDU still used up a packet counter: where the sniffer later fails (a packet it
                // missed), a known key takes over from the right counter.
                pdu = LLDataPDU(p.pdu)
                frame.encryption = .decryptedBySniffer
                if !frame.isRetransmission { c.counters[direction.index] &+= 1 }
            } else if let plain = decrypt(c, p.pdu, direction: direction, retransmission: frame.isRetransmission,
                                          crcBad: frame.crc == .invalid) {
                pdu = LLDataPDU(ArraySlice(plain), hasMIC: true)
                frame.encryption = .decrypted
                frame.key = c.sessionKey
                c.sessionKey?.noteDecrypted(frame: frame.number, connection: c.index)
            } else if LinkLayerTracker.plaintextInCapture(p.pdu, c) {
                pdu = LLDataPDU(p.pdu)
                frame.encryption = .decryptedInCapture
            } else {
                pdu = LLDataPDU(p.pdu, hasMIC: true, encrypted: true)
                frame.encryption = .encrypted
                if !c.undecryptedNoted, frame.crc != .invalid, let why = undecryptedReason(c) {
                    c.undecryptedNoted = true
                    frame.decryptionNote = why
                }
            }
        } else {
            pdu = LLDataPDU(p.pdu)
        }
        if let m = pdu.malformed { frame.problems.append(m) }
        if frame.crc != .invalid, !frame.isRetransmission, !heldBack, pdu.malformed == nil || pdu.llid != .reserved {
            if let ctl = pdu.control { control(ctl, c, direction) }
            if !pdu.encrypted, !pdu.payload.isEmpty, pdu.llid == .start || pdu.llid == .continuation {
                frame.l2cap = LLL2CAPFragment(data: pdu.payload, start: pdu.llid == .start)
            }
        }
        // Last: the PDU is moved into the frame, not copied.
        frame.set(.data(consume pdu))
    }

    /// Whether a PDU on an encrypted link that no key decrypts is plaintext already: some tools
    /// decrypt before writing and remove the MIC without setting the header's Decrypted bit. Signs:
    /// a non-empty PDU too short for a MIC (5 octets at least), or an L2CAP basic header whose
    /// Length fills the PDU exactly (ciphertext does that once in 65,536). After one such PDU the
    /// link's other PDUs are read the same way, an L2CAP start fragment when its Length is at least
    /// what the PDU carries.
    static func plaintextInCapture(_ pdu: Bytes, _ c: ConnectionState) -> Bool {
        guard let header = pdu.byte(0), let length = pdu.byte(1).map(Int.init), length > 0 else { return false }
        if length < 5 {
            c.plaintextInCapture = true
            return true
        }
        let llid = header & 3
        if llid == 2, let l2cap = pdu.le16(2).map(Int.init) {
            if l2cap + 4 == length { c.plaintextInCapture = true; return true }
            return c.plaintextInCapture && l2cap + 4 > length
        }
        return c.plaintextInCapture
    }

    /// Connection events from the start of the last one to a packet that opens a new one: the
    /// microseconds between them in intervals, rounded (host timestamps jitter), at least one; one
    /// when either is unknown.
    static func events(since: Int64?, interval: Int64?) -> UInt32 {
        guard let since, let interval, interval > 0 else { return 1 }
        return UInt32(clamping: max(1, (since &+ interval / 2) / interval))
    }

    /// Encryption procedure state (Vol 6 Part B 5.1.3), and the connection interval.
    private func control(_ ctl: LLControlPDU, _ c: ConnectionState, _ dir: LLDirection) {
        let params = ctl.parameters
        switch ctl.opcode {
        case 0x00: // LL_CONNECTION_UPDATE_IND: WinSize(1) WinOffset(2) Interval(2) Latency(2) Timeout(2) Instant(2)
            if params.count >= 11, params.le16(at: 3) > 0 { c.interval = Int64(params.le16(at: 3)) * 1250 }
        case 0x03: // LL_ENC_REQ: Rand(8) EDIV(2) SKDm(8) IVm(4)
            if params.count >= 22 {
                c.rand = params.le64(at: 0)
                c.ediv = params.le16(at: 8)
                c.skdm = Array(params.from(10).prefix(8))
                c.ivm = Array(params.from(18).prefix(4))
                c.session = nil
                c.sessionKey = nil
                c.triedKeys = false
            }
        case 0x04: // LL_ENC_RSP: SKDs(8) IVs(4)
            if params.count >= 12 {
                c.skds = Array(params.prefix(8))
                c.ivs = Array(params.from(8).prefix(4))
                c.session = nil
                c.sessionKey = nil
                c.triedKeys = false
            }
        case 0x05: // LL_START_ENC_REQ (sent in the clear): both sides encrypt from here on.
            if !c.encrypted {
                c.encrypted = true
                c.counters = [0, 0]
            }
        case 0x0B: // LL_PAUSE_ENC_RSP: the peripheral's is the last encrypted PDU.
            if dir == .peripheralToCentral { c.encrypted = false }
        default:
            break
        }
    }

    /// Decrypts with the connection's session (trying each key on first use); advances the
    /// packet counter of the direction on success.
    private func decrypt(_ c: ConnectionState, _ pdu: Bytes, direction: LLDirection, retransmission: Bool, crcBad: Bool) -> [UInt8]? {
        guard !keys.isEmpty || (!connectionKeys.isEmpty && connectionKeys[c.index] != nil), !crcBad, let skdm = c.skdm, let skds = c.skds, let ivm = c.ivm, let ivs = c.ivs else { return nil }
        let header = pdu.byte(0) ?? 0
        var body = pdu.from(2)
        var prefix: [UInt8] = [header, pdu.byte(1) ?? 0]
        if header & 0x20 != 0, let cte = body.first {
            prefix.append(cte)
            body = body.dropFirst()
        }
        let d = direction.index
        let ctp = direction == .centralToPeripheral
        let base = retransmission && c.counters[d] > 0 ? c.counters[d] - 1 : c.counters[d]
        func attempt(_ s: LLSession) -> (UInt64, [UInt8])? {
            // Allow for a few PDUs the sniffer missed.
            for k: UInt64 in 0...3 {
                if let plain = s.decrypt(header: header, payload: body, counter: base &+ k, centralToPeripheral: ctp) {
                    return (base &+ k, plain)
                }
            }
            return nil
        }
        var result: (UInt64, [UInt8])?
        if let s = c.session {
            result = attempt(s)
        } else if !c.triedKeys {
            for key in candidates(c) {
                guard let s = LLSession(ltk: key.key, skdm: skdm, skds: skds, ivm: ivm, ivs: ivs) else { continue }
                if let r = attempt(s) {
                    c.session = s
                    c.sessionKey = key
                    result = r
                    break
                }
            }
            if c.session == nil { c.triedKeys = true }
        }
        guard let (counter, plain) = result else { return nil }
        if !retransmission || counter >= c.counters[d] { c.counters[d] = counter &+ 1 }
        return prefix + plain + Array(body.suffix(4))
    }

    /// Why a link's PDUs stay encrypted, once it is known: the encryption start was not captured,
    /// no key was known, or every key known failed the MIC check. Nil while keys may still come
    /// (a pairing in progress gives its key at LL_ENC_REQ).
    private func undecryptedReason(_ c: ConnectionState) -> String? {
        let names = "EDIV " + Hex.prefixed(c.ediv, width: 4) + ", Rand " + Hex.prefixed(c.rand, width: 16)
        if c.skdm == nil || c.skds == nil {
            return "link encrypted: the sniffer missed LL_ENC_REQ or LL_ENC_RSP, so no key can decrypt it"
        }
        if c.triedKeys {
            let n = candidates(c).count
            return "link encrypted (" + names + "): the MIC check failed with " + (n == 1 ? "the one key" : "each of the \(n) keys") + " known"
        }
        if keys.isEmpty && (connectionKeys[c.index] ?? []).isEmpty {
            return "link encrypted (" + names + "): no key known; give its LTK (--ltk, --keys, --keys-from) or capture its pairing"
        }
        return nil
    }

    /// Keys to try when a connection starts encryption, most likely first: its own STKs, then the
    /// LTKs named by the LL_ENC_REQ's EDIV and Rand, then the others.
    private func candidates(_ c: ConnectionState) -> [LinkKey] {
        let own = connectionKeys[c.index] ?? []
        let named = keys.filter { $0.ediv == c.ediv && $0.rand == c.rand }
        return own + named + keys.filter { !($0.ediv == c.ediv && $0.rand == c.rand) }
    }

    /// FNV-1a over what a retransmission repeats: LLID, length and payload (not NESN, SN, MD).
    /// FNV-1a over every octet of a PDU and its CRC.
    static func packetHash(_ pdu: Bytes, _ crc: UInt32) -> UInt64 {
        var h = FNV1a()
        h.add(pdu)
        h.mix(UInt64(crc))
        return h.value
    }

    static func contentHash(_ pdu: Bytes) -> UInt64 {
        var h = FNV1a()
        var first = true
        for b in pdu {
            h.add(first ? b & 0x23 : b)
            first = false
        }
        return h.value
    }
}
