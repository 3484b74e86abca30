import Decoders

/// An open connection that carries nothing still costs both sides a radio event every interval,
/// and keeps the peripheral from advertising to others.
struct BLE401IdleConnection: PerConnectionRule {
    static let info = RuleInfo.ble401

    /// When data last went over the link, and its pauses, are the auditor's (`LinkActivity`): the
    /// rule takes the pauses when its subscriptions change and when the connection ends, and is
    /// not called for each PDU.
    struct State: ReusableState {
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

    static let consumes: AuditEventKinds = [.connected, .att, .disconnectCommand, .disconnected]
    /// Writes (to a CCCD), and notifications and indications (which confirm a CCCD written from a cache).
    static let attOpcodes = ATTOpcodeSet([.writeRequest, .writeCommand]).union(ATTOpcodeSet(kinds: [.notification, .indication]))
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
            states[c.id] = states.renewed(State())
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

    mutating func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef,
                             emit: RuleContext) {
        let idle = idleSetting
        // A notification or indication confirms a CCCD written from a cached database.
        if !a.isCCCD, a.origin == .remote, a.kind == .notification || a.kind == .indication {
            states.modify(c.id) { s in
                guard let h = s.cachedCCCD else { return }
                Self.settle(&s, c.id, emit, idle: idle)
                if s.subscribed.count < 256 { s.subscribed.insert(h) }
                s.cachedCCCD = nil
            }
            return
        }
        if !a.isCCCD, a.origin == .local, a.opcode == .writeRequest, a.cccdValue != nil, let h = a.handle {
            states.modify(c.id) { $0.cachedCCCD = h }
        }
        guard a.origin == .local, a.isCCCD, let v = a.cccdValue, let h = a.handle,
              a.opcode == .writeRequest || a.opcode == .writeCommand else { return }
        let waits = states.modify(c.id) { s -> Bool in
            Self.settle(&s, c.id, emit, idle: idle)
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
        let idle = idleSetting
        Self.settle(&s, c.id, emit, idle: idle)
        // The pause from the last data to the end.
        let last = emit.lastData(c.id)
        func pause(to end: FrameRef) {
            if let last, s.subscribed.isEmpty { Self.consider(&s, last, end, idle: idle) }
        }
        switch end {
        case .disconnected(let frame):
            if s.unsubscribed != nil && !s.unsubscribeFlagged { judgeUnsubscribed(&s, of: c, now: frame, emit: emit) }
            pause(to: frame)
            reportGap(s, of: c, stillOpen: false, emit: emit)
        case .captureEnded(let frame):
            // A sniffer that stopped seeing the link lost it (or it ended unseen): it was open up to
            // its last packet, not to the end of the capture.
            if c.overTheAir, let f = frame, f.time &- c.lastActivity > Self.lostAfter(c) {
                if let last { pause(to: FrameRef(number: last.number, time: c.lastActivity)) }
                reportGap(s, of: c, stillOpen: false, emit: emit)
                return
            }
            if let f = frame { pause(to: f) }
            reportGap(s, of: c, stillOpen: true, emit: emit)
        }
    }

    /// The link's supervision timeout (10 ms units), or 6 s when the capture does not show it.
    static func lostAfter(_ c: Connection) -> Int64 {
        Int64(c.supervisionTimeout ?? 600) * 10_000_000
    }

    /// Judges the longest pause in the link's data since the last call (`LinkActivity.takePause`)
    /// by the subscriptions it was under, which have not changed since: called before they change.
    private static func settle(_ s: inout State, _ id: Int, _ emit: RuleContext, idle: Int64) {
        guard let (from, to) = emit.takePause(id), s.subscribed.isEmpty else { return }
        consider(&s, from, to, idle: idle)
    }

    /// Keeps the longest pause with no data while no notification was on (the first of equal ones).
    private static func consider(_ s: inout State, _ from: FrameRef, _ to: FrameRef, idle: Int64) {
        let gap = to.time &- from.time
        guard gap > idle else { return }
        if let g = s.gap, g.1.time &- g.0.time >= gap { return }
        s.gap = (from, to)
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
