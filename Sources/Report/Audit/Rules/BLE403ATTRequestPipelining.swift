import Decoders

/// ATT allows one outstanding request per client on a bearer (Core Vol 3 Part F 3.3.2); a server
/// may drop a second one, and a request left unanswered for 30 s ends the bearer.
struct BLE403ATTRequestPipelining: AuditRule {
    static let info = RuleInfo(
        id: "BLE403", name: "att-request-pipelining", severity: .error,
        summary: "An ATT request sent before the previous one was answered, or never answered",
        help: """
            Send the next ATT request only after the response to the previous one (ATT is a sequential \
            request-response protocol: one outstanding request per client). A server that gets a second \
            request may ignore it, and a request without a response within 30 s is a transaction timeout \
            after which no more ATT traffic may be sent on the bearer.
            """,
        guidance: "ATT protocol, Core Vol 3 Part F 3.3.2 and 3.3.3",
        notAFinding: "commands, notifications, signed writes; pipelining in sniffer captures (a response the sniffer missed looks the same)",
        options: [RuleOption("timeout", .duration, 30_000_000_000, "ATT transaction timeout")])

    struct Side {
        var outstanding: (opcode: UInt8, frame: FrameRef)?
        var pipelined = 0
        var first: (FrameRef, FrameRef, UInt8, UInt8)?
        var timedOut = false
    }

    struct State {
        var connection: Connection
        var local = Side()
        var remote = Side()
    }

    let settings: RuleSettings
    private var states = ConnectionTable<State>(capacity: 4096)
    private var nextDeadline = Int64.max

    init(settings: RuleSettings) { self.settings = settings }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: (Finding) -> Void) {
        if frame.time > nextDeadline { checkTimeouts(now: frame, emit: emit) }
        switch event {
        case .att(let c, let a):
            let timeout = settings.duration("timeout")
            let asked = states.update(c.id, default: State(connection: c)) { s -> Bool in
                switch a.kind {
                case .request:
                    let side = a.origin == .local ? \State.local : \State.remote
                    // A sniffer misses packets: a request with one outstanding there is more
                    // likely a response it did not capture than pipelining.
                    if !c.overTheAir, let (op, f) = s[keyPath: side].outstanding {
                        s[keyPath: side].pipelined += 1
                        if s[keyPath: side].first == nil { s[keyPath: side].first = (f, frame, op, a.opcode) }
                    }
                    s[keyPath: side].outstanding = (a.opcode, frame)
                    return true
                case .response:
                    if a.origin == .remote { s.local.outstanding = nil } else { s.remote.outstanding = nil }
                default: break
                }
                return false
            }
            if asked { nextDeadline = min(nextDeadline, frame.time &+ timeout) }
        case .disconnected(let c, _):
            guard var s = states.removeValue(forKey: c.id) else { return }
            timeout(&s, now: frame, emit: emit)
            report(s, emit: emit)
        default: break
        }
    }

    mutating func finish(at frame: FrameRef?, emit: (Finding) -> Void) {
        for var s in states.storage.values.sorted(by: { $0.connection.id < $1.connection.id }) {
            if let f = frame { timeout(&s, now: f, emit: emit) }
            report(s, emit: emit)
        }
        states.removeAll()
    }

    private mutating func checkTimeouts(now: FrameRef, emit: (Finding) -> Void) {
        nextDeadline = .max
        let limit = settings.duration("timeout")
        for (id, var s) in states.storage where s.local.outstanding != nil || s.remote.outstanding != nil {
            timeout(&s, now: now, emit: emit)
            states[id] = s
            for o in [s.local.outstanding, s.remote.outstanding] {
                if let (_, f) = o { nextDeadline = min(nextDeadline, f.time &+ limit) }
            }
        }
    }

    private func timeout(_ s: inout State, now: FrameRef, emit: (Finding) -> Void) {
        let limit = settings.duration("timeout")
        for side in [\State.local, \State.remote] {
            guard let (op, f) = s[keyPath: side].outstanding, !s[keyPath: side].timedOut, now.time &- f.time > limit
            else { continue }
            s[keyPath: side].timedOut = true
            s[keyPath: side].outstanding = nil
            let who = side == \State.local ? "this host" : "the peer"
            emit(finding(ATTOpcode.name(op) + " (" + Hex.prefixed(op, width: 2) + ") sent by " + who
                            + " got no response in " + Say.seconds(limit) + " (transaction timeout)",
                         subject: .connection(s.connection), evidence: [f, now], decisive: f,
                         detail: "timeout " + who))
        }
    }

    private func report(_ s: State, emit: (Finding) -> Void) {
        for side in [\State.local, \State.remote] {
            guard let (pending, second, op1, op2) = s[keyPath: side].first else { continue }
            let who = side == \State.local ? "this host" : "the peer"
            emit(finding(Say.plural(s[keyPath: side].pipelined, "ATT request") + " sent by " + who
                            + " before the response to the previous one (first: " + ATTOpcode.name(op2)
                            + " while " + ATTOpcode.name(op1) + " was outstanding)",
                         subject: .connection(s.connection), evidence: [pending, second], decisive: second,
                         detail: "pipelining " + who))
        }
    }
}
