import Decoders
import Wire

/// Each Write Request waits for its Write Response: a stream of them carries one value per two
/// connection intervals at most, where Write Commands to the same characteristic fill every event.
struct BLE404WriteRequestStream: PerConnectionRule {
    static let info = RuleInfo.ble404

    struct Handle: Windowed {
        var handle: UInt16
        var characteristic: BluetoothUUID?
        var properties: UInt8?
        var writes = 0
        var first: FrameRef
        var last: FrameRef
        var mtu = 23
        /// The first window that reached the threshold.
        var window: FirstWindow
    }

    struct State: ReusableState {
        /// The handles written, in order of their first write.
        var handles = WindowedList<Handle>(limit: 64)
        var streamed = false
        /// When the peer last answered a Write Request.
        var lastResponse: Int64?

        mutating func adopt(_ old: inout State) { handles.takeRoom(of: &old.handles) }
    }

    static let consumes: AuditEventKinds = [.att, .disconnected]
    static let attOpcodes = ATTOpcodeSet([.writeRequest, .writeResponse])
    private let writesSetting: Int
    private let windowSetting: Int64
    private let gapSetting: Int64
    var states = ConnectionTable<State>(capacity: 4096)

    init(settings: RuleSettings) {
        writesSetting = max(2, settings.count("writes"))
        windowSetting = settings.duration("window")
        gapSetting = settings.duration("gap")
    }

    mutating func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef, emit: RuleContext) {
        if a.opcode == .writeResponse {
            if a.origin == .remote { states.update(c.id, default: State()) { $0.lastResponse = frame.time } }
            return
        }
        guard a.origin == .local, a.opcode == .writeRequest, let h = a.handle, !a.isCCCD, a.cccdValue == nil else { return }
        let need = writesSetting, window = windowSetting, gap = gapSetting
        states.update(c.id, default: State()) { s in
            // Sent right after the last answer: the write waited on it. Otherwise a new run starts.
            let waited = s.lastResponse.map { frame.time &- $0 <= gap } ?? false
            let i = s.handles.index(where: { $0.handle == h }, need: need, at: frame) {
                Handle(handle: h, first: frame, last: frame, window: $0)
            }
            s.handles[i].writes += 1
            s.handles[i].last = frame
            s.handles[i].mtu = a.mtu
            if a.characteristic != nil { s.handles[i].characteristic = a.characteristic }
            if a.properties != nil { s.handles[i].properties = a.properties }
            if !waited { s.handles[i].window.restart() }
            if s.handles.add(frame, to: i, need: need, window: window) { s.streamed = true }
        }
    }

    func close(_ s: State, of c: Connection, _ end: ConnectionEnd, emit: RuleContext) {
        guard s.streamed else { return }
        for w in s.handles.elements.sorted(by: { $0.handle < $1.handle }) {
            // Only where the peer accepts writes that need no answer.
            guard let (first, decisive) = w.window.found, let p = w.properties, p & 0x04 != 0 else { continue }
            var msg: Message = """
                \(w.writes) Write Requests to \(attribute: w.handle, w.characteristic) in \(seconds: w.last.time &- w.first.time), \
                \(writesSetting) of them within \(seconds: decisive.time &- first.time) each sent as the last was answered, \
                although it accepts Write Without Response
                """
            if let i = c.interval, i > 0 {
                let params = LinkParameters(interval: i, attMTU: w.mtu)
                let waiting = LinkCapacity.acknowledgedBitsPerSecond(params), streaming = LinkCapacity.streamBitsPerSecond(params)
                msg += """
                    ; at a \(LinkReport.ms(Int64(i) * 1_250_000)) ms interval and ATT_MTU \(w.mtu) that is at most \
                    \(LinkReport.rate(waiting)) against \(LinkReport.rate(streaming)) without waiting
                    """
            }
            emit(finding(msg, subject: .connection(c), evidence: [first, decisive, w.last], decisive: decisive,
                         detail: w.characteristic?.uuidString ?? Hex.prefixed(w.handle, width: 4)))
        }
    }
}
