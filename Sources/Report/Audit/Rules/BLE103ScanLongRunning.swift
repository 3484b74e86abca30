import Decoders

/// A scan that runs for minutes without leading to a connection is usually a scan nobody stopped.
struct BLE103ScanLongRunning: AuditRule {
    static let info = RuleInfo(
        id: "BLE103", name: "scan-long-running", severity: .note,
        summary: "One scan kept on for a long time with no connection attempt",
        help: """
            Scan only while the app needs results, and stop the scan when it has them or gives up. A scan \
            that stays on for a long time without any connection attempt drains the battery of the \
            scanning device.
            """,
        guidance: "Core Bluetooth Programming Guide: scan only when you need to",
        options: [RuleOption("duration", .duration, 60_000_000_000, "longest scan without a connection attempt")],
        platforms: PlatformTable(
            apple: .app("stop the scan (stopScan()) when the app has its results or gives up"),
            android: .app("stop the scan (BluetoothLeScanner.stopScan) when the app has its results or gives up"),
            linuxBluez: .app("call org.bluez.Adapter1.StopDiscovery when the app has its results or gives up"),
            embedded: .app("disable the scan (LE Set Scan Enable enable=0) when the results are in, or use a scan duration")))

    struct Open {
        var scan: Scan
        var attempted = false
        var last: FrameRef
    }

    static let consumes: AuditEventKinds = [.scan, .createConnection, .connected, .advertisingReport]
    private let durationSetting: Int64
    private var scans = AdapterTable<Open>()

    init(settings: RuleSettings) { durationSetting = settings.duration("duration") }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: (Finding) -> Void) {
        switch event {
        case .scanStarted(let s):
            scans[s.adapter] = Open(scan: s, last: frame)
        case .scanStopped(let s):
            if let o = scans.removeValue(forKey: s.adapter) { judge(o, adapter: s.adapter, end: frame, stopped: true, emit: emit) }
        case .createConnection(let adapter, _, _):
            scans.update(adapter) { $0.attempted = true }
        case .connected(let c) where c.isCentral == true:
            // A connect issued just before the scan started completed during it.
            scans.update(c.adapter) { $0.attempted = true }
        case .advertisingReport(let adapter, _, _, _, _):
            scans.update(adapter) { $0.last = frame }
        default: break
        }
    }

    mutating func finish(at frame: FrameRef?, emit: (Finding) -> Void) {
        for (adapter, s) in scans.entries {
            judge(s, adapter: adapter, end: frame ?? s.last, stopped: false, emit: emit)
        }
        scans.removeAll()
    }

    private func judge(_ s: Open, adapter: UInt16, end: FrameRef, stopped: Bool, emit: (Finding) -> Void) {
        let length = end.time &- s.scan.start.time
        guard !s.attempted, length > durationSetting else { return }
        emit(finding("""
            scan enabled for \(seconds: length) with no connection attempt\
            \(stopped ? "" : " (still on at the end of the capture)")
            """,
                     subject: .host(adapter: adapter), evidence: [s.scan.start, end], decisive: end, scan: s.scan))
    }
}
