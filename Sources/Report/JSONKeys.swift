import Decoders
import Wire

/// Each field label's JSON key (`Field.key(for:)`: "Attribute Handle" → `attribute_handle`) and
/// its FNV-1a hash, made once rather than for every field of every frame.
///
/// A field's label (`FieldLabel`) finds its key by the label's address: one slot, one compare, no
/// byte of the label read. Text (a layer's name) finds its pair of slots by its length and six of
/// its bytes and is confirmed by comparing it. Two slots a pair let two labels that meet in one
/// place both stay (on the advertising flood "RSSI" and a Flags bit's name did). The keys' bytes sit
/// in one arena that only grows while a frame is written, so a `Key` stays valid until the next
/// `trim`, which the writers call between frames.
final class JSONKeys {
    /// Where the key's bytes are in `bytes`; `offset` < 0 for a label that is not ASCII, whose key
    /// only `Field.key(for:)` makes.
    struct Key {
        let offset: Int
        let length: Int
        let hash: UInt64
        /// The member's start, `"key":`, in four little-endian words when it fits in 32 bytes
        /// (`fragmentLength` 0 when not): written as four stores, with no read of the arena.
        var fragment: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var fragmentLength = 0
        var range: Range<Int> { offset..<(offset &+ length) }

        init(offset: Int, length: Int, hash: UInt64) {
            self.offset = offset
            self.length = length
            self.hash = hash
        }

        /// The key with its fragment packed from its bytes.
        init(offset: Int, hash: UInt64, bytes: ArraySlice<UInt8>) {
            self.init(offset: offset, length: bytes.count, hash: hash)
            let n = bytes.count &+ 3
            guard n <= 32 else { return }
            // Four words in locals, not an array: a key made again (after `trim`, or when two
            // labels take turns in a slot) allocates nothing.
            var w0: UInt64 = 0, w1: UInt64 = 0, w2: UInt64 = 0, w3: UInt64 = 0
            func put(_ b: UInt8, _ i: Int) {
                let v = UInt64(b) << UInt64((i & 7) &* 8)
                switch i >> 3 {
                case 0: w0 |= v
                case 1: w1 |= v
                case 2: w2 |= v
                default: w3 |= v
                }
            }
            put(UInt8(ascii: "\""), 0)
            for (i, b) in bytes.enumerated() { put(b, i &+ 1) }
            put(UInt8(ascii: "\""), n &- 2)
            put(UInt8(ascii: ":"), n &- 1)
            fragment = (w0, w1, w2, w3)
            fragmentLength = n
        }
    }

    private static let slotCount = 4096
    /// Four times as many as the texts': most sets then hold one label, found with one compare.
    private static let addressSlotCount = 16384
    private static let arenaLimit = 1 << 16
    private var labels = [String](repeating: "", count: JSONKeys.slotCount)
    /// Each slot's `slotHash`: a label is compared only with one that hashed the same.
    private var hashes = [UInt64](repeating: 0, count: JSONKeys.slotCount)
    private var keys = [Key](repeating: Key(offset: -1, length: 0, hash: 0), count: JSONKeys.slotCount)
    /// Labels' keys, by the label's address (`key(_: FieldLabel)`); address 0 is empty. One array
    /// of pairs: a lookup then reads (and retains) one array, not two.
    private var byAddress = [(address: UInt, key: Key)](repeating: (0, Key(offset: -1, length: 0, hash: 0)),
                                                          count: JSONKeys.addressSlotCount)
    /// The keys' bytes, back to back.
    private(set) var bytes: [UInt8] = []

    /// Where a literal of the binary lies (`key(_: FieldLabel)`).
    private let anchor = UInt(bitPattern: ("JSON keys" as StaticString).utf8Start)

    init() { bytes.reserveCapacity(JSONKeys.arenaLimit) }

    @inline(__always) func key(_ label: String) -> Key {
        let h = JSONKeys.slotHash(label)
        let i = Int(truncatingIfNeeded: h) & (JSONKeys.slotCount &- 2)
        // The empty label is never kept: an empty slot holds "" too.
        if !label.isEmpty {
            if hashes[i] == h, labels[i] == label { return keys[i] }
            if hashes[i &+ 1] == h, labels[i &+ 1] == label { return keys[i &+ 1] }
        }
        return insert(label, hash: h, at: i)
    }

