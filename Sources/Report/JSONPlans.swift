import Decoders

/// A layer's JSON kept as a plan for the next frame of the same shape (`read --format json`).
/// The member walker (`FieldRendering.members`) decides everything it writes but the values from
/// the shape of a layer's field list: its labels (the keys, which siblings share one, which are
/// always arrays), its tree, and what kind of value each field holds (none, a scalar, an object and
/// the keys it writes itself). A plan is that walk's output with the values left out: literal bytes
/// (keys with their quotes and colons, commas, braces, brackets) and, between them, the fields
/// that write a scalar or their own members. A frame whose layer has a shape seen before replays
/// the plan; another is walked as before, and the walk recorded. Streams repeat a few shapes
/// (the same notification, the same advertising report), so most frames skip the walk.
final class JSONPlans {
    /// Literal bytes (`start`, `length` in the plan's `literal`), then what `node` writes:
    /// its scalar (`scalar`), its own members (`members`) or nothing.
    struct Op {
        var start: Int32
        var length: Int32
        var node: Int32
        var action: UInt8

        static let none: UInt8 = 0, scalar: UInt8 = 1, members: UInt8 = 2
    }

    /// One field of a shape: its label's address, and where its subtree ends with the kind of its
    /// value (`kind`) in one word.
    struct Field: Equatable {
        var label: UInt
        var endAndKind: UInt32
    }

    final class Plan {
        fileprivate(set) var root: UInt64 = 0
        fileprivate(set) var shape: [Field] = []
        fileprivate(set) var ops: [Op] = []
        fileprivate(set) var literal: [UInt8] = []
        /// Where the literal bytes not yet in an op start.
        private var pending = 0
        /// False once the walk wrote something the plan cannot hold (a key made from a label that
        /// is not ASCII): the plan is then dropped.
        fileprivate(set) var complete = true

        /// Room made once for `fields` and what they write: a plan reused for another shape seldom
        /// needs more.
        fileprivate init(reserving fields: Int) {
            shape.reserveCapacity(fields)
            ops.reserveCapacity(fields)
            literal.reserveCapacity(fields &* 16)
        }

        fileprivate func start(root: UInt64, _ nodes: UnsafeBufferPointer<FieldList.Node>) {
            self.root = root
            shape.removeAll(keepingCapacity: true)
            ops.removeAll(keepingCapacity: true)
            literal.removeAll(keepingCapacity: true)
            pending = 0
            complete = true
            for i in nodes.indices { shape.append(JSONPlans.field(nodes, i)) }
        }

        /// Whether `nodes` under `root` have this plan's shape.
        @inline(__always) fileprivate func fits(root: UInt64, _ nodes: UnsafeBufferPointer<FieldList.Node>) -> Bool {
            guard self.root == root, shape.count == nodes.count else { return false }
            return shape.withUnsafeBufferPointer { s in
                for i in 0..<s.count where s[i] != JSONPlans.field(nodes, i) { return false }
                return true
            }
        }

        // The walk's writes, as it makes them.

        @inline(__always) func byte(_ b: UInt8) { literal.append(b) }

        /// `"key":`, the key's bytes from the key cache's arena.
        func key(_ k: JSONKeys.Key, in arena: [UInt8]) {
            guard k.offset >= 0, k.range.upperBound <= arena.count else {
                complete = false
                return
            }
            literal.append(UInt8(ascii: "\""))
            literal.append(contentsOf: arena[k.range])
            literal.append(UInt8(ascii: "\""))
            literal.append(UInt8(ascii: ":"))
        }

        func node(_ i: Int, _ action: UInt8) {
            ops.append(Op(start: Int32(pending), length: Int32(literal.count &- pending), node: Int32(i), action: action))
            pending = literal.count
        }

        fileprivate func finish() {
            if literal.count > pending { node(0, Op.none) }
        }
    }

    /// Plans in sets of `ways` (`set`), one after the other, the most recently used first in
    /// each; nil where a set is not full yet.
    private var plans: [Plan?]
    private static let setCount = 128
    private static let ways = 8
    /// Lists longer than this are walked each time, not kept.
    static let largest = 256

    init() { plans = Array(repeating: nil, count: JSONPlans.setCount &* JSONPlans.ways) }

