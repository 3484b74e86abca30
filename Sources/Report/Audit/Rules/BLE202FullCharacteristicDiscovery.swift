import Decoders

/// Characteristic and descriptor discovery over ranges the app never touches afterwards is
/// wasted air time.
struct BLE202FullCharacteristicDiscovery: PerConnectionRule, OptionlessRule {
    static let info = RuleInfo.ble202

    struct Range {
        var start: UInt16
        var end: UInt16
        var frame: FrameRef
        var service: BluetoothUUID?
        var used = false
    }

    struct State: ReusableState {
        var ranges: [Range] = []
        /// Ranges not used yet: once all are, a use has nothing to look for.
        var unused = 0
        var flaggedWhole: Set<ATTOpcode> = []

        mutating func adopt(_ old: inout State) {
            ranges.takeRoom(of: &old.ranges)
            flaggedWhole.takeRoom(of: &old.flaggedWhole)
        }
    }

    static let consumes: AuditEventKinds = [.att, .disconnected]
    static let attOpcodes = ATTOpcodeSet([.readByTypeRequest, .findInformationRequest]).union(.valueUses)
    /// State starts with a discovery request: uses count only where one was sent.
    static let attOpcodesAfterDiscovery = ATTOpcodeSet.valueUses
    var states = ConnectionTable<State>(capacity: 4096)

    mutating func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef,
                             emit: RuleContext) {
        let isCharDiscovery = a.opcode == .readByTypeRequest && a.attributeType == GATTType.characteristic
        let isDescDiscovery = a.opcode == .findInformationRequest
        if a.origin == .local, a.kind == .request, isCharDiscovery || isDescDiscovery, let start = a.handle {
            let end = a.endHandle ?? 0xFFFF
            if start == 0x0001 && end == 0xFFFF {
                let done = states.update(c.id, default: State()) { $0.flaggedWhole.insert(a.opcode).inserted }
                if done {
                    let what = isCharDiscovery ? "characteristic discovery (Read By Type 0x2803)"
                        : "descriptor discovery (Find Information)"
                    emit(finding("\(what) over the whole database 0x0001-0xFFFF",
                                  subject: .connection(c), evidence: [frame], decisive: frame,
                                  detail: isCharDiscovery ? "whole characteristics" : "whole descriptors"))
                }
                return
            }
            guard isCharDiscovery else { return }
            states.update(c.id, default: State()) { s in
                // A continuation keeps the end handle and starts inside the range already recorded,
                // or inside the whole-database walk already reported (restating it as a range
                // "0x0007-0xFFFF" would be a second finding about the same requests).
                if end == 0xFFFF, s.flaggedWhole.contains(.readByTypeRequest) { return }
                if s.ranges.contains(where: { $0.end == end && $0.start <= start }) { return }
                if s.ranges.count < 64 {
                    s.ranges.append(Range(start: start, end: end, frame: frame, service: a.service))
                    s.unused += 1
                }
            }
            return
        }
        guard let h = a.handle else { return }
        states.modify(c.id) { s in
            guard s.unused > 0, a.usesAttribute else { return }
            for i in s.ranges.indices where !s.ranges[i].used && s.ranges[i].start <= h && h <= s.ranges[i].end {
                s.ranges[i].used = true
                s.unused -= 1
            }
        }
    }

    func close(_ s: State, of c: Connection, _ end: ConnectionEnd, emit: RuleContext) {
        // Most connections use every range they discover: nothing to list.
        guard s.unused > 0 else { return }
        // A HID device's host discovers everything by its profile; an encrypted sniffed link hides the use.
        // An encrypted sniffed link hides the use only where no ATT PDU was read after its
        // encryption: the link's last ATT PDU tells, not its last use (a link read in full and
        // never used has none).
        if s.ranges.contains(where: { $0.service == hidService }) || c.hidesUse(after: emit.uses(c.id)?.lastATT ?? 0) { return }
        // Walked in place: a filtered copy of the ranges was a list made per connection.
        var count = 0
        var first: Range?, last: Range?
        for r in s.ranges where !r.used {
            count += 1
            if first == nil { first = r }
            last = r
        }
        guard let first, let last else { return }
        var msg: Message = """
            characteristic discovery over \(plural: count, "service range") whose characteristics were \
            never used:
            """
        var listed = 0
        for r in s.ranges where !r.used && listed < 4 {
            msg += "\(listed == 0 ? " " : ", ")\(handle: r.start)-\(handle: r.end)"
            if let u = r.service { msg += " (\(service: u))" }
            listed += 1
        }
        if count > 4 { msg += ", ..." }
        emit(finding(msg,
                     subject: .connection(c), evidence: [first.frame, last.frame], decisive: first.frame,
                     detail: "unused ranges"))
    }
}
