import Decoders

/// A scan that runs for minutes without leading to a connection is usually a scan nobody stopped.
struct BLE103ScanLongRunning: PerScanRule {
    static let info = RuleInfo.ble103

    struct Open {
        var scan: Scan
        var attempted = false
    }

    /// Not the reports: a scan still on at the end is judged up to the capture's last event,
    /// which its own start makes known.
    static let consumes: AuditEventKinds = [.scan, .createConnection, .connected]
    private let durationSetting: Int64
    var scans = AdapterTable<Open>()

    init(settings: RuleSettings) { durationSetting = settings.duration("duration") }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: RuleContext) {
        if scan(event, at: frame, emit: emit) { return }
        switch event {
        case .createConnection(let adapter, _, _):
            scans.update(adapter) { $0.attempted = true }
        case .connected(let c) where c.isCentral == true:
            // A connect issued just before the scan started completed during it.
            scans.update(c.adapter) { $0.attempted = true }
        default: break
        }
    }

    func start(_ s: Scan, at frame: FrameRef) -> Open? { Open(scan: s) }

    func close(_ s: Open, adapter: UInt16, _ ended: ScanEnd, emit: RuleContext) {
        let end: FrameRef, stopped: Bool
        switch ended {
        case .stopped(let f): (end, stopped) = (f, true)
        case .captureEnded(let f): (end, stopped) = (f ?? s.scan.start, false)
        }
        let length = end.time &- s.scan.start.time
        guard !s.attempted, length > durationSetting else { return }
        emit(finding("""
            scan enabled for \(seconds: length) with no connection attempt\
            \(stopped ? "" : " (still on at the end of the capture)")
            """,
                     subject: .host(adapter: adapter), evidence: [s.scan.start, end], decisive: end, scan: s.scan))
    }
}
