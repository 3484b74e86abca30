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
        fileprivate var shape: PlainList<Field>
        fileprivate var ops: PlainList<Op>
        fileprivate var literal: PlainList<UInt8>
        /// Where the literal bytes not yet in an op start.
        private var pending = 0
        /// False once the walk wrote something the plan cannot hold (a key made from a label that
        /// is not ASCII): the plan is then dropped.
        fileprivate(set) var complete = true

        /// Room made once for `fields` and what they write: a plan reused for another shape seldom
        /// needs more.
        fileprivate init(reserving fields: Int) {
            shape = PlainList(capacity: fields)
            ops = PlainList(capacity: fields)
            literal = PlainList(capacity: fields &* 16)
        }

        deinit {
            shape.deallocate()
            ops.deallocate()
            literal.deallocate()
        }

        fileprivate func start(root: UInt64, _ nodes: UnsafeBufferPointer<FieldList.Node>) {
            self.root = root
            shape.removeAll()
            ops.removeAll()
            literal.removeAll()
            pending = 0
            complete = true
            for i in nodes.indices { shape.append(JSONPlans.field(nodes, i)) }
        }

        /// Whether `nodes` under `root` have this plan's shape.
        @inline(__always) fileprivate func fits(root: UInt64, _ nodes: UnsafeBufferPointer<FieldList.Node>) -> Bool {
            guard self.root == root, shape.count == nodes.count else { return false }
            for i in 0..<nodes.count where shape[i] != JSONPlans.field(nodes, i) { return false }
            return true
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
            arena.withUnsafeBufferPointer { literal.append(contentsOf: UnsafeBufferPointer(rebasing: $0[k.range])) }
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
    /// each; nil where a set is not full yet. Held unmanaged (each retained once, here): a lookup
    /// and its replay then retain nothing.
    private var plans: [Unmanaged<Plan>?]
    private static let setCount = 128
    private static let ways = 8
    /// Lists longer than this are walked each time, not kept.
    static let largest = 256

    init() { plans = Array(repeating: nil, count: JSONPlans.setCount &* JSONPlans.ways) }

    deinit { for p in plans { p?.release() } }

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
        case .uuid(let u): kind = node.pointee.end > i &+ 1 && AssignedNumbers.label(u) != nil ? 7 : 6
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

    /// Writes `nodes` of the layer `root` from the plan recorded for their shape; false, with
    /// nothing written, when there is none.
    func replay(root: UInt64, _ nodes: UnsafeBufferPointer<FieldList.Node>, to out: Output) -> Bool {
        let first = set(root, nodes) &* JSONPlans.ways
        for i in first..<(first &+ JSONPlans.ways) {
            guard let p = plans[i] else { return false }
            guard p._withUnsafeGuaranteedRef({ $0.fits(root: root, nodes) }) else { continue }
            if i > first { moveToFront(i, first) }
            p._withUnsafeGuaranteedRef { Self.replay($0, nodes, to: out) }
            return true
        }
        return false
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
        let p = plans[last]?.takeUnretainedValue() ?? Plan(reserving: max(nodes.count, 64))
        if plans[last] == nil { plans[last] = .passRetained(p) }
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
        plans[first]?.release()
        for i in first..<(first &+ JSONPlans.ways &- 1) { plans[i] = plans[i &+ 1] }
        plans[first &+ JSONPlans.ways &- 1] = nil
    }

    /// Writes what the plan recorded, with `nodes`' values.
    private static func replay(_ p: Plan, _ nodes: UnsafeBufferPointer<FieldList.Node>, to out: Output) {
        let base = nodes.baseAddress.unsafelyUnwrapped, literal = p.literal.base
        for k in 0..<p.ops.count {
            let op = p.ops[k]
            if op.length > 0 { out.write(raw: literal + Int(op.start), count: Int(op.length)) }
            switch op.action {
            case Op.scalar: _ = FieldRendering.writeJSONScalar(base + Int(op.node), to: out)
            case Op.members: _ = FieldRendering.writeJSONMembers(base + Int(op.node), to: out)
            default: break
            }
        }
    }
}

/// A growable list of plain values in storage its owner frees (`deallocate`): read while a plan is
/// replayed without the retain and release an array's buffer takes each time it is lent.
struct PlainList<Element: BitwiseCopyable> {
    private(set) var base: UnsafeMutablePointer<Element>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        base = .allocate(capacity: self.capacity)
    }

    func deallocate() { base.deallocate() }

    @inline(__always) subscript(i: Int) -> Element { base[i] }

    mutating func removeAll() { count = 0 }

    @inline(__always) mutating func append(_ e: Element) {
        if count == capacity { grow(count &+ 1) }
        (base + count).initialize(to: e)
        count &+= 1
    }

    mutating func append(contentsOf b: UnsafeBufferPointer<Element>) {
        guard let from = b.baseAddress, b.count > 0 else { return }
        if count &+ b.count > capacity { grow(count &+ b.count) }
        (base + count).initialize(from: from, count: b.count)
        count &+= b.count
    }

    private mutating func grow(_ needed: Int) {
        let c = max(needed, capacity &* 2)
        let p = UnsafeMutablePointer<Element>.allocate(capacity: c)
        p.initialize(from: base, count: count)
        base.deallocate()
        base = p
        capacity = c
    }
}
