import Wire

/// Decodes a capture frame by frame, keeping the state that spans frames: connections by
/// handle, L2CAP reassembly, ATT bearers and GATT databases, pairing, advertisers.
/// One instance per capture; frames must come in capture order.
public final class Dissector {
    /// Every connection kept, live or ended, by number: the table the auditor's rules keep their
    /// per-connection state in too. It holds far more than the live and ended ones kept; only a
    /// connection still open after 2^17 later ones is dropped from it (and from `allConnections`).
    private var connections = ConnectionTable<Connection>(capacity: 1 << 17)
    /// Live connections by (adapter, handle).
    private var live: [UInt32: Connection] = [:]
    private var nextConnectionID = 1
    /// Connections that ended, oldest first, kept so reports can list them (bounded: between
    /// `maxEndedKept` and an eighth more).
    public private(set) var ended: [Connection] = []
    public static let maxEndedKept = 10_000
    /// Reassembly buffers of ended connections, for new ones (at most `spareReassemblyKept`).
    private var spareReassembly: [(sent: L2CAPReassembler, received: L2CAPReassembler)] = []
    private static let spareReassemblyKept = 8
    /// Ended connections no longer listed (`ended`), for new ones to take (`newConnection`).
    private var spareConnections: [Connection] = []
    private static let spareConnectionsKept = 8
    /// How many ended connections this instance keeps (`maxEndedKept` unless told fewer).
    private let endedKept: Int
    /// Live connections kept at once: every valid handle (0x000-0xEFF) on four adapters. Monitor
    /// captures can name 65,536 adapters, so without a cap made-up traffic grows the table freely.
    public static let maxLiveConnections = 4 * 0xF00
    /// Set when the cap made the table drop a connection; reported on the frame that caused it.
    private var capNote: String?
    /// Set for outputs that show or count malformed frames: then each frame is checked for faults
    /// only a layer's full decode finds (`Decoded.fieldFault`). The audit does not need it.
    public let findsFieldFaults: Bool
    /// False for the audit, `links` and `diff`, which read no attribute's value: values are not
    /// kept (`ATTBearer.keepsValues`). `findsFieldFaults` needs them (a value that does not
    /// decode is a fault): it is false there too.
    public let keepsValues: Bool
    /// Advertising events seen over the air, to count each once.
    private var advertisingEvents = LLAdvertisingEvents()
    /// Full-decode verdicts of commands and events already seen, by content (bounded).
    private var faultMemo: [Key64: Bool] = [:]
    /// Looks for faults in the full decodes `faultMemo` learns from: one for every frame.
    private let faultFinder = MalformedFieldFinder()
    static let faultMemoCapacity = 4096

    /// Every peer's GATT database, rebuilt from discovery and carried across connections.
    public let gatt = GATTStore<GATTServer>()
    private var lastTime: Int64 = 0

    /// Advertisers seen in reports; only kept when asked for (`devices`, reports), so plain
    /// decoding does not pay for it.
    public let advertisers: Advertisers?

    /// Over-the-air captures: connections by access address, retransmissions, CRC, decryption.
    let linkLayer: LinkLayerTracker
    /// TKs given for OOB legacy pairing (`Dissector.init`), as c1 and s1 take them.
    let temporaryKeys: [Block128]
    /// LE Secure Connections private keys given (32 octets, most significant first), tried after
    /// the debug key on sniffed pairings.
    let privateKeys: [[UInt8]]
    /// Pairings in progress on sniffed links, by tracker index; made at the first SMP
    /// pairing PDU, so captures without pairing pay nothing.
    var pairingExchanges: [Int: PairingExchange] = [:]
    /// Keys seen in the capture or worked out from it, in order (at most `maxRevealedKeys`).
    public internal(set) var revealedKeys: [RevealedKey] = []
    public static let maxRevealedKeys = 10_000
    /// The IRKs known (given, then seen in the capture) and the identities they resolve
    /// resolvable private addresses to.
    public let resolver: AddressResolver
    /// EDIV and Rand of the last HCI LE Long Term Key Request event by (adapter, handle): the
    /// reply's LTK is the one they name.
    var ltkRequests: [UInt32: (ediv: UInt16, rand: UInt64)] = [:]
    /// Connections seen over the air, by the link-layer tracker's index.
    private var llConnections: [Int: Connection] = [:]
    /// The link of the frame before, found without hashing.
    private var lastLLConnection: (index: Int, connection: Connection)?
    /// Central and peripheral of the sniffed links that began with a CONNECT_IND, by tracker index.
    private var llDevices: [Int: (central: BDAddr, peripheral: BDAddr)] = [:]
    /// When the first sniffed link outlives its supervision timeout with no packet (`.max`: none open).
    private var nextLossCheck = Int64.max
    /// Without a CONNECT_IND the supervision timeout is not known: the longest the spec allows, 32 s.
    static let defaultSupervisionTimeout: Int64 = 32_000_000_000

