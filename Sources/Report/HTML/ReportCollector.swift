import Decoders
import Wire

/// How much the report keeps: fixed sizes, so memory stays flat whatever the capture's length.
public struct ReportLimits: Sendable {
    /// Time bins of the capture-wide timeline rows.
    public var timelineBins = 600
    /// Time bins of each connection's ATT marks.
    public var connectionBins = 160
    /// Time bins of each device's RSSI series.
    public var rssiBins = 120
    /// Devices and connections tracked in detail; later ones are only counted.
    public var maxDevices = 2000
    /// Advertisers the dissector summarises in full (`Advertisers.maxTracked`); later ones are counted.
    public var maxAdvertisers = Advertisers.defaultMaxTracked
    public var maxConnections = 2000
    /// Round-trip times kept per connection for the median and 95th percentile.
    public var rttSamples = 512
    /// Connection parameter updates kept per connection.
    public var maxUpdates = 64

    public init() {}
}

/// Everything the HTML page shows of one capture, gathered in one pass over its decoded frames
/// and audit events. Per-frame work is a few counters and a bin update; strings are made only
/// when the page is rendered.
public final class ReportCollector {
    public let path: String
    public let limits: ReportLimits

    // Capture-wide.
    public private(set) var frames = 0
    public private(set) var malformedFrames = 0
    var firstTime: Int64? { captureStart.time }
    var captureStart = CaptureStart()
    var lastTime: Int64 = 0
    var adapters: [UInt16] = []
    /// Frames sniffed over the air (link-layer packets) and frames from an HCI log.
    var airFrames = 0, hostFrames = 0
    var frameBins: TimeBins<Int>?
    var reportBins: TimeBins<Int>?
    var scanBins: TimeBins<Int64>?
    var advertisingBins: TimeBins<Int64>?
    /// Open scanning/advertising periods by adapter: when they started.
    var scanOpen: [UInt16: Int64] = [:]
    var advertisingOpen: [UInt16: Int64] = [:]
    var scanPeriods = 0
    var advertisingPeriods = 0
    var advertisingReports = 0

    // Devices and connections.
    var devices: [BDAddr: DeviceTrack] = [:]
    var deviceOrder: [BDAddr] = []
    /// Reports from advertisers past `maxDevices`, and every advertiser the dissector saw.
    var reportsNotTracked = 0
    var advertisersSeen = 0
    var connections: [Int: ConnectionTrack] = [:]
    var connectionOrder: [Int] = []
    var connectionsNotTracked = 0
    /// Advertising and scan response data this host set, with the frame.
    var hostAdvertisingData: (data: [UInt8], frame: Int, legacy: Bool)?
    var hostScanResponse: (data: [UInt8], frame: Int, legacy: Bool)?

    // Set by `finish`.
    public var findings: [Finding] { outcome.findings }
    /// The audit as a whole: findings, platform behaviour, bystanders, the platform assumed.
    public private(set) var outcome = AuditOutcome()
    /// Each LE connection's throughput against its limits and its set-up, by connection number.
    public var links: [Int: LinkSummary] = [:]
    public private(set) var error: String?
    var summaries: [BDAddr: DeviceSummary] = [:]
    var localDatabase: GATTDatabase?
    var finished = false
    /// False when the collector saw findings only (an audit report without the frames).
    public private(set) var hasFrames = true

    public init(path: String, limits: ReportLimits = ReportLimits()) {
        self.path = path
        self.limits = limits
    }

    /// A report of findings only, for `audit --format html`.
    public convenience init(audit: CaptureAudit) {
        self.init(path: audit.path)
        hasFrames = false
        let times = audit.findings.flatMap { $0.evidence.map(\.time) + [$0.decisive.time] }
        if let lo = times.min(), let hi = times.max() {
            captureStart = CaptureStart(time: lo)
            start(lo)
            lastTime = hi
        }
        finish(dissector: nil, outcome: audit.outcome, error: audit.error)
    }

