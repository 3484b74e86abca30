import Decoders

/// The parameters that bound what a connection can carry (Core Vol 6 Part B), as in force at a time.
public struct LinkParameters: Sendable, Equatable {
    /// Connection interval in units of 1.25 ms.
    public var interval: UInt16
    /// 1 LE 1M, 2 LE 2M, 3 LE Coded (S=8 assumed: the worst case).
    public var phy: UInt8 = 1
    /// Largest LL data PDU payload each way (27 without the Data Length Extension, up to 251).
    public var dataLength: Int = 27
    public var attMTU: Int = 23
    public var encrypted = false
    /// The most data PDUs the controller sent in one event while it had more to send, when known.
    public var packetsPerEvent: Int?

    public var intervalNanoseconds: Int64 { Int64(interval) * 1_250_000 }
}

/// What a link can carry at most with its parameters, from air time: each data PDU (preamble,
/// access address, header, payload, MIC when encrypted, CRC) is answered by an empty PDU after
/// T_IFS (150 µs) each way, and as many such pairs as fit go into one connection event. Values go
/// as notifications or write commands of ATT_MTU - 3 octets, each an L2CAP PDU fragmented to the
/// data length. Writes and indications that wait for their answer carry one value per two intervals.
public enum LinkCapacity {
    static let ifs: Int64 = 150_000

    /// Air time in nanoseconds of a data PDU with `payload` octets.
    public static func pduTime(_ payload: Int, phy: UInt8, encrypted: Bool) -> Int64 {
        RadioEstimate.pduTime(payload, phy: phy, encrypted: encrypted)
    }

    /// One data PDU of `payload` octets and the empty PDU that answers it, with both T_IFS.
    public static func pairTime(_ payload: Int, phy: UInt8, encrypted: Bool) -> Int64 {
        pduTime(payload, phy: phy, encrypted: encrypted) + ifs + pduTime(0, phy: phy, encrypted: false) + ifs
    }

    /// Link-layer payload bits per second with full PDUs back to back (the whole interval used).
    public static func linkLayerBitsPerSecond(phy: UInt8, dataLength: Int, encrypted: Bool) -> Double {
        Double(dataLength * 8) * 1e9 / Double(pairTime(dataLength, phy: phy, encrypted: encrypted))
    }

    /// Value octets of one notification or write command, and the LL PDUs that carry it.
    static func valueLayout(_ p: LinkParameters) -> (value: Int, pdus: [Int]) {
        let value = max(p.attMTU - 3, 1)
        var left = value + 3 + 4, pdus: [Int] = []  // ATT opcode and handle, L2CAP header
        let per = max(p.dataLength, 27)
        while left > 0 {
            pdus.append(min(left, per))
            left -= per
        }
        return (value, pdus)
    }

    /// Application bits per second at most for values sent without waiting (notifications, write
    /// commands), the whole interval usable, or at most `packetsPerEvent` data PDUs each event.
    public static func streamBitsPerSecond(_ p: LinkParameters, packetsPerEvent: Int? = nil) -> Double {
        let packetsPerEvent = packetsPerEvent ?? p.packetsPerEvent
        let (value, pdus) = valueLayout(p)
        let valueTime = pdus.reduce(Int64(0)) { $0 + pairTime($1, phy: p.phy, encrypted: p.encrypted) }
        let interval = p.intervalNanoseconds
        guard interval > 0 else { return 0 }
        // Whole values that fit in one event; an event that closes early leaves the rest unused.
        var perEvent = Double(interval / valueTime)
        if let limit = packetsPerEvent { perEvent = min(perEvent, Double(limit) / Double(pdus.count)) }
        if perEvent < 1 {
            // A value longer than an event: its fragments flow over several events.
            perEvent = Double(interval) / Double(valueTime)
        }
        return perEvent * Double(value * 8) * 1e9 / Double(interval)
    }

    /// Values that wait for their answer (write requests, indications): one per two intervals.
    public static func acknowledgedBitsPerSecond(_ p: LinkParameters) -> Double {
        let (value, _) = valueLayout(p)
        return Double(value * 8) * 1e9 / Double(2 * p.intervalNanoseconds)
    }

    /// The knobs that could raise a stream's throughput, each with what it would give alone.
    public struct Knob: Sendable, Equatable {
        public var name: String
        /// What to change, in the platform's terms where they differ.
        public var advice: String
        public var bitsPerSecond: Double
    }

    /// What limits a stream with these parameters: each knob set to its best on its own, best first
    /// (only those that would give at least 10% more).
    public static func limits(_ p: LinkParameters, acknowledged: Bool) -> [Knob] {
        let now = acknowledged ? acknowledgedBitsPerSecond(p) : streamBitsPerSecond(p)
        func rate(_ q: LinkParameters, ack: Bool = acknowledged) -> Double {
            ack ? acknowledgedBitsPerSecond(q) : streamBitsPerSecond(q)
        }
        var knobs: [Knob] = []
        if acknowledged {
            knobs.append(Knob(name: "write_type", advice: """
                values that need no answer (write without response instead of write requests, \
                notifications instead of indications or reads): one value per two intervals is the most \
                an acknowledged operation can do
                """, bitsPerSecond: rate(p, ack: false)))
        }
        if !acknowledged, let n = p.packetsPerEvent {
            var q = p
            q.packetsPerEvent = nil
            knobs.append(Knob(name: "packets_per_event", advice: """
                the controller sent at most \(n) data PDUs an event while more were waiting: a controller \
                setting (on an embedded peripheral, its event length or packets-per-event limit), not the app's
                """, bitsPerSecond: rate(q)))
        }
        if p.attMTU < 247 {
            var q = p
            q.attMTU = 247
            knobs.append(Knob(name: "att_mtu", advice: """
                raise the ATT MTU (Android: requestMtu(247); iOS negotiates it itself, up to 185 or 527; \
                the peripheral must accept it)
                """, bitsPerSecond: rate(q)))
        }
        if p.dataLength < 251 {
            var q = p
            q.dataLength = 251
            knobs.append(Knob(name: "data_length", advice: "enable the Data Length Extension (LL_LENGTH_REQ, 251 octets) on both sides",
                              bitsPerSecond: rate(q)))
        }
        if p.phy != 2 {
            var q = p
            q.phy = 2
            knobs.append(Knob(name: "phy", advice: "use LE 2M PHY (Android: setPreferredPhy; iOS chooses it when both support it)",
                              bitsPerSecond: rate(q)))
        }
        if acknowledged, p.interval > 6 {
            var q = p
            q.interval = 6
            knobs.append(Knob(name: "interval", advice: """
                a shorter connection interval (Android: requestConnectionPriority(HIGH); iOS accepts 15 ms \
                at the least from an accessory)
                """, bitsPerSecond: rate(q)))
        }
        return knobs.filter { $0.bitsPerSecond > now * 1.1 }.sorted { $0.bitsPerSecond > $1.bitsPerSecond }
    }
}
