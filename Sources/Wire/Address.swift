/// A Bluetooth device address (48 bits), printed most significant byte first, in lower case as
/// tshark prints it ("00:1b:dc:07:32:a1").
public struct BDAddr: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let raw: UInt64
    @inlinable public init(_ raw: UInt64) { self.raw = raw & 0xFFFF_FFFF_FFFF }

    public var description: String {
        String(unsafeUninitializedCapacity: 17) { buf in
            var shift: UInt64 = 40, i = 0
            while true {
                let b = UInt8(truncatingIfNeeded: raw >> shift)
                buf[i] = Hex.lowerDigit(b >> 4)
                buf[i &+ 1] = Hex.lowerDigit(b & 0xF)
                if shift == 0 { break }
                buf[i &+ 2] = UInt8(ascii: ":")
                i &+= 3
                shift -= 8
            }
            return 17
        }
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