    /// - Parameters:
    ///   - keys: long-term keys to decrypt encrypted link-layer connections with.
    ///   - temporaryKeys: TKs of OOB legacy pairings (most significant octet first), to recover
    ///     their STKs.
    ///   - givenKeys: more LTKs, each with where it came from (a keys file).
    ///   - privateKeys: LE Secure Connections private keys (32 octets, most significant first).
    ///   - identityKeys: IRKs with their identities (a keys file), to resolve private addresses.
    ///   - maxAdvertisers: advertisers tracked in full (`Advertisers.maxTracked`); later ones are counted.
    ///   - keepEnded: ended connections to keep for `ended` and `allConnections` (at most
    ///     `maxEndedKept`); a pass that only looks at frames as they come (the audit) keeps none.
    public init(trackAdvertisers: Bool = false, candidateUUIDs: [BluetoothUUID] = [], keys: [LTK] = [], temporaryKeys: [LTK] = [], givenKeys: [LinkKey] = [],
                privateKeys: [[UInt8]] = [], identityKeys: [IdentityKey] = [], maxAdvertisers: Int = Advertisers.defaultMaxTracked, keepEnded: Int = Dissector.maxEndedKept,
                findsFieldFaults: Bool = true, keepsValues: Bool = true) {
        precondition(keepsValues || !findsFieldFaults, "field faults are found in values, which are not kept")
        self.findsFieldFaults = findsFieldFaults
        self.keepsValues = keepsValues
        endedKept = min(max(keepEnded, 0), Dissector.maxEndedKept)
        advertisers = trackAdvertisers ? Advertisers(candidateUUIDs: candidateUUIDs, maxTracked: maxAdvertisers) : nil
        linkLayer = LinkLayerTracker(keys: keys)
        for k in givenKeys { linkLayer.add(k) }
        self.temporaryKeys = temporaryKeys.compactMap { Block128(msbFirst: $0.msbFirst) }
        self.privateKeys = privateKeys.filter { $0.count == 32 }
        resolver = AddressResolver(identityKeys)
    }

    /// Every connection seen, in order of first appearance.
    public var allConnections: [Connection] { connections.values }

    public func dissect(_ packet: Packet) -> Decoded {
        var d = Decoded(packet: packet)
        // The helpers take the header (plain values) and the bytes apart: a `Packet` passed on is
        // copied whole, its payload retained, for each field read.
        let h = packet.header, payload = packet.payload
        lastTime = h.timestamp
        switch h.kind {
        case .hci(.command): command(&d, h, payload)
        case .hci(.event): event(&d, h, payload)
        case .hci(.aclData): acl(&d, h, payload)
        case .hci(.scoData), .hci(.isoData): isochronous(&d, h, payload)
        case .linkLayer: linkLayerFrame(&d, packet)
        case .monitor, .unsupported, .unknownHCIType: break
        case .truncatedHeader: d.problem(.linkHeader, "record too short for its link-layer header")
        }
        if let note = capNote {
            d.problem(.captureLimit, note)
            capNote = nil
        }
        if findsFieldFaults { markFieldFault(&d, h.kind) }
        return d
    }

    /// Whether a layer's full decode finds a fault that dissecting did not: the one definition of
    /// a malformed frame every output and count uses. The layers that carry most frames are
    /// checked without writing their fields (advertising reports by their AD structures, ATT PDUs
    /// by handle ranges, declarations and SIG values); other HCI commands and events, mostly the
    /// same few over and over, are decoded in full once per distinct content (`faultMemo`), and
    /// link-layer frames each time. L2CAP, SMP and signalling report theirs while dissecting.
    private func markFieldFault(_ d: inout Decoded, _ kind: PacketKind) {
        // In place: passing the decode by value copies it on the path every frame takes.
        guard !d.hasProblems else { return }
        // HCI ACL data, most frames, has only the ATT verdict: matching `d.hci` would copy its bytes.
        if case .hci(.aclData) = kind { d.fieldFault = d.attFieldFault; return }
        d.fieldFault = fieldFault(&d)
    }

    private func fieldFault(_ d: inout Decoded) -> Bool {
        switch d.hci {
        case .event(0x3E):
            let p = d.hciParameters
            if let sub = p.byte(0), AdvertisingReports.isReport(subevent: sub) {
                return AdvertisingReports.hasFaults(subevent: sub, p.from(1))
            }
            return memoised(&d, kind: 0x3E)
        case .command(let op): return memoised(&d, kind: UInt64(op) << 8 | 1)
        case .event(let code): return memoised(&d, kind: UInt64(code) << 8 | 4)
        case .acl, .isochronous, .none:
            if d.attFieldFault { return true }
            return d.linkLayer?.hasFieldFaults ?? false
        }
    }

    /// The full decode's verdict for a command or event, by an FNV-1a hash of its kind and bytes.
    private func memoised(_ d: inout Decoded, kind: UInt64) -> Bool {
        var hash = FNV1a(seed: kind)
        hash.add(d.packet.payload)
        let h = Key64(hash.value)
        if let known = faultMemo[h] { return known }
        if faultMemo.count >= Self.faultMemoCapacity { faultMemo.removeAll(keepingCapacity: true) }
        faultFinder.found.removeAll(keepingCapacity: true)
        d.writeLayers(to: faultFinder) { _ in }
        let fault = !faultFinder.found.isEmpty
        faultMemo[h] = fault
        return fault
    }

