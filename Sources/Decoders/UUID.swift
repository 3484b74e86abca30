import Wire

/// A Bluetooth UUID of 16, 32 or 128 bits. Short forms are aliases on the Bluetooth base UUID
/// 0000xxxx-0000-1000-8000-00805F9B34FB (Core Vol 3 Part B 2.5.1); equality and hashing use the
/// 128-bit value, so 0x180D and 0000180D-0000-1000-8000-00805F9B34FB are the same UUID.
public struct BluetoothUUID: Hashable, Sendable, CustomStringConvertible, Comparable {
    /// The 128-bit value, most significant half first (as the string is written).
    public let high: UInt64
    public let low: UInt64
    /// 2, 4 or 16: how many bytes it had where it was read (display keeps the short form).
    public var width: Int { Int(form.rawValue) }
    /// `width` in one byte whose spare values hold an optional's nil: `BluetoothUUID?` stays 17
    /// bytes, and a rule's observation with three of them 24 bytes smaller.
    private let form: Form
    private enum Form: UInt8 { case uuid16 = 2, uuid32 = 4, uuid128 = 16 }

    /// High half of the base UUID: 00000000-0000-1000; low half: 8000-00805F9B34FB.
    public static let baseHigh: UInt64 = 0x0000_0000_0000_1000
    public static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB

    public init(uuid16 v: UInt16) { self.init(uuid32: UInt32(v), form: .uuid16) }
    public init(uuid32 v: UInt32) { self.init(uuid32: v, form: .uuid32) }
    private init(uuid32 v: UInt32, form: Form) {
        high = UInt64(v) << 32 | BluetoothUUID.baseHigh
        low = BluetoothUUID.baseLow
        self.form = form
    }
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
        form = .uuid128
    }

    /// Reads a UUID stored little-endian on the air, 2, 4 or 16 bytes long.
    public init?(littleEndian bytes: Bytes) {
        guard bytes.count == 2 || bytes.count == 4 || bytes.count == 16 else { return nil }
        self.init(littleEndian: bytes, at: 0, width: bytes.count)
    }

    /// The UUID of `width` (2, 4 or 16) bytes at `offset` from the start of `bytes`, read in place:
    /// the caller has checked that they are there.
    @inline(__always) init(littleEndian bytes: Bytes, at offset: Int, width: Int) {
        switch width {
        case 2: self.init(uuid16: bytes.le16(at: offset))
        case 4: self.init(uuid32: bytes.le32(at: offset))
        default: self.init(high: bytes.le64(at: offset &+ 8), low: bytes.le64(at: offset))
        }
    }

    /// Parses "180D", "0x180D", "0000180d" or the 36-character form.
    public init?(_ string: String) {
        var s = string.lowercased()
        if s.hasPrefix("0x") { s.removeFirst(2) }
        let hex = s.filter { $0 != "-" }
        guard hex.allSatisfy(\.isHexDigit) else { return nil }
        switch hex.count {
        case 4: self.init(uuid16: UInt16(hex, radix: 16)!)
        case 8: self.init(uuid32: UInt32(hex, radix: 16)!)
        case 32 where s.count == 32 || s.count == 36:
            self.init(high: UInt64(hex.prefix(16), radix: 16)!, low: UInt64(hex.suffix(16), radix: 16)!)
        default: return nil
        }
    }

    /// True when the UUID lies on the Bluetooth base UUID (it has a 16- or 32-bit alias).
    public var isOnBase: Bool { low == BluetoothUUID.baseLow && high & 0xFFFF_FFFF == BluetoothUUID.baseHigh }

    /// The 16-bit alias, when there is one.
    public var uuid16: UInt16? { isOnBase && high >> 48 == 0 ? UInt16(high >> 32) : nil }
    /// The 32-bit alias, when there is one.
    public var uuid32: UInt32? { isOnBase ? UInt32(high >> 32) : nil }

    /// The 16 bytes big-endian (string order), as hashes over UUIDs use them.
    public var bigEndianBytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64($0))) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64($0))) }
    }

    /// Full 36-character form, upper case: "0000180D-0000-1000-8000-00805F9B34FB".
    public var uuidString: String {
        TextCursor.string(count: Self.stringLength) { storeString(into: &$0) }
    }

    public static let stringLength = 36

    /// Writes `uuidString`'s 36 bytes, for printers that write into their own buffer.
    ///
    /// The digits are made four or eight at a time (`Hex.digitWord`) and stored with the hyphens
    /// as four words and a 32-bit tail, where a digit at a time took about 400 instructions.
    @inlinable public func storeString(into c: inout TextCursor) {
        // Digits first in memory: as numbers, the first digit in the low byte.
        let d0 = Hex.digitWord(high >> 32, count: 8, lower: false).littleEndian
        let d1 = Hex.digitWord(high >> 16, count: 4, lower: false).littleEndian
        let d2 = Hex.digitWord(high, count: 4, lower: false).littleEndian
        let d3 = Hex.digitWord(low >> 48, count: 4, lower: false).littleEndian
        let d4 = Hex.digitWord(low >> 32, count: 4, lower: false).littleEndian
        let d5 = Hex.digitWord(low, count: 8, lower: false).littleEndian
        let hyphen: UInt64 = 0x2D
        // "dddddddd" "-dddd-dd" "dd-dddd-" "dddddddd" "dddd"
        let second = hyphen | (d1 & 0xFFFF_FFFF) << 8 | hyphen << 40 | (d2 & 0xFFFF) << 48
        let third = (d2 >> 16 & 0xFFFF) | hyphen << 16 | (d3 & 0xFFFF_FFFF) << 24 | hyphen << 56
        let fourth = (d4 & 0xFFFF_FFFF) | (d5 & 0xFFFF_FFFF) << 32
        c.append(words: d0.littleEndian, second.littleEndian, third.littleEndian, fourth.littleEndian,
                 UInt32(truncatingIfNeeded: d5 >> 32).littleEndian)
    }

    /// Short form when on the base ("0x180D"), else the full form.
    public var description: String {
        if let s = uuid16 { return Hex.prefixed(s, width: 4) }
        if let s = uuid32 { return Hex.prefixed(s, width: 8) }
        return uuidString
    }

    public static func == (a: BluetoothUUID, b: BluetoothUUID) -> Bool { a.high == b.high && a.low == b.low }
    public func hash(into h: inout Hasher) {
        h.combine(high)
        h.combine(low)
    }
    /// Each half hashed as one word (`WordHash`), each with its own seed: the SIG tables are looked
    /// up by UUID for nearly every ATT line printed, and a `Hasher` filled and finalised costs
    /// several times as much. Seeded per half, so colliding UUIDs cannot be chosen in advance.
    public func _rawHashValue(seed: Int) -> Int {
        WordHash.value(high, seed: seed) ^ WordHash.value(low, seed: seed &+ 0x5BD1_E995)
    }
    public static func < (a: BluetoothUUID, b: BluetoothUUID) -> Bool { (a.high, a.low) < (b.high, b.low) }
}

extension ByteReader {
    /// Reads a little-endian UUID of `width` bytes (2, 4 or 16).
    public mutating func uuid(width: Int) throws(DecodeError) -> BluetoothUUID {
        let b = try take(width)
        guard let u = BluetoothUUID(littleEndian: b) else { throw .invalid("UUID of \(width) bytes") }
        return u
    }
}
