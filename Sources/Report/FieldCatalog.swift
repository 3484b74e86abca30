import Decoders

/// Every field name a display filter knows, with its type: the frame fields, and the layer fields
/// of `generated/FieldTable.swift` (the fields the decoders wrote for the committed and shared
/// captures, made by `blesniff fields --scan`; a test checks it covers the committed captures).
public enum FieldCatalog {
    /// The frame fields: each frame's own JSON keys (and `device`, the `--device` test).
    public static let frameFields: [(name: String, type: String)] = [
        ("frame", "unsigned"), ("time", "seconds"), ("relative_time", "seconds"), ("timestamp_ns", "signed"),
        ("direction", "string"), ("adapter", "unsigned"), ("connection", "unsigned"), ("kind", "string"),
        ("malformed", "boolean"), ("length", "unsigned"), ("file_offset", "signed"), ("device", "address"),
    ]

    /// Every field, frame fields first, then layer fields by name (with `LAYER.uuid`, any UUID
    /// of a layer that holds some, where the layer has no field of that name).
    public static let all: [(name: String, type: String)] = {
        let names = Set(FieldTable.fields.map(\.name))
        var out = frameFields
        var anyUUID: Set<String> = []
        for f in FieldTable.fields {
            out.append(f)
            if f.type.split(separator: "|").contains("uuid"), let layer = f.name.split(separator: ".").first,
               !names.contains(layer + ".uuid"), anyUUID.insert(String(layer)).inserted {
                out.append((layer + ".uuid", "uuid (any in the layer)"))
            }
        }
        return out
    }()

    static func hasUUIDs(layer: String) -> Bool { index[layer + ".uuid"] == "uuid (any in the layer)" }

    private static let index: [String: String] = {
        var d: [String: String] = [:]
        for f in all { d[f.name] = f.type }
        return d
    }()

    public static func contains(_ name: String) -> Bool { index[name] != nil }

    public static func type(of name: String) -> String? { index[name] }

    // MARK: Numbered instances

    /// The name's key without its instance number (`report_2` → `report`), nil when it has none.
    static func withoutNumber(_ key: Substring) -> Substring? {
        guard let u = key.lastIndex(of: "_"), u != key.startIndex, key.index(after: u) != key.endIndex,
              key[key.index(after: u)...].allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return key[..<u]
    }

    /// Fields that the decoders write in numbered instances (`hci_event.report_1`, `report_2`, …,
    /// one per advertising report) by the name without the number, with every numbered key above
    /// them also without it (`hci_event.report.advertising_data.le_supported_features.le_features.reserved_bit`).
    /// A filter naming one of these un-numbered matches every instance, as tshark matches each
    /// occurrence of a repeated field.
    static let numbered: Set<String> = {
        var out: Set<String> = []
        for f in FieldTable.fields {
            var prefix = ""
            for key in f.name.split(separator: ".") {
                let base = withoutNumber(key) ?? key
                prefix += (prefix.isEmpty ? "" : ".") + base
                if base.count != key.count { out.insert(prefix) }
            }
        }
        return out
    }()

    /// Every field by its name without instance numbers, with its types (`hci_event.report.rssi`
    /// for `hci_event.report_1.rssi`, …).
    private static let unnumberedIndex: [String: String] = {
        var d: [String: Set<Substring>] = [:]
        for f in all { d[unnumbered(f.name), default: []].formUnion(f.type.split(separator: "|")) }
        return d.mapValues { $0.sorted().joined(separator: "|") }
    }()

    /// The name with the instance numbers of numbered fields taken off (`hci_event.report_7.rssi`
    /// → `hci_event.report.rssi`); other numbers (`hci_command.event_mask_page_2`) stay when the
    /// field has no numbered instances.
    public static func unnumbered(_ name: String) -> String {
        var prefix = ""
        for key in name.split(separator: ".", omittingEmptySubsequences: false) {
            let dot = prefix.isEmpty ? "" : "."
            if let base = withoutNumber(key), numbered.contains(prefix + dot + base) {
                prefix += dot + base
            } else {
                prefix += dot + key
            }
        }
        return prefix
    }

    /// The type of a field named with or without instance numbers (`hci_event.report.rssi`,
    /// `hci_event.report_7.rssi`), nil when there is no such field.
    public static func typeOfAnyInstance(_ name: String) -> String? { index[name] ?? unnumberedIndex[unnumbered(name)] }

    /// The members of a value JSON writes as an object, which a filter can test one by one.
    static func parts(of type: String) -> Set<Test.Part> {
        var out: Set<Test.Part> = []
        for t in type.split(separator: "|") {
            switch t {
            case "named": out.formUnion([.value, .name])
            case "quantity": out.insert(.value)
            case "uuid": out.formUnion([.uuid, .uuid128, .name])
            case "flags": out.formUnion([.value, .set])
            case "malformed": out.insert(.malformed)
            case "group": break
            default: out.insert(.value)
            }
        }
        return out
    }

