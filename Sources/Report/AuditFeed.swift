import Decoders
import Wire

/// Where the feed's events go: the auditor, the HTML report's collector.
public protocol AuditEventSink: AnyObject {
    func observe(_ event: AuditEvent, at frame: FrameRef)
    /// An ATT PDU, lent rather than wrapped in an `.att` event (which would copy it). The default
    /// wraps it.
    func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef)
    /// Advertising data or a report, lent likewise (one per report: the most frequent event in
    /// a busy place). The default wraps it.
    func observeAdvertisingData(_ o: AdvertisingDataObservation, at frame: FrameRef)
    /// L2CAP traffic other than ATT on a connection, lent likewise (once per frame that carries
    /// it). The default wraps it in `.linkData`.
    func observeLinkData(_ c: Connection, at frame: FrameRef)
    /// The advertising reports the sink looks at: the feed makes an observation only of those
    /// (most reports show nothing new) and tells the sink of the others with `advance(to:)`.
    /// Every report by default.
    var advertisingInterest: AdvertisingInterest { get }
    /// A frame went by that the sink was told nothing of (a report it does not look at): its time
    /// passed. Nothing by default.
    func advance(to frame: FrameRef)
}

extension AuditEventSink {
    public func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef) {
        observe(.att(c, a), at: frame)
    }

    public func observeAdvertisingData(_ o: AdvertisingDataObservation, at frame: FrameRef) {
        observe(.advertisingData(o), at: frame)
    }

    public func observeLinkData(_ c: Connection, at frame: FrameRef) {
        observe(.linkData(c), at: frame)
    }

    public var advertisingInterest: AdvertisingInterest { .every }

    public func advance(to frame: FrameRef) {}
}

/// Turns decoded frames into the facts the auditor's rules consume (`AuditEvent`). Keeps only
/// what it needs to do that: the session model (scans, owners, advertisers, this host's
/// advertising), the legacy/extended kind of each advertising set, and each connection's reads.
public final class AuditFeed {
    private let dissector: Dissector
    /// Advertising sets configured with legacy PDUs (LE Set Extended Advertising Parameters bit 4).
    private var legacySets: Set<UInt32> = []
    /// Each connection's reads told apart from long-read continuations (`ATTObservation.newRead`).
    private var reads = ConnectionTable<ReadTracker>(capacity: 4096)
    /// Which host stack made the capture, from its commands and monitor records.
    private var platform = PlatformDetector()
    /// The capture's scans, each with its owner (`ScanModel`: the one definition of a scan).
    private var scans: ScanModel
    /// Extended advertising data arrives in fragments (data status "more to come"): one report
    /// per advertising event, with the whole data, once the last fragment is in.
    private var fragments = ExtendedAdvertisingAssembler()
    /// Whose each connection is.
    private var owners: ConnectionOwners
    /// The advertisers and what their data showed (`AdvertiserModel`: each piece of data walked once).
    private var advertisers = AdvertiserModel()
    /// When this host advertises.
    private var advertising = HostAdvertisingModel()
    private let restartGap: Int64
    /// The list `found` fills, used again for every discovery response.
    private var foundInResponse: [BluetoothUUID] = []
    #if DEBUG
    /// A feed given frames but never finished would lose the scans still on at the end (their
    /// `scanAtEnd`): debug builds, the test suite's, catch the caller that forgets.
    private var fed = false, finished = false
    deinit { assert(!fed || finished, "an AuditFeed was given frames but never finished") }
    #endif

    /// - Parameters:
    ///   - scanRestartGap: a scan disabled and enabled again with the same parameters within this
    ///     many nanoseconds is one scan going on.
    ///   - devices: the app's devices and services, from configuration: scans and connections that
    ///     name them are the app's.
    public init(dissector: Dissector, scanRestartGap: Int64 = AuditConfiguration.defaultScanRestartGap,
                devices: [DeviceMatcher] = []) {
        self.dissector = dissector
        restartGap = scanRestartGap
        scans = ScanModel(restartGap: scanRestartGap, configured: devices)
        owners = ConnectionOwners(configured: devices)
    }

    /// With the restart gap and the app's devices from configuration.
    public convenience init(dissector: Dissector, configuration: AuditConfiguration) {
        self.init(dissector: dissector, scanRestartGap: configuration.scanRestartGap, devices: configuration.devices)
    }

