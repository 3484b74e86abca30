import Wire

/// Resolvable private addresses (Core Vol 6 Part B 1.3.2.2, Vol 3 Part H 2.2.2): a device with
/// privacy advertises from an address that changes every few minutes, 24 bits of random prand
/// (its two most significant bits 0b01) over 24 bits of hash = ah(IRK, prand). Whoever holds the
/// device's IRK tells which addresses are its own; without it each address looks like a new device.

/// An identity address: the public or random static address a device distributes with its IRK
/// (SMP Identity Address Information, Vol 3 Part H 3.6.5).
public struct IdentityAddress: Hashable, Sendable, CustomStringConvertible {
    public let address: BDAddr
    /// 0 public, 1 random static (AddrType of Identity Address Information).
    public let type: UInt8

    public init(_ address: BDAddr, type: UInt8) {
        self.address = address
        self.type = type & 1
    }

    /// "public identity" or "random static identity".
    public var kind: String { type == 0 ? "public identity" : "random static identity" }

    public var description: String { address.description + " (" + kind + ")" }
}

/// An Identity Resolving Key with the identity it belongs to and where it came from.
public struct IdentityKey: Sendable {
    /// Most significant octet first.
    public let irk: Block128
    public let identity: IdentityAddress
    /// "SMP Identity Information in frame 212", "keys file keys.yaml (Lamp)".
    public var source: String { frame.map { origin + " in frame " + String($0) } ?? origin }
    /// `source` in parts, joined when asked: a capture distributing an IRK on every connection
    /// builds no text for them.
    let origin: String
    let frame: Int?

    public init(irk: Block128, identity: IdentityAddress, source: String) {
        self.init(irk: irk, identity: identity, origin: source, frame: nil)
    }

    init(irk: Block128, identity: IdentityAddress, origin: String, frame: Int?) {
        self.irk = irk
        self.identity = identity
        self.origin = origin
        self.frame = frame
    }
}

/// The random address hash function (Vol 3 Part H 2.2.2).
public enum PrivateAddressFunctions {
    /// ah(k, r) = e(k, r') mod 2^24, r' = 104 bits of padding (zeros) || r, r the 24-bit prand.
    public static func ah(irk: Block128, prand: UInt32) -> UInt32 {
        ah(AESWords(key: irk), prand: prand)
    }

    /// With the key schedule already expanded: resolving tries every known IRK per address.
    static func ah(_ aes: AESWords, prand: UInt32) -> UInt32 {
        aes.encrypt(Block128(0, 0, 0, prand & 0xFF_FFFF))[3] & 0xFF_FFFF
    }

    /// Whether an address of the random type is resolvable private (two most significant bits 0b01).
    @inlinable public static func isResolvable(_ a: BDAddr) -> Bool { a.raw >> 46 == 0b01 }

    /// The resolvable private address of `irk` for a prand (Vol 6 Part B 1.3.2.2): prand in the
    /// most significant 24 bits, its top two bits forced to 0b01, and the hash below.
    public static func resolvableAddress(irk: Block128, prand: UInt32) -> BDAddr {
        let r = prand & 0x3F_FFFF | 0x40_0000
        return BDAddr(UInt64(r) << 24 | UInt64(ah(irk: irk, prand: r)))
    }
}

/// Tells the identity behind resolvable private addresses from the IRKs known so far. Empty (and
/// free: `identity(of:type:)` returns at once) until an IRK arrives; results are cached per
/// address, so each address costs one AES per IRK once.
public final class AddressResolver {
    struct Key {
        let aes: AESWords
        let key: IdentityKey
    }

    private var keys: [Key] = []
    /// Results by address, nil for addresses no IRK resolved (bounded: emptied when full).
    private var cache: [BDAddr: Int?] = [:]
    static let cacheCapacity = 8192
    /// IRKs kept at most: each address is tried against all of them.
    public static let maxKeys = 256

    public init(_ keys: [IdentityKey] = []) {
        for k in keys { add(k) }
    }

    /// No IRK known: nothing resolves.
    public var isEmpty: Bool { keys.isEmpty }

    /// The IRKs known, in the order they came.
    public var identityKeys: [IdentityKey] { keys.map(\.key) }

    /// Adds an IRK; one already known (the same key for the same identity) is not added twice.
    /// An all-zero IRK is skipped: stacks send it when they have no IRK to distribute (BlueZ
    /// ignores it too), and it would resolve nothing that is a device's own.
    @discardableResult
    public func add(_ k: IdentityKey) -> Bool {
        guard k.irk != Block128(repeating: 0), keys.count < Self.maxKeys,
              !keys.contains(where: { $0.key.irk == k.irk && $0.key.identity == k.identity }) else { return false }
        keys.append(Key(aes: AESWords(key: k.irk), key: k))
        // Addresses no IRK resolved may be this one's.
        cache = cache.filter { $0.value != nil }
        return true
    }

    /// The IRK known for an identity address (the first, when several name it).
    public func key(for identity: IdentityAddress) -> IdentityKey? {
        keys.first { $0.key.identity == identity }?.key
    }

    /// The identity of an address seen with address type `type` (1: random), when it is a
    /// resolvable private address and a known IRK generated it.
    public func identity(of address: BDAddr, type: UInt8) -> IdentityKey? {
        guard !keys.isEmpty, type == 1, PrivateAddressFunctions.isResolvable(address) else { return nil }
        if let hit = cache[address] { return hit.map { keys[$0].key } }
        let prand = UInt32(truncatingIfNeeded: address.raw >> 24)
        let hash = UInt32(truncatingIfNeeded: address.raw) & 0xFF_FFFF
        let found = keys.firstIndex { PrivateAddressFunctions.ah($0.aes, prand: prand) == hash }
        if cache.count >= Self.cacheCapacity { cache.removeAll(keepingCapacity: true) }
        cache[address] = .some(found)
        return found.map { keys[$0].key }
    }
}
