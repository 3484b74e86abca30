/// A Bluetooth device address (48 bits), printed most significant byte first, in lower case as
/// tshark prints it ("00:1b:dc:07:32:a1").
public struct BDAddr: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let raw: UInt64
    @inlinable public init(_ raw: UInt64) { self.raw = raw & 0xFFFF_FFFF_FFFF }

    // Hashed as its one word (`WordHash`): dictionaries keyed by address are looked up for most
    // advertising reports, and the general path (a Hasher filled, then finalised) costs ten times as much.
    @inlinable public func hash(into hasher: inout Hasher) { hasher.combine(raw) }
    @inlinable public func _rawHashValue(seed: Int) -> Int { WordHash.value(raw, seed: seed) }

    public var description: String {
        TextCursor.string(count: Self.textLength) { store(into: &$0) }
    }

    /// Characters in `description`.
    public static let textLength = 17

    /// Writes the `textLength` characters of `description`: text outputs write addresses
    /// straight into their buffers with it.
    ///
    /// All twelve digits are made at once (`Hex.digitWord`) and stored with their colons as two
    /// words and a byte, where a byte at a time took about 140 instructions an address.
    @inlinable public func store(into c: inout TextCursor) {
        // Digits first in memory: as numbers, the first digit in the low byte.
        let high = Hex.digitWord(raw >> 32, count: 4, lower: true).littleEndian
        let low = Hex.digitWord(raw, count: 8, lower: true).littleEndian
        let colon: UInt64 = 0x3A
        // "hh:hh:ll" "<:>ll:ll:l" "l"
        let first = high & 0xFFFF | colon << 16 | (high >> 16 & 0xFFFF) << 24 | colon << 40 | (low & 0xFFFF) << 48
        let second = colon | (low >> 16 & 0xFFFF) << 8 | colon << 24 | (low >> 32 & 0xFFFF) << 32 | colon << 48
            | (low >> 48 & 0xFF) << 56
        c.append(words: first.littleEndian, second.littleEndian, UInt8(truncatingIfNeeded: low >> 56))
    }

    /// "aa:bb:cc:dd:ee:ff", most significant byte first, in either case; nil for anything else.
    public init?(parsing s: String) {
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var raw: UInt64 = 0
        for p in parts {
            guard p.count == 2, let b = UInt8(p, radix: 16) else { return nil }
            raw = raw << 8 | UInt64(b)
        }
        self.init(raw)
    }

    /// The kind of a random address, from its two most significant bits (Vol 6 Part B 1.3.2).
    public var randomKind: RandomAddressKind {
        switch raw >> 46 {
        case 0b11: return .staticAddress
        case 0b01: return .resolvablePrivate
        case 0b00: return .nonResolvablePrivate
        default: return .reserved
        }
    }

    public static func < (a: BDAddr, b: BDAddr) -> Bool { a.raw < b.raw }
}

public enum RandomAddressKind: String, Sendable {
    case staticAddress = "random static"
    case resolvablePrivate = "resolvable private"
    case nonResolvablePrivate = "non-resolvable private"
    case reserved = "random (reserved)"
}
