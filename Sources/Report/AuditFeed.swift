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
        switch d.hci {
        case .command(let op, let params):
            if op >= 0xFC00, let g = platform.command(op, frame: number) { sink.observe(.platform(g), at: at) }
            command(op, params, adapter: d.packet.adapter, at, sink)
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

    private func command<S: AuditEventSink>(_ op: UInt16, _ b: Bytes, adapter: UInt16, _ at: FrameRef, _ sink: S) {
        switch op {
        case 0x200C, 0x2042: // LE Set (Extended) Scan Enable: enable, filter duplicates[, duration, period]
            guard let en = b.byte(0), let fd = b.byte(1) else { return }
            restarts.scanEnable(.scanEnable(adapter: adapter, enabled: en != 0, filterDuplicates: fd, extended: op == 0x2042),
                                adapter: adapter, enabled: en != 0, at: at, within: restartGap, sink)
        case 0x200B, 0x2041: // LE Set (Extended) Scan Parameters: a restart with new ones is a new scan
            restarts.parameters(adapter: adapter, Self.digest(b))
        case 0x200D: // LE Create Connection: interval, window, filter policy, peer type, peer address
            guard let policy = b.byte(4), let type = b.byte(5) else { return }
            var r = ByteReader(b.from(6))
            sink.observe(.createConnection(adapter: adapter, peer: policy == 0 ? try? r.address() : nil, peerType: type), at: at)
        case 0x2043, 0x2085: // LE Extended Create Connection v1 / v2 (v2 starts with handle and subevent)
            let o = op == 0x2085 ? 2 : 0
            guard let policy = b.byte(o), let type = b.byte(o + 2) else { return }
            var r = ByteReader(b.from(o + 3))
            sink.observe(.createConnection(adapter: adapter, peer: policy == 0 ? try? r.address() : nil, peerType: type), at: at)
        case 0x0406: // Disconnect: handle, reason
            guard let h = b.le16(0) else { return }
            sink.observe(.disconnectCommand(adapter: adapter, handle: h & 0x0FFF,
                                         peer: dissector.liveConnection(adapter: adapter, handle: h)?.peer), at: at)
        case 0x2008, 0x2009: // LE Set Advertising / Scan Response Data: significant length, 31 octets
            guard let len = b.byte(0) else { return }
            sink.observe(.advertisingData(adapter: adapter, advertiser: nil, data: b.from(1).prefix(Int(len)),
                                       scanResponse: op == 0x2009, legacy: true, sentByHost: true), at: at)
        case 0x2037, 0x2038: // LE Set Extended Advertising / Scan Response Data
            guard let handle = b.byte(0), let len = b.byte(3) else { return }
            sink.observe(.advertisingData(adapter: adapter, advertiser: nil, data: b.from(4).prefix(Int(len)),
                                       scanResponse: op == 0x2038, legacy: legacySets.contains(setKey(adapter, handle)),
                                       sentByHost: true), at: at)
        case 0x200A: // LE Set Advertising Enable
            guard let en = b.byte(0) else { return }
            sink.observe(.advertisingEnable(adapter: adapter, enabled: en != 0), at: at)
        case 0x2039: // LE Set Extended Advertising Enable: enable, number of sets, ...
            guard let en = b.byte(0) else { return }
            sink.observe(.advertisingEnable(adapter: adapter, enabled: en != 0), at: at)
        case 0x2006: // LE Set Advertising Parameters: interval min, interval max (0.625 ms)
            guard let max = b.le16(2) else { return }
            sink.observe(.advertisingParameters(adapter: adapter, intervalMax: UInt32(max)), at: at)
        case 0x2036, 0x207F: // LE Set Extended Advertising Parameters v1/v2: handle, properties, min (3), max (3)
            guard let handle = b.byte(0), let props = b.le16(1), let m0 = b.byte(6), let m1 = b.byte(7), let m2 = b.byte(8) else { return }
            if props & 0x10 != 0 { legacySets.insert(setKey(adapter, handle)) } else { legacySets.remove(setKey(adapter, handle)) }
            sink.observe(.advertisingParameters(adapter: adapter, intervalMax: UInt32(m0) | UInt32(m1) << 8 | UInt32(m2) << 16), at: at)
        default: break
        }
    }

    private func setKey(_ adapter: UInt16, _ handle: UInt8) -> UInt32 { UInt32(adapter) << 8 | UInt32(handle) }

    /// FNV-1a of a command's parameters: tells whether scan parameters changed.
    private static func digest(_ b: Bytes) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for x in b { h = (h ^ UInt64(x)) &* 0x0000_0100_0000_01B3 }
        return h
    }

    // MARK: Events

    private func event<S: AuditEventSink>(_ code: UInt8, _ b: Bytes, _ d: Decoded, _ at: FrameRef, _ sink: S) {
        switch code {
        case 0x03: // Connection Complete (BR/EDR)
            if let c = d.connection, c.createdFrame == d.packet.number { sink.observe(.connected(c), at: at) }
        case 0x3E:
            guard let sub = b.byte(0) else { return }
            if let c = d.connection, c.createdFrame == d.packet.number { sink.observe(.connected(c), at: at) }
            guard AdvertisingReports.isReport(subevent: sub) else { return }
            let adapter = d.packet.adapter
            AdvertisingReports.forEach(subevent: sub, b.from(1)) { r in
                guard r.syncHandle == nil else { return }
                report(r, adapter: adapter, at, sink)
            }
        case 0x05:
            guard b.byte(0) == 0, let c = d.connection, let reason = b.byte(3) else { return }
            _ = reads.removeValue(forKey: c.id)
            sink.observe(.disconnected(c, reason: reason), at: at)
        case 0x08, 0x59:
            guard b.byte(0) == 0, let c = d.connection, let on = b.byte(3) else { return }
            sink.observe(.encryptionChanged(c, on: on != 0), at: at)
        default: break
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
        let kind: ATTObservation.Kind
        switch pdu.kind {
        case .request: kind = .request
        case .response: kind = .response
        case .command, .unknown: kind = .command
        case .notification: kind = .notification
        case .indication: kind = .indication
        case .confirmation: kind = .confirmation
        }
        let a = r.attribute
        let isCCCD = a?.role == .descriptor && a?.uuid == BluetoothUUID(uuid16: 0x2902)
        var cccd: UInt16?
        if isCCCD, kind == .request || kind == .command, let v = pdu.value { cccd = v.le16(0) ?? v.byte(0).map(UInt16.init) }
        let answers = r.request.map { FrameRef(number: $0.frame, time: d.packet.timestamp &- $0.rtt) }
        var o = ATTObservation(
            origin: r.side == .local ? .local : .remote, opcode: pdu.opcode.rawValue, kind: kind,
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
        var parameters: UInt64
    }

    /// Per adapter: the scan parameters last set, the duplicate filter of the scan last enabled,
    /// and the disable held back.
    private var parameters = AdapterTable<UInt64>()
    private var filters = AdapterTable<UInt8>()
    private var held: [Held] = []
    private(set) var holding = false

    mutating func parameters(adapter: UInt16, _ digest: UInt64) { parameters[adapter] = digest }

    mutating func scanEnable<S: AuditEventSink>(_ event: AuditEvent, adapter: UInt16, enabled: Bool, at: FrameRef,
                                               within gap: Int64, _ sink: S) {
        guard case .scanEnable(_, _, let filter, _) = event else { return }
        let params = parameters[adapter] ?? 0
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
