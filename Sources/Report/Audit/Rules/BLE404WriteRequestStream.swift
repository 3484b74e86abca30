import Decoders
import Wire

/// Each Write Request waits for its Write Response: a stream of them carries one value per two
/// connection intervals at most, where Write Commands to the same characteristic fill every event.
struct BLE404WriteRequestStream: PerConnectionRule {
    static let info = RuleInfo(
        id: "BLE404", name: "write-request-stream", severity: .note,
        summary: "A stream of Write Requests to a characteristic that accepts Write Without Response",
        help: """
            Send a stream of values with Write Without Response when the characteristic allows it. A Write \
            Request holds the next write until its response, at least one connection interval later and \
            usually two, so a transfer made of them runs at a fraction of what the link carries (`blesniff \
            links` shows the two rates); Write Commands to the same characteristic fill each connection \
            event. Reported when this host sent at least `writes` Write Requests to one characteristic \
            within `window`, each within `gap` of the response to the one before (the writes waited on \
            their responses: the acknowledgment was the limit), and the characteristic declares Write \
            Without Response.
            """,
        guidance: "Core Bluetooth Programming Guide: writes without response for data that needs no acknowledgment; Core Vol 3 Part G 4.9.1",
        notAFinding: """
            a characteristic that does not declare Write Without Response (the peer needs each write \
            acknowledged); fewer writes, writes spread out, or writes paced by something else than their \
            responses (commands every few hundred milliseconds); Prepare and Execute Write (long values)
            """,
        options: [RuleOption("writes", .count, 20, "Write Requests to one characteristic that make a stream"),
                  RuleOption("window", .duration, 10_000_000_000, "time the writes fall within"),
                  RuleOption("gap", .duration, 20_000_000, "longest wait after a response for the next write to count as waiting on it")],
        platforms: PlatformTable(
            apple: .app("write with type .withoutResponse, pacing with canSendWriteWithoutResponse and peripheralIsReady(toSendWriteWithoutResponse:)"),
            android: .app("set writeType WRITE_TYPE_NO_RESPONSE on the BluetoothGattCharacteristic before writing"),
            linuxBluez: .app("call WriteValue with the option type \"command\" (or AcquireWrite)"),
            embedded: .app("send Write Commands (ATT 0x52) instead of Write Requests")))

    struct Handle {
        var handle: UInt16
        var characteristic: BluetoothUUID?
        var properties: UInt8?
        var writes = 0
        var first: FrameRef
        var last: FrameRef
        var mtu = 23
        /// The first window that reached the threshold.
        var window = FirstWindow()
    }

    struct State {
        var connection: Connection
        /// The handles written, in order of their first write (the oldest goes past 64).
        var handles: [Handle] = []
        var streamed = false
        /// When the peer last answered a Write Request.
        var lastResponse: Int64?
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

    mutating func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef, emit: (Finding) -> Void) {
        if a.opcode == .writeResponse {
            if a.origin == .remote { states.update(c.id, default: State(connection: c)) { $0.lastResponse = frame.time } }
            return
        }
        guard a.origin == .local, a.opcode == .writeRequest, let h = a.handle, !a.isCCCD, a.cccdValue == nil else { return }
        let need = writesSetting, window = windowSetting, gap = gapSetting
        states.update(c.id, default: State(connection: c)) { s in
            // Sent right after the last answer: the write waited on it. Otherwise a new run starts.
            let waited = s.lastResponse.map { frame.time &- $0 <= gap } ?? false
            let i: Int
            if let found = s.handles.firstIndex(where: { $0.handle == h }) {
                i = found
            } else {
                if s.handles.count == 64 { s.handles.removeFirst() }
                s.handles.append(Handle(handle: h, first: frame, last: frame))
                i = s.handles.count - 1
            }
            s.handles[i].writes += 1
            s.handles[i].last = frame
            s.handles[i].mtu = a.mtu
            if a.characteristic != nil { s.handles[i].characteristic = a.characteristic }
            if a.properties != nil { s.handles[i].properties = a.properties }
            if !waited { s.handles[i].window.restart() }
            if s.handles[i].window.add(frame, need: need, window: window) { s.streamed = true }
        }
    }

    func close(_ s: State, _ end: ConnectionEnd, emit: (Finding) -> Void) {
        guard s.streamed else { return }
        for w in s.handles.sorted(by: { $0.handle < $1.handle }) {
            // Only where the peer accepts writes that need no answer.
            guard let (first, decisive) = w.window.found, let p = w.properties, p & 0x04 != 0 else { continue }
            var msg: Message = """
                \(w.writes) Write Requests to \(attribute: w.handle, w.characteristic) in \(seconds: w.last.time &- w.first.time), \
                \(writesSetting) of them within \(seconds: decisive.time &- first.time) each sent as the last was answered, \
                although it accepts Write Without Response
                """
            if let i = s.connection.interval, i > 0 {
                let params = LinkParameters(interval: i, attMTU: w.mtu)
                let waiting = LinkCapacity.acknowledgedBitsPerSecond(params), streaming = LinkCapacity.streamBitsPerSecond(params)
                msg += """
                    ; at a \(LinkReport.ms(Int64(i) * 1_250_000)) ms interval and ATT_MTU \(w.mtu) that is at most \
                    \(LinkReport.rate(waiting)) against \(LinkReport.rate(streaming)) without waiting
                    """
            }
            emit(finding(msg, subject: .connection(s.connection), evidence: [first, decisive, w.last], decisive: decisive,
                         detail: w.characteristic?.uuidString ?? Hex.prefixed(w.handle, width: 4)))
        }
    }
}