    /// Hands on what is still held back (a scan disable at the end of the capture), then the
    /// scans still on (`scanAtEnd`); `last` is the capture's last frame (nil when it had none).
    public func finish(into sink: some AuditEventSink, at last: FrameRef?) {
        #if DEBUG
        finished = true
        #endif
        scans.finish(sink, at: last)
    }

    /// Hands the frame's events to the auditor: specialised, so each event is a direct call.
    public func events(_ d: Decoded, into auditor: Auditor) { feed(d, auditor) }

    public func events(_ d: Decoded, into sink: some AuditEventSink) { feed(d, sink) }

    /// Inlined into each entry above: called from them, its long list of arguments was stored
    /// and loaded again for every frame (the flood's audit 19 instructions a frame dearer).
    @inline(__always) private func feed<S: AuditEventSink>(_ d: Decoded, _ sink: S) {
        #if DEBUG
        fed = true
        #endif
        // Fields, not a copy of the packet (which retains and releases its payload).
        let number = d.packet.number
        let at = FrameRef(number: number, time: d.packet.timestamp, fileOffset: d.packet.fileOffset, fileLength: d.packet.fileLength)
        if scans.holding { scans.flush(before: at.time &- restartGap, sink) }
        // Sniffed links this frame showed lost end at their last packet, before anything else it says.
        if d.hasLostConnections {
            for c in d.lostConnections {
                _ = reads.removeValue(forKey: c.id)
                owners.disconnected(c)
                sink.observe(.disconnected(c, reason: HCIErrors.connectionTimeout), at: FrameRef(number: c.endedFrame ?? number, time: c.endedTime ?? at.time))
            }
        }
        switch d.hci {
        case .command(let op):
            if HCICommands.isVendor(op) {
                if let g = platform.command(op, frame: number) { sink.observe(.platform(g), at: at) }
                if op == AndroidScanFilters.opcode { scans.androidFilter(adapter: d.packet.adapter, d.hciParameters) }
            }
            if HCICommand.hasView(op), let c = HCICommand(opcode: op, d.hciParameters) { command(c, adapter: d.packet.adapter, at, sink) }
        case .event(let code): event(code, d, at, sink)
        case .none:
            if case .monitor(let op) = d.packet.kind {
                if let g = platform.monitor(op, frame: number) { sink.observe(.platform(g), at: at) }
                // A management command: cookie (4 octets), then its opcode.
                if op == MonitorOpcode.ctrlCommand, let mgmt = d.packet.payload.le16(4) {
                    scans.management(adapter: d.packet.adapter, opcode: mgmt)
                }
            }
        default: break
        }
        // Sniffer captures: a connection starts at its CONNECT_IND; advertising PDUs are reports.
        if d.isOverTheAir {
            if let c = d.connection, c.createdFrame == number { connected(c, at, sink) }
            // A sniffed link is encrypted from its first encrypted PDU (the air has no Encryption
            // Change event); said before that PDU's own data.
            if let c = d.connection, c.encryptedFrame == number { sink.observe(.encryptionChanged(c, on: true), at: at) }
            if let r = d.linkLayerReport { report(r, in: d.packet.payload, adapter: d.packet.adapter, at, sink) }
        }
        // L2CAP payloads, from HCI ACL data or link-layer data PDUs. A controller's vendor debug
        // channel (ACL data on a handle no Connection Complete opened) is no connection.
        // The connection read from the decode where it is passed: bound to a name and used across
        // calls, it was retained for every frame.
        if d.connection != nil { linkEvents(d.connection!, d, at, sink) }
    }

    /// What a frame on a connection says: its ATT PDU, its pairing, or only that the link is in use.
    @inline(__always) private func linkEvents<S: AuditEventSink>(_ c: Connection, _ d: Decoded, _ at: FrameRef, _ sink: S) {
        if c.handle == PlatformDetector.vendorDebugHandle, c.createdFrame == nil {
            if let g = platform.vendorDebugData(frame: at.number) { sink.observe(.platform(g), at: at) }
            return
        }
        // Matched in place: binding the whole upper layer first copied it.
        switch d.upper {
        case .att(let r, _)?:
            att(r, on: c, d, at, sink)
        case .smp?:
            sink.observeLinkData(c, at: at)
            // A pairing is reported once its method is known: in the frame of its Pairing Response.
            if let last = c.pairing.outcomes.last, last.responseFrame == at.number {
                sink.observe(.pairing(c, Self.pairing(last)), at: at)
            }
            if let last = c.pairing.outcomes.last, last.debugKeyFrame == at.number, let side = last.debugKeyFrom {
                sink.observe(.pairingDebugKey(c, fromInitiator: side == last.initiator), at: at)
            }
        default:
            // Any other L2CAP traffic, or a fragment of it, is the link in use; so is a sniffed
            // data PDU that stayed encrypted (unreadable, but not idle).
            if d.l2cap != nil || d.fragment != nil || d.linkLayer?.encryption == .encrypted {
                sink.observeLinkData(c, at: at)
            }
        }
    }

