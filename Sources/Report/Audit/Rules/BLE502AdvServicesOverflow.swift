import Decoders
import Wire

/// Service UUIDs that do not fit in the packet are found only by scanners that look for them
/// explicitly (a scan response request, or Apple's hashed overflow area).
struct BLE502AdvServicesOverflow: AdvertisingDataRule {
    static let info = RuleInfo.ble502
    static let advertisingInterest: AdvertisingInterest = .new([.incompleteList, .overflowArea])

    static let consumes: AuditEventKinds = [.advertisingData, .discovery]
    let includeReceived: Bool
    /// Incomplete 128-bit lists of received advertisers, held until the end: a device connected to
    /// later shows its services, and when they are all in the list nothing was left out.
    private var held: [(finding: Finding, address: BDAddr, listed: [BluetoothUUID])] = []
    static let maxHeld = 256
    /// The 128-bit primary services each peer's discovery showed.
    private var discovered = BoundedMap<BDAddr, [BluetoothUUID]>(capacity: 4096)

    init(settings: RuleSettings) { includeReceived = settings.flag("include-received") }

    mutating func judge(_ o: AdvertisingDataObservation, at frame: FrameRef, emit: RuleContext) {
        // Each once per advertiser, in the order they stand in the data.
        let list = o.new.contains(.incompleteList), area = o.new.contains(.overflowArea)
        guard list || area else { return }
        if list && (!area || o.facts.listOffset < o.facts.overflowOffset) {
            incompleteList(o, at: frame, emit: emit)
            if area { overflowArea(o, at: frame, emit: emit) }
        } else {
            overflowArea(o, at: frame, emit: emit)
            if list { incompleteList(o, at: frame, emit: emit) }
        }
    }

    private mutating func incompleteList(_ o: AdvertisingDataObservation, at frame: FrameRef, emit: RuleContext) {
        let width = Int(o.facts.listWidth)
        let type = width == 2 ? ADType.incomplete16 : width == 4 ? ADType.incomplete32 : ADType.incomplete128
        let listed = o.facts.listedUUIDs(in: o.data)
        var msg: Message = "incomplete list of \(width * 8)-bit service UUIDs (AD \(hex: type)) in full advertising data"
        for (i, u) in listed.enumerated() { msg += "\(i == 0 ? ": " : ", ")\(u)" }
        let f = finding(msg, o.key, at: frame, detail: "incomplete list")
        if width == 16, let a = o.key.address, held.count < Self.maxHeld {
            held.append((f, a, listed))
        } else {
            emit(f)
        }
    }

    private func overflowArea(_ o: AdvertisingDataObservation, at frame: FrameRef, emit: RuleContext) {
        emit(finding("""
            Apple overflow area in manufacturer data (company 0x004C, type 0x01) with \
            \(plural: Int(o.facts.overflowBits), "service UUID bit") set
            """, o.key, at: frame, detail: "overflow area"))
    }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: RuleContext) {
        guard case .discovery(let c, let d) = event, d.origin == .remote, d.opcode == .readByGroupTypeResponse,
              let p = c.peer else { return }
        let wide = d.found.filter { !$0.isOnBase }
        guard !wide.isEmpty else { return }
        discovered.update(p, default: []) { d in
            for u in wide where !d.contains(u) && d.count < 64 { d.append(u) }
        }
    }

    mutating func finish(at frame: FrameRef?, emit: RuleContext) {
        for h in held {
            if let d = discovered[h.address], d.allSatisfy(h.listed.contains) { continue }
            emit(h.finding)
        }
        held = []
    }
}
