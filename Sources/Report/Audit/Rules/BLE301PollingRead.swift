import Decoders
import Wire

/// Reading the same value again and again keeps the link busy and the peripheral awake; a
/// characteristic that can notify sends the value only when it changes.
struct BLE301PollingRead: PerConnectionRule {
    static let info = RuleInfo.ble301

    struct Handle: Windowed {
        var handle: UInt16
        /// For reads by characteristic UUID (Read By Type): the UUID, read over the range from `handle`.
        var byType: BluetoothUUID?
        var reads: FrameRun
        var characteristic: BluetoothUUID?
        var properties: UInt8?
        /// First window that reached the threshold.
        var window: FirstWindow
    }

    struct State: ReusableState {
        /// The handles read, in order of their first read: a connection reads a few, so they are
        /// searched in order.
        var handles = WindowedList<Handle>(limit: 1024)
        var polled = false

        mutating func adopt(_ old: inout State) { handles.takeRoom(of: &old.handles) }
    }

    static let consumes: AuditEventKinds = [.att, .disconnected]
    static let attOpcodes = ATTOpcodeSet.valueReads
    private let readsSetting: Int
    private let windowSetting: Int64
    var states = ConnectionTable<State>(capacity: 4096)

    init(settings: RuleSettings) {
        readsSetting = settings.count("reads")
        windowSetting = settings.duration("window")
    }

    mutating func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef,
                             emit: RuleContext) {
        guard a.newRead == true, let h = a.handle else { return }
        // A read by UUID names a value by its type: reads of other types over one range are not one value.
        let t = a.opcode == .readByTypeRequest ? a.attributeType : nil
        let need = max(1, readsSetting), window = windowSetting
        states.update(c.id, default: State()) { s in
            let i = s.handles.index(where: { $0.handle == h && $0.byType == t }, need: need, at: frame) {
                Handle(handle: h, byType: t, reads: FrameRun(from: frame), window: $0)
            }
            s.handles[i].reads.add(frame)
            if t == nil, a.characteristic != nil { s.handles[i].characteristic = a.characteristic }
            if a.properties != nil { s.handles[i].properties = a.properties }
            if s.handles.add(frame, to: i, need: need, window: window) { s.polled = true }
        }
    }

    func close(_ s: State, of c: Connection, _ end: ConnectionEnd, emit: RuleContext) {
        let need = max(1, readsSetting)
        // Most connections poll nothing.
        guard s.polled else { return }
        for r in s.handles.elements.filter({ $0.window.found != nil }).sorted(by: { $0.handle < $1.handle }) {
            guard let (first, decisive) = r.window.found else { continue }
            let h = r.handle
            let canNotify = r.properties.map { $0 & 0x30 != 0 }
            // Nothing to subscribe to: reading is the only way to the value.
            if canNotify == false { continue }
            let what: Message = r.byType.map { "\($0) (by UUID from handle \(hex: h))" } ?? "\(attribute: h, r.characteristic)"
            var msg: Message = """
                \(what) read \(r.reads.count) times in \(seconds: r.reads.duration) \
                (\(need) within \(seconds: decisive.time &- first.time))
                """
            switch canNotify {
            case true?: msg += " although it can notify or indicate: subscribe instead"
            case false?, nil: msg += "; its properties are unknown"
            }
            emit(finding(msg, subject: .connection(c), evidence: [first, decisive, r.reads.last], decisive: decisive,
                         detail: r.characteristic?.uuidString ?? Hex.prefixed(h, width: 4),
                         severity: canNotify == true ? nil : .note))
        }
    }
}