    /// An ATT PDU's events: who the link serves, what a discovery found, and the PDU itself.
    private func att<S: AuditEventSink>(_ r: ATTResult, on c: Connection, _ d: Decoded, _ at: FrameRef, _ sink: S) {
        var o = ATTObservation(origin: r.side, opcode: .errorResponse, kind: .unknown)
        observe(r, c, d, into: &o)
        let found = o.opcode == .readByGroupTypeResponse || o.opcode == .readByTypeResponse ? found(r) : nil
        if let u = o.service ?? found?.first, let owner = owners.service(u, on: c) {
            sink.observe(.connectionOwner(c, ConnectionOrigin(owner: owner)), at: at)
        }
        if let found {
            sink.observe(.discovery(c, DiscoveryObservation(origin: o.origin, opcode: o.opcode, service: o.service,
                                                            found: found)), at: at)
        }
        sink.observeATT(o, on: c, at: at)
    }

    // MARK: Commands

    private func command<S: AuditEventSink>(_ c: HCICommand, adapter: UInt16, _ at: FrameRef, _ sink: S) {
        switch c {
        case .leSetScanEnable(let p):
            if let s = scans.enable(adapter: adapter, on: p.enable, filterDuplicates: p.filterDuplicates, extended: false, at: at, sink) {
                owners.scanStarted(s)
            }
        case .leSetExtendedScanEnable(let p):
            if let s = scans.enable(adapter: adapter, on: p.enable, filterDuplicates: p.filterDuplicates, extended: true, at: at, sink) {
                owners.scanStarted(s)
            }
        case .leSetScanParameters(let p):
            scanParameters(adapter: adapter, ScanParameters(p), at, sink)
        case .leSetExtendedScanParameters(let p):
            scanParameters(adapter: adapter, ScanParameters(p), at, sink)
        case .leCreateConnection(let p):
            owners.create(adapter: adapter, filterPolicy: p.initiatorFilterPolicy, scanInterval: p.scanInterval)
            sink.observe(.createConnection(adapter: adapter, peer: p.peer, peerType: p.peerAddressType), at: at)
        case .leExtendedCreateConnection(let p):
            owners.create(adapter: adapter, filterPolicy: p.initiatorFilterPolicy, scanInterval: p.scanInterval)
            sink.observe(.createConnection(adapter: adapter, peer: p.peer, peerType: p.peerAddressType), at: at)
        case .disconnect(let p):
            let peer = dissector.liveConnection(adapter: adapter, handle: p.connectionHandle)?.peer
            sink.observe(.disconnectCommand(adapter: adapter, handle: p.connectionHandle, peer: peer), at: at)
        case .leSetAdvertisingData(let p):
            hostData(adapter, p.data, scanResponse: p.isScanResponse, legacy: true, at, sink)
        case .leSetExtendedAdvertisingData(let p):
            hostData(adapter, p.data, scanResponse: p.isScanResponse,
                     legacy: legacySets.contains(setKey(adapter, p.advertisingHandle)), at, sink)
        case .leSetAdvertisingEnable(let p):
            advertising.enable(adapter: adapter, p.advertisingEnable, at: at, sink)
        case .leSetExtendedAdvertisingEnable(let p):
            advertising.enable(adapter: adapter, p.enable, at: at, sink)
        case .leSetAdvertisingParameters(let p):
            sink.observe(.advertisingParameters(HostAdvertisingParameters(adapter: adapter, p)), at: at)
        case .leSetExtendedAdvertisingParameters(let p):
            let set = setKey(adapter, p.advertisingHandle)
            if p.usesLegacyPDUs { legacySets.insert(set) } else { legacySets.remove(set) }
            sink.observe(.advertisingParameters(HostAdvertisingParameters(adapter: adapter, p)), at: at)
        }
    }

