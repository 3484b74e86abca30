import Decoders
import Wire

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
        case .derived(let t): return t.string
        case .received(let b): return String(decoding: b, as: UTF8.self)
        case .bytes(let b): return b.isEmpty ? "(empty)" : Hex.string(b)
        case .named(let n, let hex, let name, _): return name.string + " (" + Hex.prefixed(n, width: max(hex, 1)) + ")"
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
        case .error(let why): return "malformed: " + why.string
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
        TextWriter(out, indent: indent).add(fields)
    }

    /// Writes fields indented, one per line, as a decoder sends them: no tree is built.
    public final class TextWriter: FieldSink {
        let out: Output
        @exclusivity(unchecked) var indent: Int

        public init(_ out: Output, indent: Int) {
            self.out = out
            self.indent = indent
        }

        public func begin(_ label: FieldLabel, _ value: FieldValue) {
            add(label, value)
            indent &+= 2
        }

        public func end() { indent &-= 2 }

        public func add(_ label: FieldLabel, _ value: FieldValue) {
            if out.write(indent: indent, label: label, line: value) { return }
            let hasValue: Bool
            if case .none = value { hasValue = false } else { hasValue = true }
            out.write(indent: indent, label: label, colon: hasValue)
            if hasValue { writeText(value, to: out) }
            out.write(byte: 10)
        }
    }

    /// Writes the fields of a list as the members of a JSON object (without braces). Scalars without
    /// children are plain JSON values, everything else is an object; siblings that share a key
    /// become one array, so every object has unique keys. Keys in `arrays` (fields that can repeat)
    /// are always arrays, also with one element.
    public static func writeJSONMembers(_ list: FieldList, arrays: Set<String> = [], to out: Output) {
        list.close()
        out.keys.trim()
        let rules = arrays.isEmpty ? ArrayRules.none : ArrayRules(keys: arrays.map(keyHash))
        let nodes = list.nodes
        _ = members(nodes, 0, nodes.count, out, skip: .none, rules, path: 0, first: true, nil)
    }

    /// A layer's fields as the members of its object in `read --format json`: fields that can repeat
    /// (`FieldTable.repeatable`, by their dotted path from the layer) are arrays, also with one element.
    /// `layer` is the layer's name ("HCI ACL") or its key (`hci_acl`): both make the same key.
    public static func writeJSONMembers(layer: String, _ list: FieldList, to out: Output) {
        writeJSONMembers(layerKey: out.keys.key(layer).hash, list, to: out)
    }

    /// The same, for the layer whose key's hash is `layerKey` (a printer that wrote the key has it).
    static func writeJSONMembers(layerKey: UInt64, _ list: FieldList, to out: Output) {
        list.close()
        out.keys.trim()
        let root = pathStep(0, layerKey)
        let nodes = list.nodes
        // A shape written before is replayed (`JSONPlans`); another is walked, and recorded.
        if out.plans.replay(root: root, nodes, to: out) { return }
        let plan = out.plans.recorder(root: root, nodes)
        _ = members(nodes, 0, nodes.count, out, skip: .none, ArrayRules.layers, path: root, first: true, plan)
        if let plan { out.plans.finish(plan, nodes) }
    }

    /// Which keys are written as arrays always: by key anywhere (`keys`), or by the path of the field
    /// (`paths`, hashes made by `pathStep` from the layer's key down, the object's own path passed
    /// beside). A class, handed down the walk by reference: copying a struct of arrays per object
    /// cost a retain and release of each.
    final class ArrayRules: Sendable {
        let keys: [UInt64]
        let paths: PathSet?
        let isEmpty: Bool

        init(keys: [UInt64] = [], paths: PathSet? = nil) {
            self.keys = keys
            self.paths = paths
            isEmpty = keys.isEmpty && paths == nil
        }

        static let none = ArrayRules()
        /// `read --format json`'s layers: the fields that can repeat, by path.
        static let layers = ArrayRules(paths: repeatablePaths)

        func always(_ key: UInt64, at path: UInt64) -> Bool {
            if !keys.isEmpty, keys.contains(key) { return true }
            guard let paths else { return false }
            return paths.contains(pathStep(path, key))
        }

        /// The path inside the member `key` of the object at `path`.
        func inside(_ path: UInt64, _ key: UInt64) -> UInt64 { paths == nil ? path : pathStep(path, key) }
    }

    /// A set of path hashes. They are hashes already, so they index an open-addressed table
    /// directly: no hashing again, one or two probes per key.
    struct PathSet {
        private let slots: [UInt64]
        private let hasZero: Bool
        init(_ paths: [String]) {
            var hashes: [UInt64] = []
            for p in paths {
                var v: UInt64 = 0
                for part in p.split(separator: ".") { v = pathStep(v, keyHash(String(part))) }
                hashes.append(v)
            }
            var size = 16
            while size < 4 * hashes.count { size <<= 1 }
            var slots = [UInt64](repeating: 0, count: size)
            for v in hashes where v != 0 {
                var i = Int(truncatingIfNeeded: v) & (size - 1)
                while slots[i] != 0 && slots[i] != v { i = (i + 1) & (size - 1) }
                slots[i] = v
            }
            self.slots = slots
            hasZero = hashes.contains(0)
        }
        @inline(__always) func contains(_ v: UInt64) -> Bool {
            if v == 0 { return hasZero }
            return slots.withUnsafeBufferPointer { s in
                var i = Int(truncatingIfNeeded: v) & (s.count &- 1)
                while true {
                    let x = s[i]
                    if x == v { return true }
                    if x == 0 { return false }
                    i = (i &+ 1) & (s.count &- 1)
                }
            }
        }
    }

    static let repeatablePaths = PathSet(FieldTable.repeatable)

    /// The hash of the path `parent`.`key`.
    @inline(__always) static func pathStep(_ parent: UInt64, _ key: UInt64) -> UInt64 {
        let x = (parent &* 0x9E37_79B9_7F4A_7C15) ^ key
        return x ^ (x >> 29)
    }

    /// The keys a value writes itself as an object's members (`jsonMembers`): a child field with one
    /// of them would repeat the key (a UUID's name, written by the value and by a child), so the
    /// value's member is kept and the child is left out.
    private static let uuidKeys = MemberKeys("uuid", "uuid128")
    private static let namedUUIDKeys = MemberKeys("uuid", "uuid128", "name")
    private static let namedKeys = MemberKeys("value", "name")
    private static let flagsKeys = MemberKeys("value", "set")
    private static let valueKeys = MemberKeys("value")
    private static let malformedKeys = MemberKeys("malformed")

    /// Up to three keys' hashes, held inline: passed down the walk for every object with children,
    /// an array of them cost a retain and a release.
    struct MemberKeys {
        private let a: UInt64, b: UInt64, c: UInt64
        let isEmpty: Bool

        init(_ keys: String...) {
            let h = keys.map(FieldRendering.keyHash)
            a = h.count > 0 ? h[0] : 0
            b = h.count > 1 ? h[1] : a
            c = h.count > 2 ? h[2] : b
            isEmpty = h.isEmpty
        }

        static let none = MemberKeys()

        func contains(_ h: UInt64) -> Bool { !isEmpty && (h == a || h == b || h == c) }
    }

    /// `JSONPlans.field` tells values apart by these same kinds (a plan is kept per shape): a new
    /// case here is a new kind there.
    private static func memberKeys(_ node: UnsafePointer<FieldList.Node>) -> MemberKeys {
        switch node.pointee.value {
        case .none: return .none
        case .uuid(let u): return AssignedNumbers.label(u) == nil ? uuidKeys : namedUUIDKeys
        case .named: return namedKeys
        case .flags: return flagsKeys
        case .error: return malformedKeys
        default: return valueKeys
        }
    }

    /// The siblings in `start..<end`, each with its subtree, leaving out those whose key is in
    /// `skip`; `first` when nothing was written in the object yet. Returns whether any was written.
    /// Not inlined: in `jsonValue` it made every object dearer to write (110 instructions a frame
    /// of the advertising flood's JSON).
    @inline(never)
    private static func members(_ n: UnsafeBufferPointer<FieldList.Node>, _ start: Int, _ end: Int, _ out: Output,
                                skip: MemberKeys, _ rules: ArrayRules, path: UInt64, first: Bool,
                                _ plan: JSONPlans.Plan?) -> Bool {
        var count = 0
        var i = start
        while i < end { count &+= 1; i = n[i].end }
        // Up to a kilobyte on the stack (what `withUnsafeTemporaryAllocation` keeps there); more
        // in a list the output's key cache keeps for the next frame.
        guard count &* MemoryLayout<JSONKeys.Sibling>.stride > 1024 else {
            return withUnsafeTemporaryAllocation(of: JSONKeys.Sibling.self, capacity: count) {
                members($0, n, start, end, out, skip: skip, rules, path: path, first: first, plan)
            }
        }
        var list = out.keys.takeSiblings(count)
        defer { out.keys.giveBack(list) }
        return list.withUnsafeMutableBufferPointer {
            members(UnsafeMutableBufferPointer(rebasing: $0[..<count]), n, start, end, out, skip: skip, rules, path: path, first: first, plan)
        }
    }

    /// `members`, with room for the siblings and their keys in `keys`.
    private static func members(_ keys: UnsafeMutableBufferPointer<JSONKeys.Sibling>,
                                _ n: UnsafeBufferPointer<FieldList.Node>, _ start: Int, _ end: Int, _ out: Output,
                                skip: MemberKeys, _ rules: ArrayRules, path: UInt64, first: Bool,
                                _ plan: JSONPlans.Plan?) -> Bool {
        typealias Key = JSONKeys.Sibling
        let count = keys.count
        var wrote = !first
        // Each sibling's key comes from the output's key cache, made there once per label: its
        // bytes stay in the cache's arena while the frame is written.
        let cache = out.keys
        var k = 0, grouped = false
        // One bit per key hash seen (of 64): the siblings are compared only when a bit repeats.
        var seen: UInt64 = 0
        var i = start
        while i < end {
            keys[k] = (i, cache.key(n[i].label))
            if !grouped {
                let bit: UInt64 = 1 << (keys[k].key.hash & 63)
                if seen & bit != 0 {
                    for j in 0..<k where keys[j].key.hash == keys[k].key.hash { grouped = true }
                }
                seen |= bit
                if !rules.isEmpty, rules.always(keys[k].key.hash, at: path) { grouped = true }
            }
            k &+= 1
            i = n[i].end
        }
        func writeKey(_ key: Key) {
            if wrote { comma(out, plan) }
            wrote = true
            if !out.write(key: key.key) {
                FieldRendering.writeKey(n[key.node].label.string, to: out)
                out.write(byte: UInt8(ascii: ":"))
            }
            plan?.key(key.key, in: cache.bytes)
        }
        guard grouped else {
            for key in keys.prefix(count) where !skip.contains(key.key.hash) {
                writeKey(key)
                jsonValue(n, key.node, out, rules, path: rules.inside(path, key.key.hash), plan)
            }
            return wrote
        }
        // Equal keys (a shared key, or a key always written as an array) become one member
        // holding an array, in order of first appearance. Equal hashes are checked by the keys.
        func same(_ a: Key, _ b: Key) -> Bool {
            guard a.key.hash == b.key.hash else { return false }
            if a.key.offset >= 0, b.key.offset >= 0 {
                return a.key.offset == b.key.offset || cache.bytes[a.key.range] == cache.bytes[b.key.range]
            }
            return key(for: n[a.node].label.string) == key(for: n[b.node].label.string)
        }
        return withUnsafeTemporaryAllocation(of: Bool.self, capacity: count) { done in
            done.initialize(repeating: false)
            for g in 0..<count where !done[g] {
                let key = keys[g]
                var members = 0
                for j in g..<count where !done[j] && same(key, keys[j]) { done[j] = true; members &+= 1 }
                if skip.contains(key.key.hash) { continue }
                writeKey(key)
                let inner = rules.inside(path, key.key.hash)
                if members == 1 && !rules.always(key.key.hash, at: path) {
                    jsonValue(n, key.node, out, rules, path: inner, plan)
                    continue
                }
                punctuation(UInt8(ascii: "["), out, plan)
                var written = 0
                for j in g..<count where same(key, keys[j]) {
                    if written > 0 { comma(out, plan) }
                    written &+= 1
                    jsonValue(n, keys[j].node, out, rules, path: inner, plan)
                }
                punctuation(UInt8(ascii: "]"), out, plan)
            }
            return wrote
        }
    }

    private static func jsonValue(_ n: UnsafeBufferPointer<FieldList.Node>, _ i: Int, _ out: Output,
                                  _ rules: ArrayRules, path: UInt64, _ plan: JSONPlans.Plan?) {
        // The node's value is read where it lies: handed over as a value, it would be copied (its
        // strings and bytes retained) and destroyed again for every field.
        let node = n.baseAddress.unsafelyUnwrapped + i
        let end = node.pointee.end
        let hasChildren = end > i &+ 1
        if !hasChildren, writeJSONScalar(node, to: out) {
            plan?.node(i, JSONPlans.Op.scalar)
            return
        }
        punctuation(UInt8(ascii: "{"), out, plan)
        let wrote = writeJSONMembers(node, to: out)
        if wrote { plan?.node(i, JSONPlans.Op.members) }
        if hasChildren {
            _ = members(n, i &+ 1, end, out, skip: wrote ? memberKeys(node) : .none, rules, path: path, first: !wrote, plan)
        }
        punctuation(UInt8(ascii: "}"), out, plan)
    }

    /// A byte of the walk's own (a brace, a bracket, a comma), also into the plan it records.
    @inline(__always) private static func punctuation(_ b: UInt8, _ out: Output, _ plan: JSONPlans.Plan?) {
        out.write(byte: b)
        plan?.byte(b)
    }

    @inline(__always) private static func comma(_ out: Output, _ plan: JSONPlans.Plan?) {
        punctuation(UInt8(ascii: ","), out, plan)
    }

    /// `text(v)` written straight into the output buffer, with no intermediate strings. Every
    /// string goes through `DisplayText`, since any of them can carry what a device sent, but the
    /// names of values, bits and UUIDs and units: they are the specification's, copied as they are
    /// (`FieldValue.named`).
    static func writeText(_ v: FieldValue, to out: Output) {
        switch v {
        case .none: break
        case .uint(let n, let hex): if hex > 0 { out.write(hex: n, width: hex) } else { out.write(uint: n) }
        case .int(let n): out.write(int: n)
        case .bool(let b): out.write(b ? "true" : "false")
        case .text(let s): out.write(display: s)
        case .derived(let t): out.write(display: t)
        case .received(let b): out.write(display: b)
        case .bytes(let b): if b.isEmpty { out.write("(empty)") } else { out.write(lowerHex: b) }
        case .named(let n, let hex, let name, _):
            out.write(name: name)
            out.write(" (")
            out.write(hex: n, width: max(hex, 1))
            out.write(byte: UInt8(ascii: ")"))
        case .quantity(let raw, let hex, let value, let unit):
            writeDecimal(value, to: out)
            out.write(byte: 32)
            out.write(name: unit)
            out.write(" (")
            if hex > 0 { out.write(hex: raw, width: hex) } else { out.write(uint: raw) }
            out.write(byte: UInt8(ascii: ")"))
        case .signed(let n, let unit):
            out.write(int: n)
            if !unit.isEmpty {
                out.write(byte: 32)
                out.write(name: unit)
            }
        case .address(let a): out.write(address: a.raw)
        case .uuid(let u):
            out.write(uuid: u)
            if u.isOnBase {
                out.write(" (")
                out.write(uuidString: u)
                out.write(byte: UInt8(ascii: ")"))
            }
            if let name = AssignedNumbers.label(u) {
                out.write(byte: 32)
                out.write(name: name)
            }
        case .flags(let n, let hex, let names):
            writeFlags(n, hex: hex, names, json: false, to: out)
        case .error(let why):
            out.write("malformed: ")
            out.write(display: why)
        }
    }

    /// A bit field: "0x06 (A, B)" in text, `"value":6,"set":["A","B"]` in JSON. The names are
    /// read from their table in place (`SetBitNames.forEachName`).
    private static func writeFlags(_ n: UInt64, hex: Int, _ names: SetBitNames, json: Bool, to out: Output) {
        if json {
            out.write("\"value\":")
            out.write(uint: n)
            out.write(",\"set\":[")
        } else {
            out.write(hex: n, width: max(hex, 1))
            guard !names.isEmpty else { return }
            out.write(" (")
        }
        var first = true
        names.forEachLabel { name in
            if !first {
                if json { out.write(byte: UInt8(ascii: ",")) } else { out.write(", ") }
            }
            first = false
            if json { out.write(jsonName: name) } else { out.write(name: name) }
        }
        out.write(byte: json ? UInt8(ascii: "]") : UInt8(ascii: ")"))
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
        let frac = i.magnitude % 1000
        if frac != 0 { out.write(thousandths: frac) }
    }

    // MARK: JSON

    /// Writes the fields as the members of a JSON object (without braces). Siblings that share a
    /// key become one array, so every object has unique keys.
    public static func writeJSONMembers(_ fields: [Field], arrays: Set<String> = [], to out: Output) {
        let list = FieldList()
        list.add(fields)
        writeJSONMembers(list, arrays: arrays, to: out)
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
        var h = FNV1a()
        let ascii = forEachKeyByte(label) { h.add($0) }
        return ascii ? h.value : FNV1a.of(Field.key(for: label).utf8)
    }

    /// FNV-1a of the label's JSON key without its instance number (`Report 3` → `report`): nil
    /// when the key does not end in `_` and digits. A filter's `hci_event.report` matches every
    /// `report_N` by this hash, without building the key.
    static func keyHashWithoutNumber(_ label: String) -> UInt64? {
        var h = FNV1a(), beforeUnderscore = FNV1a.basis
        var digits = 0, sawUnderscore = false
        let ascii = forEachKeyByte(label) { b in
            if b == UInt8(ascii: "_") {
                beforeUnderscore = h.value
                digits = 0
                sawUnderscore = true
            } else if b >= 0x30 && b <= 0x39 {
                digits += 1
            } else {
                digits = -1_000_000
            }
            h.add(b)
        }
        if ascii { return sawUnderscore && digits > 0 ? beforeUnderscore : nil }
        let key = Field.key(for: label)
        guard let u = key.utf8.lastIndex(of: UInt8(ascii: "_")), key.utf8.index(after: u) != key.utf8.endIndex,
              key.utf8[key.utf8.index(after: u)...].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return keyHash(String(key[..<u]))
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

    /// Writes `jsonScalar` of the node's value; false (nothing written) when it is not a scalar.
    static func writeJSONScalar(_ node: UnsafePointer<FieldList.Node>, to out: Output) -> Bool {
        switch node.pointee.value {
        case .uint(let n, _): out.write(uint: n)
        case .int(let n): out.write(int: n)
        case .signed(let n, _): out.write(int: n)
        case .bool(let b): out.write(b ? "true" : "false")
        case .text(let s): out.write(jsonString: s)
        case .derived(let t): out.write(jsonString: t)
        case .received(let b): out.write(jsonString: b)
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
    static func writeJSONMembers(_ node: UnsafePointer<FieldList.Node>, to out: Output) -> Bool {
        switch node.pointee.value {
        case .none: return false
        // `quotes` matched as a constant: bound to a name, it made the whole value be copied out
        // of its node (about 75 instructions a name).
        case .named(let n, _, let name, false):
            out.write("\"value\":")
            out.write(uint: n)
            out.write(",\"name\":\"")
            assert(!name.string.contains("\""), "quotation marks not marked: \(name)")
            out.write(name: name)
            out.write(byte: UInt8(ascii: "\""))
        case .named(let n, _, let name, true):
            out.write("\"value\":")
            out.write(uint: n)
            out.write(",\"name\":")
            out.write(jsonString: name)
        case .quantity(let raw, _, let value, let unit):
            out.write("\"value\":")
            out.write(uint: raw)
            out.write(byte: UInt8(ascii: ","))
            out.write(jsonName: unit)
            out.write(byte: UInt8(ascii: ":"))
            writeDecimal(value, to: out)
        case .flags(let n, let hex, let names):
            writeFlags(n, hex: hex, names, json: true, to: out)
        case .uuid(let u):
            // Hex digits and dashes: nothing to escape.
            out.write("\"uuid\":\"")
            out.write(uuid: u)
            out.write("\",\"uuid128\":\"")
            out.write(uuidString: u)
            out.write(byte: UInt8(ascii: "\""))
            if let name = AssignedNumbers.label(u) {
                out.write(",\"name\":")
                out.write(jsonName: name)
            }
        case .error(let why):
            out.write("\"malformed\":")
            out.write(jsonString: why)
        default:
            out.write("\"value\":")
            if !writeJSONScalar(node, to: out) { out.write("null") }
        }
        return true
    }

}
