import Decoders
#if canImport(Glibc)
import Glibc
import Wire
#endif

/// A configuration problem, naming the key that is wrong.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public var file: String
    public var line: Int?
    /// Dotted path of the key: "rules.BLE301.window".
    public var key: String
    public var problem: String

    public var description: String {
        file + (line.map { ":" + String($0) } ?? "") + ": " + (key.isEmpty ? "" : key + ": ") + problem
    }
}

/// What configuration changes for one rule; nil leaves the catalogue's default.
public struct RuleOverride: Sendable {
    public var enabled: Bool?
    public var severity: Severity?
    public var values: [String: Int64] = [:]

    public init(enabled: Bool? = nil, severity: Severity? = nil, values: [String: Int64] = [:]) {
        self.enabled = enabled
        self.severity = severity
        self.values = values
    }

    mutating func apply(_ o: RuleOverride) {
        if let e = o.enabled { enabled = e }
        if let s = o.severity { severity = s }
        for (k, v) in o.values { values[k] = v }
    }
}

/// Settings that apply to captures whose path matches one of `patterns` (globs: `*`, `?`, `**`).
public struct PathOverride: Sendable {
    public var patterns: [String]
    public var rules: [String: RuleOverride]

    public init(patterns: [String], rules: [String: RuleOverride]) {
        self.patterns = patterns
        self.rules = rules
    }
}

/// The auditor's configuration: `.blesniff.yml`, found upward from the working directory, or `--config`.
///
///     rules:
///       BLE101: off
///       BLE301: { reads: 5, window: 10s, severity: warning }
///     BLE504: { enabled: false }          # rule ids (or names) may also stand at the top level
///     sensitive-characteristics: [2A8A, 6E400002-B5A3-F393-E0A9-E50E24DCCA9E]
///     overrides:
///       - paths: ["captures/legacy/**"]
///         rules: { BLE101: note }
///     keys: keys.yml                      # keys files (relative to this file) to decrypt with
public struct AuditConfiguration: Sendable {
    public static let fileName = ".blesniff.yml"

    /// By rule id.
    public var rules: [String: RuleOverride] = [:]
    public var sensitiveCharacteristics: [BluetoothUUID] = []
    public var overrides: [PathOverride] = []
    /// Keys files (`keys:`), as written; `load` reads them, relative to the configuration's directory.
    public var keysPaths: [String] = []
    /// The keys files read: their LTKs, TKs, private keys and IRKs decrypt and resolve every capture audited.
    public var keys: [KeysFile] = []
    /// Directory of the configuration file: path globs also match capture paths relative to it.
    public var baseDirectory: String?
    /// The host stack the captures come from, when told (`platform:`): else told from each capture.
    public var platform: Platform?
    /// The devices under test besides those this host connected to (`devices:`).
    public var devices: [DeviceMatcher] = []
    /// Advertiser rules judge every advertiser in range, not only the devices under test.
    public var allAdvertisers = false
    /// A scan disabled and enabled again with the same parameters within this time is one scan
    /// (`scan-restart-gap:`), in nanoseconds.
    public var scanRestartGap = defaultScanRestartGap
    public static let defaultScanRestartGap: Int64 = 100_000_000
    /// How much worse each metric may get in `blesniff diff --fail-on-regression` (`diff:`).
    public var diff = DiffThresholds()

    public init() {}

    /// The effective settings of every rule for a capture, by rule id.
    public func settings(for path: String? = nil) -> [String: RuleSettings] {
        var merged = rules
        if let path {
            for o in overrides where o.patterns.contains(where: { matches($0, path) }) {
                for (id, r) in o.rules { merged[id, default: RuleOverride()].apply(r) }
            }
        }
        var out: [String: RuleSettings] = [:]
        for t in AuditRules.all {
            let info = t.info
            let o = merged[info.id] ?? RuleOverride()
            out[info.id] = RuleSettings(info: info, enabled: o.enabled ?? true, severity: o.severity, values: o.values,
                                        sensitiveCharacteristics: sensitiveCharacteristics)
        }
        return out
    }

