import Decoders

/// ATT allows one outstanding request per client on a bearer (Core Vol 3 Part F 3.3.2); a server
/// may drop a second one, and a request left unanswered for 30 s ends the bearer.
struct BLE403ATTRequestPipelining: PerConnectionRule {
    static let info = RuleInfo.ble403

    struct Side {
        var outstanding: (opcode: ATTOpcode, frame: FrameRef)?
        var pipelined = 0
        var first: (FrameRef, FrameRef, ATTOpcode, ATTOpcode)?
        var timedOut = false
    }

    struct State {
        var local = Side()
        var remote = Side()
    }

    private let timeoutSetting: Int64
    var states = ConnectionTable<State>(capacity: 4096)
    private var nextDeadline = Int64.max

    init(settings: RuleSettings) { timeoutSetting = settings.duration("timeout") }

    static let consumes: AuditEventKinds = [.att, .disconnected]
    static let attOpcodes = ATTOpcodeSet.requests.union(.responses)
    static let checksTime = true

    var nextTick: Int64 { nextDeadline }

    mutating func tick(at frame: FrameRef, emit: RuleContext) {
        if frame.time > nextDeadline { checkTimeouts(now: frame, emit: emit) }
    }

    mutating func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef,
                             emit: RuleContext) {
        let timeout = timeoutSetting
        let asked = states.update(c.id, default: State()) { s -> Bool in
            switch a.kind {
            case .request:
                // A sniffer misses packets: a request with one outstanding there is more
                // likely a response it did not capture than pipelining, unless the link layer
                // shows nothing was missed in between (the decoder then says pipelined).
                let pipelining = !c.overTheAir || a.pipelined
                if a.origin == .local {
                    Self.request(&s.local, a.opcode, frame, pipelining: pipelining)
                } else {
                    Self.request(&s.remote, a.opcode, frame, pipelining: pipelining)
                }
                return true
            case .response:
                if a.origin == .remote { s.local.outstanding = nil } else { s.remote.outstanding = nil }
            default: break
            }
            return false
        }
        if asked { nextDeadline = min(nextDeadline, frame.time &+ timeout) }
    }

    /// A request on one side: one still outstanding there means the two are pipelined.
    private static func request(_ side: inout Side, _ opcode: ATTOpcode, _ frame: FrameRef, pipelining: Bool) {
        if pipelining, let (op, f) = side.outstanding {
            side.pipelined += 1
            if side.first == nil { side.first = (f, frame, op, opcode) }
        }
        side.outstanding = (opcode, frame)
    }

    /// A request still outstanding at the end times out then, if its time has passed.
    func close(_ s: State, of c: Connection, _ end: ConnectionEnd, emit: RuleContext) {
        var s = s
        if let f = end.frame { timeout(&s, of: c, now: f, emit: emit) }
        report(s, of: c, emit: emit)
    }

    private mutating func checkTimeouts(now: FrameRef, emit: RuleContext) {
        nextDeadline = .max
        let limit = timeoutSetting
        for id in states.ids {
            guard var s = states[id], s.local.outstanding != nil || s.remote.outstanding != nil,
                  let c = emit.connection(id) else { continue }
            timeout(&s, of: c, now: now, emit: emit)
            states[id] = s
            for o in [s.local.outstanding, s.remote.outstanding] {
                if let (_, f) = o { nextDeadline = min(nextDeadline, f.time &+ limit) }
            }
        }
    }

    private func timeout(_ s: inout State, of c: Connection, now: FrameRef, emit: RuleContext) {
        timeout(&s.local, by: "this host", on: c, now: now, emit: emit)
        timeout(&s.remote, by: "the peer", on: c, now: now, emit: emit)
    }

    private func timeout(_ side: inout Side, by who: String, on c: Connection, now: FrameRef, emit: RuleContext) {
        let limit = timeoutSetting
        guard let (op, f) = side.outstanding, !side.timedOut, now.time &- f.time > limit else { return }
        side.timedOut = true
        side.outstanding = nil
        // A sniffer that saw nothing more of the link lost it (or the link ended): the request was
        // cut off, not left unanswered.
        if c.overTheAir, c.lastActivity &- f.time < limit { return }
        emit(finding("""
            \(op.name) (\(hex: op.rawValue)) sent by \(who) got no response in \(seconds: limit) \
            (transaction timeout)
            """,
                     subject: .connection(c), evidence: [f, now], decisive: f, detail: "timeout " + who,
                     actor: who == Self.host ? .peer : .host))
    }

    /// Who sent a request, as messages say it. A request of this host's that timed out is the
    /// peer's failure to answer; the peer's unanswered request is this host's.
    static let host = "this host"

    private func report(_ s: State, of c: Connection, emit: RuleContext) {
        report(s.local, by: "this host", on: c, emit: emit)
        report(s.remote, by: "the peer", on: c, emit: emit)
    }

    private func report(_ side: Side, by who: String, on c: Connection, emit: RuleContext) {
        guard let (pending, second, op1, op2) = side.first else { return }
        emit(finding("""
            \(plural: side.pipelined, "ATT request") sent by \(who) before the response to the previous one \
            (first: \(op2.name) while \(op1.name) was outstanding)
            """,
                     subject: .connection(c), evidence: [pending, second], decisive: second,
                     detail: "pipelining " + who, actor: who == Self.host ? .host : .peer))
    }
}
