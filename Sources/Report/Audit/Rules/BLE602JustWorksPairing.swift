import Decoders

/// Just Works and avoidable legacy pairing give no protection against a man in the middle.
struct BLE602JustWorksPairing: OptionlessRule {
    static let info = RuleInfo.ble602

    static let consumes: AuditEventKinds = [.pairing]

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: RuleContext) {
        guard case .pairing(let c, let p) = event, !p.failed else { return }
        if p.method == .justWorks {
            let kind = p.secureConnections ? "LE Secure Connections" : "LE legacy"
            emit(finding("Just Works pairing with \(peer: c.peer) (\(kind)): no MITM protection",
                         subject: .connection(c), evidence: [frame], decisive: frame, detail: "just works", actor: .peer))
        }
        if !p.secureConnections && p.bothSupportSecureConnections {
            emit(finding("LE legacy pairing (\(p.method.rawValue)) although both sides support Secure Connections",
                         subject: .connection(c), evidence: [frame], decisive: frame, detail: "legacy", actor: .peer))
        }
    }
}