    // MARK: HCI commands

    // The helpers read the frame from `p`, its header, and from `payload`, never from `d.packet`:
    // reading a field of the inout `d` copies the whole packet, retaining its payload.

    private func command(_ d: inout Decoded, _ p: PacketHeader, _ payload: Bytes) {
        guard let (opcode, params) = header(payload, codeWidth: 2, "command", &d) else { return }
        d.hci = .command(opcode: opcode)
        if opcode == HCIKeyCommands.leEnableEncryption || opcode == HCIKeyCommands.leLongTermKeyRequestReply {
            hciKey(opcode: opcode, params, adapter: p.adapter, frame: p.number)
        } else if opcode == HCIKeyCommands.leAddDeviceToResolvingList {
            resolvingListEntry(params, frame: p.number)
        }
    }

    /// A command's opcode or an event's code (`codeWidth` octets), and the parameters after the
    /// length octet; nil, the problem recorded, when the header is cut short.
    @inline(__always)
    private func header(_ payload: Bytes, codeWidth: Int, _ what: StaticString,
                        _ d: inout Decoded) -> (code: UInt16, params: Bytes)? {
        // Read in place: a reader over the bytes cost a retain and a release of them, every frame.
        guard let code = codeWidth == 2 ? payload.le16(0) : payload.byte(0).map(UInt16.init),
              let len = payload.byte(codeWidth) else {
            d.problem(.hciHeader, "HCI \(what) header truncated")
            return nil
        }
        let params = payload.from(codeWidth &+ 1)
        if params.count != Int(len) {
            d.problem(.hciLength, "parameter length \(len) but \(params.count) bytes follow")
        }
        return (code, params)
    }

    // MARK: HCI events

    private func event(_ d: inout Decoded, _ p: PacketHeader, _ payload: Bytes) {
        guard let (wide, params) = header(payload, codeWidth: 1, "event", &d) else { return }
        let code = UInt8(truncatingIfNeeded: wide)
        d.hci = .event(code: code)
        let adapter = p.adapter, number = p.number, time = p.timestamp
        // Advertising reports, most events of a scan, have no view: asked first, they skip its lookup.
        if code == HCIEvents.leMeta, let sub = params.byte(0), AdvertisingReports.isReport(subevent: sub) {
            return leMeta(&d, adapter: adapter, number: number, time: time, params)
        }
        let view = HCIEvent(code: code, params)
        d.event = view
        switch view {
        case .connectionComplete(let e)?:
            guard e.status == 0 else { return }
            let c = open(adapter: adapter, handle: e.connectionHandle, isLE: false, frame: number, time: time, complete: true)
            c.peer = e.bdAddr
            c.peerAddressType = 0
            d.connection = c
        case .disconnectionComplete(let e)?:
            d.connection = liveConnection(key(adapter, e.connectionHandle))
            guard e.status == 0, let c = d.connection else { return }
            c.endedFrame = number
            c.endedTime = time
            c.endReason = e.reason
            close(c)
        case .encryptionChange(let e)?:
            guard e.status == 0 else { return }
            let c = connection(adapter, e.connectionHandle, frame: number, time: time)
            c.encrypted = e.isOn
            if e.isOn, c.encryptedFrame == nil { c.encryptedFrame = number }
            d.connection = c
        case .encryptionKeyRefreshComplete(let e)?:
            d.connection = liveConnection(key(adapter, e.connectionHandle))
        case .leConnectionComplete(let e)?:
            guard e.status == 0 else { return }
            let c = open(adapter: adapter, handle: e.connectionHandle, isLE: true, frame: number, time: time, complete: true)
            c.isCentral = e.role == 0
            c.peer = e.peerAddress
            c.peerAddressType = e.peerAddressType
            c.interval = e.connectionInterval
            c.latency = e.peripheralLatency
            c.supervisionTimeout = e.supervisionTimeout
            d.connection = c
            advertisers?.noteConnection(to: e.peerAddress, frame: number)
        case .leConnectionUpdateComplete(let e)?:
            guard e.status == 0 else { return }
            let c = connection(adapter, e.connectionHandle, frame: number, time: time)
            c.interval = e.connectionInterval
            c.latency = e.peripheralLatency
            c.supervisionTimeout = e.supervisionTimeout
            if c.updates.count < 1000 {
                c.updates.append((number, time, e.connectionInterval, e.peripheralLatency, e.supervisionTimeout))
            }
            d.connection = c
        case .leDataLengthChange(let e)?:
            d.connection = liveConnection(key(adapter, e.connectionHandle))
        case .lePHYUpdateComplete(let e)?:
            d.connection = liveConnection(key(adapter, e.connectionHandle))
        case nil:
            if code == HCIEvents.leMeta { leMeta(&d, adapter: adapter, number: number, time: time, params) }
        }
    }

