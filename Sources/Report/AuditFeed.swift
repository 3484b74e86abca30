import Decoders
import Wire

/// Where the feed's events go: the auditor, the HTML report's collector.
public protocol AuditEventSink: AnyObject {
    func observe(_ event: AuditEvent, at frame: FrameRef)
    /// An ATT PDU, lent rather than wrapped in an `.att` event (which would copy it). The default
    /// wraps it.
    func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef)
}

extension AuditEventSink {
    public func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef) {
        observe(.att(c, a), at: frame)
    }
}

/// Turns decoded frames into the facts the auditor's rules consume (`AuditEvent`). Keeps only
/// what it needs to do that: the legacy/extended kind of each advertising set, and each connection's
/// reads.
public final class AuditFeed {
    private let dissector: Dissector
    /// Advertising sets configured with legacy PDUs (LE Set Extended Advertising Parameters bit 4).
    private var legacySets: Set<UInt32> = []
    /// Each connection's reads told apart from long-read continuations (`ATTObservation.newRead`).
    private var reads = ConnectionTable<ReadTracker>(capacity: 4096)
    /// Which host stack made the capture, from its commands and monitor records.
    private var platform = PlatformDetector()
    /// Scan disables held back for `restartGap`: a stack that stops and restarts a scan around its
    /// own work (Android does, around connections and resolving-list updates) has not stopped the
    /// app's scan.
    private var restarts = ScanRestarts()
    private let restartGap: Int64

    /// - Parameter scanRestartGap: a scan disabled and enabled again with the same parameters
    ///   within this many nanoseconds is one scan going on.
    public init(dissector: Dissector, scanRestartGap: Int64 = AuditConfiguration.defaultScanRestartGap) {
        self.dissector = dissector
        restartGap = scanRestartGap
    }

    /// Hands on what is still held back (a scan disable at the end of the capture).
    public func finish(into sink: some AuditEventSink) {
        restarts.flush(before: .max, sink)
    }

    /// Hands the frame's events to the auditor: specialised, so each event is a direct call.
    public func events(_ d: Decoded, into auditor: Auditor) { feed(d, auditor) }

    public func events(_ d: Decoded, into sink: some AuditEventSink) { feed(d, sink) }

    private func feed<S: AuditEventSink>(_ d: Decoded, _ sink: S) {
        // Fields, not a copy of the packet (which retains and releases its payload).
        let number = d.packet.number
        let at = FrameRef(number: number, time: d.packet.timestamp, fileOffset: d.packet.fileOffset, fileLength: d.packet.fileLength)
        if restarts.holding { restarts.flush(before: at.time &- restartGap, sink) }
        // Sniffed links this frame showed lost end at their last packet, before anything else it says.
        for c in d.lostConnections {
            _ = reads.removeValue(forKey: c.id)
            sink.observe(.disconnected(c, reason: HCIErrors.connectionTimeout), at: FrameRef(number: c.endedFrame ?? number, time: c.endedTime ?? at.time))
        }
        switch d.hci {
        case .command(let op, let params):
            if HCICommands.isVendor(op), let g = platform.command(op, frame: number) { sink.observe(.platform(g), at: at) }
            if let c = HCICommand(opcode: op, params) { command(c, adapter: d.packet.adapter, at, sink) }
        case .event(let code, let params): event(code, params, d, at, sink)
        case .none:
            if case .monitor(let op) = d.packet.kind, let g = platform.monitor(op, frame: number) {
                sink.observe(.platform(g), at: at)
            }
        default: break
        }
        // Sniffer captures: a connection starts at its CONNECT_IND; advertising PDUs are reports.
        if d.isOverTheAir {
            if let c = d.connection, c.createdFrame == number { sink.observe(.connected(c), at: at) }
            if let r = d.linkLayerReport { report(r, adapter: d.packet.adapter, at, sink) }
        }
        // L2CAP payloads, from HCI ACL data or link-layer data PDUs.
        if let c = d.connection {
            // Matched in place: binding the whole upper layer first copied it.
            switch d.upper {
            case .att(let r, _)?: sink.observeATT(observation(r, c, d), on: c, at: at)
            case .smp?:
                sink.observe(.linkData(c), at: at)
                // A pairing is reported once its method is known: in the frame of its Pairing Response.
                if let last = c.pairing.outcomes.last, last.responseFrame == number {
                    sink.observe(.pairing(c, Self.pairing(last)), at: at)
                }
            default:
                // Any other L2CAP traffic, or a fragment of it, is the link in use.
                if d.l2cap != nil || d.fragment != nil { sink.observe(.linkData(c), at: at) }
            }
        }
    }

    // MARK: Commands