    private func matches(_ pattern: String, _ path: String) -> Bool {
        let p = path.hasPrefix("./") ? String(path.dropFirst(2)) : path
        if Glob.match(pattern, p) { return true }
        if !pattern.contains("/"), let name = p.split(separator: "/").last, Glob.match(pattern, String(name)) { return true }
        if let base = baseDirectory {
            let abs = p.hasPrefix("/") ? p : Self.currentDirectory() + "/" + p
            let prefix = base.hasSuffix("/") ? base : base + "/"
            if abs.hasPrefix(prefix), Glob.match(pattern, String(abs.dropFirst(prefix.count))) { return true }
        }
        return false
    }

    static func currentDirectory() -> String {
        var buf = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buf, buf.count) != nil else { return "." }
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The nearest `.blesniff.yml` in `directory` or above it.
    public static func discover(from directory: String? = nil) -> String? {
        var dir = directory ?? currentDirectory()
        while true {
            let candidate = (dir.hasSuffix("/") ? dir : dir + "/") + fileName
            if access(candidate, F_OK) == 0 { return candidate }
            guard let slash = dir.lastIndex(of: "/"), dir != "/" else { return nil }
            dir = slash == dir.startIndex ? "/" : String(dir[..<slash])
        }
    }

    /// The configuration at `path`, else the nearest `.blesniff.yml` upward from here, else the
    /// defaults: what every command that audits reads.
    public static func load(orDiscover path: String?) throws(ConfigurationError) -> AuditConfiguration {
        guard let p = path ?? discover() else { return AuditConfiguration() }
        return try load(path: p)
    }

    /// Reads and checks a configuration file.
    public static func load(path: String) throws(ConfigurationError) -> AuditConfiguration {
        let text: String
        do { text = try TextFile.read(path) } catch {
            throw ConfigurationError(file: path, key: "", problem: error == .tooLarge ? "larger than 1 MiB: not a configuration file"
                                                                                    : "cannot read the configuration file")
        }
        var config = try parse(text, file: path)
        if let slash = path.lastIndex(of: "/") {
            let dir = String(path[..<slash])
            config.baseDirectory = dir.hasPrefix("/") ? dir : currentDirectory() + "/" + dir
        } else {
            config.baseDirectory = currentDirectory()
        }
        for k in config.keysPaths {
            let resolved = k.hasPrefix("/") ? k : (config.baseDirectory ?? currentDirectory()) + "/" + k
            do {
                config.keys.append(try KeysFile.load(path: resolved))
            } catch {
                throw ConfigurationError(file: path, key: "keys", problem: error.description)
            }
        }
        return config
    }

