import Decoders

/// Just Works and avoidable legacy pairing give no protection against a man in the middle.
struct BLE602JustWorksPairing: AuditRule {
    static let info = RuleInfo(
        id: "BLE602", name: "just-works-pairing", severity: .note,
        summary: "Pairing without MITM protection (Just Works), or legacy pairing when both sides support Secure Connections",
        help: """
            Pair with an association model that authenticates (Numeric Comparison, Passkey Entry or Out of \
            Band) when the data needs it: Just Works, chosen when the IO capabilities offer nothing better, \
            cannot detect a man in the middle. When both sides set the Secure Connections bit, LE legacy \
            pairing should not happen; its keys can be cracked from a captured pairing.
            """,
        guidance: "MITM protection (Core Vol 3 Part H 2.3.5.1, 2.3.5.6)")

    static let consumes: AuditEventKinds = [.pairing]

    init(settings: RuleSettings) {}

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: (Finding) -> Void) {
        guard case .pairing(let c, let p) = event, !p.failed else { return }
        if p.method == .justWorks {
            let kind = p.secureConnections ? "LE Secure Connections" : "LE legacy"
            emit(finding("Just Works pairing with \(c.peer?.description ?? "the peer") (\(kind)): no MITM protection",
                         subject: .connection(c), evidence: [frame], decisive: frame, detail: "just works", actor: .peer))
        }
        if !p.secureConnections && p.bothSupportSecureConnections {
            emit(finding("LE legacy pairing (\(p.method.rawValue)) although both sides support Secure Connections",
                         subject: .connection(c), evidence: [frame], decisive: frame, detail: "legacy", actor: .peer))
        }
    }
}