    /// Sets the time bins' origin (again, when leading notes turn out not to be the start: the
    /// bins then begin empty at the traffic).
    private func start(_ t: Int64) {
        lastTime = t
        frameBins = TimeBins(origin: t, count: limits.timelineBins)
        reportBins = TimeBins(origin: t, count: limits.timelineBins)
        scanBins = TimeBins(origin: t, count: limits.timelineBins)
        advertisingBins = TimeBins(origin: t, count: limits.timelineBins)
    }

    // MARK: Frames

    /// Feeds one decoded frame (before its audit events).
    public func add(_ d: Decoded) {
        let p = d.packet
        if captureStart.see(p) { start(p.timestamp) }
        frames &+= 1
        if d.isMalformed { malformedFrames &+= 1 }
        if p.timestamp > lastTime { lastTime = p.timestamp }
        if case .linkLayer = p.kind { airFrames &+= 1 } else {
            hostFrames &+= 1
            if adapters.count < 64, !adapters.contains(p.adapter) { adapters.append(p.adapter) }
        }
        frameBins?.update(at: p.timestamp) { $0 &+= 1 }
        guard let c = d.connection, let t = track(c, at: p) else { return }
        if p.timestamp > t.lastTime { t.lastTime = p.timestamp }
        // LE Connection Update Complete: the dissector has applied the new parameters.
        if case .leConnectionUpdateComplete(let e)? = d.event, e.status == 0,
           let i = c.interval, let l = c.latency, let s = c.supervisionTimeout, t.updates.count < limits.maxUpdates {
            t.updates.append(ParameterUpdate(frame: p.number, time: p.timestamp, interval: i, latency: l, timeout: s))
        }
    }

    private func track(_ c: Connection, at p: Packet) -> ConnectionTrack? {
        if let t = connections[c.id] { return t }
        guard connections.count < limits.maxConnections else {
            connectionsNotTracked &+= 1
            return nil
        }
        let t = ConnectionTrack(c, time: c.createdTime ?? p.timestamp, frame: c.createdFrame ?? p.number,
                                bins: limits.connectionBins, rttSamples: limits.rttSamples)
        connections[c.id] = t
        connectionOrder.append(c.id)
        return t
    }

    // MARK: Audit events

    /// Feeds one audit event of the frame last given to `add`.
    public func observe(_ event: AuditEvent, at f: FrameRef) {
        switch event {
        case .scanStarted(let s):
            period(&scanOpen, &scanBins, adapter: s.adapter, on: true, at: f.time, count: &scanPeriods)
        case .scanStopped(let s):
            period(&scanOpen, &scanBins, adapter: s.adapter, on: false, at: f.time, count: &scanPeriods)
        case .advertisingStarted(let a):
            period(&advertisingOpen, &advertisingBins, adapter: a.adapter, on: true, at: f.time, count: &advertisingPeriods)
        case .advertisingStopped(let a):
            period(&advertisingOpen, &advertisingBins, adapter: a.adapter, on: false, at: f.time, count: &advertisingPeriods)
        case .advertisingData(let o):
            if let r = o.report, let address = o.key.address {
                advertisingReports &+= 1
                reportBins?.update(at: f.time) { $0 &+= 1 }
                device(address, r.addressType, f)?.report(rssi: r.rssi, scanResponse: o.scanResponse, at: f)
            }
            // The page keeps its own copy: the event's bytes are a slice of the frame.
            let kept = (Array(o.data), f.number, o.legacy)
            if o.key.host {
                if o.scanResponse { hostScanResponse = kept } else { hostAdvertisingData = kept }
            } else if let a = o.key.address, let d = devices[a] {
                if o.scanResponse { d.scanResponse = kept } else { d.advertisingData = kept }
            }
        case .connected(let c):
            if let t = connections[c.id] {
                t.start = f.time
                t.startFrame = f.number
            }
        case .disconnected(let c, let reason):
            if let t = connections[c.id] {
                t.end = f.time
                t.endFrame = f.number
                t.endReason = reason
            }
        case .encryptionChanged(let c, let on):
            if let t = connections[c.id], on, t.encryptedAt == nil { t.encryptedAt = (f.number, f.time) }
        case .att(let c, let o):
            connections[c.id]?.att(o, at: f)
        case .createConnection, .disconnectCommand, .pairing, .pairingDebugKey, .advertisingParameters, .linkData, .platform, .connectionOwner,
             .discovery, .scanAtEnd:
            break
        }
    }