    /// A label's key, by the label's address (a compare or a few, no byte of it read). Four ways
    /// a set: with one, labels whose addresses met in a slot took turns in it, and each turn made
    /// the label's text again (an allocation), as often as the binary's layout happened to pair them.
    @inline(__always) func key(_ label: FieldLabel) -> Key {
        let start = label.address
        // From a literal's address: the binary is loaded at a random address each run, and the
        // sets its labels fall in would change with it.
        let i = Int(truncatingIfNeeded: WordHash.value(UInt64(start &- anchor), seed: 0)) & (JSONKeys.addressSlotCount &- 4)
        let slot = byAddress[i]
        if slot.address == start { return slot.key }
        return otherWays(label, start, at: i)
    }

    /// The set's other ways, then a new entry in it: the newest first, the oldest of the set goes.
    @inline(never) private func otherWays(_ label: FieldLabel, _ start: UInt, at i: Int) -> Key {
        for w in 1..<4 where byAddress[i &+ w].address == start { return byAddress[i &+ w].key }
        let k = key(label.string)
        byAddress[i &+ 3] = byAddress[i &+ 2]
        byAddress[i &+ 2] = byAddress[i &+ 1]
        byAddress[i &+ 1] = byAddress[i]
        byAddress[i] = (start, k)
        return k
    }

    /// The newest first: the label it replaces moves to the second slot, the older one there goes.
    @inline(never) private func insert(_ label: String, hash h: UInt64, at i: Int) -> Key {
        let k = make(label)
        labels[i &+ 1] = labels[i]
        keys[i &+ 1] = keys[i]
        hashes[i &+ 1] = hashes[i]
        labels[i] = label
        keys[i] = k
        hashes[i] = h
        return k
    }

    /// The label's length and six of its bytes (both ends, the middle, the quarters), mixed by
    /// `WordHash`: enough to tell the decoders' labels apart without reading a long one whole.
    @inline(__always) private static func slotHash(_ label: String) -> UInt64 {
        label.utf8.withContiguousStorageIfAvailable { u -> UInt64 in
            let n = u.count
            guard n > 0 else { return 0 }
            let q = n >> 2
            var x = UInt64(n) | UInt64(u[0]) << 8 | UInt64(u[q]) << 16 | UInt64(u[n >> 1]) << 24
            x |= UInt64(u[n &- 1 &- q]) << 32 | UInt64(u[n &- 1]) << 40
            return UInt64(bitPattern: Int64(WordHash.value(x, seed: 0)))
        } ?? 0
    }

    private func make(_ label: String) -> Key {
        let start = bytes.count
        var h = FNV1a()
        if FieldRendering.forEachKeyByte(label, { bytes.append($0); h.add($0) }) {
            return Key(offset: start, hash: h.value, bytes: bytes[start...])
        }
        bytes.removeSubrange(start...)
        return Key(offset: -1, length: 0, hash: FNV1a.of(Field.key(for: label).utf8))
    }

    /// A frame's siblings with their keys, for objects with too many siblings to list on the stack
    /// (a decoded value of a hundred entries): lists kept from earlier frames, one per level of
    /// nesting in use, so a long list allocates once per run rather than once per frame.
    typealias Sibling = (node: Int, key: Key)
    private var spareSiblings: [[Sibling]] = []

    /// A list of at least `count` siblings to fill, taken from the spares; `giveBack` returns it.
    /// A list only grows: its entries are written before they are read.
    func takeSiblings(_ count: Int) -> [Sibling] {
        var list = spareSiblings.popLast() ?? []
        if list.count < count {
            list.append(contentsOf: repeatElement((node: 0, key: Key(offset: -1, length: 0, hash: 0)), count: count &- list.count))
        }
        return list
    }

    func giveBack(_ list: consuming [Sibling]) { spareSiblings.append(list) }

    /// Between frames: forgets every key once the arena has passed its limit.
    func trim() {
        guard bytes.count > JSONKeys.arenaLimit else { return }
        bytes.removeAll(keepingCapacity: true)
        for i in labels.indices where !labels[i].isEmpty { labels[i] = "" }
        for i in byAddress.indices where byAddress[i].address != 0 { byAddress[i].address = 0 }
    }
}
