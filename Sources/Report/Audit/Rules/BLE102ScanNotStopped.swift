import Decoders
import Wire

/// A central that keeps scanning once it has connected wastes radio time and slows the connection
/// (the controller interleaves scan windows with connection events).
struct BLE102ScanNotStopped: AuditRule {
    static let info = RuleInfo(
        id: "BLE102", name: "scan-not-stopped", severity: .warning,
        summary: "Scanning left on after connecting to the device found",
        help: """
            Stop scanning once the device to connect to has been found. Scanning that is still enabled \
            some seconds after one of this host's own connections completed, scanning started again after \
            connecting and never stopped, or scanning never disabled before the capture ends although a \
            connection was made, keeps the radio busy for nothing and takes air time from the connection. \
            A stack that turns the scan off and on again within milliseconds around a connection (Android \
            does) has not stopped it. A connection is judged against the scan that found the device: when \
            that scan was stopped and another, with other parameters, runs at the connection (another \
            client's scan on a phone), the app did stop its own.
            """,
        guidance: "Core Bluetooth Programming Guide: scan only when you need to; stop once you found the device",
        notAFinding: "scanning disabled before or at the connection and not restarted; passive monitoring captures with no connection",
        options: [RuleOption("grace", .duration, 2_000_000_000, "how long scanning may stay on after the connection")],
        platforms: PlatformTable(
            apple: .app("call stopScan() on the CBCentralManager once the peripheral to connect to was found"),
            android: .app("call BluetoothLeScanner.stopScan(callback) once the device to connect to was found"),
            linuxBluez: .app("call org.bluez.Adapter1.StopDiscovery once the device to connect to was found"),
            embedded: .app("send LE Set (Extended) Scan Enable with enable=0 before or right after connecting")))

    struct Scan {
        /// Numbers the scans of the capture in order.
        var number: Int
        var start: FrameRef
        /// Connections this host initiated while the scan ran, not yet judged.
        var pending: [(FrameRef, Connection)] = []
        /// The connection this host had made before the scan started, when there was one.
        var after: (FrameRef, Connection)?
        /// A connection was made during this scan: it is judged for that one, not for `after`.
        var connectedDuring = false
    }

    let settings: RuleSettings
    /// Options read once: a lookup by name per event costs a string hash.
    private let graceSetting: Int64
    private var scans = AdapterTable<Scan>()
    /// Each adapter's latest connection as central.
    private var lastConnection = AdapterTable<(FrameRef, Connection)>()
    /// The scan in which each advertiser was last reported: the one that found it.
    private var foundIn = BoundedMap<BDAddr, Int>(capacity: 10_000)
    private var scanCount = 0
    /// When the earliest pending connection's grace period ends (`.max`: none pending).
    private var nextDeadline = Int64.max

    init(settings: RuleSettings) {
        self.settings = settings
        graceSetting = settings.duration("grace")
    }

    static let consumes: AuditEventKinds = [.scanEnable, .connected, .advertisingReport]
    static let checksTime = true

    var nextTick: Int64 { nextDeadline }

    mutating func tick(at frame: FrameRef, emit: (Finding) -> Void) {
        check(now: frame, emit: emit)
    }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: (Finding) -> Void) {
        switch event {
        case .scanEnable(let adapter, let enabled, _, _):
            if enabled {
                if scans[adapter] == nil {
                    scanCount += 1
                    scans[adapter] = Scan(number: scanCount, start: frame, after: lastConnection[adapter])
                }
            } else {
                scans[adapter] = nil
            }
        case .connected(let c):
            guard c.isCentral == true, c.isLE else { return }
            lastConnection[c.adapter] = (frame, c)
            let grace = graceSetting
            let found = c.peer.flatMap { foundIn[$0] }
            let added = scans.update(c.adapter) { s -> Bool in
                // Found by an earlier scan that was stopped: the one running is not the app's.
                if let n = found, n != s.number { return false }
                s.connectedDuring = true
                guard s.pending.count < 64 else { return false }
                s.pending.append((frame, c))
                return true
            }
            if added == true { nextDeadline = min(nextDeadline, frame.time &+ grace) }
        case .advertisingReport(let adapter, let address, _, _, _):
            guard let n = scans[adapter]?.number, foundIn[address] != n else { return }
            foundIn[address] = n
        default: break
        }
    }

    /// Judges pending connections whose grace period has passed while scanning stayed on.
    private mutating func check(now: FrameRef, emit: (Finding) -> Void) {
        let grace = graceSetting
        var next = Int64.max
        for (adapter, s) in scans.entries where !s.pending.isEmpty {
            var kept: [(FrameRef, Connection)] = []
            for (connected, c) in s.pending {
                guard now.time &- connected.time > grace else {
                    kept.append((connected, c))
                    next = min(next, connected.time &+ grace)
                    continue
                }
                emit(finding("""
                    scanning still enabled \(seconds: now.time &- connected.time) after this host connected to \
                    \(c.peer?.description ?? "the peer") (scan started \(seconds: connected.time &- s.start.time) before)
                    """,
                             subject: .connection(c), evidence: [s.start, connected, now], decisive: now))
            }
            scans.update(adapter) { $0.pending = kept }
        }
        nextDeadline = next
    }

    mutating func finish(at frame: FrameRef?, emit: (Finding) -> Void) {
        if let f = frame { check(now: f, emit: emit) }
        for s in scans.values {
            for (connected, c) in s.pending {
                let end = frame ?? connected
                emit(finding("""
                    scanning never disabled before the capture ended, although this host connected to \
                    \(c.peer?.description ?? "the peer") (\(seconds: end.time &- connected.time) before the end)
                    """,
                             subject: .connection(c), evidence: [s.start, connected], decisive: connected))
            }
            // Started again once connected, and left on.
            if !s.connectedDuring, let (connected, c) = s.after, let end = frame, end.time &- s.start.time > graceSetting {
                emit(finding("""
                    scanning started again \(seconds: s.start.time &- connected.time) after this host connected to \
                    \(c.peer?.description ?? "the peer") and never disabled (on for \(seconds: end.time &- s.start.time) \
                    to the end of the capture)
                    """,
                             subject: .connection(c), evidence: [connected, s.start, end], decisive: s.start))
            }
        }
        scans.removeAll()
    }
}
