import Decoders
import Wire

/// Scanning with duplicate filtering off makes the controller report every advertising packet of
/// every device, waking the host for each: the radio and the host pay for data the app rarely needs.
struct BLE101ScanDuplicatesAllowed: PerScanRule {
    static let info = RuleInfo.ble101

    /// One scan with filtering off or periodic, and what it brought in: the advertiser table
    /// (`Advertiser.reportsInScan`) counts each advertiser's reports, the tally keeps the most.
    struct Tally {
        var scan: Scan
        var reports = 0
        var devices = 0
        /// The advertiser reported most often (the lowest address of those tied), and how often.
        var top: (address: BDAddr, reports: Int)?
        var lastReport: FrameRef?
    }

    static let consumes: AuditEventKinds = [.scan, .advertisingData]
    private let reportsSetting: Int
    private let withoutDuplicates: Bool
    var scans = AdapterTable<Tally>()

    init(settings: RuleSettings) {
        reportsSetting = max(2, settings.count("reports"))
        withoutDuplicates = settings.flag("without-duplicates")
    }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: RuleContext) {
        _ = scan(event, at: frame, emit: emit)
    }

    func start(_ s: Scan, at frame: FrameRef) -> Tally? { s.filterDuplicates != 1 ? Tally(scan: s) : nil }

    mutating func observeAdvertisingData(_ o: AdvertisingDataObservation, at frame: FrameRef, emit: RuleContext) {
        // A scan response answers this host's scan request: not a duplicate of the advertisement.
        guard let r = o.report, !o.scanResponse, let address = o.key.address else { return }
        // The scan mutated in place.
        scans.update(o.key.adapter) { s in
            guard r.scan == s.scan.number else { return }
            s.reports += 1
            s.lastReport = frame
            let n = r.reportsInScan
            if n == 1 { s.devices += 1 }
            if let t = s.top, n < t.reports || (n == t.reports && address >= t.address) { return }
            s.top = (address, n)
        }
    }

    func close(_ t: Tally, adapter: UInt16, _ ended: ScanEnd, emit: RuleContext) {
        let s = t.scan
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
            \(plural: t.reports, "advertising report") from \(plural: t.devices, "device") in \
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
