import Decoders
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `blesniff diff` compares: one capture's Bluetooth behaviour reduced to numbers, per host
/// adapter (scanning) and per device under test (connections, GATT traffic), with the audit's
/// findings. Made in the audit's one pass (`MetricsCollector`); every table has a named cap, so a
/// capture of any length takes bounded memory.
public struct CaptureMetrics: Sendable {
    public var adapters: [UInt16: AdapterMetrics] = [:]
    /// By peer address, as printed ("AA:BB:CC:DD:EE:FF").
    public var devices: [String: DeviceMetrics] = [:]
    /// Findings of the audit (not bystanders', not the platform's own behaviour).
    public var findings: [FindingSummary] = []
    /// Devices seen after `MetricsCollector.maxDevices` were tracked: their traffic is not counted.
    public var devicesDropped = 0

    public init() {}
}

/// A finding as the diff tells it: matched across captures by fingerprint.
public struct FindingSummary: Sendable, Hashable {
    public var rule: String
    public var severity: String
    public var fingerprint: String
    public var subject: String
    public var message: String
}

extension FindingSummary {
    public init(_ f: Finding) {
        self.init(rule: f.rule, severity: f.severity.name, fingerprint: f.fingerprint, subject: f.subject.label,
                  message: f.message)
    }
}

/// One host adapter's scanning.
public struct AdapterMetrics: Sendable {
    /// Scan enables (a stop and restart within the scan-restart gap is one scan).
    public var scans = 0
    /// Nanoseconds scanning was on; a scan left on counts up to the capture's last frame.
    public var scanTime: Int64 = 0
    /// Nanoseconds the receiver listened while scanning: each stretch's time times its
    /// window / interval (`RadioEstimate`).
    public var scanRadioTime: Int64 = 0
    /// Scan window and interval of the last scan, in units of 0.625 ms (nil: never set, the
    /// controller's default 10 ms / 10 ms applies).
    public var window: UInt16?
    public var interval: UInt16?
    /// Filter duplicates of the last scan enabled (0 off, 1 on, 2 on per period).
    public var filterDuplicates: UInt8?
    public var reports = 0
    /// From the first scan enable to the first connection this adapter made, in nanoseconds.
    public var timeToConnect: Int64?

    public init() {}

    /// Scan window / interval in percent, or nil when no scan ran.
    public var duty: Double? {
        guard scans > 0 else { return nil }
        return 100 * Double(window ?? 16) / Double(max(interval ?? 16, 1))
    }
}

/// One device under test: the connections this host made to it and their GATT traffic.
public struct DeviceMetrics: Sendable {
    public var connections = 0
    /// Connection parameters last in force (interval and timeout in their HCI units: 1.25 ms, 10 ms).
    public var interval: UInt16?
    public var latency: UInt16?
    public var timeout: UInt16?
    /// Largest ATT_MTU agreed.
    public var mtu: Int?
    /// PHY last reported by LE PHY Update Complete (1 = 1M, 2 = 2M, 3 = Coded), TX / RX.
    public var txPHY: UInt8?
    public var rxPHY: UInt8?
    /// Max TX / RX octets last reported by LE Data Length Change.
    public var maxTxOctets: UInt16?
    public var maxRxOctets: UInt16?
    public var pairing: String?
    public var encrypted = false
    /// Nanoseconds connected, over all connections; open ones count up to the last frame.
    public var timeConnected: Int64 = 0
    /// Discovery requests this host sent (services, included services, characteristics, descriptors).
    public var discoveryRequests = 0
    /// Per connection, from its start to the answer of its last discovery request; summed.
    public var discoveryTime: Int64 = 0
    /// From the first connection's start to the first value it carried (set-up time).
    public var timeToReady: Int64?
    /// Value throughput of its busiest connection, bits per second (`LinkSummary.achievedBitsPerSecond`).
    public var throughput: Double?
    /// By characteristic UUID ("0x2A19", a full UUID, "0x2A19 CCCD", or "handle 0x0012" when the
    /// capture never showed the database).
    public var characteristics: [String: CharacteristicMetrics] = [:]
    /// Characteristics seen after `MetricsCollector.maxCharacteristics`: counted in totals only.
    public var characteristicsDropped = 0
    /// The characteristic UUID of each value handle this capture saw discovered or used with a
    /// known database: the other capture's "handle 0x0012" keys are read as that UUID (a phone
    /// that cached the database does not discover it again).
    public var handleUUIDs: [UInt16: String] = [:]
    /// ATT PDU bytes (L2CAP payload) this host sent and received.
    public var bytesOut = 0
    public var bytesIn = 0
    public var rtt = RTTHistogram()
    /// Connection events estimated from the time connected and the interval (`RadioEstimate`).
    public var connectionEvents: Double = 0
    /// Estimated radio time of the connections, in nanoseconds.
    public var radioTime: Int64 = 0
    /// The device's side of its connections' radio charge (`LinkEnergy`, `LinkEnergy.diffProfile`),
    /// nanocoulombs: the peripheral's when this host was central, the central's when it was peripheral.
    public var radioCharge: Double = 0