    private func period(_ open: inout [UInt16: Int64], _ bins: inout TimeBins<Int64>?, adapter: UInt16, on: Bool,
                        at t: Int64, count: inout Int) {
        if on {
            if open[adapter] == nil {
                open[adapter] = t
                count &+= 1
            }
        } else if let s = open.removeValue(forKey: adapter) {
            bins?.cover(from: s, to: t)
        }
    }

    private func device(_ a: BDAddr, _ type: UInt8, _ f: FrameRef) -> DeviceTrack? {
        if let d = devices[a] { return d }
        guard devices.count < limits.maxDevices else {
            reportsNotTracked &+= 1
            return nil
        }
        let d = DeviceTrack(address: a, addressType: type, at: f, rssiBins: limits.rssiBins)
        devices[a] = d
        deviceOrder.append(a)
        return d
    }

    // MARK: End

    /// Ends the capture: closes open periods and takes what the dissector rebuilt (device
    /// summaries, GATT databases) and the audit's findings.
    public func finish(dissector: Dissector?, outcome: AuditOutcome, error: String? = nil) {
        guard !finished else { return }
        finished = true
        self.outcome = outcome
        self.error = error
        for (_, s) in scanOpen { scanBins?.cover(from: s, to: lastTime) }
        for (_, s) in advertisingOpen { advertisingBins?.cover(from: s, to: lastTime) }
        scanOpen = [:]
        advertisingOpen = [:]
        guard let dissector else { return }
        if let adv = dissector.advertisers {
            advertisersSeen = adv.totalCount
            for s in adv.devices where devices[s.address] != nil { summaries[s.address] = s }
        }
        var byKey: [GATTServer: GATTDatabase] = [:]
        for (k, db) in dissector.gatt.databases where !db.isEmpty {
            byKey[k] = db
            if k.peer == nil, localDatabase == nil { localDatabase = db }
        }
        for t in connections.values { t.database = byKey[.peer(t.connection.peerKey)] }
    }

    // MARK: What the page reads

    /// Capture length in nanoseconds (first to last frame).
    public var duration: Int64 {
        guard let f = firstTime else { return 0 }
        return max(0, lastTime.subtractingReportingOverflow(f).overflow ? 0 : lastTime &- f)
    }

    public var deviceCount: Int { max(devices.count, advertisersSeen) }
    var devicesNotTracked: Int { deviceCount - devices.count }
    public var connectionCount: Int { connections.count &+ connectionsNotTracked }
    var trackedDevices: [DeviceTrack] { deviceOrder.compactMap { devices[$0] } }
    var trackedConnections: [ConnectionTrack] { connectionOrder.compactMap { connections[$0] } }
}

/// One connection parameter update (LE Connection Update Complete).
struct ParameterUpdate {
    var frame: Int
    var time: Int64
    var interval: UInt16
    var latency: UInt16
    var timeout: UInt16
}

/// What the page shows of one connection beyond the dissector's `Connection`.
final class ConnectionTrack {
    let connection: Connection
    var start: Int64
    var startFrame: Int
    var end: Int64?
    var endFrame: Int?
    var endReason: UInt8?
    var lastTime: Int64
    var encryptedAt: (frame: Int, time: Int64)?
    var updates: [ParameterUpdate] = []
    var marks: TimeBins<ATTMarks>
    var totals = ATTMarks()
    var responses = 0
    var mtuExchanges = 0
    var rtt: Reservoir
    /// ATT value bytes by sender (local: this host), and when ATT traffic started and ended.
    var bytesLocal = 0
    var bytesRemote = 0
    var pdusLocal = 0
    var pdusRemote = 0
    var firstATT: Int64?
    var lastATT: Int64 = 0
    var database: GATTDatabase?

