import Decoders
import Wire

/// The scan parameters in force when a scan started (LE Set Scan Parameters, or the first PHY of
/// LE Set Extended Scan Parameters). Interval and window in units of 0.625 ms.
public struct ScanParameters: Sendable, Equatable {
    public var active: Bool
    public var interval: UInt16
    public var window: UInt16
    public var filterPolicy: UInt8
    /// Whether they came from the extended command (other PHYs are not compared).
    public var extended: Bool

    public init(active: Bool, interval: UInt16, window: UInt16, filterPolicy: UInt8 = 0, extended: Bool = false) {
        self.active = active
        self.interval = interval
        self.window = window
        self.filterPolicy = filterPolicy
        self.extended = extended
    }

    init(_ p: LESetScanParameters) {
        self.init(active: p.scanType == 1, interval: p.scanInterval, window: p.scanWindow, filterPolicy: p.scanningFilterPolicy)
    }

    init?(_ p: LESetExtendedScanParameters) {
        guard let first = p.phys.first else { return nil }
        self.init(active: first.scanType == 1, interval: first.scanInterval, window: first.scanWindow,
                  filterPolicy: p.scanningFilterPolicy, extended: true)
    }

    /// The Linux kernel's passive background scan (interval 60 ms, window 30 ms): it runs for
    /// auto-connect and device monitoring, not for an app's discovery.
    var isLinuxBackgroundScan: Bool { !active && interval == 0x0060 && window == 0x0030 }

    /// "active, 100/100 ms".
    public var summary: String {
        (active ? "active, " : "passive, ") + Say.milliseconds(interval) + "/" + Say.milliseconds(window) + " ms"
    }
}

/// What a scan brought in: its advertising reports and the advertisers they came from. Scan
/// responses answer this host's scan requests and are not counted.
public struct ScanYield: Sendable {
    public var reports = 0
    public var advertisers = 0
    /// The advertiser reported most often (the lowest address of those tied), and how often.
    public var top: (address: BDAddr, reports: Int)?
    public var lastReport: FrameRef?

    /// One more report, from an advertiser with `reports` in this scan now, this one included.
    mutating func add(from address: BDAddr, reports n: Int, at frame: FrameRef) {
        reports &+= 1
        lastReport = frame
        if n == 1 { advertisers &+= 1 }
        if let t = top, n < t.reports || (n == t.reports && address >= t.address) { return }
        top = (address, n)
    }
}

/// One scan: from the LE Set (Extended) Scan Enable that turned it on to the one that turned it
/// off. This is the one definition every consumer (rules, metrics, the HTML report) reads:
/// - a disable followed within the restart gap by an enable with the same parameters, duplicate
///   filter and owner is the same scan going on (Android stops and restarts its scan around
///   connections and resolving-list updates);
/// - an enable while the scan is on with another duplicate filter ends it and starts a new one;
///   with the same filter it is the same scan;
/// - a scan still on at the end of the capture ends there.
public struct Scan: Sendable {
    /// The capture's scans numbered from 1 in the order they started.
    public var number: Int
    public var adapter: UInt16
    public var start: FrameRef
    /// filter_duplicates: 0 off, 1 on, 2 reset each scan period.
    public var filterDuplicates: UInt8
    public var extended: Bool
    public var parameters: ScanParameters?
    public var owner: ActivityOwner
    /// Addresses the scan's filters name (Android's address scan filters): a connection to one of
    /// them is the filter's client's.
    public var addressFilters: [BDAddr] = []
    /// The platform's scan filters were in force (Android's APCF): a client's filtered scan.
    public var filtered = false
    /// What it brought in so far: complete in `scanStopped` and `scanAtEnd`, empty in `scanStarted`.
    public var yield = ScanYield()

    public init(number: Int, adapter: UInt16, start: FrameRef, filterDuplicates: UInt8, extended: Bool = false,
                parameters: ScanParameters? = nil, owner: ActivityOwner = .unknown) {
        self.number = number
        self.adapter = adapter
        self.start = start
        self.filterDuplicates = filterDuplicates
        self.extended = extended
        self.parameters = parameters
        self.owner = owner
    }
}

/// Turns the host's scan commands into scans (`Scan`), with their owner: the scan model of a
/// capture. Holds each disable back for the restart gap, so an immediate restart continues the scan.
struct ScanModel {
    private struct Adapter {
        var parameters: ScanParameters?
        var android = AndroidScanFilters()
        var on: Scan?
        /// A disable not yet handed on, and when.
        var held: FrameRef?
        /// BlueZ's management interface has a discovery running (MGMT Start Discovery and its
        /// kin until Stop Discovery): bluetoothd runs it for a D-Bus client's StartDiscovery.
        var discovery = false
        /// bluetoothd drives this adapter through the management interface.
        var managed = false
    }

    private var adapters = AdapterTable<Adapter>()
    /// Each adapter's scan now, as advertising reports ask for it: its number, whether it is the
    /// app's, and what it brought in so far (given to the scan when it ends).
    private var now = AdapterTable<Current>()
    private struct Current {
        var number: Int
        var app: Bool
        var yield = ScanYield()
    }
    private var count = 0
    private let gap: Int64
    private let configured: [DeviceMatcher]
    /// Some adapter has a disable held back: `flush` has work.
    private(set) var holding = false

    init(restartGap: Int64, configured: [DeviceMatcher]) {
        gap = restartGap
        self.configured = configured
    }

