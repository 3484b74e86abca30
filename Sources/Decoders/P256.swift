import Wire

/// The NIST P-256 curve (FIPS 186-4 D.1.2.3) that LE Secure Connections pairing uses for its
/// Diffie-Hellman key (Core Vol 3 Part H 2.3.5.6): just enough to multiply a point by a private
/// key, which a sniffer needs when one side used the debug key pair or the user gave a private key.
/// It runs once per pairing, on values everyone on the air saw, so plain double-and-add in
/// Montgomery form suffices (no constant-time concerns: nothing here is a secret of ours).

/// A 256-bit number as four 64-bit limbs, least significant first.
typealias U256 = SIMD4<UInt64>

extension U256 {
    /// From 32 octets most significant first; nil for another length.
    init?(msbFirst b: [UInt8]) {
        guard b.count == 32 else { return nil }
        self.init()
        for i in 0..<4 {
            var w: UInt64 = 0
            for k in 0..<8 { w = w << 8 | UInt64(b[(3 - i) * 8 + k]) }
            self[i] = w
        }
    }

    /// From 64 hex digits (constants).
    init(hex: String) {
        let digits = Array(hex.utf8).map { c -> UInt8 in c <= 57 ? c - 48 : (c | 0x20) - 87 }
        self.init(msbFirst: stride(from: 0, to: 64, by: 2).map { digits[$0] << 4 | digits[$0 + 1] })!
    }

    var msbFirst: [UInt8] {
        (0..<32).map { i in UInt8(truncatingIfNeeded: self[3 - i / 8] >> (8 * UInt64(7 - i % 8))) }
    }

    var isZero: Bool { self == U256() }

    /// Bit `i` (0 the least significant).
    func bit(_ i: Int) -> Bool { self[i / 64] >> UInt64(i % 64) & 1 == 1 }

    /// a ≥ b.
    static func >= (a: U256, b: U256) -> Bool {
        for i in (0..<4).reversed() where a[i] != b[i] { return a[i] > b[i] }
        return true
    }

    /// a - b mod 2^256 and the borrow.
    static func subtract(_ a: U256, _ b: U256) -> (U256, Bool) {
        wordwise(a, b) { $0.subtractingReportingOverflow($1) }
    }

    /// a + b mod 2^256 and the carry.
    static func add(_ a: U256, _ b: U256) -> (U256, Bool) {
        wordwise(a, b) { $0.addingReportingOverflow($1) }
    }

    /// Applies `op` word by word from the least significant, passing the carry (or borrow) on.
    @inline(__always)
    private static func wordwise(_ a: U256, _ b: U256,
                                 _ op: (UInt64, UInt64) -> (partialValue: UInt64, overflow: Bool)) -> (U256, Bool) {
        var r = U256(), carry = false
        for i in 0..<4 {
            let (v1, o1) = op(a[i], b[i])
            let (v2, o2) = op(v1, carry ? 1 : 0)
            r[i] = v2
            carry = o1 || o2
        }
        return (r, carry)
    }
}

/// Arithmetic modulo the curve's prime p = 2^256 - 2^224 + 2^192 + 2^96 - 1, on values in
/// Montgomery form (a·2^256 mod p).
enum P256Field {
    static let p = U256(hex: "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff")

    static func add(_ a: U256, _ b: U256) -> U256 {
        let (s, carry) = U256.add(a, b)
        return carry || s >= p ? U256.subtract(s, p).0 : s
    }

    static func sub(_ a: U256, _ b: U256) -> U256 {
        let (d, borrow) = U256.subtract(a, b)
        return borrow ? U256.add(d, p).0 : d
    }

    /// t + a·b + c, which always fits in 128 bits.
    @inline(__always)
    private static func mac(_ t: UInt64, _ a: UInt64, _ b: UInt64, _ c: UInt64) -> (hi: UInt64, lo: UInt64) {
        let m = a.multipliedFullWidth(by: b)
        var hi = m.high
        let (l1, o1) = m.low.addingReportingOverflow(t)
        let (l2, o2) = l1.addingReportingOverflow(c)
        hi &+= (o1 ? 1 : 0) &+ (o2 ? 1 : 0)
        return (hi, l2)
    }

