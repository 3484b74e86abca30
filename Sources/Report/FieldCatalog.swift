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
        case .text, .received: return "string"
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
        var scored: [(Int, String)] = []
        for f in all {
            let n = Array(f.name.utf8)
            var d = distance(want, n)
            if let last = f.name.split(separator: ".").last {
                d = min(d, distance(wantLast, Array(last.utf8)) + (f.name.hasPrefix(String(name.split(separator: ".").first ?? "")) ? 0 : 3))
            }
            scored.append((d, f.name))
        }
        scored.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
        return scored.prefix(3).filter { $0.0 <= max(2, want.count / 2) }.map(\.1)
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
            layer = FieldRendering.key(for: name)
            path = []
            siblings = [[]]
            if name != "Malformed" { types[layer, default: []].insert("group") }
        }
    }

    public func begin(_ label: String, _ value: FieldValue) {
        let key = FieldRendering.key(for: label)
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
