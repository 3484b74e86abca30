import Decoders

/// Values that never change during a connection need reading once.
struct BLE302RedundantRead: PerConnectionRule {
    static let info = RuleInfo.ble302

    /// Device Name, Appearance, and the Device Information Service characteristics.
    static let staticValues = UUIDSet(
        ([0x2A00, 0x2A01, 0x2A23, 0x2A24, 0x2A25, 0x2A26, 0x2A27, 0x2A28, 0x2A29, 0x2A2A, 0x2A50] as [UInt16])
            .map { BluetoothUUID(uuid16: $0) })

    struct Handle {
        var uuid: BluetoothUUID
        /// Its value handle, when a read named it (Read By Type names only the UUID).
        var handle: UInt16?
        var reads: FrameRun
    }

    struct State: ReusableState {
        /// By characteristic: a Read Request and a Read By Type of its UUID read the same value.
        var values: [BluetoothUUID: Handle] = [:]

        mutating func adopt(_ old: inout State) { values.takeRoom(of: &old.values) }
    }

    static let consumes: AuditEventKinds = [.att, .disconnected]
    static let attOpcodes = ATTOpcodeSet.valueReads
    private let readsSetting: Int
    var states = ConnectionTable<State>(capacity: 4096)

    init(settings: RuleSettings) { readsSetting = settings.count("reads") }

    mutating func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef,
                             emit: RuleContext) {
        guard a.newRead == true else { return }
        // "Read Using Characteristic UUID" (Read By Type) names the value by its type.
        let byType = a.opcode == .readByTypeRequest
        guard let u = byType ? a.attributeType : a.characteristic, Self.staticValues.contains(u) else { return }
        let h = byType ? nil : a.handle
        states.update(c.id, default: State()) { s in
            if s.values[u] == nil {
                guard s.values.count < 64 else { return }
                s.values[u] = Handle(uuid: u, handle: h, reads: FrameRun(from: frame))
            }
            s.values[u]!.reads.add(frame)
            if s.values[u]!.handle == nil { s.values[u]!.handle = h }
        }
    }

    func close(_ s: State, of c: Connection, _ end: ConnectionEnd, emit: RuleContext) {
        for r in s.values.values.sorted(by: { $0.reads.first.number < $1.reads.first.number }) where r.reads.count >= max(2, readsSetting) {
            let what: Message = r.handle.map { "\(attribute: $0, r.uuid)" } ?? "\(r.uuid)"
            emit(finding("\(what) read \(r.reads.count) times in one connection; the value does not change",
                         subject: .connection(c), evidence: [r.reads.first, r.reads.last], decisive: r.reads.last,
                         detail: r.uuid.uuidString))
        }
    }
}
