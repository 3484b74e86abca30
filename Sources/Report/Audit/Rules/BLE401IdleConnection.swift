import Decoders

/// An open connection that carries nothing still costs both sides a radio event every interval,
/// and keeps the peripheral from advertising to others.
struct BLE401IdleConnection: PerConnectionRule {
    static let info = RuleInfo.ble401

    struct State: ReusableState {
        var lastData: FrameRef
        var gap: (FrameRef, FrameRef)?
        var subscribed: Set<UInt16> = []
        var unsubscribed: FrameRef?
        var unsubscribeFlagged = false
        /// A handle never discovered that got a 2-octet write of 0x0001/0x0002: a subscription
        /// made from a cached database, once a notification or indication follows.
        var cachedCCCD: UInt16?

        mutating func adopt(_ old: inout State) { subscribed.takeRoom(of: &old.subscribed) }
    }

    private let idleSetting: Int64
    private let afterUnsubscribeSetting: Int64
    var states = ConnectionTable<State>(capacity: 4096)
    /// When the earliest unsubscription still waiting for its disconnect overstays (`.max` when
    /// none waits): until then a tick has nothing to check.
    private var nextDeadline = Int64.max

    init(settings: RuleSettings) {
        idleSetting = settings.duration("idle")
        afterUnsubscribeSetting = settings.duration("after-unsubscribe")
    }

    static let consumes: AuditEventKinds = [.connected, .att, .linkData, .disconnectCommand, .disconnected]
    static let checksTime = true

    var nextTick: Int64 { nextDeadline }