    /// The LE subevents without a view (or too short for theirs): those of a connection, tied to
    /// it, and advertising reports.
    private func leMeta(_ d: inout Decoded, adapter: UInt16, number: Int, time: Int64, _ params: Bytes) {
        guard let sub = params.byte(0) else { return }
        switch sub {
        case 0x04, 0x05, 0x06, 0x07, 0x0C, 0x14: // per-connection subevents: tie them to the connection
            if let h = params.le16(sub == 0x04 || sub == 0x0C ? 2 : 1) {
                d.connection = liveConnection(key(adapter, h & 0x0FFF))
                // LE Long Term Key Request: handle, Rand(8), EDIV(2).
                if sub == 0x05, params.count >= 13, ltkRequests.count < 4096 {
                    ltkRequests[key(adapter, h & 0x0FFF)] = (params.le16(at: 11), params.le64(at: 3))
                }
            }
        default:
            if let adv = advertisers, AdvertisingReports.isReport(subevent: sub) {
                AdvertisingReports.forEach(subevent: sub, params.from(1)) { r, reports in
                    adv.add(r, data: r.data(in: reports), frame: number, time: time)
                }
            }
        }
    }

    // MARK: ACL data and L2CAP

    private func acl(_ d: inout Decoded, _ p: PacketHeader, _ payload: Bytes) {
        guard let h = ACLHeader(payload) else {
            d.problem(.aclHeader, "ACL header truncated")
            return
        }
        let adapter = p.adapter, number = p.number, time = p.timestamp
        let direction = p.direction, truncated = p.truncated
        d.hci = .acl(h)
        let c = connection(adapter, h.handle, frame: number, time: time)
        d.connection = c
        // The capture kept only part of a packet (snap length, btsnooz): not the sender's fault.
        // It is not reassembled, and neither are the continuations of a PDU it started.
        let sent = direction == .sent
        let skipping = sent ? c.skippingTruncated.sent : c.skippingTruncated.received
        if truncated || (skipping && !h.isStart) {
            if h.isStart {
                if sent { c.skippingTruncated.sent = true } else { c.skippingTruncated.received = true }
                // The basic header survived (Android's filtered logs keep the first octets): its
                // length and channel are shown, as tshark does, and nothing above it.
                if truncated, let length = payload.le16(4), let cid = payload.le16(6) {
                    d.l2cap = L2CAPFrame(cid: cid, length: length, captured: max(payload.count &- 8, 0))
                }
            }
            c.lastActivity = time
            return
        }
        if h.isStart, skipping {
            if sent { c.skippingTruncated.sent = false } else { c.skippingTruncated.received = false }
        }
        if payload.count &- 4 != Int(h.length) {
            d.problem(.aclLength, "ACL length \(h.length) but \(payload.count &- 4) bytes follow")
        }
        let side: Side = sent ? .local : .remote
        // A start that holds its whole L2CAP frame with nothing pending (nearly every packet) is
        // the reassembler's frame as it stands: its header read and its payload sliced once, here.
        if h.isStart, let length = payload.le16(4), payload.count == Int(length) &+ 8, let cid = payload.le16(6),
           !(sent ? c.reassembly.sent.isPending : c.reassembly.received.isPending) {
            c.lastActivity = time
            upper(&d, p, cid, payload.from(8), c, side)
            d.l2cap = L2CAPFrame(cid: cid, length: length, captured: Int(length))
            return
        }
        l2cap(&d, p, c, payload.from(4), start: h.isStart, side: side)
    }

    /// Feeds one fragment to the connection's reassembly for its direction and decodes what completes.
    private func l2cap(_ d: inout Decoded, _ p: PacketHeader, _ c: Connection, _ data: consuming Bytes, start: Bool, side: Side) {
        let n = p.number
        c.lastActivity = p.timestamp
        let (result, dropped) = side == .local
            ? c.reassembly.sent.add(data, start: start, frame: n)
            : c.reassembly.received.add(data, start: start, frame: n)
        if case .malformed(let why, let frames)? = dropped { d.problem(.l2capReassembly, why + " (frames \(frames.map(String.init).joined(separator: ", ")))") }
        // Consumed: the payload goes to its channel's protocol without another reference, and the
        // header into the decode.
        switch consume result {
        case .frame(let f, let payload):
            upper(&d, p, f.cid, payload, c, side)
            d.l2cap = f
        case .pending(let have, let of):
            d.fragment = (have, of)
        case .malformed(let why, _):
            d.problem(.l2capReassembly, why)
        }
    }

    // MARK: Link layer (sniffer captures)

