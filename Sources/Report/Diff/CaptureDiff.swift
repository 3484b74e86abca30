import Decoders
import Wire

/// One metric side by side: its values in the base and the new capture, and whether the change is
/// for the worse.
public struct DiffRow: Sendable {
    public enum Unit: String, Sendable { case count, duration, bytes, percent, milliseconds, microcoulombs, bitsPerSecond = "bits_per_second", text }
    public enum Direction: Sendable { case higherIsWorse, lowerIsWorse, neutral }
    public enum Verdict: String, Sendable { case same, changed, better, worse, regression }

    public var section: String
    public var subject: String
    public var metric: String
    /// The threshold key (`DiffThresholds`), nil for a metric shown for information.
    public var key: String?
    public var unit: Unit
    public var base: Double?
    public var new: Double?
    public var baseText: String?
    public var newText: String?
    public var verdict: Verdict
    /// The value is an estimate (radio time).
    public var estimate = false

    public var changed: Bool { verdict != .same }
}

/// What changed between two captures.
public struct CaptureDiff: Sendable {
    public var base: String
    public var new: String
    public var rows: [DiffRow] = []
    public var added: [FindingSummary] = []
    public var resolved: [FindingSummary] = []
    /// Findings added beyond the `findings` threshold.
    public var findingsRegression = false

    public var regressions: Int { rows.filter { $0.verdict == .regression }.count + (findingsRegression ? 1 : 0) }
    public var worse: Int { rows.filter { $0.verdict == .worse || $0.verdict == .regression }.count }
    public var better: Int { rows.filter { $0.verdict == .better }.count }

    public init(base: String, new: String, _ a: CaptureMetrics, _ b: CaptureMetrics, thresholds: DiffThresholds = DiffThresholds()) {
        self.base = base
        self.new = new
        var rows = Rows(thresholds: thresholds)
        for adapter in Set(a.adapters.keys).union(b.adapters.keys).sorted() {
            rows.adapter("adapter " + String(adapter), a.adapters[adapter], b.adapters[adapter])
        }
        for device in Set(a.devices.keys).union(b.devices.keys).sorted() {
            rows.device("device " + device, a.devices[device], b.devices[device])
        }
        self.rows = rows.rows
        let before = Set(a.findings.map(\.fingerprint)), after = Set(b.findings.map(\.fingerprint))
        added = b.findings.filter { !before.contains($0.fingerprint) }
        resolved = a.findings.filter { !after.contains($0.fingerprint) }
        findingsRegression = !added.isEmpty
            && thresholds["findings"].exceeded(base: Double(a.findings.count), amount: Double(added.count))
    }
}

/// Builds the rows of one comparison.
private struct Rows {
    let thresholds: DiffThresholds
    var rows: [DiffRow] = []

    /// A number. `additive` metrics (counts, totals) read a side without the subject as zero;
    /// measures (a duty, a round-trip time) leave it empty.
    mutating func number(_ section: String, _ subject: String, _ metric: String, _ key: String?, _ unit: DiffRow.Unit,
                         _ direction: DiffRow.Direction, _ a: Double?, _ b: Double?, additive: Bool = true,
                         estimate: Bool = false) {
        let base = a ?? (additive ? 0 : nil), new = b ?? (additive ? 0 : nil)
        var verdict: DiffRow.Verdict = .same
        if let x = base, let y = new {
            if x != y {
                let worse = direction == .higherIsWorse ? y - x : direction == .lowerIsWorse ? x - y : 0
                if direction == .neutral {
                    verdict = .changed
                } else if worse > 0 {
                    verdict = key.map { thresholds[$0].exceeded(base: x, amount: worse) } == true ? .regression : .worse
                } else {
                    verdict = .better
                }
            }
        } else if (base == nil) != (new == nil) {
            verdict = .changed
        }
        rows.append(DiffRow(section: section, subject: subject, metric: metric, key: key, unit: unit, base: base, new: new,
                            verdict: verdict, estimate: estimate))
    }

    mutating func text(_ section: String, _ subject: String, _ metric: String, _ a: String?, _ b: String?,
                       key: String? = nil, worse: ((String?, String?) -> Bool)? = nil) {
        var verdict: DiffRow.Verdict = a == b ? .same : .changed
        if a != b, let worse, worse(a, b) {
            verdict = key.map { thresholds[$0] != .off } == true ? .regression : .worse
        }
        rows.append(DiffRow(section: section, subject: subject, metric: metric, key: key, unit: .text, baseText: a, newText: b,
                            verdict: verdict))
    }

