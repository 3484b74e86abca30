/// How much worse a metric may get before `blesniff diff --fail-on-regression` fails.
public enum DiffThreshold: Sendable, Equatable, CustomStringConvertible {
    /// Never a regression.
    case off
    /// Any worsening ("new" for findings: any finding added).
    case any
    /// Worse by more than this fraction of the base value (0.1 for "+10%"); from zero, any worsening.
    case relative(Double)
    /// Worse by more than this much, in the metric's unit (a count, or nanoseconds for times).
    case absolute(Double)

    /// "+10%", "10%", "+5", "+200ms" (a duration, for times), "new", "any", "off".
    public init?(parsing text: String) {
        var s = text.trimmingWhitespace().lowercased()
        switch s {
        case "off", "never", "none", "false": self = .off; return
        case "new", "any", "on", "true": self = .any; return
        default: break
        }
        if s.hasPrefix("+") { s.removeFirst() }
        if s.hasSuffix("%") {
            guard let v = Double(s.dropLast()), v >= 0 else { return nil }
            self = .relative(v / 100)
        } else if let v = Double(s), v >= 0 {
            self = .absolute(v)
        } else if let ns = ConfigParser.duration(s) {
            self = .absolute(Double(ns))
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .off: return "off"
        case .any: return "any"
        case .relative(let r): return "+" + DiffFormat.number(r * 100) + "%"
        case .absolute(let a): return "+" + DiffFormat.number(a)
        }
    }

    /// Whether going from `base` to `new`, already known to be worse by `amount` (positive), is
    /// beyond the threshold.
    func exceeded(base: Double, amount: Double) -> Bool {
        switch self {
        case .off: return false
        case .any: return amount > 0
        case .relative(let r): return base == 0 ? amount > 0 : amount / abs(base) > r + 1e-12
        case .absolute(let a): return amount > a
        }
    }
}

/// The thresholds by metric key (the `diff:` mapping of `.blesniff.yml`), over the defaults.
public struct DiffThresholds: Sendable {
    /// Every key, its default and what it covers.
    public static let catalogue: [(key: String, threshold: DiffThreshold, covers: String)] = [
        ("scan_time", .relative(0.2), "total time scanning"),
        ("scan_duty", .relative(0.1), "scan window / interval"),
        ("reports", .off, "advertising reports received"),
        ("time_to_connect", .relative(0.2), "scan start to first connection"),
        ("connections", .relative(0.1), "connections made"),
        ("time_connected", .relative(0.2), "time connected"),
        ("mtu", .off, "ATT_MTU (smaller is worse)"),
        ("encryption", .any, "a link that was encrypted no longer is"),
        ("discovery_requests", .relative(0.1), "GATT discovery requests"),
        ("discovery_time", .relative(0.2), "connection to discovery complete"),
        ("time_to_ready", .relative(0.2), "connection to the first value carried (set-up time)"),
        ("throughput", .relative(0.2), "value throughput of the device's busiest connection (lower is worse)"),
        ("reads", .relative(0.1), "reads, per device and per characteristic"),
        ("writes", .relative(0.1), "writes, per device and per characteristic"),
        ("notifications", .off, "notifications received"),
        ("indications", .off, "indications received"),
        ("bytes", .relative(0.1), "ATT bytes each way"),
        ("att_rtt", .relative(0.25), "ATT round-trip time, median and p95"),
        ("radio_time", .relative(0.2), "estimated radio time"),
        ("radio_charge", .relative(0.2), "the device's estimated radio charge (links' energy model)"),
        ("findings", .any, "audit findings added"),
    ]

    public static let keys: [String] = catalogue.map(\.key)

    public var values: [String: DiffThreshold] = [:]

    public init(_ values: [String: DiffThreshold] = [:]) { self.values = values }

    public subscript(key: String) -> DiffThreshold {
        values[key] ?? Self.catalogue.first { $0.key == key }?.threshold ?? .off
    }

    /// "discovery-time" and "discovery_time" are the same key.
    public static func normalised(_ key: String) -> String { String(key.map { $0 == "-" ? "_" : $0 }) }
}
