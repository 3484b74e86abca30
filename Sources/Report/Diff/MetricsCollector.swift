import Decoders
import Wire

/// Collects `CaptureMetrics` in the audit's pass: it takes the feed's events (as the auditor does,
/// passing each on to it) and, through `frame(_:)`, the few HCI facts the feed does not carry
/// (PHY and data length updates, L2CAP lengths). Memory is bounded by the caps.
public final class MetricsCollector: AuditEventSink {
    /// Devices under test tracked; later ones are counted in `devicesDropped`.
    public static let maxDevices = 256
    /// Characteristics tracked per device; later ones count in the device's totals only.
    public static let maxCharacteristics = 1024
    /// Connections open at once that are followed; the dissector caps them too.
    public static let maxOpenConnections = 1024

    private struct Scan {
        var metrics = AdapterMetrics()
        var on: Int64?
        var firstStart: Int64?
    }

    private struct Open {
        let connection: Connection
        let device: String
        let start: Int64
        /// Up to when connection events were counted.
        var mark: Int64
        var discoveryPending = false
        var discoveryEnd: Int64?
        /// The first value carried (a notification, indication, write or read of a value): the
        /// connection is ready for the app's work.
        var ready: Int64?
        var phy: UInt8?
        var dataLength = 27
        /// The characteristic of the last read, for a response that does not name it.
        var lastRead: String?
    }

    private let next: AuditEventSink?
    private var adapters: [UInt16: Scan] = [:]
    private var open: [Int: Open] = [:]
    private var metrics = CaptureMetrics()
    /// Each connection's link facts, for the device's radio charge.
    private let links = LinkCollector()
    private var lastTime: Int64 = 0
    /// L2CAP payload length of the frame being fed (a complete PDU), for byte counts and air time.
    private var l2capLength: Int?

    /// - Parameters:
    ///   - passingTo: the auditor (or any sink) that sees every event after this collector.
    ///   - devices: configured devices under test by address: listed even when never connected.
    public init(passingTo next: AuditEventSink? = nil, devices: [DeviceMatcher] = []) {
        self.next = next
        for case .address(let a) in devices { metrics.devices[a.description] = DeviceMetrics() }
    }

    /// The HCI facts the feed does not turn into events. Call before handing the frame to the feed.
    public func frame(_ d: Decoded) {
        links.frame(d)
        lastTime = d.packet.timestamp
        l2capLength = d.l2cap.map { Int($0.length) }
        switch d.event {
        case .lePHYUpdateComplete(let e)?:
            guard e.status == 0, let id = openID(d.packet.adapter, e.connectionHandle) else { return }
            open[id]?.phy = e.txPHY
            update(open[id]!.device) { $0.txPHY = e.txPHY; $0.rxPHY = e.rxPHY }
        case .leDataLengthChange(let e)?:
            guard let id = openID(d.packet.adapter, e.connectionHandle) else { return }
            open[id]?.dataLength = Int(e.maxTxOctets)
            update(open[id]!.device) { $0.maxTxOctets = e.maxTxOctets; $0.maxRxOctets = e.maxRxOctets }
        default: break
        }
    }

    private func openID(_ adapter: UInt16, _ handle: UInt16) -> Int? {
        open.first { $0.value.connection.adapter == adapter && $0.value.connection.handle == handle & 0x0FFF }?.key
    }

    private func update(_ device: String, _ body: (inout DeviceMetrics) -> Void) {
        if metrics.devices[device] != nil { body(&metrics.devices[device]!) }
    }

    public func observe(_ event: AuditEvent, at frame: FrameRef) {
        record(event, at: frame)
        links.observe(event, at: frame)
        next?.observe(event, at: frame)
    }