    public init() {}

    public var reads: Int { characteristics.values.reduce(0) { $0 + $1.reads } + droppedTotals.reads }
    public var writes: Int { characteristics.values.reduce(0) { $0 + $1.writes } + droppedTotals.writes }
    public var notifications: Int { characteristics.values.reduce(0) { $0 + $1.notifications } + droppedTotals.notifications }
    public var indications: Int { characteristics.values.reduce(0) { $0 + $1.indications } + droppedTotals.indications }
    /// What characteristics past the cap did, so totals stay right.
    public var droppedTotals = CharacteristicMetrics()
}

/// Operations on one characteristic.
public struct CharacteristicMetrics: Sendable {
    public var reads = 0, writes = 0, notifications = 0, indications = 0
    /// Value bytes this host sent (writes) and received (read responses, notifications, indications).
    public var bytesOut = 0
    public var bytesIn = 0

    public init() {}
}

/// ATT round-trip times (request to response) in logarithmic buckets 5% wide, from 100 µs to
/// over 100 s: percentiles within 5% in a fixed 300 counters, however many requests.
public struct RTTHistogram: Sendable, Equatable {
    static let base = 100_000.0  // ns
    static let ratio = 1.05
    static let bucketCount = 300
    public private(set) var counts: [UInt32] = []
    public private(set) var total = 0

    public init() {}

    public mutating func add(_ ns: Int64) {
        if counts.isEmpty { counts = Array(repeating: 0, count: Self.bucketCount) }
        let v = max(Double(ns), Self.base)
        let i = min(Self.bucketCount - 1, Int((log(v / Self.base) / log(Self.ratio)).rounded(.down)))
        counts[i] &+= 1
        total += 1
    }

    /// The percentile (0...100), as its bucket's geometric middle, in nanoseconds.
    public func percentile(_ p: Double) -> Int64? {
        guard total > 0 else { return nil }
        let rank = max(1, Int((Double(total) * p / 100).rounded(.up)))
        var seen = 0
        for (i, c) in counts.enumerated() {
            seen += Int(c)
            if seen >= rank { return Int64(Self.base * pow(Self.ratio, Double(i) + 0.5)) }
        }
        return nil
    }
}

/// The radio-time estimate: what the captures do not show (host captures carry no air time) worked
/// out from what they do. An estimate, labelled so in every output.
///
/// - Scanning: each stretch of scanning counts `time × window / interval` (the receiver is on for
///   the window of every interval; the controller's default is 10 ms / 10 ms).
/// - Connections: every connection event carries at least an empty packet each way and one
///   inter-frame space: `events × (2 × t(0) + T_IFS)`, events = time connected / interval (peripheral
///   latency ignored: the central transmits every event). Each L2CAP PDU adds its bytes, split into
///   link-layer fragments of the data length in force (27 unless LE Data Length Change said more),
///   each fragment `t(header + payload + MIC + CRC) + T_IFS + t(empty)` for its acknowledgement.
///   t(n) is n octets plus preamble and access address at the PHY's rate: 8 µs per octet on 1M,
///   4 µs on 2M, 64 µs on Coded S=8; T_IFS 150 µs.
public enum RadioEstimate {
    static let ifs: Int64 = 150_000

    /// Air time in nanoseconds of a link-layer data PDU with `payload` octets.
    static func pduTime(_ payload: Int, phy: UInt8?, encrypted: Bool) -> Int64 {
        // Header 2, CRC 3, access address 4, MIC 4 when encrypted and not empty.
        let mic = encrypted && payload > 0 ? 4 : 0
        switch phy ?? 1 {
        case 2: return Int64(2 + 4 + 2 + payload + mic + 3) * 4_000
        case 3: return Int64(80_000 + 256_000 + (2 + payload + mic + 3) * 64_000)  // preamble + AA/CI/TERM1, S=8
        default: return Int64(1 + 4 + 2 + payload + mic + 3) * 8_000
        }
    }

    /// One connection event with nothing to send.
    static func emptyEvent(phy: UInt8?) -> Int64 { 2 * pduTime(0, phy: phy, encrypted: false) + ifs }

    /// An L2CAP PDU of `length` octets (4 of header included), fragmented to `dataLength`.
    static func l2capTime(_ length: Int, dataLength: Int, phy: UInt8?, encrypted: Bool) -> Int64 {
        var left = length, t: Int64 = 0
        let per = max(dataLength, 27)
        repeat {
            let n = min(left, per)
            t += pduTime(n, phy: phy, encrypted: encrypted) + ifs + pduTime(0, phy: phy, encrypted: false) + ifs
            left -= n
        } while left > 0
        return t
    }

    /// Nanoseconds of listening for `time` of scanning with `window` / `interval` (0.625 ms units).
    static func scanTime(_ time: Int64, window: UInt16?, interval: UInt16?) -> Int64 {
        let w = Double(window ?? 16), i = Double(max(interval ?? 16, 1))
        return Int64(Double(time) * min(1, w / i))
    }
}
