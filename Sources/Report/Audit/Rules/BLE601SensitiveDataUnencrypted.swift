import Decoders

/// Personal data sent on an unencrypted link can be read by anyone in radio range with a sniffer.
struct BLE601SensitiveDataUnencrypted: AuditRule {
    static let info = RuleInfo(
        id: "BLE601", name: "sensitive-data-unencrypted", severity: .warning,
        summary: "Personal data read, written or notified on a link that was not encrypted",
        help: """
            Require an encrypted (paired) connection for characteristics that hold personal data: set \
            their permissions to need encryption so the stack pairs first. Over an unencrypted link, \
            names, e-mail addresses, body measurements and the like can be captured by any sniffer in \
            range. The defaults are the User Data Service (0x181C) characteristics; add custom UUIDs in \
            configuration (sensitive-characteristics). Requests answered by an error are not counted.
            """,
        guidance: "Core Bluetooth Programming Guide: require a paired connection to access sensitive data",
        notAFinding: "the same accesses after an Encryption Change with encryption on")

    /// User Data Service characteristics that hold personal data.
    static let defaults: [UInt16] = [
        0x2A80, 0x2A81, 0x2A82, 0x2A84, 0x2A85, 0x2A86, 0x2A87, 0x2A88, 0x2A8A, 0x2A8B, 0x2A8C, 0x2A8D,
        0x2A8E, 0x2A8F, 0x2A90, 0x2A91, 0x2A92, 0x2A93, 0x2A94, 0x2A95, 0x2A96, 0x2A97, 0x2A98, 0x2AA2,
    ]
    static let userDataService = BluetoothUUID(uuid16: 0x181C)

    struct Access {
        var count = 0
        var kinds: Set<String> = []
        var first: FrameRef
        var last: FrameRef
        var handle: UInt16?
    }

    struct State {
        var connection: Connection
        var encrypted = false
        var pending: [Origin: (BluetoothUUID, UInt16?, FrameRef, String)] = [:]
        var accesses: [BluetoothUUID: Access] = [:]
        var encryptedAt: FrameRef?
    }

    static let consumes: AuditEventKinds = [.encryptionChanged, .att, .disconnected]
    let settings: RuleSettings
    private let sensitive: UUIDSet
    private var states = ConnectionTable<State>(capacity: 4096)

    init(settings: RuleSettings) {
        self.settings = settings
        sensitive = UUIDSet(Self.defaults.map { BluetoothUUID(uuid16: $0) } + settings.sensitiveCharacteristics)
    }

    private func isSensitive(_ a: ATTObservation) -> BluetoothUUID? {
        guard !a.isCCCD else { return nil }
        if let u = a.characteristic, sensitive.contains(u) || a.service == Self.userDataService { return u }
        if a.opcode == ATTOpcode.readByTypeRequest, let u = a.attributeType, sensitive.contains(u) { return u }
        return nil
    }

    private static func kind(_ op: UInt8) -> String {
        switch op {
        case 0x08, 0x0A, 0x0C, 0x0E, 0x20: return "read"
        case 0x1B, 0x23: return "notification"
        case 0x1D: return "indication"
        default: return "write"
        }
    }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: (Finding) -> Void) {
        switch event {
        case .encryptionChanged(let c, let on):
            if on { states.update(c.id, default: State(connection: c)) { s in
                s.encrypted = true
                if s.encryptedAt == nil { s.encryptedAt = frame }
            } }
        case .disconnected(let c, _):
            if let s = states.removeValue(forKey: c.id) { report(s, emit: emit) }
        default: break
        }
    }

    mutating func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef,
                             emit: (Finding) -> Void) {
        let uuid = isSensitive(a)
        guard uuid != nil || states.contains(c.id) else { return }
        states.update(c.id, default: State(connection: c)) { s in
            guard !s.encrypted else { return }
            func count(_ u: BluetoothUUID, _ h: UInt16?, _ f: FrameRef, _ kind: String) {
                if s.accesses[u] == nil {
                    guard s.accesses.count < 64 else { return }
                    s.accesses[u] = Access(first: f, last: f, handle: h)
                }
                s.accesses[u]!.count += 1
                s.accesses[u]!.kinds.insert(kind)
                s.accesses[u]!.last = f
            }
            switch a.kind {
            case .request:
                if let u = uuid { s.pending[a.origin] = (u, a.handle, frame, Self.kind(a.opcode)) } else { s.pending[a.origin] = nil }
            case .response:
                let asker: Origin = a.origin == .remote ? .local : .remote
                if let (u, h, f, k) = s.pending.removeValue(forKey: asker), a.opcode != ATTOpcode.errorResponse {
                    count(u, h, f, k)
                }
            case .command, .notification, .indication:
                if let u = uuid { count(u, a.handle, frame, Self.kind(a.opcode)) }
            case .confirmation: break
            }
        }
    }

    mutating func finish(at frame: FrameRef?, emit: (Finding) -> Void) {
        for s in states.values { report(s, emit: emit) }
        states.removeAll()
    }

    private func report(_ s: State, emit: (Finding) -> Void) {
        for (u, x) in s.accesses.sorted(by: { $0.value.first.number < $1.value.first.number }) {
            let name = AssignedNumbers.characteristicName(u).map { $0 + " " } ?? ""
            emit(finding(name + "(" + u.description + ") " + x.kinds.sorted().joined(separator: "/") + " "
                            + String(x.count) + (x.count == 1 ? " time" : " times")
                            + (s.encryptedAt == nil ? " on a link that was never encrypted" : " before the link was encrypted"),
                         subject: .connection(s.connection), evidence: [x.first, x.last], decisive: x.first,
                         detail: u.uuidString))
        }
    }
}