    private func command<S: AuditEventSink>(_ c: HCICommand, adapter: UInt16, _ at: FrameRef, _ sink: S) {
        switch c {
        case .leSetScanEnable(let p):
            scanEnable(adapter: adapter, enabled: p.enable, filterDuplicates: p.filterDuplicates, extended: false, at, sink)
        case .leSetExtendedScanEnable(let p):
            scanEnable(adapter: adapter, enabled: p.enable, filterDuplicates: p.filterDuplicates, extended: true, at, sink)
        case .leSetScanParameters(let p):
            restarts.parameters(adapter: adapter, .legacy(p))
        case .leSetExtendedScanParameters(let p):
            restarts.parameters(adapter: adapter, .extended(p))
        case .leCreateConnection(let p):
            sink.observe(.createConnection(adapter: adapter, peer: p.peer, peerType: p.peerAddressType), at: at)
        case .leExtendedCreateConnection(let p):
            sink.observe(.createConnection(adapter: adapter, peer: p.peer, peerType: p.peerAddressType), at: at)
        case .disconnect(let p):
            let peer = dissector.liveConnection(adapter: adapter, handle: p.connectionHandle)?.peer
            sink.observe(.disconnectCommand(adapter: adapter, handle: p.connectionHandle, peer: peer), at: at)
        case .leSetAdvertisingData(let p):
            sink.observe(.advertisingData(adapter: adapter, advertiser: nil, data: p.data, scanResponse: p.isScanResponse,
                                          legacy: true, sentByHost: true), at: at)
        case .leSetExtendedAdvertisingData(let p):
            sink.observe(.advertisingData(adapter: adapter, advertiser: nil, data: p.data, scanResponse: p.isScanResponse,
                                          legacy: legacySets.contains(setKey(adapter, p.advertisingHandle)),
                                          sentByHost: true), at: at)
        case .leSetAdvertisingEnable(let p):
            sink.observe(.advertisingEnable(adapter: adapter, enabled: p.advertisingEnable), at: at)
        case .leSetExtendedAdvertisingEnable(let p):
            sink.observe(.advertisingEnable(adapter: adapter, enabled: p.enable), at: at)
        case .leSetAdvertisingParameters(let p):
            sink.observe(.advertisingParameters(adapter: adapter, intervalMax: UInt32(p.advertisingIntervalMax)), at: at)
        case .leSetExtendedAdvertisingParameters(let p):
            let set = setKey(adapter, p.advertisingHandle)
            if p.usesLegacyPDUs { legacySets.insert(set) } else { legacySets.remove(set) }
            sink.observe(.advertisingParameters(adapter: adapter, intervalMax: p.primaryAdvertisingIntervalMax), at: at)
        }
    }

    private func scanEnable<S: AuditEventSink>(adapter: UInt16, enabled: Bool, filterDuplicates: UInt8, extended: Bool,
                                               _ at: FrameRef, _ sink: S) {
        restarts.scanEnable(.scanEnable(adapter: adapter, enabled: enabled, filterDuplicates: filterDuplicates, extended: extended),
                            adapter: adapter, enabled: enabled, at: at, within: restartGap, sink)
    }

    private func setKey(_ adapter: UInt16, _ handle: UInt8) -> UInt32 { UInt32(adapter) << 8 | UInt32(handle) }

    // MARK: Events

    private func event<S: AuditEventSink>(_ code: UInt8, _ b: Bytes, _ d: Decoded, _ at: FrameRef, _ sink: S) {
        switch d.event {
        case .connectionComplete?, .leConnectionComplete?:
            if let c = d.connection, c.createdFrame == d.packet.number { sink.observe(.connected(c), at: at) }
        case .disconnectionComplete(let e)?:
            guard e.status == 0, let c = d.connection, let reason = e.reason else { return }
            _ = reads.removeValue(forKey: c.id)
            sink.observe(.disconnected(c, reason: reason), at: at)
        case .encryptionChange(let e)?:
            guard e.status == 0, let c = d.connection else { return }
            sink.observe(.encryptionChanged(c, on: e.isOn), at: at)
        case .encryptionKeyRefreshComplete?, .leConnectionUpdateComplete?:
            break
        case nil:
            guard code == HCIEvents.leMeta, let sub = b.first, AdvertisingReports.isReport(subevent: sub) else { return }
            let adapter = d.packet.adapter
            AdvertisingReports.forEach(subevent: sub, b.dropFirst()) { r in
                guard r.syncHandle == nil else { return }
                report(r, adapter: adapter, at, sink)
            }
        }
    }

