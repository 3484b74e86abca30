import Decoders

/// Long values moved 22 bytes at a time cost a round trip per chunk; one MTU exchange at the start
/// of the connection usually removes most of them.
struct BLE304SmallMTULongValues: PerConnectionRule, OptionlessRule {
    static let info = RuleInfo.ble304

    struct State {
        var exchanged = false
        var count = 0
        var first: FrameRef?
        var last: FrameRef?
    }

    static let consumes: AuditEventKinds = [.att, .disconnected]
    static let attOpcodes = ATTOpcodeSet([.exchangeMTURequest, .exchangeMTUResponse,
                                          .readBlobRequest, .prepareWriteRequest])
    var states = ConnectionTable<State>(capacity: 4096)

    mutating func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef,
                             emit: RuleContext) {
        if a.opcode == .exchangeMTURequest || a.opcode == .exchangeMTUResponse {
            states.update(c.id, default: State()) { $0.exchanged = true }
        } else if a.origin == .local, a.kind == .request, a.mtu <= 23,
                  a.opcode == .readBlobRequest || a.opcode == .prepareWriteRequest {
            states.update(c.id, default: State()) { s in
                guard !s.exchanged else { return }
                s.count += 1
                if s.first == nil { s.first = frame }
                s.last = frame
            }
        }
    }

    func close(_ s: State, of c: Connection, _ end: ConnectionEnd, emit: RuleContext) {
        guard let first = s.first, let last = s.last else { return }
        emit(finding("\(plural: s.count, "Read Blob / Prepare Write request") at ATT_MTU 23 with no MTU exchange tried",
                     subject: .connection(c), evidence: [first, last], decisive: first, detail: "mtu 23"))
    }
}