    public func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef) {
        links.observeATT(a, on: c, at: frame)
        att(a, c, frame)
        next?.observeATT(a, on: c, at: frame)
    }

    private func record(_ event: AuditEvent, at frame: FrameRef) {
        let t = frame.time
        switch event {
        case .scanStarted(let scan):
            var s = adapters[scan.adapter] ?? Scan()
            if s.on == nil {
                s.on = t
                s.metrics.scans += 1
                s.metrics.window = scan.parameters?.window
                s.metrics.interval = scan.parameters?.interval
                if s.firstStart == nil { s.firstStart = t }
            }
            s.metrics.filterDuplicates = scan.filterDuplicates
            adapters[scan.adapter] = s
        case .scanStopped(let scan):
            if var s = adapters[scan.adapter], let since = s.on {
                close(&s, at: t, since: since)
                adapters[scan.adapter] = s
            }
        case .advertisingData(let o) where o.report != nil:
            adapters[o.key.adapter, default: Scan()].metrics.reports += 1
        case .connected(let c):
            connected(c, at: t)
        case .disconnected(let c, _):
            if var o = open.removeValue(forKey: c.id) { closeConnection(&o, at: t) }
        case .encryptionChanged(let c, let on):
            if on, let o = open[c.id] { update(o.device) { $0.encrypted = true } }
        case .pairing(let c, let p):
            guard let o = open[c.id] else { return }
            let how = p.method.rawValue + (p.secureConnections ? ", LE Secure Connections" : ", legacy") + (p.failed ? ", failed" : "")
            update(o.device) { $0.pairing = how }
        case .linkData(let c):
            guard var o = open[c.id] else { return }
            advance(&o, to: t)
            if let n = l2capLength {
                let air = RadioEstimate.l2capTime(n + 4, dataLength: o.dataLength, phy: o.phy, encrypted: c.encrypted)
                update(o.device) { $0.radioTime += air }
            }
            open[c.id] = o
        case .att(let c, let a):
            att(a, c, frame)
        default: break
        }
    }

    private func close(_ s: inout Scan, at t: Int64, since: Int64) {
        let d = max(0, t - since)
        s.metrics.scanTime += d
        s.metrics.scanRadioTime += RadioEstimate.scanTime(d, window: s.metrics.window, interval: s.metrics.interval)
        s.on = nil
    }

    private func connected(_ c: Connection, at t: Int64) {
        if c.isCentral != false, let first = adapters[c.adapter]?.firstStart, adapters[c.adapter]?.metrics.timeToConnect == nil {
            adapters[c.adapter]!.metrics.timeToConnect = t - first
        }
        guard let peer = c.peer, open.count < Self.maxOpenConnections else { return }
        let key = peer.description
        if metrics.devices[key] == nil {
            guard metrics.devices.count < Self.maxDevices else {
                metrics.devicesDropped += 1
                return
            }
            metrics.devices[key] = DeviceMetrics()
        }
        update(key) { $0.connections += 1 }
        open[c.id] = Open(connection: c, device: key, start: t, mark: t)
    }

    /// Counts the connection events from the last mark to `t` at the interval now in force.
    private func advance(_ o: inout Open, to t: Int64) {
        guard t > o.mark else { return }
        let interval = Int64(o.connection.interval ?? 24) * 1_250_000
        let events = Double(t - o.mark) / Double(max(interval, 1))
        let air = Int64(events * Double(RadioEstimate.emptyEvent(phy: o.phy)))
        o.mark = t
        update(o.device) {
            $0.connectionEvents += events
            $0.radioTime += air
        }
    }

    private func closeConnection(_ o: inout Open, at t: Int64) {
        advance(&o, to: t)
        let c = o.connection
        let end = o.discoveryEnd
        update(o.device) {
            $0.timeConnected += max(0, t - o.start)
            if let end { $0.discoveryTime += max(0, end - o.start) }
            if let i = c.interval { $0.interval = i }
            if let l = c.latency { $0.latency = l }
            if let s = c.supervisionTimeout { $0.timeout = s }
            if let m = c.att?.mtu { $0.mtu = max($0.mtu ?? 0, m) }
            if c.encrypted { $0.encrypted = true }
        }
    }

    private static func isDiscovery(_ a: ATTObservation) -> Bool {
        switch a.opcode {
        case .findInformationRequest, .findByTypeValueRequest, .readByGroupTypeRequest: return true
        case .readByTypeRequest: // of characteristic or include declarations
            return a.attributeType == BluetoothUUID(uuid16: 0x2803) || a.attributeType == BluetoothUUID(uuid16: 0x2802)
        default: return false
        }
    }

    private static func key(_ a: ATTObservation) -> String {
        let name: String
        if let u = a.characteristic { name = u.description } else if a.opcode == .readByTypeRequest, let t = a.attributeType {
            name = "by type " + t.description
        } else if let h = a.handle { name = "handle " + Hex.prefixed(h, width: 4) } else { name = "unknown" }
        return a.isCCCD ? name + " CCCD" : name
    }

    private func att(_ a: ATTObservation, _ c: Connection, _ frame: FrameRef) {
        guard var o = open[c.id] else { return }
        let t = frame.time
        advance(&o, to: t)
        let length = l2capLength
        let local = a.origin == .local
        var charKey: String?
        var counts = CharacteristicMetrics()
        if a.kind == .request && local && Self.isDiscovery(a) {
            o.discoveryPending = true
            update(o.device) { $0.discoveryRequests += 1 }
        } else if a.kind == .response && !local && o.discoveryPending {
            o.discoveryPending = false
            o.discoveryEnd = t
        } else if local, a.newRead == true {
            charKey = Self.key(a)
            o.lastRead = charKey
            counts.reads = 1
        } else if local, a.opcode == .writeRequest || a.opcode == .writeCommand || a.opcode == .signedWriteCommand {
            charKey = Self.key(a)
            counts.writes = 1
            counts.bytesOut = a.valueLength
        } else if !local, a.opcode == .handleValueNotification || a.opcode == .handleValueIndication {
            charKey = Self.key(a)
            if a.opcode == .handleValueNotification { counts.notifications = 1 } else { counts.indications = 1 }
            counts.bytesIn = a.valueLength
        } else if !local, a.opcode == .readResponse || a.opcode == .readBlobResponse || (a.opcode == .readByTypeResponse && a.valueLength > 0) {
            charKey = a.characteristic.map { _ in Self.key(a) } ?? o.lastRead
            counts.bytesIn = a.valueLength
        }
        // A read is ready when its value arrives, not when it is asked for.
        if o.ready == nil, charKey != nil, !a.isCCCD, !(local && a.newRead == true) {
            o.ready = t
            let after = t - o.start
            update(o.device) { m in if m.timeToReady == nil { m.timeToReady = after } }
        }
        let rtt: Int64? = a.kind == .response && !local ? a.answers.map { t - $0.time } : nil
        let air = length.map { RadioEstimate.l2capTime($0 + 4, dataLength: o.dataLength, phy: o.phy, encrypted: c.encrypted) } ?? 0
        let mtu = a.mtu
        let handle = a.isCCCD ? nil : a.handle, uuid = a.characteristic?.description
        update(o.device) { d in
            if let n = length { if local { d.bytesOut += n } else { d.bytesIn += n } }
            if let rtt, rtt >= 0 { d.rtt.add(rtt) }
            d.radioTime += air
            d.mtu = max(d.mtu ?? 0, mtu)
            if let h = handle, let u = uuid, d.handleUUIDs.count < Self.maxCharacteristics { d.handleUUIDs[h] = u }
            guard let k = charKey else { return }
            if d.characteristics[k] == nil && d.characteristics.count >= Self.maxCharacteristics {
                d.characteristicsDropped += 1
                d.droppedTotals.add(counts)
            } else {
                d.characteristics[k, default: CharacteristicMetrics()].add(counts)
            }
        }
        open[c.id] = o
    }

    /// Closes what is still open at the capture's last frame (or `end`) and returns the metrics,
    /// with the audit's findings.
    public func finish(at end: Int64? = nil, findings: [Finding] = []) -> CaptureMetrics {
        let t = end ?? lastTime
        for (a, var s) in adapters {
            if let since = s.on { close(&s, at: t, since: since) }
            adapters[a] = s
        }
        for (_, var o) in open.sorted(by: { $0.key < $1.key }) { closeConnection(&o, at: t) }
        open.removeAll()
        // The device's side of each connection's radio charge, and its busiest connection's throughput.
        for l in links.finish(at: FrameRef(number: 0, time: t)) {
            guard let peer = l.peer else { continue }
            if let bps = l.achievedBitsPerSecond { update(peer.description) { $0.throughput = max($0.throughput ?? 0, bps) } }
            guard let e = l.energy(LinkEnergy.diffProfile) else { continue }
            let side = l.central == false ? e.central : e.peripheral
            update(peer.description) { $0.radioCharge += side.nanocoulombs }
        }
        var m = metrics
        for (a, s) in adapters { m.adapters[a] = s.metrics }
        m.findings = findings.map(FindingSummary.init)
        return m
    }
}

extension CharacteristicMetrics {
    mutating func add(_ o: CharacteristicMetrics) {
        reads += o.reads
        writes += o.writes
        notifications += o.notifications
        indications += o.indications
        bytesOut += o.bytesOut
        bytesIn += o.bytesIn
    }
}