    /// One advertising report, from an HCI event or a sniffed advertising PDU.
    private func report<S: AuditEventSink>(_ r: AdvertisingReport, adapter: UInt16, _ at: FrameRef, _ sink: S) {
        sink.observe(.advertisingReport(adapter: adapter, address: r.address, addressType: r.addressType,
                                        rssi: r.rssiValue, scanResponse: r.isScanResponse), at: at)
        sink.observe(.advertisingData(adapter: adapter, advertiser: r.address, data: r.data,
                                      scanResponse: r.isScanResponse, legacy: r.isLegacy, sentByHost: false), at: at)
    }

    // MARK: ATT and SMP

    private func observation(_ r: ATTResult, _ c: Connection, _ d: Decoded) -> ATTObservation {
        let pdu = r.pdu
        let kind = pdu.kind
        let a = r.attribute
        let isCCCD = a?.role == .descriptor && a?.uuid == BluetoothUUID(uuid16: 0x2902)
        var cccd: UInt16?
        if isCCCD, kind == .request || kind == .command, let v = pdu.value { cccd = v.le16(0) ?? v.byte(0).map(UInt16.init) }
        let answers = r.request.map { FrameRef(number: $0.frame, time: d.packet.timestamp &- $0.rtt) }
        var o = ATTObservation(
            origin: r.side, opcode: pdu.opcode, kind: kind,
            handle: pdu.range?.start ?? pdu.handle, endHandle: pdu.range?.end, attributeType: pdu.attributeType,
            valueLength: pdu.value?.count ?? 0, mtu: c.att?.mtu ?? 23,
            characteristic: a?.characteristic ?? (a?.role == .characteristicValue ? a?.uuid : nil),
            service: a?.service, properties: a?.properties?.rawValue, isCCCD: isCCCD, cccdValue: cccd,
            answers: answers)
        if pdu.opcode == .readByGroupTypeResponse || pdu.opcode == .readByTypeResponse {
            o.found = r.entries.compactMap { e in
                switch e.attribute.role {
                case .service: return e.attribute.uuid
                case .characteristicDeclaration: return e.attribute.characteristic
                default: return nil
                }
            }
        }
        if ReadTracker.looksAt(o) {
            o.newRead = reads.update(c.id, default: ReadTracker()) { $0.classify(o) }
        }
        return o
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

/// Holds each adapter's scan disable back until it is clear the scan stopped: an enable with the
/// same duplicate filter and scan parameters within the gap continues the same scan (both commands
/// are then dropped); anything else, or the gap passing, hands the disable on at its own frame.
struct ScanRestarts {
    struct Held {
        var adapter: UInt16
        var event: AuditEvent
        var at: FrameRef
        var parameters: Parameters?
    }

    /// LE Set (Extended) Scan Parameters: a restart with other ones is a new scan.
    enum Parameters: Equatable {
        case legacy(LESetScanParameters)
        case extended(LESetExtendedScanParameters)
    }

    /// Per adapter: the scan parameters last set, the duplicate filter of the scan last enabled,
    /// and the disable held back.
    private var parameters = AdapterTable<Parameters>()
    private var filters = AdapterTable<UInt8>()
    private var held: [Held] = []
    private(set) var holding = false

    mutating func parameters(adapter: UInt16, _ p: Parameters) { parameters[adapter] = p }

    mutating func scanEnable<S: AuditEventSink>(_ event: AuditEvent, adapter: UInt16, enabled: Bool, at: FrameRef,
                                               within gap: Int64, _ sink: S) {
        guard case .scanEnable(_, _, let filter, _) = event else { return }
        let params = parameters[adapter]
        if !enabled {
            // A second disable while one is held: the first stands.
            if !held.contains(where: { $0.adapter == adapter }) {
                held.append(Held(adapter: adapter, event: event, at: at, parameters: params))
                holding = true
            }
            return
        }
        if let i = held.firstIndex(where: { $0.adapter == adapter }) {
            let h = held[i]
            if at.time &- h.at.time <= gap, h.parameters == params, filters[adapter] == filter {
                held.remove(at: i)
                holding = !held.isEmpty
                return
            }
            flush(adapter: adapter, sink)
        }
        filters[adapter] = filter
        sink.observe(event, at: at)
    }

    /// Hands on the disables held since before `time`.
    mutating func flush<S: AuditEventSink>(before time: Int64, _ sink: S) {
        while let i = held.firstIndex(where: { $0.at.time < time }) {
            let h = held.remove(at: i)
            sink.observe(h.event, at: h.at)
        }
        holding = !held.isEmpty
    }

    private mutating func flush<S: AuditEventSink>(adapter: UInt16, _ sink: S) {
        while let i = held.firstIndex(where: { $0.adapter == adapter }) {
            let h = held.remove(at: i)
            sink.observe(h.event, at: h.at)
        }
        holding = !held.isEmpty
    }
}