    /// a·b·2^-256 mod p (Montgomery multiplication, coarsely integrated operand scanning). The
    /// least significant limb of p is all ones, so -p^-1 mod 2^64 is 1.
    static func mul(_ a: U256, _ b: U256) -> U256 {
        var t = SIMD8<UInt64>()
        for i in 0..<4 {
            var c: UInt64 = 0
            for j in 0..<4 { (c, t[j]) = mac(t[j], a[j], b[i], c) }
            let (s4, o4) = t[4].addingReportingOverflow(c)
            t[4] = s4
            t[5] = o4 ? 1 : 0
            let m = t[0]
            (c, _) = mac(t[0], m, p[0], 0)
            for j in 1..<4 { (c, t[j - 1]) = mac(t[j], m, p[j], c) }
            let (s3, o3) = t[4].addingReportingOverflow(c)
            t[3] = s3
            t[4] = t[5] &+ (o3 ? 1 : 0)
        }
        let r = U256(t[0], t[1], t[2], t[3])
        return t[4] != 0 || r >= p ? U256.subtract(r, p).0 : r
    }

    static func square(_ a: U256) -> U256 { mul(a, a) }

    /// 2^512 mod p, for entering Montgomery form: 2^256 mod p doubled 256 times.
    static let r2: U256 = {
        var r = U256.subtract(U256(), p).0  // 2^256 - p = 2^256 mod p
        for _ in 0..<256 { r = add(r, r) }
        return r
    }()

    static let one = toMontgomery(U256(1, 0, 0, 0))

    static func toMontgomery(_ a: U256) -> U256 { mul(a, r2) }
    static func fromMontgomery(_ a: U256) -> U256 { mul(a, U256(1, 0, 0, 0)) }

    /// a^-1 (Fermat: a^(p-2)); 0 for 0.
    static func inverse(_ a: U256) -> U256 {
        let e = U256.subtract(p, U256(2, 0, 0, 0)).0
        var r = one
        for i in (0..<256).reversed() {
            r = square(r)
            if e.bit(i) { r = mul(r, a) }
        }
        return r
    }
}

/// A point of P-256 in affine coordinates (plain numbers, not Montgomery form).
public struct P256Point: Equatable, Sendable {
    let x: U256, y: U256

    /// y² = x³ - 3x + b.
    static let b = U256(hex: "5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b")
    /// The order of the base point: private keys are below it.
    static let n = U256(hex: "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")
    public static let generator = P256Point(
        x: U256(hex: "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"),
        y: U256(hex: "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5"))!

    /// A point from its coordinates; nil when it is not on the curve (or a coordinate is not
    /// below p): a Diffie-Hellman key computed from it would mean nothing.
    init?(x: U256, y: U256) {
        let p = P256Field.p
        guard !(x >= p), !(y >= p) else { return nil }
        let mx = P256Field.toMontgomery(x), my = P256Field.toMontgomery(y)
        let x3 = P256Field.mul(P256Field.square(mx), mx)
        let threeX = P256Field.add(P256Field.add(mx, mx), mx)
        let rhs = P256Field.add(P256Field.sub(x3, threeX), P256Field.toMontgomery(P256Point.b))
        guard P256Field.square(my) == rhs else { return nil }
        self.x = x
        self.y = y
    }

    /// A public key as SMP's Pairing Public Key carries it: X then Y, each 32 octets least
    /// significant first (Vol 3 Part H 3.5.6).
    public init?(smpX: Bytes, smpY: Bytes) {
        guard let x = U256(msbFirst: smpX.reversed()), let y = U256(msbFirst: smpY.reversed()) else { return nil }
        self.init(x: x, y: y)
    }