    init(_ c: Connection, time: Int64, frame: Int, bins: Int, rttSamples: Int) {
        connection = c
        start = time
        startFrame = frame
        lastTime = time
        marks = TimeBins(origin: time, count: bins, width: 100_000)
        rtt = Reservoir(capacity: rttSamples)
    }

    func att(_ o: ATTObservation, at f: FrameRef) {
        if firstATT == nil { firstATT = f.time }
        if f.time > lastATT { lastATT = f.time }
        if o.origin == .local {
            pdusLocal &+= 1
            bytesLocal &+= o.valueLength
        } else {
            pdusRemote &+= 1
            bytesRemote &+= o.valueLength
        }
        var m = ATTMarks()
        switch o.kind {
        case .request, .command, .unknown:
            switch ATTActivity.of(opcode: o.opcode, type: o.attributeType) {
            case .discovery: m.discovery = 1
            case .read: m.reads = 1
            case .write: m.writes = 1
            case .mtu: mtuExchanges &+= 1
            case .other: break
            }
        case .notification, .indication:
            m.notifications = 1
        case .response:
            responses &+= 1
            if let a = o.answers {
                let (d, overflow) = f.time.subtractingReportingOverflow(a.time)
                if !overflow, d >= 0 { rtt.add(d) }
            }
        case .confirmation:
            break
        }
        guard m.total > 0 else { return }
        totals.merge(m)
        marks.update(at: f.time) { $0.merge(m) }
    }

    /// When the connection ended, or the last frame seen of it.
    var endOrLast: Int64 { end ?? lastTime }
}

/// What an ATT request or command does, for the timeline marks.
enum ATTActivity {
    case discovery, read, write, mtu, other

    static func of(opcode: ATTOpcode, type: BluetoothUUID?) -> ATTActivity {
        switch opcode {
        case .exchangeMTURequest: return .mtu
        case .findInformationRequest, .findByTypeValueRequest, .readByGroupTypeRequest: return .discovery
        case .readByTypeRequest:  // discovery when it asks for declarations (include, characteristic)
            if let u = type?.uuid16, u == 0x2802 || u == 0x2803 { return .discovery }
            return .read
        case .readRequest, .readBlobRequest, .readMultipleRequest, .readMultipleVariableRequest: return .read
        case .writeRequest, .prepareWriteRequest, .executeWriteRequest, .writeCommand, .signedWriteCommand: return .write
        default: return .other
        }
    }
}

/// What the page shows of one advertiser: its RSSI series, interval histogram and last data.
final class DeviceTrack {
    let address: BDAddr
    let addressType: UInt8
    var activity: AdvertiserActivity
    var rssi: TimeBins<RSSIBin>
    var gaps = [Int](repeating: 0, count: DeviceTrack.gapEdges.count + 1)
    var advertisingData: (data: [UInt8], frame: Int, legacy: Bool)?
    var scanResponse: (data: [UInt8], frame: Int, legacy: Bool)?

    /// Upper edges of the advertising interval histogram's buckets, in milliseconds; the last
    /// bucket holds everything above.
    static let gapEdges: [Int64] = [20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 1500, 2000, 5000, 10000]

    init(address: BDAddr, addressType: UInt8, at f: FrameRef, rssiBins: Int) {
        self.address = address
        self.addressType = addressType
        activity = AdvertiserActivity(frame: f.number, time: f.time)
        rssi = TimeBins(origin: f.time, count: rssiBins, width: 10_000_000)
    }

    func report(rssi v: Int8?, scanResponse: Bool, at f: FrameRef) {
        if let v { rssi.update(at: f.time) { $0.add(v) } }
        // Between advertising events, not between copies of one (`AdvertisingEventClock`).
        if let gap = activity.report(frame: f.number, time: f.time, scanResponse: scanResponse) {
            let ms = gap / 1_000_000
            let i = DeviceTrack.gapEdges.firstIndex { ms < $0 } ?? DeviceTrack.gapEdges.count
            gaps[i] &+= 1
        }
    }
}
