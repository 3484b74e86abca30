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

/// A dictionary hash for keys that are one word (an address, an advertiser): the word and the
/// table's seed through a 64-bit finaliser (MurmurHash3's fmix64), a dozen instructions where
/// `Hasher` takes about a hundred. The seed is random per process, as `Hasher`'s is, so a capture
/// cannot be made to collide in every run.
public enum WordHash {
    @inlinable public static func value(_ word: UInt64, seed: Int) -> Int {
        var x = word ^ UInt64(bitPattern: Int64(seed))
        x ^= x >> 33
        x &*= 0xff51_afd7_ed55_8ccd
        x ^= x >> 33
        x &*= 0xc4ce_b9fe_1a85_ec53
        x ^= x >> 33
        return Int(bitPattern: UInt(x))
    }
}
