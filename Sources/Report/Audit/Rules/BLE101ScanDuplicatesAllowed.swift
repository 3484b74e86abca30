import Decoders
import Wire

/// Scanning with duplicate filtering off makes the controller report every advertising packet of
/// every device, waking the host for each: the radio and the host pay for data the app rarely needs.
struct BLE101ScanDuplicatesAllowed: PerScanRule {
    static let info = RuleInfo.ble101

    static let consumes: AuditEventKinds = [.scan]
    private let reportsSetting: Int
    private let withoutDuplicates: Bool
    /// Each scan with filtering off or periodic; what it brought in (`Scan.yield`) is counted by
    /// the scan model and known when it stops or the capture ends.
    var scans = AdapterTable<Scan>()

    init(settings: RuleSettings) {
        reportsSetting = max(2, settings.count("reports"))
        withoutDuplicates = settings.flag("without-duplicates")
    }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: RuleContext) {
        _ = scan(event, at: frame, emit: emit)
    }

    func start(_ s: Scan, at frame: FrameRef) -> Scan? { s.filterDuplicates != 1 ? s : nil }

    func update(_ state: inout Scan, to s: Scan) { state = s }

    func close(_ s: Scan, adapter: UInt16, _ ended: ScanEnd, emit: RuleContext) {
        let t = s.yield
        let end: FrameRef
        switch ended {
        case .stopped(let f): end = f
        case .captureEnded(let f): end = f ?? t.lastReport ?? s.start
        }
        // Stacks restart scans often (Android every few seconds); one that brought in nothing cost
        // nothing the capture can show.
        guard t.reports > 0 else { return }
        // Duplicates arrived only when some advertiser was reported again and again.
        let repeated = (t.top?.reports ?? 0) >= reportsSetting
        guard repeated || withoutDuplicates else { return }
        let command = s.extended ? "LE Set Extended Scan Enable" : "LE Set Scan Enable"
        let filtering = s.filterDuplicates == 2 ? "reset each scan period" : "off"
        var msg: Message = """
            \(plural: t.reports, "advertising report") from \(plural: t.advertisers, "device") in \
            \(seconds: end.time &- s.start.time) with duplicate filtering \(filtering) \
            (\(command), filter_duplicates=\(Int(s.filterDuplicates)))
            """
        if let top = t.top, top.reports > 1 {
            msg += "; up to \(top.reports) from \(top.address)"
        } else {
            msg += "; no advertiser was reported twice"
        }
        var evidence = [s.start]
        if let r = t.lastReport { evidence.append(r) }
        emit(finding(msg, subject: .host(adapter: adapter), evidence: evidence, decisive: s.start,
                     detail: "filter " + String(s.filterDuplicates), severity: s.filterDuplicates == 2 || !repeated ? .note : nil,
                     scan: s))
    }
}