    /// Parses configuration text. Unknown keys and bad values are errors naming the key.
    public static func parse(_ text: String, file: String = fileName) throws(ConfigurationError) -> AuditConfiguration {
        let root: YAMLNode?
        do {
            root = try YAML.compose(text)
        } catch {
            throw ConfigurationError(file: file, key: "", problem: "not valid YAML: " + String(describing: error))
        }
        let p = ConfigParser(file: file)
        var config = AuditConfiguration()
        guard let root else { return config }
        guard let top = root.mapping else { throw p.error(root, "", "expected a mapping of settings") }
        for (k, v) in top {
            let key = k.string ?? ""
            switch key {
            case "rules":
                guard let m = v.mapping else { throw p.error(v, key, "expected a mapping of rule ids to settings") }
                for (rk, rv) in m {
                    let (id, o) = try p.rule(rk, rv, path: key)
                    config.rules[id, default: RuleOverride()].apply(o)
                }
            case "sensitive-characteristics":
                config.sensitiveCharacteristics = try p.uuids(v, path: key)
            case "overrides":
                guard let seq = v.sequence else { throw p.error(v, key, "expected a list of {paths, rules}") }
                for (i, item) in seq.enumerated() {
                    config.overrides.append(try p.override(item, path: key + "[" + String(i) + "]"))
                }
            case "platform":
                guard let s = v.string, let pl = Platform(rawValue: s.lowercased()) else {
                    throw p.error(v, key, "expected one of " + Platform.allCases.map(\.rawValue).joined(separator: ", "))
                }
                config.platform = pl == .unknown ? nil : pl
            case "devices":
                let items: [YAMLNode] = v.sequence.map { Array($0) } ?? [v]
                for (i, item) in items.enumerated() {
                    config.devices.append(try p.device(item, path: key + "[" + String(i) + "]"))
                }
            case "all-advertisers":
                guard let b = p.bool(v) else { throw p.error(v, key, "expected true or false") }
                config.allAdvertisers = b
            case "scan-restart-gap":
                guard let s = v.string, let ns = ConfigParser.duration(s) else {
                    throw p.error(v, key, "expected a duration such as 100ms")
                }
                config.scanRestartGap = ns
            case "diff":
                config.diff = try p.diff(v, path: key)
            case "keys":
                let items: [YAMLNode] = v.sequence.map { Array($0) } ?? [v]
                for item in items {
                    guard let path = item.string, !path.isEmpty else { throw p.error(item, key, "expected the path of a keys file, or a list of them") }
                    config.keysPaths.append(path)
                }
            default:
                guard AuditRules.type(named: key) != nil else {
                    throw p.error(k, key, "unknown key (expected rules, sensitive-characteristics, overrides, platform, "
                                  + "devices, all-advertisers, scan-restart-gap, diff, keys or a rule id)")
                }
                let (id, o) = try p.rule(k, v, path: "")
                config.rules[id, default: RuleOverride()].apply(o)
            }
        }
        return config
    }
}

/// Walks the YAML tree, turning each value into settings or an error that names its key.
struct ConfigParser {
    let file: String

    func error(_ node: YAMLNode, _ key: String, _ problem: String) -> ConfigurationError {
        ConfigurationError(file: file, line: node.mark.map { $0.line }, key: key, problem: problem)
    }

    func rule(_ k: YAMLNode, _ v: YAMLNode, path: String) throws(ConfigurationError) -> (String, RuleOverride) {
        let name = k.string ?? ""
        let keyPath = path.isEmpty ? name : path + "." + name
        guard let t = AuditRules.type(named: name) else { throw error(k, keyPath, "unknown rule") }
        let info = t.info
        var o = RuleOverride()
        if let m = v.mapping {
            for (ok, ov) in m {
                let oname = ok.string ?? ""
                let optPath = keyPath + "." + oname
                switch oname {
                case "enabled":
                    guard let b = bool(ov) else { throw error(ov, optPath, "expected true or false") }
                    o.enabled = b
                case "severity":
                    let s = ov.string ?? ""
                    if s == "off" || s == "none" { o.enabled = false; continue }
                    guard let sev = Severity(name: s) else { throw error(ov, optPath, "expected error, warning, note or off") }
                    o.severity = sev
                default:
                    guard let opt = info.option(oname) else {
                        let known = (["enabled", "severity"] + info.options.map(\.name)).joined(separator: ", ")
                        throw error(ok, optPath, "unknown option of " + info.id + " (known: " + known + ")")
                    }
                    o.values[oname] = try value(ov, opt, path: optPath)
                }
            }
        } else if let s = v.string {
            switch s.lowercased() {
            case "off", "false", "no", "disabled", "none": o.enabled = false
            case "on", "true", "yes", "enabled": o.enabled = true
            default:
                guard let sev = Severity(name: s) else {
                    throw error(v, keyPath, "expected on, off, a severity (error, warning, note) or a mapping of options")
                }
                o.severity = sev
            }
        } else {
            throw error(v, keyPath, "expected on, off, a severity or a mapping of options")
        }
        return (info.id, o)
    }

