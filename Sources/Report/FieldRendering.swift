import Decoders

/// Text and JSON renderings of `Field` trees. The one place that decides how a value reads.
public enum FieldRendering {
    /// "LE Scan Interval: 10 ms (0x0010)"
    public static func text(_ v: FieldValue) -> String? {
        switch v {
        case .none: return nil
        case .uint(let n, let hex): return hex > 0 ? Hex.prefixed(n, width: hex) : String(n)
        case .int(let n): return String(n)
        case .bool(let b): return b ? "true" : "false"
        case .text(let s): return s
        case .bytes(let b): return b.isEmpty ? "(empty)" : Hex.string(b)
        case .named(let n, let hex, let name): return name + " (" + Hex.prefixed(n, width: max(hex, 1)) + ")"
        case .quantity(let raw, let hex, let value, let unit):
            return decimal(value) + " " + unit + " (" + (hex > 0 ? Hex.prefixed(raw, width: hex) : String(raw)) + ")"
        case .signed(let n, let unit): return String(n) + (unit.isEmpty ? "" : " " + unit)
        case .address(let a): return a.description
        case .uuid(let u):
            let name = AssignedNumbers.name(u)
            var s = u.description
            if u.isOnBase { s += " (" + u.uuidString + ")" }
            if let name { s += " " + name }
            return s
        case .flags(let n, let hex, let names):
            return Hex.prefixed(n, width: max(hex, 1)) + (names.isEmpty ? "" : " (" + names.joined(separator: ", ") + ")")
        case .error(let why): return "malformed: " + why
        }
    }

    /// A number with at most three decimals and no trailing zeros: 10, 11.25, 0.625.
    public static func decimal(_ v: Double) -> String {
        guard v.isFinite else { return String(v) }
        let scaled = (v * 1000).rounded()
        guard abs(scaled) < 9e15 else { return String(v) }
        let i = Int64(scaled)
        var s = String(i.magnitude / 1000)
        var frac = i.magnitude % 1000
        if frac != 0 {
            var digits = String(frac)
            digits = String(repeating: "0", count: 3 - digits.count) + digits
            while digits.last == "0" { digits.removeLast() }
            s += "." + digits
            frac = 0
        }
        return (i < 0 ? "-" : "") + s
    }

    /// Writes the tree indented, one field per line (`read -v`).
    public static func writeText(_ fields: [Field], indent: Int, to out: Output) {
        for f in fields {
            out.write(String(repeating: " ", count: indent))
            out.write(f.label)
            if let t = text(f.value) {
                out.write(": ")
                out.write(t)
            }
            out.write(byte: 10)
            if !f.children.isEmpty { writeText(f.children, indent: indent + 2, to: out) }
        }
    }

    // MARK: JSON

    /// Writes the fields as the members of a JSON object (without braces). Siblings that share a
    /// key become one array, so every object has unique keys.
    public static func writeJSONMembers(_ fields: [Field], to out: Output) {
        var order: [String] = []
        var groups: [String: [Field]] = [:]
        for f in fields {
            let k = f.key
            if groups[k] == nil { order.append(k) }
            groups[k, default: []].append(f)
        }
        for (i, k) in order.enumerated() {
            if i > 0 { out.write(byte: UInt8(ascii: ",")) }
            writeJSONString(k, to: out)
            out.write(byte: UInt8(ascii: ":"))
            let g = groups[k]!
            if g.count == 1 {
                writeJSONValue(g[0], to: out)
            } else {
                out.write(byte: UInt8(ascii: "["))
                for (j, f) in g.enumerated() {
                    if j > 0 { out.write(byte: UInt8(ascii: ",")) }
                    writeJSONValue(f, to: out)
                }
                out.write(byte: UInt8(ascii: "]"))
            }
        }
    }

    static func writeJSONValue(_ f: Field, to out: Output) {
        // Scalars without children are plain JSON values; everything else is an object.
        if f.children.isEmpty, let scalar = jsonScalar(f.value) {
            out.write(scalar)
            return
        }
        out.write(byte: UInt8(ascii: "{"))
        let members = jsonMembers(f.value)
        out.write(members)
        if !f.children.isEmpty {
            if !members.isEmpty { out.write(byte: UInt8(ascii: ",")) }
            writeJSONMembers(f.children, to: out)
        }
        out.write(byte: UInt8(ascii: "}"))
    }

    static func jsonScalar(_ v: FieldValue) -> String? {
        switch v {
        case .uint(let n, _): return String(n)
        case .int(let n): return String(n)
        case .signed(let n, _): return String(n)
        case .bool(let b): return b ? "true" : "false"
        case .text(let s): return jsonString(s)
        case .bytes(let b): return "\"" + Hex.string(b) + "\""
        case .address(let a): return "\"" + a.description + "\""
        case .none, .named, .quantity, .uuid, .flags, .error: return nil
        }
    }

    static func jsonMembers(_ v: FieldValue) -> String {
        switch v {
        case .none: return ""
        case .named(let n, _, let name): return "\"value\":\(n),\"name\":" + jsonString(name)
        case .quantity(let raw, _, let value, let unit):
            return "\"value\":\(raw)," + jsonString(unit) + ":" + decimal(value)
        case .uuid(let u):
            var s = "\"uuid\":" + jsonString(u.description) + ",\"uuid128\":" + jsonString(u.uuidString)
            if let name = AssignedNumbers.name(u) { s += ",\"name\":" + jsonString(name) }
            return s
        case .flags(let n, _, let names):
            return "\"value\":\(n),\"set\":[" + names.map(jsonString).joined(separator: ",") + "]"
        case .error(let why): return "\"malformed\":" + jsonString(why)
        default: return "\"value\":" + (jsonScalar(v) ?? "null")
        }
    }

    public static func jsonString(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 {
                    out += "\\u00" + Hex.padded(u.value, width: 2)
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }

    public static func writeJSONString(_ s: String, to out: Output) { out.write(jsonString(s)) }
}
