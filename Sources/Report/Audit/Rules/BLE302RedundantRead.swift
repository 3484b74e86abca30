import Decoders

/// Values that never change during a connection need reading once.
struct BLE302RedundantRead: AuditRule {
    static let info = RuleInfo(
        id: "BLE302", name: "redundant-read", severity: .note,
        summary: "A static value (Device Name, Appearance, Device Information) read repeatedly",
        help: """
            Read values that do not change (Device Name, Appearance, the Device Information strings, \
            System ID, PnP ID) once per connection, or once per device, and keep them. Reading them again \
            costs round trips and tells the app nothing new.
            """,
        guidance: "Core Bluetooth Programming Guide: explore a peripheral's data wisely",
        options: [RuleOption("reads", .count, 3, "reads of one static value in one connection")])

    /// Device Name, Appearance, and the Device Information Service characteristics.
    static let staticValues = UUIDSet(
        ([0x2A00, 0x2A01, 0x2A23, 0x2A24, 0x2A25, 0x2A26, 0x2A27, 0x2A28, 0x2A29, 0x2A2A, 0x2A50] as [UInt16])
            .map { BluetoothUUID(uuid16: $0) })

    struct Handle {
        var uuid: BluetoothUUID
        var reads = 0
        var first: FrameRef
        var last: FrameRef
    }

    struct State {
        var connection: Connection
        var handles: [UInt16: Handle] = [:]
    }

    static let consumes: AuditEventKinds = [.att, .disconnected]
    static let attOpcodes = ATTOpcodeSet.valueReads
    let settings: RuleSettings
    /// Options read once: a lookup by name per event costs a string hash.
    private let readsSetting: Int
    private var states = ConnectionTable<State>(capacity: 4096)

    init(settings: RuleSettings) {
        self.settings = settings
        readsSetting = settings.count("reads")
    }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: (Finding) -> Void) {
        switch event {
        case .disconnected(let c, _):
            if let s = states.removeValue(forKey: c.id) { report(s, emit: emit) }
        default: break
        }
    }

    mutating func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef,
                             emit: (Finding) -> Void) {
        guard a.newRead == true, let h = a.handle, let u = a.characteristic, Self.staticValues.contains(u) else { return }
        states.update(c.id, default: State(connection: c)) { s in
            if s.handles[h] == nil {
                guard s.handles.count < 64 else { return }
                s.handles[h] = Handle(uuid: u, first: frame, last: frame)
            }
            s.handles[h]!.reads += 1
            s.handles[h]!.last = frame
        }
    }

    mutating func finish(at frame: FrameRef?, emit: (Finding) -> Void) {
        for s in states.values { report(s, emit: emit) }
        states.removeAll()
    }

    private func report(_ s: State, emit: (Finding) -> Void) {
        for (h, r) in s.handles.sorted(by: { $0.key < $1.key }) where r.reads >= max(2, readsSetting) {
            emit(finding("\(attribute: h, r.uuid) read \(r.reads) times in one connection; the value does not change",
                         subject: .connection(s.connection), evidence: [r.first, r.last], decisive: r.last,
                         detail: r.uuid.uuidString))
        }
    }
}
