import Decoders

/// The connections open now, by number: what rules look a connection up in when they judge it
/// (`RuleContext.connection`), so their state keeps numbers. The auditor adds the connection of each
/// event a rule may start keeping one on before its rules see the event (`Auditor.namingKinds`, and
/// every ATT PDU), and drops it once its disconnection was judged.
final class OpenConnections {
    /// As large as the dissector's table: a connection stays here as long as a rule may hold its state.
    private var table = ConnectionTable<Connection>(capacity: 1 << 17)
    /// The open links where this host, as client, has started a discovery (`ATTObservation.startsDiscovery`).
    /// Apart from the connections: reading a flag then copies no reference.
    private var discovered = ConnectionTable<Bool>(capacity: 1 << 17)

    subscript(id: Int) -> Connection? { table[id] }

    @inline(__always) func add(_ c: Connection) {
        if !table.contains(c.id) { table[c.id] = c }
    }

    /// Adds the connection of an ATT PDU; true when the client has discovered on it, this PDU included.
    @inline(__always) func add(_ c: Connection, discovering: Bool) -> Bool {
        add(c)
        if discovering, !discovered.contains(c.id) { discovered[c.id] = true }
        return discovered.contains(c.id)
    }

    func remove(_ id: Int) {
        table.removeValue(forKey: id)
        discovered.removeValue(forKey: id)
    }

    /// Adds the connection `event` names, if any: the one place the events that carry one are listed.
    /// Added in place rather than returned, which held a reference across the rules' calls.
    func add(namedBy event: AuditEvent) {
        switch event {
        case .connected(let c), .disconnected(let c, _), .encryptionChanged(let c, _), .att(let c, _), .pairing(let c, _),
             .pairingDebugKey(let c, _), .linkData(let c), .connectionOwner(let c, _), .discovery(let c, _):
            add(c)
        case .scanStarted, .scanStopped, .scanAtEnd, .createConnection, .disconnectCommand, .advertisingData, .advertisingStarted,
             .advertisingStopped, .advertisingParameters, .platform:
            break
        }
    }
}