    private func linkLayerFrame(_ d: inout Decoded, _ p: Packet) {
        let f = linkLayer.process(p)
        // Tested first: iterating retains and releases the array, empty or not.
        if !f.problems.isEmpty { for p in f.problems { d.problem(.linkLayer, p) } }
        if p.timestamp > nextLossCheck { endSilentLinks(now: p.timestamp, &d) }
        // The tracker's report and CONNECT_IND, read rather than the PDU, which would be copied.
        if let rep = f.report {
            let data = rep.data(in: p.payload)
            if advertisingEvents.isNew(rep, data: data, time: p.timestamp) {
                advertisers?.add(rep, data: data, frame: p.number, time: p.timestamp)
            } else {
                f.report = nil
            }
        }
        if let c = f.connectInd {
            advertisers?.noteConnection(to: c.advA, frame: p.number)
            endLinks(central: c.initA, peripheral: c.advA, &d)
        }
        d.linkLayer = f
        // Why the link stays encrypted, unless its sniffed pairing already said (what was missed).
        if d.keyNote == nil, let why = f.decryptionNote, f.connection.map({ pairingExchanges[$0] == nil }) ?? true { d.keyNote = why }
        guard let index = f.connection else { return }
        let c: Connection
        // Read in place: bound to a name, the last connection was retained and released.
        if lastLLConnection != nil, lastLLConnection!.index == index {
            c = lastLLConnection!.connection
        } else if let known = llConnections[index] {
            c = known
            lastLLConnection = (index, known)
        } else {
            c = newConnection(adapter: 0, handle: UInt16(truncatingIfNeeded: index), isLE: true, frame: p.number, time: p.timestamp)
            c.overTheAir = true
            if let ind = linkLayer.knownConnections.first(where: { $0.index == index })?.connect {
                // The sniffer sees both sides; report from the central's point of view.
                llDevices[index] = (ind.initA, ind.advA)
                c.peer = ind.advA
                c.isCentral = true
                c.interval = ind.interval
                c.latency = ind.latency
                c.supervisionTimeout = ind.timeout
                c.createdFrame = p.number
                c.createdTime = p.timestamp
            }
            llConnections[index] = c
            connections[c.id] = c
            if llConnections.count > LinkLayerTracker.maxConnections, let oldest = llConnections.keys.min() {
                llConnections[oldest] = nil
            }
            lastLLConnection = (index, c)
        }
        d.connection = c
        // Any packet of the link, empty PDUs too, shows the sniffer still follows it.
        c.lastActivity = p.timestamp
        c.lastPacketFrame = p.number
        nextLossCheck = min(nextLossCheck, p.timestamp &+ supervisionTimeout(c))
        if f.encryption != .none, !c.encrypted {
            c.encrypted = true
            c.encryptedFrame = p.number
        }
        if !pairingExchanges.isEmpty, f.controlOpcode == 0x03, !f.isRetransmission { // LL_ENC_REQ
            encryptionRequested(index: index, connection: c, &d)
        }
        c.linkGaps = f.linkGaps
        guard let frag = f.l2cap, let dir = f.direction else { return }
        // A PDU that starts while another is still incomplete (on either side: sniffers without
        // direction can put a fragment on the wrong one) shows packets the sniffer missed.
        if frag.start, c.reassembly.sent.isPending || c.reassembly.received.isPending { c.unfinishedPDUs &+= 1 }
        l2cap(&d, p.header, c, frag.data, start: frag.start, side: dir == .centralToPeripheral ? .local : .remote)
    }

    /// A link the sniffer lost ends at its last packet (Vol 6 Part B 4.5.2: with no packet for the
    /// supervision timeout the devices end it themselves), so it is not one long quiet link.
    private func endSilentLinks(now: Int64, _ d: inout Decoded) {
        nextLossCheck = .max
        for (index, c) in llConnections {
            let deadline = c.lastActivity &+ supervisionTimeout(c)
            if now > deadline { endLink(index, c, &d) } else { nextLossCheck = min(nextLossCheck, deadline) }
        }
    }

    /// A new CONNECT_IND between two devices ends the link they had: a device in a connection does
    /// not initiate or accept another to the same peer, so the sniffer missed its end.
    private func endLinks(central: BDAddr, peripheral: BDAddr, _ d: inout Decoded) {
        for (index, pair) in llDevices where pair.central == central && pair.peripheral == peripheral {
            if let c = llConnections[index] { endLink(index, c, &d) }
            llDevices[index] = nil
        }
    }

    private func endLink(_ index: Int, _ c: Connection, _ d: inout Decoded) {
        llConnections[index] = nil
        if lastLLConnection?.index == index { lastLLConnection = nil }
        llDevices[index] = nil
        c.lost = true
        c.endedFrame = c.lastPacketFrame ?? c.firstFrame
        c.endedTime = c.lastActivity
        retire(c)
        d.lost(c)
    }

    private func supervisionTimeout(_ c: Connection) -> Int64 {
        c.supervisionTimeout.map { Int64($0) * 10_000_000 } ?? Dissector.defaultSupervisionTimeout
    }