    /// The kind of a value, as far as the walker tells them apart: none (no scalar, no members),
    /// a scalar, and the objects by the keys they write themselves (`FieldRendering.memberKeys`,
    /// which for a UUID with children depends on whether it has a name).
    @inline(__always) static func field(_ nodes: UnsafeBufferPointer<FieldList.Node>, _ i: Int) -> Field {
        let node = nodes.baseAddress.unsafelyUnwrapped + i
        let kind: UInt32
        switch node.pointee.value {
        case .none: kind = 0
        case .uint, .int, .signed, .bool, .text, .derived, .received, .bytes, .address: kind = 1
        case .quantity: kind = 2
        case .named: kind = 3
        case .flags: kind = 4
        case .error: kind = 5
        case .uuid(let u): kind = node.pointee.end > i &+ 1 && AssignedNumbers.name(u) != nil ? 7 : 6
        }
        return Field(label: node.pointee.label.address, endAndKind: UInt32(truncatingIfNeeded: node.pointee.end) << 3 | kind)
    }

    /// The set of a layer's list: by the layer, the number of fields and the labels of two of
    /// them (a layer's lists of one length differ mostly there: an event's parameters, a PDU's).
    @inline(__always) private func set(_ root: UInt64, _ nodes: UnsafeBufferPointer<FieldList.Node>) -> Int {
        let n = nodes.count
        var h = root ^ UInt64(n)
        if n > 0 {
            h ^= UInt64(nodes[n >> 1].label.address) &* 0xFF51_AFD7_ED55_8CCD
            h ^= UInt64(nodes[n &- 1].label.address) &* 0xC4CE_B9FE_1A85_EC53
        }
        return Int(truncatingIfNeeded: (h &* 0x9E37_79B9_7F4A_7C15) >> 56) & (JSONPlans.setCount &- 1)
    }

    /// The plan for `nodes` of the layer `root`, when one was recorded.
    func plan(root: UInt64, _ nodes: UnsafeBufferPointer<FieldList.Node>) -> Plan? {
        let first = set(root, nodes) &* JSONPlans.ways
        for i in first..<(first &+ JSONPlans.ways) {
            guard let p = plans[i] else { return nil }
            guard p.fits(root: root, nodes) else { continue }
            if i > first { moveToFront(i, first) }
            return p
        }
        return nil
    }

    /// The plan at `i` becomes its set's first (at `first`); those before it move down one.
    private func moveToFront(_ i: Int, _ first: Int) {
        let p = plans[i]
        var j = i
        while j > first {
            plans[j] = plans[j &- 1]
            j &-= 1
        }
        plans[first] = p
    }

    /// A plan to record the walk of `nodes` into; nil for a list too long to keep. The set's least
    /// recently used plan is reused when it is full: no allocation once the sets are full.
    func recorder(root: UInt64, _ nodes: UnsafeBufferPointer<FieldList.Node>) -> Plan? {
        guard nodes.count <= JSONPlans.largest else { return nil }
        let first = set(root, nodes) &* JSONPlans.ways, last = first &+ JSONPlans.ways &- 1
        let p = plans[last] ?? Plan(reserving: max(nodes.count, 64))
        plans[last] = p
        moveToFront(last, first)
        p.start(root: root, nodes)
        return p
    }

    /// Ends a recording of `nodes`: a plan the walk could not be held in is forgotten.
    func finish(_ p: Plan, _ nodes: UnsafeBufferPointer<FieldList.Node>) {
        p.finish()
        guard !p.complete else { return }
        // The set's first, where `recorder` put it: the others move up, and the last slot is empty.
        let first = set(p.root, nodes) &* JSONPlans.ways
        for i in first..<(first &+ JSONPlans.ways &- 1) { plans[i] = plans[i &+ 1] }
        plans[first &+ JSONPlans.ways &- 1] = nil
    }

    /// Writes what the plan recorded, with `nodes`' values.
    func replay(_ p: Plan, _ nodes: UnsafeBufferPointer<FieldList.Node>, to out: Output) {
        let base = nodes.baseAddress.unsafelyUnwrapped
        p.literal.withUnsafeBufferPointer { literal in
            p.ops.withUnsafeBufferPointer { ops in
                for op in ops {
                    if op.length > 0 {
                        out.write(raw: literal.baseAddress.unsafelyUnwrapped + Int(op.start), count: Int(op.length))
                    }
                    switch op.action {
                    case Op.scalar: _ = FieldRendering.writeJSONScalar(base + Int(op.node), to: out)
                    case Op.members: _ = FieldRendering.writeJSONMembers(base + Int(op.node), to: out)
                    default: break
                    }
                }
            }
        }
    }
}
