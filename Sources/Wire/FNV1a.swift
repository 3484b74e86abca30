/// FNV-1a, 64-bit: the one cheap, stable hash of bytes here, for memo tables, retransmission
/// checks, JSON keys and finding fingerprints (never for input chosen to collide).
public struct FNV1a: Sendable {
    public static let basis: UInt64 = 0xcbf2_9ce4_8422_2325
    public static let prime: UInt64 = 0x100_0000_01b3
    public var value: UInt64

    /// `seed` tells apart hashes of the same bytes that mean different things.
    @inlinable public init(seed: UInt64 = 0) { value = Self.basis ^ seed }

    @inlinable public mutating func add(_ byte: UInt8) { mix(UInt64(byte)) }

    @inlinable public mutating func add<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
        for b in bytes { add(b) }
    }

    /// A whole word in one step (a CRC after the bytes it covers).
    @inlinable public mutating func mix(_ word: UInt64) { value = (value ^ word) &* Self.prime }

    @inlinable public static func of<S: Sequence>(_ bytes: S) -> UInt64 where S.Element == UInt8 {
        var h = FNV1a()
        h.add(bytes)
        return h.value
    }
}