    func value(_ v: YAMLNode, _ opt: RuleOption, path: String) throws(ConfigurationError) -> Int64 {
        guard let s = v.string else { throw error(v, path, "expected a value") }
        switch opt.kind {
        case .count:
            guard let n = Int64(s), n >= 0 else { throw error(v, path, "expected a whole number, got '" + s + "'") }
            return n
        case .bool:
            guard let b = bool(v) else { throw error(v, path, "expected true or false, got '" + s + "'") }
            return b ? 1 : 0
        case .duration:
            guard let ns = Self.duration(s) else {
                throw error(v, path, "expected a duration such as 10s, 500ms or 2m, got '" + s + "'")
            }
            return ns
        }
    }

    /// "10s", "500ms", "1.5s", "2m", "1h", "250us"; a bare number is seconds.
    static func duration(_ text: String) -> Int64? {
        let s = text.trimmingWhitespace()
        let units: [(String, Double)] = [("ms", 1e6), ("us", 1e3), ("ns", 1), ("s", 1e9), ("m", 60e9), ("h", 3600e9)]
        var number = s
        var scale = 1e9
        for (u, f) in units where s.hasSuffix(u) {
            number = String(s.dropLast(u.count)).trimmingWhitespace()
            scale = f
            break
        }
        guard !number.isEmpty, number.allSatisfy({ $0.isNumber || $0 == "." }), let d = Double(number), d >= 0,
              d * scale < 9e18 else { return nil }
        return Int64((d * scale).rounded())
    }

    func bool(_ v: YAMLNode) -> Bool? {
        switch v.string?.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: return nil
        }
    }

    func uuids(_ v: YAMLNode, path: String) throws(ConfigurationError) -> [BluetoothUUID] {
        let items: [YAMLNode]
        if let seq = v.sequence { items = Array(seq) } else { items = [v] }
        var out: [BluetoothUUID] = []
        for (i, item) in items.enumerated() {
            guard let s = item.string, let u = BluetoothUUID(s) else {
                throw error(item, path + "[" + String(i) + "]", "expected a 16-, 32- or 128-bit UUID")
            }
            out.append(u)
        }
        return out
    }

    /// `AA:BB:CC:DD:EE:FF`, `{address: ...}`, `{name: "HR-*"}` or `{service: 180D}`; a bare string that
    /// is no address is a name pattern.
    func device(_ v: YAMLNode, path: String) throws(ConfigurationError) -> DeviceMatcher {
        if let s = v.string {
            return DeviceMatcher(parsing: s) ?? .name(s)
        }
        guard let m = v.mapping, m.count == 1, let (k, x) = m.first else {
            throw error(v, path, "expected an address, or one of {address: ...}, {name: ...}, {service: ...}")
        }
        let key = k.string ?? ""
        let s = x.string ?? ""
        switch key {
        case "address":
            guard let a = BDAddr(parsing: s) else { throw error(x, path + ".address", "expected an address such as 00:1B:DC:07:32:A1") }
            return .address(a)
        case "name":
            guard !s.isEmpty else { throw error(x, path + ".name", "expected a name or a pattern such as HR-*") }
            return .name(s)
        case "service":
            guard let u = BluetoothUUID(s) else { throw error(x, path + ".service", "expected a 16-, 32- or 128-bit UUID") }
            return .service(u)
        default:
            throw error(k, path + "." + key, "unknown key (expected address, name or service)")
        }
    }

    /// `diff: { reads: "+10%", discovery_time: "+200ms", findings: new }`.
    func diff(_ v: YAMLNode, path: String) throws(ConfigurationError) -> DiffThresholds {
        guard let m = v.mapping else {
            throw error(v, path, "expected a mapping of metrics to thresholds, e.g. { reads: \"+10%\" }")
        }
        var out = DiffThresholds()
        for (k, x) in m {
            let name = k.string ?? ""
            let key = DiffThresholds.normalised(name)
            guard DiffThresholds.keys.contains(key) else {
                throw error(k, path + "." + name, "unknown metric (expected one of " + DiffThresholds.keys.joined(separator: ", ") + ")")
            }
            guard let s = x.string, let t = DiffThreshold(parsing: s) else {
                throw error(x, path + "." + name, "expected +N%, +N, a duration such as +200ms, new or off, got '"
                            + (x.string ?? "a mapping or list") + "'")
            }
            out.values[key] = t
        }
        return out
    }

    func override(_ v: YAMLNode, path: String) throws(ConfigurationError) -> PathOverride {
        guard let m = v.mapping else { throw error(v, path, "expected a mapping with paths and rules") }
        var patterns: [String] = []
        var rules: [String: RuleOverride] = [:]
        for (k, x) in m {
            let key = k.string ?? ""
            switch key {
            case "paths", "path":
                let items: [YAMLNode] = x.sequence.map { Array($0) } ?? [x]
                for item in items {
                    guard let s = item.string, !s.isEmpty else { throw error(item, path + "." + key, "expected a glob") }
                    patterns.append(s)
                }
            case "rules":
                guard let rm = x.mapping else { throw error(x, path + ".rules", "expected a mapping of rule ids to settings") }
                for (rk, rv) in rm {
                    let (id, o) = try rule(rk, rv, path: path + ".rules")
                    rules[id, default: RuleOverride()].apply(o)
                }
            default:
                guard AuditRules.type(named: key) != nil else {
                    throw error(k, path + "." + key, "unknown key (expected paths, rules or a rule id)")
                }
                let (id, o) = try rule(k, x, path: path)
                rules[id, default: RuleOverride()].apply(o)
            }
        }
        guard !patterns.isEmpty else { throw error(v, path + ".paths", "missing: an override needs at least one path glob") }
        return PathOverride(patterns: patterns, rules: rules)
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s.removeFirst() }
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return String(s)
    }
}