    private func scanParameters<S: AuditEventSink>(adapter: UInt16, _ p: ScanParameters?, _ at: FrameRef, _ sink: S) {
        scans.parameters(adapter: adapter, p)
        if let p, let g = platform.scanParameters(interval: p.interval, window: p.window, frame: at.number) {
            sink.observe(.platform(g), at: at)
        }
    }

    /// A connection that just opened, and whose it is.
    private func connected<S: AuditEventSink>(_ c: Connection, _ at: FrameRef, _ sink: S) {
        if c.isCentral == false, c.isLE { advertising.stop(adapter: c.adapter, at: at, sink) }
        sink.observe(.connected(c), at: at)
        let found = c.peer.flatMap { advertisers.advertiser(AdvertiserKey(adapter: c.adapter, address: $0, host: false)) }
        sink.observe(.connectionOwner(c, owners.connected(c, foundIn: found?.foundIn, foundByApp: found?.foundByApp)), at: at)
    }

    private func setKey(_ adapter: UInt16, _ handle: UInt8) -> UInt32 { UInt32(adapter) << 8 | UInt32(handle) }

    // MARK: Events

    /// Inlined into the feed, as it was before the report path left it: called, it cost every
    /// event of the mix 17 instructions.
    @inline(__always) private func event<S: AuditEventSink>(_ code: UInt8, _ d: Decoded, _ at: FrameRef, _ sink: S) {
        switch d.event {
        case .connectionComplete?, .leConnectionComplete?:
            if let c = d.connection, c.createdFrame == d.packet.number { connected(c, at, sink) }
        case .disconnectionComplete(let e)?:
            guard e.status == 0, let c = d.connection, let reason = e.reason else { return }
            _ = reads.removeValue(forKey: c.id)
            owners.disconnected(c)
            sink.observe(.disconnected(c, reason: reason), at: at)
        case .encryptionChange(let e)?:
            guard e.status == 0, let c = d.connection else { return }
            sink.observe(.encryptionChanged(c, on: e.isOn), at: at)
        case .encryptionKeyRefreshComplete?, .leConnectionUpdateComplete?, .leDataLengthChange?, .lePHYUpdateComplete?:
            break
        case nil:
            // The packet's payload is the event: code, parameter length, then the subevent code.
            guard code == HCIEvents.leMeta, let sub = d.packet.payload.byte(2), AdvertisingReports.isReport(subevent: sub) else { return }
            reports(subevent: sub, d.packet.payload.from(3), adapter: d.packet.adapter, at, sink)
        }
    }

    /// The reports of an advertising report event, its parameters after the subevent code. Apart
    /// from `event`, which every other event passes through: the walk, inlined, would enlarge it.
    @inline(never)
    private func reports<S: AuditEventSink>(subevent: UInt8, _ params: Bytes, adapter: UInt16, _ at: FrameRef, _ sink: S) {
        AdvertisingReports.forEach(subevent: subevent, params) { r, reports in
            guard r.syncHandle == nil else { return }
            report(r, in: reports, adapter: adapter, at, sink)
        }
    }

    /// One advertising report, from an HCI event or a sniffed advertising PDU, with its data in `bytes`.
    private func report<S: AuditEventSink>(_ r: AdvertisingReport, in bytes: Bytes, adapter: UInt16, _ at: FrameRef,
                                           _ sink: S) {
        if !r.isLegacy && !fragments.passes(r) {
            guard let whole = fragments.add(r, in: bytes) else { return }
            if whole.fragments > 1 { return received(r, whole.data, whole.data.indices, adapter: adapter, at, sink) }
        }
        received(r, bytes, r.dataRange(in: bytes), adapter: adapter, at, sink)
    }

