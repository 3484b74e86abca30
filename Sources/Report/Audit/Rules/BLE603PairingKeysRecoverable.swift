import Decoders

/// Pairings whose keys anyone who captured them can work out: LE legacy Just Works and Passkey
/// Entry (the TK is 0 or one of a million passkeys, found from the confirm values), and LE Secure
/// Connections with the published debug key.
struct BLE603PairingKeysRecoverable: AuditRule {
    static let info = RuleInfo(
        id: "BLE603", name: "pairing-keys-recoverable", severity: .warning,
        summary: "A pairing whose keys a passive listener can work out: LE legacy Just Works or Passkey Entry, or the Secure Connections debug key",
        help: """
            A sniffer that captures an LE legacy pairing finds its TK from the Pairing Confirm and Random \
            values: 0 under Just Works, and under Passkey Entry one of 1,000,000 passkeys, tried in under a \
            second on one core (blesniff does it). The STK follows, and with it every key distributed \
            during the pairing: the LTK of every later connection. Use LE Secure Connections (both sides \
            set the SC bit; Secure Connections Only mode on the peripheral). A device that sends the \
            debug public key (Core Vol 3 Part H 2.3.5.6.1) gives the same away under Secure Connections: \
            its private key is published. Debug keys belong only on development builds.
            """,
        guidance: "Passive eavesdropping protection (Core Vol 3 Part H 2.3.5.6, 2.3.5.6.1; Vol 1 Part A 5.4.5)")

    static let consumes: AuditEventKinds = [.pairing]

    init(settings: RuleSettings) {}

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: (Finding) -> Void) {
        switch event {
        case .pairing(let c, let p):
            guard !p.failed, !p.secureConnections else { return }
            let peer = c.peer?.description ?? "the peer"
            switch p.method {
            case .justWorks:
                emit(finding("LE legacy Just Works pairing with \(peer): its TK is 0, so anyone who captured it has the STK and every key distributed under it",
                             subject: .connection(c), evidence: [frame], decisive: frame, detail: "legacy just works", actor: .peer))
            case .passkey:
                emit(finding("LE legacy Passkey Entry pairing with \(peer): the passkey is found from the captured confirm values in at most 1,000,000 tries (under a second), and with it every key distributed",
                             subject: .connection(c), evidence: [frame], decisive: frame, detail: "legacy passkey", actor: .peer))
            case .numericComparison, .oob, .unknown:
                return
            }
        case .pairingDebugKey(let c, let fromInitiator):
            let who = fromInitiator ? "the central" : "the peripheral" + (c.peer.map { " (\($0.description))" } ?? "")
            emit(finding("LE Secure Connections pairing with the debug key, sent by \(who): its private key is published, so anyone who captured the pairing has the LTK",
                         subject: .connection(c), evidence: [frame], decisive: frame, detail: "debug key", actor: .peer))
        default:
            return
        }
    }
}