    private func d(_ v: Int?) -> Double? { v.map(Double.init) }
    private func d(_ v: Int64?) -> Double? { v.map(Double.init) }
    private func d<T: BinaryInteger>(_ v: T?) -> Double? { v.map { Double($0) } }

    mutating func adapter(_ s: String, _ a: AdapterMetrics?, _ b: AdapterMetrics?) {
        let sec = "scanning"
        number(sec, s, "scans", nil, .count, .neutral, d(a?.scans), d(b?.scans))
        number(sec, s, "scan time", "scan_time", .duration, .higherIsWorse, d(a?.scanTime), d(b?.scanTime))
        number(sec, s, "scan duty (window/interval)", "scan_duty", .percent, .higherIsWorse, a?.duty, b?.duty, additive: false)
        text(sec, s, "filter duplicates", a?.filterDuplicates.map(Self.duplicates), b?.filterDuplicates.map(Self.duplicates))
        number(sec, s, "advertising reports", "reports", .count, .higherIsWorse, d(a?.reports), d(b?.reports))
        number(sec, s, "scan start to connection", "time_to_connect", .duration, .higherIsWorse,
               d(a?.timeToConnect), d(b?.timeToConnect), additive: false)
        number("radio", s, "scan listening time (estimate)", "radio_time", .duration, .higherIsWorse,
               d(a?.scanRadioTime), d(b?.scanRadioTime), estimate: true)
    }

    static func duplicates(_ v: UInt8) -> String { v == 0 ? "off" : v == 1 ? "on" : "on, per period" }

    static func phy(_ v: UInt8) -> String { v == 1 ? "1M" : v == 2 ? "2M" : v == 3 ? "Coded" : Hex.prefixed(v, width: 2) }

    static func phys(_ m: DeviceMetrics?) -> String? {
        guard let m, let tx = m.txPHY, let rx = m.rxPHY else { return nil }
        return tx == rx ? phy(tx) : phy(tx) + " TX, " + phy(rx) + " RX"
    }

