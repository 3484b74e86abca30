import Decoders
import Wire

/// Scanning with duplicate filtering off makes the controller report every advertising packet of
/// every device, waking the host for each: the radio and the host pay for data the app rarely needs.
struct BLE101ScanDuplicatesAllowed: AuditRule {
    static let info = RuleInfo.ble101

    /// One scan with filtering off or periodic, and what it brought in.
    struct Tally {
        var scan: Scan
        var reports = 0
        var perAdvertiser = BoundedMap<BDAddr, Int>(capacity: 10_000)
        var devicesOverflow = 0
        var lastReport: FrameRef?
    }

    static let consumes: AuditEventKinds = [.scan, .advertisingReport]
    private let reportsSetting: Int
    private let withoutDuplicates: Bool
    private var scans = AdapterTable<Tally>()

    init(settings: RuleSettings) {
        reportsSetting = max(2, settings.count("reports"))
        withoutDuplicates = settings.flag("without-duplicates")
    }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: (Finding) -> Void) {
        switch event {
        case .scanStarted(let s):
            if s.filterDuplicates != 1 { scans[s.adapter] = Tally(scan: s) }
        case .scanStopped(let s):
            if let t = scans.removeValue(forKey: s.adapter) { report(t, adapter: s.adapter, end: frame, emit: emit) }
        case .advertisingReport(let adapter, let address, _, _, let scanResponse):
            // A scan response answers this host's scan request: not a duplicate of the advertisement.
            guard !scanResponse else { return }
            // The scan mutated in place.
            scans.update(adapter) { Self.count(&$0, address, frame) }
        default: break
        }
    }

    private static func count(_ s: inout Tally, _ address: BDAddr, _ frame: FrameRef) {
        s.reports += 1
        s.lastReport = frame
        let before = s.perAdvertiser.count
        let n = s.perAdvertiser.update(address, default: 0) { n -> Int in n += 1; return n }
        if before == 10_000 && n == 1 { s.devicesOverflow += 1 }
    }

    mutating func finish(at frame: FrameRef?, emit: (Finding) -> Void) {
        for (adapter, s) in scans.entries {
            report(s, adapter: adapter, end: frame ?? s.lastReport ?? s.scan.start, emit: emit)
        }
        scans.removeAll()
    }

    private func report(_ t: Tally, adapter: UInt16, end: FrameRef, emit: (Finding) -> Void) {
        let s = t.scan
        // Stacks restart scans often (Android every few seconds); one that brought in nothing cost
        // nothing the capture can show.
        guard t.reports > 0 else { return }
        let top = t.perAdvertiser.storage.max(by: { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) })
        // Duplicates arrived only when some advertiser was reported again and again.
        let repeated = (top?.value ?? 0) >= reportsSetting
        guard repeated || withoutDuplicates else { return }
        let devices = t.perAdvertiser.count + t.devicesOverflow
        let command = s.extended ? "LE Set Extended Scan Enable" : "LE Set Scan Enable"
        let filtering = s.filterDuplicates == 2 ? "reset each scan period" : "off"
        var msg: Message = """
            \(plural: t.reports, "advertising report") from \(plural: devices, "device") in \
            \(seconds: end.time &- s.start.time) with duplicate filtering \(filtering) \
            (\(command), filter_duplicates=\(Int(s.filterDuplicates)))
            """
        if let top, top.value > 1 {
            msg += "; up to \(top.value) from \(top.key)"
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