    /// Hands a whole L2CAP frame to the protocol of its channel.
    /// The payload is consumed: the protocol that keeps it (ATT) takes it without another reference.
    private func upper(_ d: inout Decoded, _ p: PacketHeader, _ cid: UInt16, _ payload: consuming Bytes, _ c: Connection, _ side: Side) {
        let n = p.number
        switch cid {
        case L2CAPChannel.att:
            c.isLE = true
            let layout = ATTLayout(payload)
            // H4 captures without direction: the client sends requests, commands and confirmations.
            let from = p.direction != .unknown || d.isOverTheAir ? side
                : [.request, .command, .confirmation].contains(layout.kind) ? Side.local : .remote
            d.upper = .att(att(payload, layout, on: bearer(c), from, &d, p))
        case L2CAPChannel.smp:
            let pdu = SMPPDU(payload)
            c.isLE = true
            c.pairing.feed(pdu, from: side, frame: n)
            if let m = pdu.malformed { d.problem(.smp, "SMP: " + m) }
            smpKeys(pdu, from: side, on: c, &d, frame: n)
            d.upper = .smp(pdu)
        case L2CAPChannel.leSignaling, L2CAPChannel.signaling:
            let frame = SignalingFrame(payload, channel: cid == L2CAPChannel.signaling ? .bredr : .le)
            if cid == L2CAPChannel.leSignaling { c.isLE = true } else { c.isLE = false }
            c.channels.feed(frame, from: side, frame: n)
            if let m = frame.malformed { d.problem(.l2capSignaling, "L2CAP signaling: " + m) }
            for cmd in frame.commands { if let m = cmd.malformed { d.problem(.l2capSignaling, cmd.name + ": " + m) } }
            d.upper = .signaling(frame)
        case 0x0040...:
            guard let ch = c.channels.channel(cid: cid, from: side) else {
                d.upper = .raw(cid: cid, payload)
                return
            }
            let result = ch.receive(payload, from: side, frame: n)
            if case .malformed(let why) = result { d.problem(.creditBasedChannel, "K-frame: " + why) }
            if ch.isATTOverBREDR, case .sdu(let sdu, _) = result {
                // The connection's one ATT bearer, on a dynamic channel instead of CID 0x0004.
                let layout = ATTLayout(sdu[...])
                let from = p.direction != .unknown ? side
                    : [.request, .command, .confirmation].contains(layout.kind) ? Side.local : .remote
                d.upper = .att(att(sdu[...], layout, on: bearer(c), from, &d, p))
                return
            }
            if ch.isEATT, case .sdu(let sdu, _) = result {
                let key = ch.local.cid
                let b = c.eatt[key] ?? newBearer(c, mtu: Int(min(ch.local.mtu, ch.remote.mtu)))
                c.eatt[key] = b
                d.upper = .att(att(sdu[...], ATTLayout(sdu[...]), on: b, side, &d, p), eattCID: cid)
                return
            }
            d.upper = .channel(cid: cid, psm: ch.psm, result)
        default:
            d.upper = .raw(cid: cid, payload)
        }
    }

    private func bearer(_ c: Connection) -> ATTBearer {
        if let b = c.att { return b }
        let b = newBearer(c)
        c.att = b
        return b
    }

    /// A bearer for `c`'s link (its ATT channel or an EATT one), decoding as this dissector does.
    private func newBearer(_ c: Connection, mtu: Int = ATTBearer.defaultMTU) -> ATTBearer {
        let spare = c.spareBearer
        c.spareBearer = nil
        let b = gatt.bearer(local: .local(adapter: c.adapter), remote: .peer(c.peerKey), mtu: mtu, reusing: spare)
        b.lossy = c.overTheAir
        b.keepsValues = keepsValues
        b.judgesValues = findsFieldFaults
        return b
    }

    private func att(_ bytes: consuming Bytes, _ layout: ATTLayout, on b: ATTBearer, _ side: Side, _ d: inout Decoded, _ p: PacketHeader) -> ATTResult {
        if let c = d.connection { b.losses = c.linkLosses }
        if let f = layout.fault { d.problem(.att, "ATT: " + f.description) }
        let r = b.process(bytes, layout, from: side, frame: p.number, time: p.timestamp)
        // Checked here, where the result is at hand: read back out of `d.upper` it is copied.
        if findsFieldFaults { d.attFieldFault = r.hasFieldFaults }
        return r
    }

    /// Ends the capture: requests still unanswered 30 s after they were sent become timeouts.
    public func finish() {
        gatt.finish()
        for c in connections.values {
            c.att?.finish(at: lastTime)
            for b in c.eatt.values { b.finish(at: lastTime) }
        }
    }

    private func isochronous(_ d: inout Decoded, _ p: PacketHeader, _ payload: Bytes) {
        guard let w = payload.le16(0) else {
            d.problem(.isochronousHeader, "header truncated")
            return
        }
        d.hci = .isochronous(handle: w & 0x0FFF)
    }

    // MARK: Connection table

    /// The connection currently open on a handle, if any.
    public func liveConnection(adapter: UInt16, handle: UInt16) -> Connection? { liveConnection(key(adapter, handle & 0x0FFF)) }

    /// Most frames are on the link of the frame before: that one is kept aside, found without hashing.
    private var lastKey = UInt32.max
    private var lastConnection: Connection?

    @inline(__always) private func liveConnection(_ k: UInt32) -> Connection? {
        if k == lastKey { return lastConnection }
        let c = live[k]
        lastKey = k
        lastConnection = c
        return c
    }

