import Decoders

/// Pairings whose keys anyone who captured them can work out: LE legacy Just Works and Passkey
/// Entry (the TK is 0 or one of a million passkeys, found from the confirm values), and LE Secure
/// Connections with the published debug key.
struct BLE603PairingKeysRecoverable: OptionlessRule {
    static let info = RuleInfo.ble603

    static let consumes: AuditEventKinds = [.pairing]

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: RuleContext) {
        switch event {
        case .pairing(let c, let p):
            guard !p.failed, !p.secureConnections else { return }
            switch p.method {
            case .justWorks:
                emit(finding("LE legacy Just Works pairing with \(peer: c.peer): its TK is 0, so anyone who captured it has the STK and every key distributed under it",
                             subject: .connection(c), evidence: [frame], decisive: frame, detail: "legacy just works", actor: .peer))
            case .passkey:
                emit(finding("LE legacy Passkey Entry pairing with \(peer: c.peer): the passkey is found from the captured confirm values in at most 1,000,000 tries (under a second), and with it every key distributed",
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
