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
        // By index, the parts read in place: `for f in fields` copies each field (retains its label,
        // value and children).
        for i in fields.indices {
            out.write(spaces: indent)
            out.write(fields[i].label)
            if case .none = fields[i].value {} else {
                out.write(": ")
                writeText(fields[i].value, to: out)
            }
            out.write(byte: 10)
            if !fields[i].children.isEmpty { writeText(fields[i].children, indent: indent + 2, to: out) }
        }
    }

    /// `text(v)` written straight into the output buffer, with no intermediate strings.
    static func writeText(_ v: FieldValue, to out: Output) {
        switch v {
        case .none: break
        case .uint(let n, let hex): if hex > 0 { out.write(hex: n, width: hex) } else { out.write(uint: n) }
        case .int(let n): out.write(int: n)
        case .bool(let b): out.write(b ? "true" : "false")
        case .text(let s): out.write(s)
        case .bytes(let b): if b.isEmpty { out.write("(empty)") } else { out.write(lowerHex: b) }
        case .named(let n, let hex, let name):
            out.write(name)
            out.write(" (")
            out.write(hex: n, width: max(hex, 1))
            out.write(byte: UInt8(ascii: ")"))
        case .quantity(let raw, let hex, let value, let unit):
            writeDecimal(value, to: out)
            out.write(byte: 32)
            out.write(unit)
            out.write(" (")
            if hex > 0 { out.write(hex: raw, width: hex) } else { out.write(uint: raw) }
            out.write(byte: UInt8(ascii: ")"))
        case .signed(let n, let unit):
            out.write(int: n)
            if !unit.isEmpty {
                out.write(byte: 32)
                out.write(unit)
            }
        case .address(let a): out.write(address: a.raw)
        case .uuid(let u):
            out.write(u.description)
            if u.isOnBase {
                out.write(" (")
                out.write(u.uuidString)
                out.write(byte: UInt8(ascii: ")"))
            }
            if let name = AssignedNumbers.name(u) {
                out.write(byte: 32)
                out.write(name)
            }
        case .flags(let n, let hex, let names):
            out.write(hex: n, width: max(hex, 1))
            if !names.isEmpty {
                out.write(" (")
                for (i, name) in names.enumerated() {
                    if i > 0 { out.write(", ") }
                    out.write(name)
                }
                out.write(byte: UInt8(ascii: ")"))
            }
        case .error(let why):
            out.write("malformed: ")
            out.write(why)
        }
    }

    /// `decimal(v)` written into the output.
    static func writeDecimal(_ v: Double, to out: Output) {
        let scaled = (v * 1000).rounded()
        guard v.isFinite, abs(scaled) < 9e15 else {
            out.write(String(v))
            return
        }
        let i = Int64(scaled)
        if i < 0 { out.write(byte: UInt8(ascii: "-")) }
        out.write(uint: i.magnitude / 1000)
        var frac = i.magnitude % 1000
        guard frac != 0 else { return }
        out.write(byte: UInt8(ascii: "."))
        var div: UInt64 = 100
        while frac != 0 {
            out.write(byte: UInt8(ascii: "0") + UInt8(frac / div))
            frac %= div
            div /= 10
        }
    }

    // MARK: JSON

    /// Writes the fields as the members of a JSON object (without braces). Siblings that share a
    /// key become one array, so every object has unique keys.
    public static func writeJSONMembers(_ fields: [Field], to out: Output) {
        // Most objects have distinct keys: written in order, keys straight from the labels, with no
        // strings made. Equal key hashes (a shared key, or a collision) take the grouping path.
        let distinct = fields.count < 2 || withUnsafeTemporaryAllocation(of: UInt64.self, capacity: fields.count) { h in
            for i in fields.indices {
                let k = keyHash(fields[i].label)
                for j in 0..<i where h[j] == k { return false }
                h[i] = k
            }
            return true
        }
        if distinct {
            // By index: each field read in place, not copied.
            for i in fields.indices {
                if i > 0 { out.write(byte: UInt8(ascii: ",")) }
                writeKey(fields[i].label, to: out)
                out.write(byte: UInt8(ascii: ":"))
                writeJSONValue(fields[i], to: out)
            }
            return
        }
        let keys = fields.map { key(for: $0.label) }
        var order: [String] = []
        var groups: [String: [Field]] = [:]
        for (f, k) in zip(fields, keys) {
            if groups[k] == nil { order.append(k) }
            groups[k, default: []].append(f)
        }
        for (i, k) in order.enumerated() {
            if i > 0 { out.write(byte: UInt8(ascii: ",")) }
            out.write(jsonString: k)
            out.write(byte: UInt8(ascii: ":"))
            let g = groups[k] ?? []
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

    /// Calls `emit` with each byte of `Field.key(for: label)`; false when the label is not ASCII
    /// (then only `Field.key(for:)` knows the answer, and what was emitted must be discarded).
    @inline(__always) static func forEachKeyByte(_ label: String, _ emit: (UInt8) -> Void) -> Bool {
        // Native strings are read in place; `withUTF8` needs a mutable copy.
        if let ascii = label.utf8.withContiguousStorageIfAvailable({ keyBytes($0, emit) }) { return ascii }
        var label = label
        return label.withUTF8 { keyBytes($0, emit) }
    }

    @inline(__always) private static func keyBytes(_ u: UnsafeBufferPointer<UInt8>, _ emit: (UInt8) -> Void) -> Bool {
        var n = 0
        var pendingUnderscore = false
        for c in u {
            if c >= 0x80 { return false }
            let lower = c >= 0x41 && c <= 0x5A ? c | 0x20 : c
            if (lower >= 0x61 && lower <= 0x7A) || (c >= 0x30 && c <= 0x39) {
                if pendingUnderscore && n > 0 { emit(UInt8(ascii: "_")) }
                pendingUnderscore = false
                emit(lower)
                n += 1
            } else {
                pendingUnderscore = true
            }
        }
        return true
    }

    /// FNV-1a of the label's JSON key.
    static func keyHash(_ label: String) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        let ascii = forEachKeyByte(label) { h = (h ^ UInt64($0)) &* 0x100_0000_01B3 }
        guard !ascii else { return h }
        h = 0xCBF2_9CE4_8422_2325
        for c in Field.key(for: label).utf8 { h = (h ^ UInt64(c)) &* 0x100_0000_01B3 }
        return h
    }

    /// The label's JSON key, quoted.
    public static func writeKey(_ label: String, to out: Output) {
        // ASCII labels (all of the decoders') are converted straight into the output buffer.
        let written = label.utf8.withContiguousStorageIfAvailable { u in
            out.withSpace(u.count &+ 2) { p in
                var n = 1
                p[0] = UInt8(ascii: "\"")
                guard keyBytes(u, { p[n] = $0; n &+= 1 }) else { return 0 }
                p[n] = UInt8(ascii: "\"")
                return n &+ 1
            }
        }
        if let written, written > 0 { return }
        out.write(jsonString: Field.key(for: label))
    }

    /// `Field.key(for:)`, computed byte by byte for ASCII labels (all of the decoders' labels).
    public static func key(for label: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(label.utf8.count)
        guard forEachKeyByte(label, { bytes.append($0) }) else { return Field.key(for: label) }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func writeJSONValue(_ f: Field, to out: Output) {
        // Scalars without children are plain JSON values; everything else is an object.
        if f.children.isEmpty, writeJSONScalar(f.value, to: out) { return }
        out.write(byte: UInt8(ascii: "{"))
        let wrote = writeJSONMembers(f.value, to: out)
        if !f.children.isEmpty {
            if wrote { out.write(byte: UInt8(ascii: ",")) }
            writeJSONMembers(f.children, to: out)
        }
        out.write(byte: UInt8(ascii: "}"))
    }

    /// Writes `jsonScalar(v)`; false (nothing written) when the value is not a scalar.
    static func writeJSONScalar(_ v: FieldValue, to out: Output) -> Bool {
        switch v {
        case .uint(let n, _): out.write(uint: n)
        case .int(let n): out.write(int: n)
        case .signed(let n, _): out.write(int: n)
        case .bool(let b): out.write(b ? "true" : "false")
        case .text(let s): out.write(jsonString: s)
        case .bytes(let b):
            out.write(byte: UInt8(ascii: "\""))
            out.write(lowerHex: b)
            out.write(byte: UInt8(ascii: "\""))
        case .address(let a):
            out.write(byte: UInt8(ascii: "\""))
            out.write(address: a.raw)
            out.write(byte: UInt8(ascii: "\""))
        case .none, .named, .quantity, .uuid, .flags, .error: return false
        }
        return true
    }

    /// Writes `jsonMembers(v)`; false when that is empty.
    static func writeJSONMembers(_ v: FieldValue, to out: Output) -> Bool {
        switch v {
        case .none: return false
        case .named(let n, _, let name):
            out.write("\"value\":")
            out.write(uint: n)
            out.write(",\"name\":")
            out.write(jsonString: name)
        case .quantity(let raw, _, let value, let unit):
            out.write("\"value\":")
            out.write(uint: raw)
            out.write(byte: UInt8(ascii: ","))
            out.write(jsonString: unit)
            out.write(byte: UInt8(ascii: ":"))
            writeDecimal(value, to: out)
        case .uuid(let u):
            out.write("\"uuid\":")
            out.write(jsonString: u.description)
            out.write(",\"uuid128\":")
            out.write(jsonString: u.uuidString)
            if let name = AssignedNumbers.name(u) {
                out.write(",\"name\":")
                out.write(jsonString: name)
            }
        case .flags(let n, _, let names):
            out.write("\"value\":")
            out.write(uint: n)
            out.write(",\"set\":[")
            for (i, name) in names.enumerated() {
                if i > 0 { out.write(byte: UInt8(ascii: ",")) }
                out.write(jsonString: name)
            }
            out.write(byte: UInt8(ascii: "]"))
        case .error(let why):
            out.write("\"malformed\":")
            out.write(jsonString: why)
        default:
            out.write("\"value\":")
            if !writeJSONScalar(v, to: out) { out.write("null") }
        }
        return true
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

    public static func writeJSONString(_ s: String, to out: Output) { out.write(jsonString: s) }
}