    /// X, most significant octet first.
    public var xMSBFirst: [UInt8] { x.msbFirst }

    /// k·P's x coordinate, most significant octet first: the Diffie-Hellman key of the private
    /// key k (32 octets, most significant first) and the other side's public key P. nil for a key
    /// of the wrong length, 0, or not below the curve's order.
    public func sharedSecret(privateKey: [UInt8]) -> [UInt8]? {
        guard let k = U256(msbFirst: privateKey), !k.isZero, !(k >= P256Point.n),
              let r = multiplied(by: k) else { return nil }
        return r.x.msbFirst
    }

    /// k·P by double-and-add on Jacobian coordinates (X/Z², Y/Z³); nil for the point at infinity.
    func multiplied(by k: U256) -> P256Point? {
        let F = P256Field.self
        let qx = F.toMontgomery(x), qy = F.toMontgomery(y)
        var X = U256(), Y = U256(), Z = U256()  // Z == 0: the point at infinity
        for i in (0..<256).reversed() {
            if !Z.isZero { (X, Y, Z) = Self.double(X, Y, Z) }
            guard k.bit(i) else { continue }
            if Z.isZero {
                (X, Y, Z) = (qx, qy, F.one)
            } else {
                (X, Y, Z) = Self.addAffine(X, Y, Z, qx, qy)
            }
        }
        guard !Z.isZero else { return nil }
        let zi = F.inverse(Z), zi2 = F.square(zi)
        let ax = F.fromMontgomery(F.mul(X, zi2)), ay = F.fromMontgomery(F.mul(Y, F.mul(zi2, zi)))
        return P256Point(x: ax, y: ay)
    }

    /// 2·(X, Y, Z), for a = -3 ("dbl-2001-b" of the Explicit-Formulas Database).
    private static func double(_ x: U256, _ y: U256, _ z: U256) -> (U256, U256, U256) {
        let F = P256Field.self
        let delta = F.square(z), gamma = F.square(y), beta = F.mul(x, gamma)
        let t = F.mul(F.sub(x, delta), F.add(x, delta))
        let alpha = F.add(F.add(t, t), t)
        let beta4 = F.add(F.add(beta, beta), F.add(beta, beta))
        let x3 = F.sub(F.square(alpha), F.add(beta4, beta4))
        let z3 = F.sub(F.sub(F.square(F.add(y, z)), gamma), delta)
        let gamma2 = F.square(gamma)
        let g4 = F.add(F.add(gamma2, gamma2), F.add(gamma2, gamma2))
        let y3 = F.sub(F.mul(alpha, F.sub(beta4, x3)), F.add(g4, g4))
        return (x3, y3, z3)
    }

    /// (X1, Y1, Z1) + (x2, y2, 1) ("madd-2007-bl"); doubles when the points are equal, and gives
    /// the point at infinity (Z = 0) when they are opposite.
    private static func addAffine(_ x1: U256, _ y1: U256, _ z1: U256, _ x2: U256, _ y2: U256) -> (U256, U256, U256) {
        let F = P256Field.self
        let z1z1 = F.square(z1)
        let u2 = F.mul(x2, z1z1), s2 = F.mul(y2, F.mul(z1, z1z1))
        let h = F.sub(u2, x1), r0 = F.sub(s2, y1)
        if h.isZero { return r0.isZero ? double(x1, y1, z1) : (U256(), U256(), U256()) }
        let hh = F.square(h)
        let i = F.add(F.add(hh, hh), F.add(hh, hh))
        let j = F.mul(h, i)
        let r = F.add(r0, r0)
        let v = F.mul(x1, i)
        let x3 = F.sub(F.sub(F.square(r), j), F.add(v, v))
        let y1j = F.mul(y1, j)
        let y3 = F.sub(F.mul(r, F.sub(v, x3)), F.add(y1j, y1j))
        let z3 = F.sub(F.sub(F.square(F.add(z1, h)), z1z1), hh)
        return (x3, y3, z3)
    }
}