    /// Sets or clears the live connection of a key, and what `liveConnection` kept aside for it.
    private func setLive(_ k: UInt32, _ c: Connection?) {
        live[k] = c
        if k == lastKey { lastConnection = c }
    }

    @inline(__always) func key(_ adapter: UInt16, _ handle: UInt16) -> UInt32 {
        UInt32(adapter) << 16 | UInt32(handle)
    }

    /// The live connection on a handle, or a new one when the capture starts mid-connection.
    private func connection(_ adapter: UInt16, _ handle: UInt16, frame: Int, time: Int64) -> Connection {
        if let c = liveConnection(key(adapter, handle)) { return c }
        return open(adapter: adapter, handle: handle, isLE: true, frame: frame, time: time, complete: false)
    }

    private func open(adapter: UInt16, handle: UInt16, isLE: Bool, frame: Int, time: Int64, complete: Bool) -> Connection {
        if let old = live[key(adapter, handle)] {
            // A Connection Complete on a live handle: the old one ended unseen.
            if !complete { return old }
            close(old)
        } else if live.count >= Dissector.maxLiveConnections {
            // Drop the least recently active eighth at once, so the sort is paid rarely.
            let idle = live.values.sorted { $0.lastActivity < $1.lastActivity }.prefix(Dissector.maxLiveConnections / 8)
            for c in idle { close(c) }
            capNote = "connection table full (\(Dissector.maxLiveConnections) live): stopped tracking the \(idle.count) least recently active"
        }
        let c = newConnection(adapter: adapter, handle: handle, isLE: isLE, frame: frame, time: time)
        if complete {
            c.createdFrame = frame
            c.createdTime = time
        }
        setLive(key(adapter, handle), c)
        connections[c.id] = c
        return c
    }

    private func close(_ c: Connection) {
        setLive(key(c.adapter, c.handle), nil)
        retire(c)
    }

    /// The next connection: an ended one made new when nothing else holds it any more, or else a
    /// new one; either takes the reassembly buffers of one that ended, when there are some.
    private func newConnection(adapter: UInt16, handle: UInt16, isLE: Bool, frame: Int, time: Int64) -> Connection {
        let id = nextConnectionID
        nextConnectionID += 1
        let c: Connection
        if var spare = spareConnections.popLast(), isKnownUniquelyReferenced(&spare) {
            spare.reuse(id: id, adapter: adapter, handle: handle, isLE: isLE, frame: frame, time: time)
            c = spare
        } else {
            c = Connection(id: id, adapter: adapter, handle: handle, isLE: isLE, frame: frame, time: time)
        }
        if var r = spareReassembly.popLast() {
            r.sent.reuse()
            r.received.reuse()
            c.reassembly = r
        }
        return c
    }

    private func retire(_ c: Connection) {
        ended.append(c)
        // Its reassembly buffers go to the next connection: an ended one reassembles nothing more.
        if spareReassembly.count < Dissector.spareReassemblyKept {
            spareReassembly.append(c.reassembly)
            c.reassembly = (L2CAPReassembler(), L2CAPReassembler())
        }
        // Trim in batches: removing one from the front per connection moved the whole array each time.
        if ended.count >= endedKept + endedKept / 8 {
            let drop = ended.count - endedKept
            for gone in ended[..<drop] {
                connections[gone.id] = nil
                // Made new for a later connection, once nothing else holds it (`newConnection`).
                if spareConnections.count < Dissector.spareConnectionsKept { spareConnections.append(gone) }
            }
            ended.removeFirst(drop)
        }
    }
}

/// The decode of one frame: its HCI layer, the connection it belongs to, the L2CAP frame it
/// completed (if any) and the upper-layer PDU in it. Field trees and text are made on demand.
public struct Decoded {
    public let packet: Packet
    public var hci: HCILayer = .none
    /// The HCI event read into its view, for the events the connection table follows.
    public internal(set) var event: HCIEvent?
    public var connection: Connection?
    public var l2cap: L2CAPFrame?
    /// An ACL fragment stored for reassembly: bytes held so far and the L2CAP total (0 if unknown yet).
    public var fragment: (have: Int, of: Int)?
    public var upper: UpperLayer?
    /// The link-layer decode of an over-the-air frame.
    public internal(set) var linkLayer: LLFrame?
    /// What few frames carry, in one box: each array or string stored in the decode itself was a
    /// release whenever a decode was dropped, though nearly all of them were empty.
    /// Usable from inline code: printers in other modules ask for the key note of every frame.
    @usableFromInline final class Seldom {
        var problems: [DecodeProblem] = []
        @usableFromInline var lostConnections: [Connection] = []
        @usableFromInline var keyNote: String?

        func copy() -> Seldom {
            let s = Seldom()
            s.problems = problems
            s.lostConnections = lostConnections
            s.keyNote = keyNote
            return s
        }
    }
    @usableFromInline private(set) var seldom: Seldom?

    /// The box, made or (when a copy of the decode shares it) copied first: a decode stays a value.
    private mutating func seldomForChange() -> Seldom {
        if seldom == nil { seldom = Seldom() } else if !isKnownUniquelyReferenced(&seldom) { seldom = seldom!.copy() }
        return seldom!
    }