    mutating func device(_ s: String, _ a: DeviceMetrics?, _ b: DeviceMetrics?) {
        var sec = "connections"
        number(sec, s, "connections", "connections", .count, .higherIsWorse, d(a?.connections), d(b?.connections))
        number(sec, s, "interval (ms)", nil, .milliseconds, .neutral, a?.interval.map { Double($0) * 1.25 },
               b?.interval.map { Double($0) * 1.25 }, additive: false)
        number(sec, s, "peripheral latency", nil, .count, .neutral, d(a?.latency), d(b?.latency), additive: false)
        number(sec, s, "supervision timeout (ms)", nil, .milliseconds, .neutral, a?.timeout.map { Double($0) * 10 },
               b?.timeout.map { Double($0) * 10 }, additive: false)
        number(sec, s, "ATT MTU", "mtu", .count, .lowerIsWorse, d(a?.mtu), d(b?.mtu), additive: false)
        text(sec, s, "PHY", Self.phys(a), Self.phys(b))
        number(sec, s, "data length (TX octets)", nil, .count, .neutral, d(a?.maxTxOctets), d(b?.maxTxOctets), additive: false)
        text(sec, s, "pairing", a?.pairing, b?.pairing)
        text(sec, s, "encryption", a.map { $0.encrypted ? "yes" : "no" }, b.map { $0.encrypted ? "yes" : "no" },
             key: "encryption", worse: { x, y in x == "yes" && y != "yes" })
        number(sec, s, "time connected", "time_connected", .duration, .higherIsWorse, d(a?.timeConnected), d(b?.timeConnected))
        sec = "gatt"
        number(sec, s, "discovery requests", "discovery_requests", .count, .higherIsWorse,
               d(a?.discoveryRequests), d(b?.discoveryRequests))
        number(sec, s, "time to discovery complete", "discovery_time", .duration, .higherIsWorse,
               d(a?.discoveryTime), d(b?.discoveryTime))
        number(sec, s, "connected to first value (set-up)", "time_to_ready", .duration, .higherIsWorse,
               d(a?.timeToReady), d(b?.timeToReady), additive: false)
        number(sec, s, "value throughput, busiest connection", "throughput", .bitsPerSecond, .lowerIsWorse,
               a?.throughput, b?.throughput, additive: false)
        number(sec, s, "reads", "reads", .count, .higherIsWorse, d(a?.reads), d(b?.reads))
        number(sec, s, "writes", "writes", .count, .higherIsWorse, d(a?.writes), d(b?.writes))
        number(sec, s, "notifications", "notifications", .count, .higherIsWorse, d(a?.notifications), d(b?.notifications))
        number(sec, s, "indications", "indications", .count, .higherIsWorse, d(a?.indications), d(b?.indications))
        number(sec, s, "ATT bytes sent", "bytes", .bytes, .higherIsWorse, d(a?.bytesOut), d(b?.bytesOut))
        number(sec, s, "ATT bytes received", "bytes", .bytes, .higherIsWorse, d(a?.bytesIn), d(b?.bytesIn))
        number(sec, s, "ATT round trip, median", "att_rtt", .duration, .higherIsWorse,
               d(a?.rtt.percentile(50)), d(b?.rtt.percentile(50)), additive: false)
        number(sec, s, "ATT round trip, p95", "att_rtt", .duration, .higherIsWorse,
               d(a?.rtt.percentile(95)), d(b?.rtt.percentile(95)), additive: false)
        // A handle either capture knows the UUID of is keyed by that UUID in both.
        let known = (a?.handleUUIDs ?? [:]).merging(b?.handleUUIDs ?? [:]) { x, _ in x }
        let left = Self.byUUID(a?.characteristics ?? [:], known), right = Self.byUUID(b?.characteristics ?? [:], known)
        let chars = Set(left.keys).union(right.keys).sorted()
        for c in chars {
            let x = a == nil ? nil : left[c], y = b == nil ? nil : right[c]
            let sub = s + " / " + Self.characteristicLabel(c)
            func each(_ metric: String, _ key: String, _ unit: DiffRow.Unit, _ v: (CharacteristicMetrics) -> Int) {
                let p = x.map(v) ?? 0, q = y.map(v) ?? 0
                guard p != 0 || q != 0 else { return }
                number(sec, sub, metric, key, unit, .higherIsWorse, Double(p), Double(q))
            }
            each("reads", "reads", .count) { $0.reads }
            each("writes", "writes", .count) { $0.writes }
            each("notifications", "notifications", .count) { $0.notifications }
            each("indications", "indications", .count) { $0.indications }
            each("value bytes sent", "bytes", .bytes) { $0.bytesOut }
            each("value bytes received", "bytes", .bytes) { $0.bytesIn }
        }
        number("radio", s, "connection events (estimate)", nil, .count, .higherIsWorse,
               a.map { $0.connectionEvents.rounded() }, b.map { $0.connectionEvents.rounded() }, estimate: true)
        number("radio", s, "connection radio time (estimate)", "radio_time", .duration, .higherIsWorse,
               d(a?.radioTime), d(b?.radioTime), estimate: true)
        number("radio", s, "device's radio charge (estimate, " + LinkEnergy.diffProfile.name + ")", "radio_charge", .microcoulombs,
               .higherIsWorse, a.map { $0.radioCharge / 1000 }, b.map { $0.radioCharge / 1000 }, estimate: true)
    }

    /// "handle 0x0012" keys (and their CCCDs) renamed to the UUID `known` gives the handle; counts
    /// that meet under one key are added.
    static func byUUID(_ chars: [String: CharacteristicMetrics], _ known: [UInt16: String]) -> [String: CharacteristicMetrics] {
        guard !known.isEmpty else { return chars }
        var out: [String: CharacteristicMetrics] = [:]
        for (k, m) in chars {
            var key = k
            let cccd = k.hasSuffix(" CCCD")
            let bare = cccd ? String(k.dropLast(5)) : k
            if bare.hasPrefix("handle 0x"), let h = UInt16(bare.dropFirst(9), radix: 16), let u = known[h], !cccd {
                key = u
            }
            out[key, default: CharacteristicMetrics()].add(m)
        }
        return out
    }

    /// "0x2A19 Battery Level", "0x2A19 Battery Level CCCD", a full UUID, "handle 0x0012".
    static func characteristicLabel(_ key: String) -> String {
        let cccd = key.hasSuffix(" CCCD")
        let bare = cccd ? String(key.dropLast(5)) : key
        guard let u = BluetoothUUID(bare.hasPrefix("0x") ? String(bare.dropFirst(2)) : bare),
              let name = AssignedNumbers.characteristicName(u) else { return key }
        return bare + " " + name + (cccd ? " CCCD" : "")
    }
}
