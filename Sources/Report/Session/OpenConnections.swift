import Decoders

/// The connections open now, by number: what rules look a connection up in when they judge it
/// (`RuleContext.connection`), so their state keeps numbers. The auditor adds the connection of each
/// event a rule may start keeping one on before its rules see the event (`Auditor.namingKinds`, and
/// every ATT PDU), and drops it once its disconnection was judged. With each connection it keeps
/// what every PDU updates, so that no rule is called for it: whether the client has discovered,
/// when data last went over the link (`LinkActivity`), its last ATT PDU and the services used on it
/// (`ServiceUse`).
final class OpenConnections {
    /// One open connection and its facts.
    struct Link {
        let connection: Connection
        /// This host, as client, has started a discovery on it (`ATTObservation.startsDiscovery`).
        var discovered = false
        var activity: LinkActivity
        var uses = ServiceUse()

        /// Opened at `frame`: its activity starts there.
        init(_ c: Connection, at frame: FrameRef) {
            connection = c
            activity = LinkActivity(at: frame)
        }
    }

    /// As large as the dissector's table: a connection stays here as long as a rule may hold its state.
    private var table = ConnectionTable<Link>(capacity: 1 << 17)

    subscript(id: Int) -> Connection? { table[id]?.connection }

    /// The data activity of the open connection with this number.
    func activity(_ id: Int) -> LinkActivity? { table.modify(id) { $0.activity } }

    /// Takes the longest pause of an open connection's data since it was last taken (`LinkActivity.takePause`).
    func takePause(_ id: Int) -> (from: FrameRef, to: FrameRef)? { table.modify(id) { $0.activity.takePause() } ?? nil }

    @inline(__always) private func add(_ c: Connection, at frame: FrameRef) {
        if !table.contains(c.id) { table[c.id] = Link(c, at: frame) }
    }

    /// What was used on the open connection with this number (`ServiceUse`).
    func uses(_ id: Int) -> ServiceUse? { table.modify(id) { $0.uses } }

    /// An ATT PDU at `frame`: adds its connection, counts it as data and notes what it used; true
    /// when the client has discovered on the link, this PDU included.
    @inline(__always) func att(_ a: ATTObservation, _ c: Connection, at frame: FrameRef) -> Bool {
        table.update(c.id, default: Link(c, at: frame)) { link in
            if a.startsDiscovery { link.discovered = true }
            link.activity.data(at: frame)
            link.uses.att(a, at: frame.number)
            return link.discovered
        }
    }

    /// Other L2CAP traffic (`.linkData`) on a connection already open: data.
    @inline(__always) func data(_ c: Connection, at frame: FrameRef) {
        table.modify(c.id) { $0.activity.data(at: frame) }
    }

    func remove(_ id: Int) { table.removeValue(forKey: id) }

    /// Adds the connection `event` names, if any: the one place the events that carry one are listed.
    /// Added in place rather than returned, which held a reference across the rules' calls. A
    /// connection's activity starts with its `.connected`.
    func add(namedBy event: AuditEvent, at frame: FrameRef) {
        switch event {
        case .connected(let c):
            table.update(c.id, default: Link(c, at: frame)) { $0.activity = LinkActivity(at: frame) }
        case .disconnected(let c, _), .encryptionChanged(let c, _), .att(let c, _), .pairing(let c, _),
             .pairingDebugKey(let c, _), .linkData(let c), .connectionOwner(let c, _), .discovery(let c, _):
            add(c, at: frame)
        case .scanStarted, .scanStopped, .scanAtEnd, .createConnection, .disconnectCommand, .advertisingData, .advertisingStarted,
             .advertisingStopped, .advertisingParameters, .platform:
            break
        }
    }
}

/// A link's last ATT PDU and the services whose attributes it used (`usesAttribute`: a read, a
/// write, a notification of a value of theirs), each with the frame of its last use: which of the
/// services a discovery found were used after it (BLE201), and whether what a sniffed link carried
/// after its last readable PDU was hidden by encryption (`Connection.hidesUse`).
struct ServiceUse {
    /// The frame of the last ATT PDU, 0 before any.
    private(set) var lastATT = 0
    /// Each service used and the frame of its last use, at most 256, but for the one used last.
    private var services: [BluetoothUUID: Int] = [:]
    /// The service used last and that use: a stream of notifications uses one service over and
    /// over, which is then not hashed for each.
    private var last: BluetoothUUID?
    private var lastUse = 0

    @inline(__always) mutating func att(_ a: ATTObservation, at frame: Int) {
        lastATT = frame
        guard let s = a.service, a.usesAttribute else { return }
        if s != last {
            if let l = last, services.count < 256 || services[l] != nil { services[l] = lastUse }
            last = s
        }
        lastUse = frame
    }

    /// The services used at or after `frame`.
    func used(since frame: Int) -> Set<BluetoothUUID> {
        var u = Set(services.lazy.filter { $0.value >= frame }.map(\.key))
        if let last, lastUse >= frame { u.insert(last) }
        return u
    }
}

/// When data (an ATT PDU, SMP, any other L2CAP traffic) last went over a connection, from its
/// `.connected` or the first PDU seen, and the longest pause between two data packets since that
/// was last asked for (`takePause`). Kept by the auditor for every PDU, so the rule that judges
/// idle links (BLE401) is not called for each one: it takes the pause whenever what it judges a
/// pause by changes (its subscriptions), and when the connection ends.
struct LinkActivity {
    /// The last data packet, or the start.
    private(set) var last: FrameRef
    /// The longest pause since the last `takePause`, the first of equal ones, when its length is
    /// positive (no optional: the auditor's table then tests an entry without an outlined call).
    private var pauseFrom: FrameRef, pauseTo: FrameRef
    private var pauseLength: Int64 = 0

    init(at frame: FrameRef) { (last, pauseFrom, pauseTo) = (frame, frame, frame) }

    @inline(__always) mutating func data(at frame: FrameRef) {
        let gap = frame.time &- last.time
        if gap > pauseLength {
            (pauseFrom, pauseTo) = (last, frame)
            pauseLength = gap
        }
        last = frame
    }

    /// The longest pause since the last call, and none from now on.
    mutating func takePause() -> (from: FrameRef, to: FrameRef)? {
        guard pauseLength > 0 else { return nil }
        pauseLength = 0
        return (pauseFrom, pauseTo)
    }
}
