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
    @inlinable public func store(into c: inout TextCursor) {
        var shift: UInt64 = 40
        while true {
            c.appendHex(raw >> shift & 0xFF, digits: 2, lower: true)
            if shift == 0 { break }
            c.append(UInt8(ascii: ":"))
            shift -= 8
        }
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
