import Decoders

/// A central that keeps scanning once it has connected wastes radio time and slows the connection
/// (the controller interleaves scan windows with connection events).
struct BLE102ScanNotStopped: AuditRule {
    static let info = RuleInfo(
        id: "BLE102", name: "scan-not-stopped", severity: .warning,
        summary: "Scanning left on after connecting to the device found",
        help: """
            Stop scanning once the device to connect to has been found. Scanning that is still enabled \
            some seconds after this host's own connection completed, or that is never disabled before the \
            capture ends although a connection was made, keeps the radio busy for nothing and takes air \
            time from the new connection.
            """,
        guidance: "Core Bluetooth Programming Guide: scan only when you need to; stop once you found the device",
        notAFinding: "scanning disabled before or at the connection; passive monitoring captures with no connection",
        options: [RuleOption("grace", .duration, 2_000_000_000, "how long scanning may stay on after the connection")])

    struct Scan {
        var start: FrameRef
        /// The first connection this host initiated while the scan ran, not yet judged.
        var connection: (FrameRef, Connection)?
        var flagged = false
    }

    let settings: RuleSettings
    /// Options read once: a lookup by name per event costs a string hash.
    private let graceSetting: Int64
    private var scans = AdapterTable<Scan>()
    /// Some scan holds a connection not yet judged: only then has `check` anything to do, so the
    /// events in between do not walk the scans. Recomputed when the scans change (rarely).
    private var awaiting = false

    init(settings: RuleSettings) {
        self.settings = settings
        graceSetting = settings.duration("grace")
    }

    static let consumes: AuditEventKinds = [.scanEnable, .connected]
    static let checksTime = true

    var nextTick: Int64 { awaiting ? .min : .max }

    mutating func tick(at frame: FrameRef, emit: (Finding) -> Void) {
        if awaiting { check(now: frame, emit: emit) }
    }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: (Finding) -> Void) {
        switch event {
        case .scanEnable(let adapter, let enabled, _, _):
            if enabled {
                if scans[adapter] == nil { scans[adapter] = Scan(start: frame) }
            } else {
                scans[adapter] = nil
                updateAwaiting()
            }
        case .connected(let c):
            guard c.isCentral == true, var s = scans[c.adapter], s.connection == nil, !s.flagged else { return }
            s.connection = (frame, c)
            scans[c.adapter] = s
            awaiting = true
        default: break
        }
    }

    private mutating func updateAwaiting() {
        awaiting = scans.values.contains { $0.connection != nil && !$0.flagged }
    }

    /// Judges pending connections whose grace period has passed while scanning stayed on.
    private mutating func check(now: FrameRef, emit: (Finding) -> Void) {
        let grace = graceSetting
        var flaggedAny = false
        for (adapter, s) in scans.entries {
            guard let (connected, c) = s.connection, !s.flagged, now.time &- connected.time > grace else { continue }
            emit(finding("""
                scanning still enabled \(seconds: now.time &- connected.time) after this host connected to \
                \(c.peer?.description ?? "the peer") (scan started \(seconds: connected.time &- s.start.time) before)
                """,
                         subject: .connection(c), evidence: [s.start, connected, now], decisive: now))
            scans.update(adapter) { $0.flagged = true }
            flaggedAny = true
        }
        if flaggedAny { updateAwaiting() }
    }

    mutating func finish(at frame: FrameRef?, emit: (Finding) -> Void) {
        if let f = frame { check(now: f, emit: emit) }
        for s in scans.values {
            guard let (connected, c) = s.connection, !s.flagged else { continue }
            let end = frame ?? connected
            emit(finding("""
                scanning never disabled before the capture ended, although this host connected to \
                \(c.peer?.description ?? "the peer") (\(seconds: end.time &- connected.time) before the end)
                """,
                         subject: .connection(c), evidence: [s.start, connected], decisive: connected))
        }
        scans.removeAll()
    }
}