    mutating func tick(at frame: FrameRef, emit: RuleContext) {
        if frame.time > nextDeadline { checkUnsubscribed(now: frame, emit: emit) }
    }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: RuleContext) {
        switch event {
        case .connected(let c):
            // LE links the host holds as central; a BR/EDR link serves profiles the app does not hold.
            guard c.isCentral != false, c.isLE else { return }
            states[c.id] = states.renewed(State(lastData: frame))
        case .disconnectCommand(let adapter, let handle, _):
            guard let id = states.newest(where: { emit.connection($0).map { $0.adapter == adapter && $0.handle == handle } ?? false }),
                  let c = emit.connection(id), let s = states.removeValue(forKey: id) else { return }
            close(s, of: c, .disconnected(frame), emit: emit)
            recycle(consume s)
        case .disconnected(let c, _):
            disconnected(c, at: frame, emit: emit)
        default: break
        }
    }

    mutating func observeLinkData(on c: Connection, at frame: FrameRef, emit: RuleContext) { data(c, frame) }

    mutating func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef,
                             emit: RuleContext) {
        data(c, frame, notified: !a.isCCCD && a.origin == .remote && (a.kind == .notification || a.kind == .indication))
        if !a.isCCCD, a.origin == .local, a.opcode == .writeRequest, a.cccdValue != nil, let h = a.handle {
            states.modify(c.id) { $0.cachedCCCD = h }
        }
        guard a.origin == .local, a.isCCCD, let v = a.cccdValue, let h = a.handle,
              a.opcode == .writeRequest || a.opcode == .writeCommand else { return }
        let waits = states.modify(c.id) { s -> Bool in
            if v & 0x3 != 0 {
                if s.subscribed.count < 256 { s.subscribed.insert(h) }
                s.unsubscribed = nil
                s.unsubscribeFlagged = false
            } else if s.subscribed.remove(h) != nil, s.subscribed.isEmpty, s.unsubscribed == nil {
                s.unsubscribed = frame
                return true
            }
            return false
        }
        if waits == true { nextDeadline = min(nextDeadline, frame.time &+ afterUnsubscribeSetting) }
    }

    mutating func finish(at frame: FrameRef?, emit: RuleContext) {
        if let f = frame, f.time > nextDeadline { checkUnsubscribed(now: f, emit: emit) }
        closeAll(at: frame, emit: emit)
    }

    mutating func close(_ s: State, of c: Connection, _ end: ConnectionEnd, emit: RuleContext) {
        var s = s
        switch end {
        case .disconnected(let frame):
            if s.unsubscribed != nil && !s.unsubscribeFlagged { judgeUnsubscribed(&s, of: c, now: frame, emit: emit) }
            gapEnds(&s, at: frame)
            reportGap(s, of: c, stillOpen: false, emit: emit)
        case .captureEnded(let frame):
            // A sniffer that stopped seeing the link lost it (or it ended unseen): it was open up to
            // its last packet, not to the end of the capture.
            if c.overTheAir, let f = frame, f.time &- c.lastActivity > Self.lostAfter(c) {
                gapEnds(&s, at: FrameRef(number: s.lastData.number, time: c.lastActivity))
                reportGap(s, of: c, stillOpen: false, emit: emit)
                return
            }
            if let f = frame { gapEnds(&s, at: f) }
            reportGap(s, of: c, stillOpen: true, emit: emit)
        }
    }

    /// The link's supervision timeout (10 ms units), or 6 s when the capture does not show it.
    static func lostAfter(_ c: Connection) -> Int64 {
        Int64(c.supervisionTimeout ?? 600) * 10_000_000
    }

    /// Data on the link. `notified`: a notification or indication, which confirms a cached CCCD
    /// write (`cachedCCCD`); taken in the same update, one table lookup a PDU.
    @inline(__always)
    private mutating func data(_ c: Connection, _ frame: FrameRef, notified: Bool = false) {
        let counts = c.isCentral != false && c.isLE
        // Only links seen opening: a handle that appears with data alone (a capture that starts
        // mid-connection, a controller's vendor channel) has no known start.
        guard counts || notified else { return }
        let idle = idleSetting
        states.modify(c.id) { s in
            if counts {
                Self.gapEnds(&s, at: frame, idle: idle)
                s.lastData = frame
            }
            if notified, let h = s.cachedCCCD {
                if s.subscribed.count < 256 { s.subscribed.insert(h) }
                s.cachedCCCD = nil
            }
        }
    }

    /// Keeps the longest gap with no data while no notification was on.
    private func gapEnds(_ s: inout State, at frame: FrameRef) {
        Self.gapEnds(&s, at: frame, idle: idleSetting)
    }

    @inline(__always)
    private static func gapEnds(_ s: inout State, at frame: FrameRef, idle: Int64) {
        let gap = frame.time &- s.lastData.time
        guard s.subscribed.isEmpty, gap > idle else { return }
        if let g = s.gap, g.1.time &- g.0.time >= gap { return }
        s.gap = (s.lastData, frame)
    }

    private func reportGap(_ s: State, of c: Connection, stillOpen: Bool, emit: RuleContext) {
        guard let (from, to) = s.gap else { return }
        // A sniffed link whose data stopped when its encryption started is unreadable, not idle:
        // without its key nothing after LL_START_ENC can be seen (with it, data goes on).
        if c.overTheAir, c.encrypted, let e = c.encryptedFrame, from.number <= e { return }
        emit(finding("""
            no ACL data (ATT, SMP, L2CAP) for \(seconds: to.time &- from.time) with no notifications active\
            \(stillOpen ? " (still connected at the end of the capture)" : "")
            """,
                     subject: .connection(c), evidence: [from, to], decisive: to, detail: "idle"))
    }

    private mutating func checkUnsubscribed(now: FrameRef, emit: RuleContext) {
        nextDeadline = .max
        for id in states.ids {
            guard var s = states[id], let u = s.unsubscribed, !s.unsubscribeFlagged, let c = emit.connection(id) else { continue }
            if judgeUnsubscribed(&s, of: c, now: now, emit: emit) {
                states[id] = s
            } else {
                nextDeadline = min(nextDeadline, u.time &+ afterUnsubscribeSetting)
            }
        }
    }

    @discardableResult
    private func judgeUnsubscribed(_ s: inout State, of c: Connection, now: FrameRef, emit: RuleContext) -> Bool {
        guard let u = s.unsubscribed, now.time &- u.time > afterUnsubscribeSetting else { return false }
        s.unsubscribeFlagged = true
        emit(finding("""
            all notifications switched off (CCCD written 0x0000) and no disconnect within \
            \(seconds: afterUnsubscribeSetting) (still connected \(seconds: now.time &- u.time) later)
            """,
                     subject: .connection(c), evidence: [u, now], decisive: now, detail: "unsubscribed"))
        return true
    }
}