    /// Sniffed links this frame showed lost (`Connection.lost`), ended at their last packet.
    public var lostConnections: [Connection] { seldom?.lostConnections ?? [] }
    /// `lostConnections` is not empty, asked without making an empty array (every frame the audit feeds).
    /// Inlined: the audit asks it of every frame, and nearly every frame has no box to look in.
    @inlinable public var hasLostConnections: Bool { !(seldom?.lostConnections.isEmpty ?? true) }
    /// What this frame told about keys: a TK found, or why it could not be ("TK missing: OOB
    /// pairing"). Shown with the frame.
    public internal(set) var keyNote: String? {
        @inlinable get { seldom?.keyNote }
        set { if newValue != nil || seldom != nil { seldomForChange().keyNote = newValue } }
    }
    /// What broke the specification in this frame, found while dissecting it (empty: nothing).
    public var problems: [DecodeProblem] { seldom?.problems ?? [] }
    /// `problems` is not empty, asked without making an empty array.
    public var hasProblems: Bool { !(seldom?.problems.isEmpty ?? true) }

    init(packet: Packet) { self.packet = packet }

    public mutating func problem(_ code: DecodeProblem.Code, _ why: String) { seldomForChange().problems.append(DecodeProblem(code, why)) }
    mutating func lost(_ c: Connection) { seldomForChange().lostConnections.append(c) }

    /// Malformed when any layer is: the one definition every output and count uses. A fault only
    /// a layer's full decode finds (an HCI parameter, an AD structure, an LL field) counts too, so
    /// a frame without `problems` is decoded in full to look; only callers that ask pay for it
    /// (read --quiet 20,182 frames of lightctl: 0.01 s to 0.05 s; the audit does not ask).
    public var isMalformed: Bool { hasProblems || fieldFault }

    /// Every reason the frame is malformed: `problems`, else what its layers' fields mark.
    public var malformedReasons: [String] { !hasProblems && fieldFault ? layerProblems : problems.map(\.reason) }

    /// A layer's full decode marks a fault that dissecting did not report (set by a dissector that
    /// `findsFieldFaults`).
    public internal(set) var fieldFault = false
    /// The ATT result's full decode marks a fault (`ATTResult.hasFieldFaults`; set when asked).
    var attFieldFault = false

    /// The reasons of the `Malformed` fields of the full decode (already shown in those fields).
    public var layerProblems: [String] {
        let finder = MalformedFieldFinder()
        writeLayers(to: finder) { _ in }
        return finder.found
    }
    /// The advertising report an over-the-air advertising PDU stands for (`LLFrame.report`); its
    /// data is in the packet's payload.
    public var linkLayerReport: AdvertisingReport? { linkLayer?.report }
    /// The HCI packet's parameters (command, event) or data (ACL, SCO, ISO); empty without an HCI layer.
    public var hciParameters: Bytes {
        if case .none = hci { return [] }
        return packet.payload.from(hci.headerLength(packet.kind))
    }
    /// An over-the-air frame (it has a link-layer decode).
    public var isOverTheAir: Bool { linkLayer != nil }
}

/// Collects the reasons of the `Malformed` fields of a decode and ignores everything else.
final class MalformedFieldFinder: FieldSink {
    var found: [String] = []
    func begin(_ label: FieldLabel, _ value: FieldValue) { look(value) }
    func end() {}
    func add(_ label: FieldLabel, _ value: FieldValue) { look(value) }

    private func look(_ value: FieldValue) {
        if case .error(let why) = value { found.append(why.string) }
    }
}

/// A frame's HCI header. Its parameters or data are the packet's bytes after it
/// (`Decoded.hciParameters`): not kept twice, so a decode holds no copy of them.
public enum HCILayer {
    case none
    case command(opcode: UInt16)
    case event(code: UInt8)
    case acl(ACLHeader)
    case isochronous(handle: UInt16)

    /// Octets of the header before the parameters or data.
    func headerLength(_ kind: PacketKind) -> Int {
        switch self {
        case .none: return 0
        case .command: return 3
        case .event: return 2
        case .acl: return 4
        case .isochronous: return kind == .hci(.scoData) ? 3 : 4
        }
    }
}

/// The local side of every connection on one adapter: its own GATT server database.
/// What an L2CAP frame carried.
public enum UpperLayer {
    /// An ATT PDU with what the bearer and GATT tracking know of it; `eattCID` when it came over
    /// EATT. ATT over BR/EDR (PSM 0x001F) is the connection's ATT bearer: no `eattCID`.
    case att(ATTResult, eattCID: UInt16? = nil)
    case smp(SMPPDU)
    case signaling(SignalingFrame)
    /// A K-frame on a credit-based (or BR/EDR) channel: its reassembly state or whole SDU.
    case channel(cid: UInt16, psm: UInt16, SDUResult)
    /// A channel blesniff does not decode (or a dynamic one it never saw opened).
    case raw(cid: UInt16, Bytes)
}