/// A device under test as configuration names it: its address, a pattern of its advertised name,
/// or a service UUID it advertises.
public enum DeviceMatcher: Sendable, Equatable {
    case address(BDAddr)
    case name(String)
    case service(BluetoothUUID)

    /// An address (`AA:BB:CC:DD:EE:FF`) or nil.
    public init?(parsing s: String) {
        guard let a = BDAddr(parsing: s) else { return nil }
        self = .address(a)
    }

}

/// Shell-style globs over paths: `*` and `?` stay within one path component, `**` crosses them.
public enum Glob {
    public static func match(_ pattern: String, _ path: String) -> Bool {
        match(Array(pattern.utf8)[...], Array(path.utf8)[...])
    }

    private static func match(_ p: ArraySlice<UInt8>, _ s: ArraySlice<UInt8>) -> Bool {
        var p = p, s = s
        while let c = p.first {
            switch c {
            case UInt8(ascii: "*"):
                let deep = p.dropFirst().first == UInt8(ascii: "*")
                var rest = p.dropFirst(deep ? 2 : 1)
                // "**/" also matches no directory at all.
                if deep, rest.first == UInt8(ascii: "/") {
                    if match(rest.dropFirst(), s) { return true }
                    rest = rest[rest.startIndex...]
                }
                var i = s.startIndex
                while true {
                    if match(rest, s[i...]) { return true }
                    guard i < s.endIndex, deep || s[i] != UInt8(ascii: "/") else { return false }
                    i += 1
                }
            case UInt8(ascii: "?"):
                guard let x = s.first, x != UInt8(ascii: "/") else { return false }
                p = p.dropFirst()
                s = s.dropFirst()
            default:
                guard s.first == c else { return false }
                p = p.dropFirst()
                s = s.dropFirst()
            }
        }
        return s.isEmpty
    }
}