    /// The type of a field value, as `blesniff fields` lists it.
    public static func typeName(_ v: FieldValue) -> String {
        switch v {
        case .none: return "group"
        case .uint: return "unsigned"
        case .int, .signed: return "signed"
        case .bool: return "boolean"
        case .text, .derived, .received: return "string"
        case .bytes: return "bytes"
        case .named: return "named"
        case .quantity: return "quantity"
        case .address: return "address"
        case .uuid: return "uuid"
        case .flags: return "flags"
        case .error: return "malformed"
        }
    }

    /// Up to three known names nearest to `name` (edit distance, on the whole name and its last key).
    public static func nearest(to name: String) -> [String] {
        let want = Array(name.utf8)
        let wantLast = Array((name.split(separator: ".").last.map(String.init) ?? name).utf8)
        var scored: [(Int, Int, String)] = []
        // The un-numbered forms are candidates too: `hci_event.report.rssi` is the right form of
        // `hci_event.reports.rssi`, not one instance of it.
        for candidate in all.map(\.name) + unnumberedIndex.keys.filter({ index[$0] == nil }) {
            let n = Array(candidate.utf8)
            let whole = distance(want, n)
            var d = whole
            if let last = candidate.split(separator: ".").last {
                let penalty = candidate.hasPrefix(String(name.split(separator: ".").first ?? "")) ? 0 : 3
                d = min(d, distance(wantLast, Array(last.utf8)) + penalty)
                // A word of the name typed alone: `hci_event.code` for `hci_event.event_code`.
                let words = last.split(separator: "_")
                if words.count > 1, words.contains(where: { $0.utf8.elementsEqual(wantLast) }) { d = min(d, 1 + penalty) }
            }
            scored.append((d, whole, candidate))
        }
        // Ties go to the name closest as a whole: `hci_event.event_code` before `hci_event.country_code`.
        scored.sort { ($0.0, $0.1, $0.2) < ($1.0, $1.1, $1.2) }
        return scored.prefix(3).filter { $0.0 <= max(2, want.count / 2) }.map(\.2)
    }

    private static func distance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.isEmpty { return b.count }
        var prev = Array(0...b.count), cur = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            cur[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&prev, &cur)
        }
        return prev[b.count]
    }
}

/// Records every field path the decoders write and its types: the input of `generated/FieldTable.swift`.
public final class FieldScanner: FieldSink {
    public private(set) var types: [String: Set<String>] = [:]
    /// Fields seen more than once in one object: `read --format json` writes them as arrays always.
    public private(set) var repeatable: Set<String> = []
    private var layer = ""
    private var path: [String] = []
    /// The keys written so far in each open object, the layer's first.
    private var siblings: [Set<String>] = [[]]

    public init() {}

    public func add(_ d: Decoded) {
        d.writeLayers(to: self) { name in
            layer = FieldRendering.key(for: name.string)
            path = []
            siblings = [[]]
            if name != "Malformed" { types[layer, default: []].insert("group") }
        }
    }

    public func begin(_ label: FieldLabel, _ value: FieldValue) {
        let key = FieldRendering.key(for: label.string)
        path.append(key)
        // The Malformed layer is not a JSON key: its reasons are the frame's `malformed`.
        if layer != "malformed" {
            let name = ([layer] + path).joined(separator: ".")
            types[name, default: []].insert(FieldCatalog.typeName(value))
            if !siblings[siblings.count - 1].insert(key).inserted { repeatable.insert(name) }
        }
        siblings.append([])
    }

    public func end() {
        _ = path.popLast()
        _ = siblings.popLast()
    }

    /// The Swift source of `generated/FieldTable.swift`.
    public func source(generator: String) -> String {
        var s = "// Generated by \(generator); do not edit.\n"
        s += "// The fields the decoders write, with their types: for frames made from the decoders' tables\n"
        s += "// (FieldExamples) and for the committed and shared captures.\n\n"
        s += "enum FieldTable {\n    static let fields: [(name: String, type: String)] = [\n"
        for name in types.keys.sorted() {
            s += "        (\"\(name)\", \"\(types[name]!.sorted().joined(separator: "|"))\"),\n"
        }
        s += "    ]\n\n    /// Fields seen repeated within one object: always arrays in `read --format json`.\n"
        s += "    static let repeatable: [String] = [\n"
        for name in repeatable.sorted() { s += "        \"\(name)\",\n" }
        s += "    ]\n}\n"
        return s
    }
}
