import Decoders
import Wire

/// A central that keeps scanning once it has connected wastes radio time and slows the connection
/// (the controller interleaves scan windows with connection events).
struct BLE102ScanNotStopped: PerScanRule {
    static let info = RuleInfo.ble102

    /// A scan that is on, and the connections it is judged for.
    struct Open {
        var scan: Scan
        /// Connections this host initiated while the scan ran, not yet judged: when, and their numbers.
        var pending: [(FrameRef, Int)] = []
        /// The link of this host's that was up when the scan started (started again while connected).
        var during: (FrameRef, Int)?
    }

    private let graceSetting: Int64
    var scans = AdapterTable<Open>()
    /// Each adapter's links as central that are up, by number, oldest first (at most 64).
    private var links = AdapterTable<[(FrameRef, Int)]>()
    /// When the earliest judgement is due (`.max`: none pending).
    private var nextDeadline = Int64.max
    /// The emptied `pending` of the last scan judged, for the next one's (`recycle`).
    private var sparePending: [(FrameRef, Int)] = []

    init(settings: RuleSettings) { graceSetting = settings.duration("grace") }

    static let consumes: AuditEventKinds = [.scan, .connectionOwner, .disconnected]
    static let checksTime = true

    var nextTick: Int64 { nextDeadline }

    mutating func tick(at frame: FrameRef, emit: RuleContext) {
        check(now: frame, emit: emit)
    }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: RuleContext) {
        if scan(event, at: frame, emit: emit) { return }
        switch event {
        case .connectionOwner(let c, let origin):
            guard c.isCentral == true, c.isLE,
                  !(links[c.adapter]?.contains { $0.1 == c.id } ?? false) else { return }
            links.update(c.adapter, default: []) { l in
                if l.count == 64 { l.removeFirst() }
                l.append((frame, c.id))
            }
            let added = scans.update(c.adapter) { s -> Bool in
                // Found by an earlier scan that was stopped: the one running is not the app's,
                // unless both are the app's own (it restarted its scan just before connecting).
                if let n = origin.foundIn, n != s.scan.number, !(origin.owner.kind == .app && s.scan.owner.kind == .app) {
                    return false
                }
                guard s.pending.count < 64 else { return false }
                s.pending.append((frame, c.id))
                return true
            }
            if added == true { nextDeadline = min(nextDeadline, frame.time &+ graceSetting) }
        case .disconnected(let c, _):
            links.update(c.adapter) { $0.removeAll { $0.1 == c.id } }
            scans.update(c.adapter) { s in
                s.pending.removeAll { $0.1 == c.id }
                if s.during?.1 == c.id { s.during = nil }
            }
        default: break
        }
    }

    /// Started while a link this host made is up: judged once the grace period has passed with
    /// both still on. A scan started after the link closed is a new scan (BLE103's).
    mutating func start(_ s: Scan, at frame: FrameRef) -> Open? {
        let during = links[s.adapter]?.last
        if during != nil { nextDeadline = min(nextDeadline, frame.time &+ graceSetting) }
        var open = Open(scan: s, during: during)
        open.pending.takeRoom(of: &sparePending)
        return open
    }

    /// The list of connections of a scan judged serves the next scan's.
    mutating func recycle(_ state: consuming Open) { sparePending.takeRoom(of: &state.pending) }

    /// A scan that stopped was judged as it ran (`check`); one still on at the end of the capture
    /// is judged for each connection made during it.
    func close(_ s: Open, adapter: UInt16, _ ended: ScanEnd, emit: RuleContext) {
        guard case .captureEnded(let frame) = ended else { return }
        for (connected, id) in s.pending {
            guard let c = emit.connection(id) else { continue }
            let end = frame ?? connected
            emit(finding("""
                scanning never disabled before the capture ended, although this host connected to \
                \(peer: c.peer) (\(seconds: end.time &- connected.time) before the end)
                """,
                         subject: .connection(c), evidence: [s.scan.start, connected], decisive: connected, scan: s.scan))
        }
    }

    /// Judges what is due: connections whose grace period passed while scanning stayed on, and
    /// scans started while connected that stayed on past it.
    private mutating func check(now: FrameRef, emit: RuleContext) {
        let grace = graceSetting
        var next = Int64.max
        // By index: iterating `entries` would hold the table's lists, and each update would copy them.
        for i in scans.keys.indices {
            let adapter = scans.keys[i], s = scans.values[i]
            var kept: [(FrameRef, Int)] = []
            for (connected, id) in s.pending {
                guard now.time &- connected.time > grace else {
                    kept.append((connected, id))
                    next = min(next, connected.time &+ grace)
                    continue
                }
                guard let c = emit.connection(id) else { continue }
                emit(finding("""
                    scanning still enabled \(seconds: now.time &- connected.time) after this host connected to \
                    \(peer: c.peer) (scan started \(seconds: connected.time &- s.scan.start.time) before)
                    """,
                             subject: .connection(c), evidence: [s.scan.start, connected, now], decisive: now, scan: s.scan))
            }
            var during = s.during
            if let (connected, id) = during {
                if now.time &- s.scan.start.time > grace, let c = emit.connection(id) {
                    emit(finding("""
                        scanning started again \(seconds: s.scan.start.time &- connected.time) after this host connected to \
                        \(peer: c.peer) and kept on while connected (still on \
                        \(seconds: now.time &- s.scan.start.time) later)
                        """,
                                 subject: .connection(c), evidence: [connected, s.scan.start, now], decisive: s.scan.start,
                                 scan: s.scan))
                    during = nil
                } else {
                    next = min(next, s.scan.start.time &+ grace)
                }
            }
            scans.update(adapter) { $0.pending = kept; $0.during = during }
        }
        nextDeadline = next
    }

    mutating func finish(at frame: FrameRef?, emit: RuleContext) {
        if let f = frame { check(now: f, emit: emit) }
        closeAll(at: frame, emit: emit)
        links.removeAll()
    }
}