    mutating func parameters(adapter: UInt16, _ p: ScanParameters?) {
        adapters.update(adapter, default: Adapter()) { $0.parameters = p }
    }

    /// BlueZ management commands (MGMT, on the Linux monitor channel): discovery started or stopped.
    mutating func management(adapter: UInt16, opcode: UInt16) {
        adapters.update(adapter, default: Adapter()) { $0.managed = true }
        switch opcode {
        case 0x0023, 0x003A, 0x0041: // Start Discovery, Start Service Discovery, Start Limited Discovery
            adapters.update(adapter, default: Adapter()) { $0.discovery = true }
        case 0x0024: // Stop Discovery
            adapters.update(adapter) { $0.discovery = false }
        default: break
        }
    }

    /// Android's scan filter command (APCF).
    mutating func androidFilter(adapter: UInt16, _ params: Bytes) {
        adapters.update(adapter, default: Adapter()) { $0.android.command(params) }
    }

    /// LE Set (Extended) Scan Enable; returns the scan it started, if it started one.
    @discardableResult
    mutating func enable<S: AuditEventSink>(adapter: UInt16, on: Bool, filterDuplicates: UInt8, extended: Bool,
                                            at frame: FrameRef, _ sink: S) -> Scan? {
        var a = adapters[adapter] ?? Adapter()
        defer { adapters[adapter] = a }
        guard on else {
            if a.on != nil, a.held == nil {
                a.held = frame
                holding = true
            }
            return nil
        }
        let owner = owner(a)
        if let s = a.on {
            let same = s.filterDuplicates == filterDuplicates && s.owner == owner
            if let held = a.held {
                a.held = nil
                if same, s.parameters == a.parameters, frame.time &- held.time <= gap { return nil }
                a.on = nil
                sink.observe(.scanStopped(ended(s)), at: held)
            } else if same {
                return nil
            } else {
                a.on = nil
                sink.observe(.scanStopped(ended(s)), at: frame)
            }
        }
        count += 1
        var s = Scan(number: count, adapter: adapter, start: frame, filterDuplicates: filterDuplicates, extended: extended,
                     parameters: a.parameters, owner: owner)
        s.addressFilters = a.android.addresses
        s.filtered = !a.android.isEmpty
        a.on = s
        now[adapter] = Current(number: s.number, app: owner.kind == .app)
        sink.observe(.scanStarted(s), at: frame)
        return s
    }

    private func owner(_ a: Adapter) -> ActivityOwner {
        if !a.android.isEmpty { return a.android.owner(configured: configured) }
        if a.parameters?.isLinuxBackgroundScan == true {
            return ActivityOwner(.os, "the Linux kernel's passive background scan (60/30 ms), for auto-connect")
        }
        if a.managed, let p = a.parameters, !p.active, p.filterPolicy & 1 == 1 {
            return ActivityOwner(.os, "the Linux kernel's passive scan for devices on its accept list (auto-connect or a pending connect)")
        }
        if a.discovery {
            return ActivityOwner(.app, "BlueZ discovery started through the management interface (a D-Bus client's StartDiscovery)")
        }
        return .unknown
    }

    /// Where the scan on an adapter now is kept, if it has one (a held disable still counts as on).
    /// Looked up once for each advertising report, which then reads and counts it there.
    func slot(adapter: UInt16) -> Int? { now.index(adapter) }

    /// The scan at `slot`: its number and whether it is the app's (no copy of the scan).
    func current(at slot: Int) -> (number: Int, app: Bool) {
        (now.values[slot].number, now.values[slot].app)
    }

    /// An advertising report (not a scan response) in the scan at `slot`, from an advertiser with
    /// `reports` reports in it now (`Advertiser.reportsInScan`).
    mutating func reported(at slot: Int, from address: BDAddr, reports: Int, at frame: FrameRef) {
        now.update(at: slot) { $0.yield.add(from: address, reports: reports, at: frame) }
    }

    /// The scan `s` ends: it is no longer the adapter's now, and takes what it brought in.
    private mutating func ended(_ s: Scan) -> Scan {
        var s = s
        if let c = now.removeValue(forKey: s.adapter) { s.yield = c.yield }
        return s
    }

    /// The end of the capture: the disables held are handed on, then each scan still on, as it
    /// stands (`scanAtEnd`), so what it brought in is known.
    mutating func finish<S: AuditEventSink>(_ sink: S, at frame: FrameRef?) {
        flush(before: .max, sink)
        for (adapter, a) in adapters.entries {
            guard var s = a.on else { continue }
            s.yield = now[adapter]?.yield ?? ScanYield()
            sink.observe(.scanAtEnd(s), at: frame ?? s.start)
        }
    }

    /// Hands on the disables held since before `time`.
    mutating func flush<S: AuditEventSink>(before time: Int64, _ sink: S) {
        guard holding else { return }
        var still = false
        // By index: iterating `entries` would hold the table's lists, and each update would copy them.
        for i in adapters.keys.indices {
            let adapter = adapters.keys[i]
            guard let held = adapters.values[i].held, let s = adapters.values[i].on else { continue }
            if held.time < time {
                adapters.update(adapter) { $0.on = nil; $0.held = nil }
                sink.observe(.scanStopped(ended(s)), at: held)
            } else {
                still = true
            }
        }
        holding = still
    }
}
