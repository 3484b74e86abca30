import Decoders

/// Discovering every primary service costs one round trip per few services, on every connection,
/// when the app only ever uses one or two of them.
struct BLE201FullServiceDiscovery: PerConnectionRule, OptionlessRule {
    static let info = RuleInfo.ble201

    /// The services used afterwards and the link's last ATT PDU are the open connection's
    /// (`ServiceUse`): the rule is not called for each use.
    struct State: ReusableState {
        /// The discovery's requests.
        var requests: FrameRun
        var reachedEnd = false
        var awaitingResponse = true
        /// The services the walk found.
        var discovered: Set<BluetoothUUID> = []

        mutating func adopt(_ old: inout State) { discovered.takeRoom(of: &old.discovered) }
    }

    static let consumes: AuditEventKinds = [.att, .discovery, .disconnected]
    /// The request and what answers it.
    static let attOpcodes = ATTOpcodeSet([.readByGroupTypeRequest, .readByGroupTypeResponse, .errorResponse])
    /// State starts with a Read By Group Type Request: its answers count only where one was sent.
    static let attOpcodesAfterDiscovery = ATTOpcodeSet([.readByGroupTypeResponse, .errorResponse])
    var states = ConnectionTable<State>(capacity: 4096)

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: RuleContext) {
        switch event {
        case .discovery(let c, let d):
            // Said just before its response's `.att`, which ends the wait for it.
            guard d.origin == .remote, d.opcode == .readByGroupTypeResponse else { return }
            states.modify(c.id) { s in
                if s.awaitingResponse, s.discovered.count < 256 { s.discovered.formUnion(d.found) }
            }
        case .disconnected(let c, _):
            disconnected(c, at: frame, emit: emit)
        default: break
        }
    }

    mutating func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef,
                             emit: RuleContext) {
        if a.origin == .local, a.kind == .request, a.opcode == .readByGroupTypeRequest,
           a.attributeType == GATTType.primaryService {
            if !states.contains(c.id) {
                if a.handle == 0x0001 && (a.endHandle ?? 0xFFFF) == 0xFFFF {
                    var s = states.renewed(State(requests: FrameRun(from: frame)))
                    s.requests.add(frame)
                    states[c.id] = s
                }
            } else {
                states.update(c.id, default: State(requests: FrameRun(from: frame))) {
                    $0.requests.add(frame)
                    $0.awaitingResponse = true
                }
            }
            return
        }
        states.modify(c.id) { s in
            if a.origin == .remote, a.kind == .response, s.awaitingResponse {
                s.awaitingResponse = false
                // Attribute Not Found ends the walk: the client went to the end of the database.
                if a.opcode == .errorResponse { s.reachedEnd = true }
            }
        }
    }

    /// In order of the discoveries.
    func closingOrder(_ open: [(id: Int, state: State)]) -> [(id: Int, state: State)] {
        open.sorted { $0.state.requests.first.number < $1.state.requests.first.number }
    }

    func close(_ s: State, of c: Connection, _ end: ConnectionEnd, emit: RuleContext) {
        let uses = emit.uses(c.id) ?? ServiceUse()
        let used = uses.used(since: s.requests.first.number)
        // Discovery by UUID would have found the same services: nothing to save.
        if !s.discovered.isEmpty, s.discovered.isSubset(of: used) { return }
        // A HID device's host discovers everything by its profile; an encrypted sniffed link hides the use.
        if s.discovered.contains(hidService) || c.hidesUse(after: uses.lastATT) { return }
        var msg: Message = """
            Discover All Primary Services (Read By Group Type 0x2800 from 0x0001) in \
            \(plural: s.requests.count, "request")\(s.reachedEnd ? " to the end of the database" : ""); \
            \(s.discovered.isEmpty ? "" : "\(used.intersection(s.discovered).count) of ")\
            \(plural: s.discovered.isEmpty ? used.count : s.discovered.count, "service") used afterwards
            """
        for (i, u) in used.sorted().prefix(4).enumerated() {
            msg += "\(i == 0 ? " (" : ", ")\(service: u)"
        }
        if !used.isEmpty { msg += used.count > 4 ? ", ...)" : ")" }
        emit(finding(msg, subject: .connection(c), evidence: [s.requests.first, s.requests.last], decisive: s.requests.first,
                     detail: "all primary services"))
    }
}
