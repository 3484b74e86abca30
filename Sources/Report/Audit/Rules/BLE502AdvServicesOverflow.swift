import Decoders
import Wire

/// Service UUIDs that do not fit in the packet are found only by scanners that look for them
/// explicitly (a scan response request, or Apple's hashed overflow area).
struct BLE502AdvServicesOverflow: AuditRule {
    static let info = RuleInfo(
        id: "BLE502", name: "adv-services-overflow", severity: .note,
        summary: "Advertised service UUIDs overflow: incomplete list or Apple overflow area",
        help: """
            Advertise only the UUIDs of the primary services that identify the device. Those that do not \
            fit end in an incomplete list or, on Apple devices, in the "overflow area" (manufacturer data \
            of company 0x004C, type 0x01, a 128-bit hash bitmap) that only devices scanning for those \
            exact UUIDs can match; a generic scanner does not see them.
            """,
        guidance: "Core Bluetooth Programming Guide: limit advertised service UUIDs to your primary services",
        notAFinding: """
            complete lists of service UUIDs; an incomplete 128-bit list of a device whose discovered \
            128-bit services are all in it (nothing was left out)
            """,
        options: [includeReceivedOption])

    static let consumes: AuditEventKinds = [.advertisingData, .att]
    static let attOpcodes = ATTOpcodeSet([.readByGroupTypeResponse])
    let settings: RuleSettings
    /// Options read once: a lookup by name per event costs a string hash.
    private let includeReceivedSetting: Bool
    private var seen = BoundedMap<AdvertiserKey, UInt8>(capacity: 10_000)
    /// Incomplete 128-bit lists of received advertisers, held until the end: a device connected to
    /// later shows its services, and when they are all in the list nothing was left out.
    private var held: [(finding: Finding, address: BDAddr, listed: [BluetoothUUID])] = []
    static let maxHeld = 256
    /// The 128-bit primary services each peer's discovery showed.
    private var discovered = BoundedMap<BDAddr, [BluetoothUUID]>(capacity: 4096)

    init(settings: RuleSettings) {
        self.settings = settings
        includeReceivedSetting = settings.flag("include-received")
    }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: (Finding) -> Void) {
        guard case .advertisingData(let adapter, let advertiser, let data, _, let legacy, let byHost) = event,
              byHost || includeReceivedSetting else { return }
        // Most data has neither: a first walk spares the lookup of what was reported already.
        var any = false
        var used = 0
        ADWalk.walk(data) { type, value in
            if type == 0x02 || type == 0x04 || type == 0x06 || ADWalk.isAppleOverflowArea(type, value) { any = true }
            used += 2 + value.count
        }
        guard any else { return }
        // An incomplete list says UUIDs were left out; it is the overflow this rule is about only
        // when they were left out for want of room (no space for one more in the data).
        let room = (legacy ? AdvertisingData.legacyMaximum : AdvertisingData.extendedMaximum) - used
        let key = AdvertiserKey(adapter: adapter, address: byHost ? nil : advertiser, host: byHost)
        var flagged = seen[key] ?? 0
        let before = flagged
        var found: [(Message, String, [BluetoothUUID]?)] = []
        ADWalk.walk(data) { type, value in
            switch type {
            case 0x02, 0x04, 0x06:
                let width = type == 0x02 ? 2 : type == 0x04 ? 4 : 16
                guard flagged & 1 == 0, room < width else { return }
                flagged |= 1
                var msg: Message = "incomplete list of \(width * 8)-bit service UUIDs (AD \(hex: type)) in full advertising data"
                var i = value.startIndex
                var listed: [BluetoothUUID] = []
                while i + width <= value.endIndex, listed.count < 8 {
                    if let u = BluetoothUUID(littleEndian: value[i..<(i + width)]) {
                        msg += "\(listed.isEmpty ? ": " : ", ")\(u)"
                        listed.append(u)
                    }
                    i += width
                }
                found.append((msg, "incomplete list", width == 16 ? listed : nil))
            case 0xFF where ADWalk.isAppleOverflowArea(type, value):
                guard flagged & 2 == 0 else { return }
                flagged |= 2
                var bits = 0
                for b in value.dropFirst(3).prefix(16) { bits += b.nonzeroBitCount }
                found.append(("""
                    Apple overflow area in manufacturer data (company 0x004C, type 0x01) with \
                    \(plural: bits, "service UUID bit") set
                    """, "overflow area", nil))
            default: break
            }
        }
        guard flagged != before else { return }
        seen[key] = flagged
        for (msg, detail, listed) in found {
            let f = finding(msg, subject: key.subject, evidence: [frame], decisive: frame, detail: detail, actor: key.host ? .host : .peer)
            if let listed, let a = key.address, held.count < Self.maxHeld {
                held.append((f, a, listed))
            } else {
                emit(f)
            }
        }
    }

    mutating func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef, emit: (Finding) -> Void) {
        guard a.origin == .remote, let p = c.peer, let found = a.found else { return }
        let wide = found.filter { !$0.isOnBase }
        guard !wide.isEmpty else { return }
        discovered.update(p, default: []) { d in
            for u in wide where !d.contains(u) && d.count < 64 { d.append(u) }
        }
    }

    mutating func finish(at frame: FrameRef?, emit: (Finding) -> Void) {
        for h in held {
            if let d = discovered[h.address], d.allSatisfy(h.listed.contains) { continue }
            emit(h.finding)
        }
        held = []
    }
}
