import Decoders
import Wire

/// A notification that exactly fills the PDU is often a value cut to fit; the central then reads it
/// to get the rest, so each update costs a notification plus a read round trip.
struct BLE303TruncatedNotification: PerConnectionRule, OptionlessRule {
    static let info = RuleInfo.ble303

    struct Handle {
        var pending: FrameRef?
        var count = 0
        var length = 0
        var first: (FrameRef, FrameRef)?
    }

    struct State: ReusableState {
        var handles = BoundedMap<UInt16, Handle>(capacity: 256)

        mutating func adopt(_ old: inout State) { handles.takeRoom(of: &old.handles) }
    }

    static let consumes: AuditEventKinds = [.att, .disconnected]
    static let attOpcodes = ATTOpcodeSet([.handleValueNotification, .handleValueIndication]).union(.valueReads)
    var states = ConnectionTable<State>(capacity: 4096)

    mutating func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef,
                             emit: RuleContext) {
        guard let h = a.handle else { return }
        if a.origin == .remote, a.opcode == .handleValueNotification || a.opcode == .handleValueIndication {
            if a.valueLength > 0 && a.valueLength == a.mtu - 3 {
                states.update(c.id, default: State()) { s in
                    s.handles.update(h, default: Handle()) { $0.pending = frame; $0.length = a.valueLength }
                }
            } else {
                // Most notifications: no state is made for them, and a link with none keeps none.
                states.modify(c.id) { s in
                    if !s.handles.isEmpty, s.handles.contains(h) { s.handles.update(h, default: Handle()) { $0.pending = nil } }
                }
            }
        } else if a.origin == .local, a.kind == .request, a.isValueRead, states[c.id]?.handles[h]?.pending != nil {
            states.update(c.id, default: State()) { s in
                s.handles.update(h, default: Handle()) { r in
                    if r.first == nil, let p = r.pending { r.first = (p, frame) }
                    r.count += 1
                    r.pending = nil
                }
            }
        }
    }

    func close(_ s: State, of c: Connection, _ end: ConnectionEnd, emit: RuleContext) {
        for (h, r) in s.handles.storage.filter({ $0.value.first != nil }).sorted(by: { $0.key < $1.key }) {
            guard let (n, read) = r.first, r.count > 0 else { continue }
            emit(finding("""
                \(plural: r.count, "notification") of handle \(handle: h) filled ATT_MTU-3 (\(r.length) bytes) and \
                \(r.count == 1 ? "was" : "were") followed by a read of the same handle
                """,
                         subject: .connection(c), evidence: [n, read], decisive: read,
                         detail: Hex.prefixed(h, width: 4)))
        }
    }
}
