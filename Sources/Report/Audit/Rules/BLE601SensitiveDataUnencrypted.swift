import Decoders

/// Personal data sent on an unencrypted link can be read by anyone in radio range with a sniffer.
struct BLE601SensitiveDataUnencrypted: PerConnectionRule {
    static let info = RuleInfo.ble601

    /// User Data Service characteristics that hold personal data.
    static let defaults: [UInt16] = [
        0x2A80, 0x2A81, 0x2A82, 0x2A84, 0x2A85, 0x2A86, 0x2A87, 0x2A88, 0x2A8A, 0x2A8B, 0x2A8C, 0x2A8D,
        0x2A8E, 0x2A8F, 0x2A90, 0x2A91, 0x2A92, 0x2A93, 0x2A94, 0x2A95, 0x2A96, 0x2A97, 0x2A98, 0x2AA2,
    ]
    /// The User Data Service (0x181C), every characteristic of which is personal: its 16-bit
    /// alias, a constant (a `BluetoothUUID` global is made lazily, a call on every PDU).
    static let userDataService16: UInt16 = 0x181C

    /// How an attribute was accessed, as bits in the alphabetical order of their names (the report
    /// lists them sorted).
    struct Kinds: OptionSet {
        let rawValue: UInt8
        static let indication = Kinds(rawValue: 1)
        static let notification = Kinds(rawValue: 2)
        static let read = Kinds(rawValue: 4)
        static let write = Kinds(rawValue: 8)
        static let names = ["indication", "notification", "read", "write"]

        var names: String {
            (0..<4).filter { rawValue & (1 << $0) != 0 }.map { Self.names[$0] }.joined(separator: "/")
        }
    }

    struct Access {
        var uuid: BluetoothUUID
        var count = 0
        var kinds: Kinds = []
        var first: FrameRef
        var last: FrameRef
        var handle: UInt16?
    }

    /// A request for a sensitive attribute, counted when its response comes (not an error).
    struct Pending {
        var uuid: BluetoothUUID
        var handle: UInt16?
        var frame: FrameRef
        var kind: Kinds
    }

    struct State: ReusableState {
        var encrypted = false
        /// By the side that asked: each side has at most one request outstanding.
        var pendingLocal: Pending?
        var pendingRemote: Pending?
        /// Few per connection (at most 64): a list searched in order rather than a hashed table.
        var accesses: [Access] = []
        var encryptedAt: FrameRef?

        mutating func adopt(_ old: inout State) { accesses.takeRoom(of: &old.accesses) }
    }

    static let consumes: AuditEventKinds = [.encryptionChanged, .att, .disconnected]
    private let sensitive: UUIDSet
    var states = ConnectionTable<State>(capacity: 4096)

    init(settings: RuleSettings) {
        sensitive = UUIDSet(Self.defaults.map { BluetoothUUID(uuid16: $0) } + settings.sensitiveCharacteristics)
    }

    private func isSensitive(_ a: ATTObservation) -> BluetoothUUID? {
        guard !a.isCCCD else { return nil }
        if let u = a.characteristic, sensitive.contains(u) || a.service?.uuid16 == Self.userDataService16 { return u }
        if a.opcode == .readByTypeRequest, let u = a.attributeType, sensitive.contains(u) { return u }
        return nil
    }

    private static func kind(_ op: ATTOpcode) -> Kinds {
        switch op {
        case .readByTypeRequest, .readRequest, .readBlobRequest, .readMultipleRequest, .readMultipleVariableRequest: return .read
        case .handleValueNotification, .multipleHandleValueNotification: return .notification
        case .handleValueIndication: return .indication
        default: return .write
        }
    }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: RuleContext) {
        switch event {
        case .encryptionChanged(let c, let on):
            if on { states.update(c.id, default: State()) { s in
                s.encrypted = true
                if s.encryptedAt == nil { s.encryptedAt = frame }
            } }
        case .disconnected(let c, _):
            disconnected(c, at: frame, emit: emit)
        default: break
        }
    }

    mutating func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef,
                             emit: RuleContext) {
        let uuid = isSensitive(a)
        guard uuid != nil || states.contains(c.id) else { return }
        states.update(c.id, default: State()) { s in
            guard !s.encrypted else { return }
            switch a.kind {
            case .request:
                let p = uuid.map { Pending(uuid: $0, handle: a.handle, frame: frame, kind: Self.kind(a.opcode)) }
                if a.origin == .local { s.pendingLocal = p } else { s.pendingRemote = p }
            case .response:
                // The response answers the other side's request.
                let p = a.origin == .remote ? s.pendingLocal.take() : s.pendingRemote.take()
                if let p, a.opcode != .errorResponse { Self.count(&s, p.uuid, p.handle, p.frame, p.kind) }
            case .command, .notification, .indication, .unknown:
                if let u = uuid { Self.count(&s, u, a.handle, frame, Self.kind(a.opcode)) }
            case .confirmation: break
            }
        }
    }

    private static func count(_ s: inout State, _ u: BluetoothUUID, _ h: UInt16?, _ f: FrameRef, _ kind: Kinds) {
        let i: Int
        if let known = s.accesses.firstIndex(where: { $0.uuid == u }) {
            i = known
        } else {
            guard s.accesses.count < 64 else { return }
            s.accesses.append(Access(uuid: u, first: f, last: f, handle: h))
            i = s.accesses.count - 1
        }
        s.accesses[i].count += 1
        s.accesses[i].kinds.insert(kind)
        s.accesses[i].last = f
    }

    func close(_ s: State, of c: Connection, _ end: ConnectionEnd, emit: RuleContext) {
        for x in s.accesses.sorted(by: { $0.first.number < $1.first.number }) {
            let u = x.uuid
            let name = AssignedNumbers.characteristicName(u).map { $0 + " " } ?? ""
            let link = s.encryptedAt == nil ? "on a link that was never encrypted" : "before the link was encrypted"
            emit(finding("\(name)(\(u)) \(x.kinds.names) \(plural: x.count, "time") \(link)",
                         subject: .connection(c), evidence: [x.first, x.last], decisive: x.first,
                         detail: u.uuidString, actor: .peer))
        }
    }
}
