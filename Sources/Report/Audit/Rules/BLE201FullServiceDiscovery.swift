import Decoders

/// Discovering every primary service costs one round trip per few services, on every connection,
/// when the app only ever uses one or two of them.
struct BLE201FullServiceDiscovery: PerConnectionRule, OptionlessRule {
    static let info = RuleInfo.ble201

    struct State: ReusableState {
        /// The discovery's requests.
        var requests: FrameRun
        var reachedEnd = false
        var awaitingResponse = true
        var used: Set<BluetoothUUID> = []
        /// The service last added to `used`: a stream of notifications uses one service over and
        /// over, and each insert of it again would hash it again.
        var lastUsed: BluetoothUUID?
        /// The services the walk found.
        var discovered: Set<BluetoothUUID> = []
        /// The frame of the last ATT PDU seen on the link.
        var lastATT = 0

        mutating func adopt(_ old: inout State) {
            used.takeRoom(of: &old.used)
            discovered.takeRoom(of: &old.discovered)
        }
    }

    static let consumes: AuditEventKinds = [.att, .discovery, .disconnected]
    static let attOpcodes = ATTOpcodeSet([.readByGroupTypeRequest]).union(.responses).union(.valueUses)
    /// State starts with a Read By Group Type Request: other PDUs count only where one was sent.
    static let attOpcodesAfterDiscovery = ATTOpcodeSet.responses.union(.valueUses)
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
            s.lastATT = frame.number
            if a.origin == .remote, a.kind == .response, s.awaitingResponse {
                s.awaitingResponse = false
                // Attribute Not Found ends the walk: the client went to the end of the database.
                if a.opcode == .errorResponse { s.reachedEnd = true }
            }
            if let svc = a.service, svc != s.lastUsed, a.usesAttribute, s.used.count < 256 {
                s.used.insert(svc)
                s.lastUsed = svc
            }
        }
    }

    /// In order of the discoveries.
    func closingOrder(_ open: [(id: Int, state: State)]) -> [(id: Int, state: State)] {
        open.sorted { $0.state.requests.first.number < $1.state.requests.first.number }
    }

    func close(_ s: State, of c: Connection, _ end: ConnectionEnd, emit: RuleContext) {
        // Discovery by UUID would have found the same services: nothing to save.
        if !s.discovered.isEmpty, s.discovered.isSubset(of: s.used) { return }
        // A HID device's host discovers everything by its profile; an encrypted sniffed link hides the use.
        if s.discovered.contains(hidService) || c.hidesUse(after: s.lastATT) { return }
        var msg: Message = """
            Discover All Primary Services (Read By Group Type 0x2800 from 0x0001) in \
            \(plural: s.requests.count, "request")\(s.reachedEnd ? " to the end of the database" : ""); \
            \(s.discovered.isEmpty ? "" : "\(s.used.intersection(s.discovered).count) of ")\
            \(plural: s.discovered.isEmpty ? s.used.count : s.discovered.count, "service") used afterwards
            """
        for (i, u) in s.used.sorted().prefix(4).enumerated() {
            msg += "\(i == 0 ? " (" : ", ")\(service: u)"
        }
        if !s.used.isEmpty { msg += s.used.count > 4 ? ", ...)" : ")" }
        emit(finding(msg, subject: .connection(c), evidence: [s.requests.first, s.requests.last], decisive: s.requests.first,
                     detail: "all primary services"))
    }
}