    /// A whole report, its data at `range` in `bytes`: read in place, and sliced only for a sink
    /// that wants the observation.
    private func received<S: AuditEventSink>(_ r: AdvertisingReport, _ bytes: borrowing Bytes, _ range: Range<Int>,
                                             adapter: UInt16, _ at: FrameRef, _ sink: S) {
        let key = AdvertiserKey(adapter: adapter, address: r.address, host: false)
        let slot = scans.slot(adapter: adapter)
        let scan = slot.map { scans.current(at: $0) }
        let u = advertisers.received(key, data: bytes, range, scanResponse: r.isScanResponse, legacy: r.isLegacy, scan: scan)
        if let slot, !r.isScanResponse { scans.reported(at: slot, from: r.address, reports: u.reportsInScan, at: at) }
        guard sink.advertisingInterest.wants(new: u.new, seen: u.advertiser.seen) else {
            sink.advance(to: at)
            return
        }
        sink.observeAdvertisingData(u.observation(key, data: bytes[range], scanResponse: r.isScanResponse, legacy: r.isLegacy,
                                                  addressType: r.addressType, rssi: r.rssiValue, scan: scan?.number), at: at)
    }

    /// Advertising or scan-response data this host set.
    private func hostData<S: AuditEventSink>(_ adapter: UInt16, _ data: Bytes, scanResponse: Bool, legacy: Bool,
                                            _ at: FrameRef, _ sink: S) {
        let key = AdvertiserKey(adapter: adapter, address: nil, host: true)
        sink.observeAdvertisingData(advertisers.hostData(key, data: data, scanResponse: scanResponse, legacy: legacy), at: at)
    }

    // MARK: ATT and SMP

    /// Fills in `att`, a fresh observation with the PDU's origin, where the rules will read it: a
    /// struct built in a function of its own and returned cost about 200 instructions a PDU in
    /// spills and copies.
    private func observe(_ r: ATTResult, _ c: Connection, _ d: Decoded, into att: inout ATTObservation) {
        // Plain values read in place: fetching `r.pdu` would copy the PDU.
        let pdu = r.facts
        let kind = pdu.opcode.kind
        let a = r.attribute
        let isCCCD = a != nil && a!.role == .descriptor && a!.uuid == GATTType.clientCharacteristicConfiguration
        var cccd: UInt16?
        if isCCCD, kind == .request || kind == .command { cccd = pdu.valuePrefix }
        // A client that kept the server's handles from an earlier connection (a bonded cache)
        // subscribes without discovering: a 2-octet Write Request of 0x0001 or 0x0002 to a handle
        // discovery never named may be a CCCD write (the rules confirm it by what follows).
        if pdu.opcode == .writeRequest, pdu.valueLength == 2, a == nil, let x = pdu.valuePrefix, x == 1 || x == 2 {
            cccd = x
        }
        (att.opcode, att.kind) = (pdu.opcode, kind)
        att.handle = pdu.handle
        att.endHandle = pdu.endHandle
        att.attributeType = pdu.attributeType
        att.valueLength = pdu.valueLength
        att.mtu = c.att?.mtu ?? 23
        // The rest only where it differs from the fresh observation's defaults.
        if let a {
            att.characteristic = a.characteristic ?? (a.role == .characteristicValue ? a.uuid : nil)
            att.service = a.service
            att.properties = a.properties?.rawValue
        }
        att.isCCCD = isCCCD
        att.cccdValue = cccd
        if let q = r.request { att.answers = FrameRef(number: q.frame, time: d.packet.timestamp &- q.rtt) }
        att.pipelined = kind == .request && r.pipelined
        if ReadTracker.looksAt(att) {
            att.newRead = reads.update(c.id, default: ReadTracker()) { $0.classify(att) }
        }
    }

    /// The services or characteristics a discovery response lists, in the list the last response
    /// filled: the rules read it while the frame is fed and keep none, so its storage is free again
    /// by the next one.
    private func found(_ r: ATTResult) -> [BluetoothUUID] {
        foundInResponse.removeAll(keepingCapacity: true)
        for e in r.entries {
            switch e.attribute.role {
            case .service: if let u = e.attribute.uuid { foundInResponse.append(u) }
            case .characteristicDeclaration: if let u = e.attribute.characteristic { foundInResponse.append(u) }
            default: break
            }
        }
        return foundInResponse
    }

    static func pairing(_ o: PairingOutcome) -> PairingObservation {
        let method: PairingObservation.Method
        switch o.method {
        case .justWorks?: method = .justWorks
        case .passkeyEntry?: method = .passkey
        case .numericComparison?: method = .numericComparison
        case .outOfBand?: method = .oob
        case nil: method = .unknown
        }
        return PairingObservation(method: method, secureConnections: o.secureConnections,
                                  bothSupportSecureConnections: o.bothSupportSC, failed: o.failure != nil)
    }
}
