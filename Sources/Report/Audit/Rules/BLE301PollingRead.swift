import Decoders

/// Reading the same value again and again keeps the link busy and the peripheral awake; a
/// characteristic that can notify sends the value only when it changes.
struct BLE301PollingRead: AuditRule {
    static let info = RuleInfo(
        id: "BLE301", name: "polling-read", severity: .warning,
        summary: "The same attribute read repeatedly in a short time (polling)",
        help: """
            Subscribe to values that change often (notifications or indications) instead of reading them \
            in a loop. Polling costs a request and a response per read whether the value changed or not, \
            and adds latency equal to the polling period. Reported at the configured severity when the \
            characteristic declares Notify or Indicate, as a note when its properties are unknown or it \
            cannot notify. Read Blob continuations of one long read count as one read.
            """,
        guidance: "Core Bluetooth Programming Guide: subscribe to characteristic values that change often",
        notAFinding: "reads of different handles; the Read Blob continuations of one long read",
        options: [RuleOption("reads", .count, 5, "reads of one handle that make a poll"),
                  RuleOption("window", .duration, 10_000_000_000, "time the reads fall within")])

    struct Handle {
        var times: [Int64] = []
        var frames: [FrameRef] = []
        var reads = 0
        var first: FrameRef
        var last: FrameRef
        var characteristic: BluetoothUUID?
        var properties: UInt8?
        /// First window that reached the threshold: its first and its decisive read.
        var window: (FrameRef, FrameRef)?
    }

    struct State {
        var connection: Connection
        var tracker = ReadTracker()
        var handles = BoundedMap<UInt16, Handle>(capacity: 1024)
    }

    static let consumes: AuditEventKinds = [.att, .disconnected]
    let settings: RuleSettings
    /// Options read once: a lookup by name per event costs a string hash.
    private let readsSetting: Int
    private let windowSetting: Int64
    private var states = ConnectionTable<State>(capacity: 4096)

    init(settings: RuleSettings) {
        self.settings = settings
        readsSetting = settings.count("reads")
        windowSetting = settings.duration("window")
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
        guard a.origin == .local || a.kind == .response else { return }
        let need = max(1, readsSetting), window = windowSetting
        states.update(c.id, default: State(connection: c)) { s in
            guard s.tracker.classify(a) == true, let h = a.handle else { return }
            s.handles.update(h, default: Handle(first: frame, last: frame)) { r in
                r.reads += 1
                r.last = frame
                if a.characteristic != nil { r.characteristic = a.characteristic }
                if a.properties != nil { r.properties = a.properties }
                guard r.window == nil else { return }
                r.times.append(frame.time)
                r.frames.append(frame)
                if r.times.count > need {
                    r.times.removeFirst()
                    r.frames.removeFirst()
                }
                if r.times.count == need, let t0 = r.times.first, frame.time &- t0 <= window {
                    r.window = (r.frames[0], frame)
                    r.times = []
                    r.frames = []
                }
            }
        }
    }

    mutating func finish(at frame: FrameRef?, emit: (Finding) -> Void) {
        for s in states.values { report(s, emit: emit) }
        states.removeAll()
    }

    private func report(_ s: State, emit: (Finding) -> Void) {
        let need = max(1, readsSetting)
        // Most connections poll nothing: only the handles that did are sorted.
        for (h, r) in s.handles.storage.filter({ $0.value.window != nil }).sorted(by: { $0.key < $1.key }) {
            guard let (first, decisive) = r.window else { continue }
            let canNotify = r.properties.map { $0 & 0x30 != 0 }
            var msg: Message = """
                \(attribute: h, r.characteristic) read \(r.reads) times in \(seconds: r.last.time &- r.first.time) \
                (\(need) within \(seconds: decisive.time &- first.time))
                """
            switch canNotify {
            case true?: msg += " although it can notify or indicate: subscribe instead"
            case false?: msg += "; the characteristic cannot notify"
            case nil: msg += "; its properties are unknown"
            }
            emit(finding(msg, subject: .connection(s.connection), evidence: [first, decisive, r.last], decisive: decisive,
                         detail: r.characteristic?.uuidString ?? Hex.prefixed(h, width: 4),
                         severity: canNotify == true ? nil : .note))
        }
    }
}
