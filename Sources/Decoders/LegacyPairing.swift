import Wire

/// LE legacy pairing seen by a sniffer (Core Vol 3 Part H 2.3.5): the TK is 0 (Just Works), a
/// passkey of at most 999,999 (Passkey Entry) or 128 bits exchanged out of band. The first two are
/// found from the confirm and random values sent in the clear (c1, 2.2.3); with the TK the STK is
/// s1(TK, Srand, Mrand) (2.2.4), and the link encrypted with it, key distribution included, can be
/// read.

/// A 128-bit value as four big-endian words, most significant first: the order AES and the
/// specification's sample data use. SMP carries these values least significant octet first.
public typealias Block128 = SIMD4<UInt32>

extension Block128 {
    /// From 16 octets least significant first (as SMP and LL PDUs carry them); nil for another length.
    public init?(lsbFirst b: Bytes) {
        guard b.count == 16 else { return nil }
        let s = b.startIndex
        func w(_ i: Int) -> UInt32 {
            // Word i holds MSB-first octets 4i...4i+3, that is wire octets 15-4i down to 12-4i.
            let o = s + 15 - 4 * i
            return UInt32(b[o]) << 24 | UInt32(b[o - 1]) << 16 | UInt32(b[o - 2]) << 8 | UInt32(b[o - 3])
        }
        self.init(w(0), w(1), w(2), w(3))
    }

    /// 16 octets most significant first.
    public var msbFirst: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(16)
        for i in 0..<4 { for k in (0..<4).reversed() { out.append(UInt8(truncatingIfNeeded: self[i] >> (8 * UInt32(k)))) } }
        return out
    }

    public init?(msbFirst b: [UInt8]) {
        guard b.count == 16 else { return nil }
        self.init(lsbFirst: ArraySlice(b.reversed()))
    }
}

/// AES-128 encryption over words with the usual combined round tables (FIPS-197 5.2, and the
/// table form of its SubBytes/ShiftRows/MixColumns). The key schedule is rebuilt in place, so
/// trying a million keys allocates nothing.
struct AESWords {
    private(set) var roundKeys = [UInt32](repeating: 0, count: 44)

    init(key: Block128) { expand(key) }

    /// Key expansion (FIPS-197 5.2).
    mutating func expand(_ key: Block128) {
        let s = AESWords.sbox32
        roundKeys[0] = key[0]; roundKeys[1] = key[1]; roundKeys[2] = key[2]; roundKeys[3] = key[3]
        for i in 4..<44 {
            var t = roundKeys[i - 1]
            if i & 3 == 0 {
                // RotWord, SubWord, Rcon
                t = (s[Int(t >> 16 & 0xFF)] << 24 | s[Int(t >> 8 & 0xFF)] << 16 | s[Int(t & 0xFF)] << 8 | s[Int(t >> 24)])
                    ^ AESWords.rcon[i / 4 - 1]
            }
            roundKeys[i] = roundKeys[i - 4] ^ t
        }
    }

    static let rcon: [UInt32] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1B, 0x36].map { $0 << 24 }

    /// Te0 of the table form: for each input octet, the column MixColumns makes of its S-box value
    /// (2s, s, s, 3s); Te1-Te3 are its rotations.
    static let te: [[UInt32]] = {
        let t0 = AES128.sbox.map { s -> UInt32 in
            let s2 = AES128.xtime(s), s3 = s2 ^ s
            return UInt32(s2) << 24 | UInt32(s) << 16 | UInt32(s) << 8 | UInt32(s3)
        }
        func ror(_ x: UInt32, _ n: UInt32) -> UInt32 { x >> n | x << (32 - n) }
        return [t0, t0.map { ror($0, 8) }, t0.map { ror($0, 16) }, t0.map { ror($0, 24) }]
    }()
    static let te0 = te[0], te1 = te[1], te2 = te[2], te3 = te[3]
    static let sbox32: [UInt32] = AES128.sbox.map(UInt32.init)

    // Plain arrays: unsafe buffers here gained about 10% on the whole passkey search (0.28 s to
    // 0.25 s for 10^6 candidates, -O, one core), not worth their risk.
    func encrypt(_ block: Block128) -> Block128 {
        let t0 = AESWords.te0, t1 = AESWords.te1, t2 = AESWords.te2, t3 = AESWords.te3
        let sb = AESWords.sbox32, rk = roundKeys
        var s0 = block[0] ^ rk[0], s1 = block[1] ^ rk[1], s2 = block[2] ^ rk[2], s3 = block[3] ^ rk[3]
        var k = 4
        for _ in 1..<10 {
            let n0 = t0[Int(s0 >> 24)] ^ t1[Int(s1 >> 16 & 0xFF)] ^ t2[Int(s2 >> 8 & 0xFF)] ^ t3[Int(s3 & 0xFF)] ^ rk[k]
            let n1 = t0[Int(s1 >> 24)] ^ t1[Int(s2 >> 16 & 0xFF)] ^ t2[Int(s3 >> 8 & 0xFF)] ^ t3[Int(s0 & 0xFF)] ^ rk[k + 1]
            let n2 = t0[Int(s2 >> 24)] ^ t1[Int(s3 >> 16 & 0xFF)] ^ t2[Int(s0 >> 8 & 0xFF)] ^ t3[Int(s1 & 0xFF)] ^ rk[k + 2]
            let n3 = t0[Int(s3 >> 24)] ^ t1[Int(s0 >> 16 & 0xFF)] ^ t2[Int(s1 >> 8 & 0xFF)] ^ t3[Int(s2 & 0xFF)] ^ rk[k + 3]
            s0 = n0; s1 = n1; s2 = n2; s3 = n3
            k += 4
        }
        func last(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ r: UInt32) -> UInt32 {
            (sb[Int(a >> 24)] << 24 | sb[Int(b >> 16 & 0xFF)] << 16 | sb[Int(c >> 8 & 0xFF)] << 8 | sb[Int(d & 0xFF)]) ^ r
        }
        return Block128(last(s0, s1, s2, s3, rk[40]), last(s1, s2, s3, s0, rk[41]),
                        last(s2, s3, s0, s1, rk[42]), last(s3, s0, s1, s2, rk[43]))
    }
}

/// The security functions of LE legacy pairing (Vol 3 Part H 2.2.3, 2.2.4).
public enum LegacyPairingFunctions {
    /// p1 = pres || preq || rat' || iat' (2.2.3): the Pairing Response and Request commands, 7
    /// octets each as sent (opcode first), and the address types (0 public, 1 random).
    public static func p1(preq: Bytes, pres: Bytes, iat: UInt8, rat: UInt8) -> Block128? {
        guard preq.count == 7, pres.count == 7 else { return nil }
        // Least significant first: iat', rat', preq, pres.
        let lsb: [UInt8] = [iat & 1, rat & 1] + Array(preq) + Array(pres)
        return Block128(lsbFirst: lsb[...])
    }

    /// p2 = padding (32 bits of 0) || ia || ra (2.2.3).
    public static func p2(ia: BDAddr, ra: BDAddr) -> Block128 {
        Block128(0, UInt32(truncatingIfNeeded: ia.raw >> 16), UInt32(truncatingIfNeeded: (ia.raw & 0xFFFF) << 16 | ra.raw >> 32),
                 UInt32(truncatingIfNeeded: ra.raw))
    }

    /// c1(k, r, p1, p2) = e(k, e(k, r XOR p1) XOR p2).
    public static func c1(k: Block128, r: Block128, p1: Block128, p2: Block128) -> Block128 {
        let aes = AESWords(key: k)
        return aes.encrypt(aes.encrypt(r ^ p1) ^ p2)
    }

    /// s1(k, r1, r2) = e(k, r'), r' the least significant 64 bits of r1 then those of r2.
    /// The STK is s1(TK, Srand, Mrand).
    public static func s1(k: Block128, r1: Block128, r2: Block128) -> Block128 {
        AESWords(key: k).encrypt(Block128(r1[2], r1[3], r2[2], r2[3]))
    }

    /// The TK of a passkey: the passkey as a 128-bit number (2.3.5.3).
    public static func tk(passkey: UInt32) -> Block128 { Block128(0, 0, 0, passkey) }

    /// The largest passkey (six decimal digits).
    public static let maxPasskey: UInt32 = 999_999

    /// The passkey whose TK gives `confirm` for `random`, trying 0 (Just Works) first; nil when none
    /// of 0-999,999 does (an OOB TK, or values that do not belong together).
    public static func findPasskey(confirm: Block128, random: Block128, p1: Block128, p2: Block128) -> UInt32? {
        let first = random ^ p1
        var aes = AESWords(key: tk(passkey: 0))
        var n: UInt32 = 0
        while n <= maxPasskey {
            aes.expand(Block128(0, 0, 0, n))
            if aes.encrypt(aes.encrypt(first) ^ p2) == confirm { return n }
            n += 1
        }
        return nil
    }
}

/// The values of one pairing seen over the air, gathered until the peripheral's Pairing Random
/// (the last value c1 and s1 need) arrives, or under LE Secure Connections until a DHKey Check
/// (after the last randoms, which f5 takes).
///
/// What it keeps of a PDU is copied: exchanges outlive their frames, and a slice would keep the
/// block of the capture the frame was read into.
final class PairingExchange {
    var preq: [UInt8]?, pres: [UInt8]?
    var request: PairingFeatures?, response: PairingFeatures?
    var mconfirm: Block128?, sconfirm: Block128?
    var mrand: Block128?, srand: Block128?
    /// The central's and the peripheral's Pairing Public Key (SMP order: X then Y, least
    /// significant octet first).
    var centralPublicKey: (x: [UInt8], y: [UInt8])?, peripheralPublicKey: (x: [UInt8], y: [UInt8])?
    var publicKeySeen: Bool { centralPublicKey != nil || peripheralPublicKey != nil }
    let firstFrame: Int
    var lastFrame: Int
    /// Recovery was attempted (it is done once).
    var finished = false

    init(frame: Int) {
        firstFrame = frame
        lastFrame = frame
    }

    /// Takes one SMP PDU; returns true when the exchange is ready to work on (both randoms seen,
    /// or the peripheral's random with something missing). An LL_ENC_REQ ends it too
    /// (`Dissector.linkLayerFrame`): the peripheral's random may be what the sniffer missed.
    func feed(_ pdu: SMPPDU, fromCentral: Bool, frame: Int) -> Bool {
        guard !finished, let command = pdu.command else { return false }
        switch command {
        case .pairingRequest(let f):
            preq = Array(pdu.raw.prefix(7)); request = f
        case .pairingResponse(let f):
            pres = Array(pdu.raw.prefix(7)); response = f
        case .pairingConfirm(let v):
            if fromCentral { mconfirm = Block128(lsbFirst: v) } else { sconfirm = Block128(lsbFirst: v) }
        case .pairingRandom(let v):
            if fromCentral { mrand = Block128(lsbFirst: v) } else { srand = Block128(lsbFirst: v) }
        case .pairingPublicKey(let x, let y):
            if fromCentral { centralPublicKey = (Array(x), Array(y)) } else { peripheralPublicKey = (Array(x), Array(y)) }
        case .pairingDHKeyCheck:
            lastFrame = frame
            return isSecureConnections
        default:
            return false
        }
        lastFrame = frame
        if case .pairingRandom = command { return !isSecureConnections && srand != nil && (mrand != nil || !fromCentral) }
        return false
    }

    /// LE Secure Connections: both set the SC flag, or public keys were exchanged. Its LTK is
    /// derived from an ECDH secret a sniffer cannot learn.
    var isSecureConnections: Bool {
        if publicKeySeen { return true }
        guard let request, let response else { return false }
        return request.authReq.secureConnections && response.authReq.secureConnections
    }

    var method: PairingMethod? {
        guard let request, let response else { return nil }
        return PairingMethod.resolve(request: request, response: response)
    }

    /// The method's name as the key's origin gives it ("Passkey Entry", not who typed it).
    var methodName: String {
        switch method {
        case .justWorks?: return "Just Works"
        case .passkeyEntry?: return "Passkey Entry"
        case .outOfBand?: return "OOB"
        case .numericComparison?: return "Numeric Comparison"
        case nil: return "(method unknown)"
        }
    }

    enum Outcome {
        /// The TK (a passkey, or one the user gave) and the STK it gives. `reversed`: the given TK
        /// matched with its octets in the other order.
        case recovered(tk: Block128, passkey: UInt32?, tkGiven: Bool, reversed: Bool, stk: Block128)
        /// OOB pairing and no given TK matched.
        case tkMissing
        /// No passkey (nor given TK) gives the confirm values.
        case notFound
        /// Values the sniffer missed, by name.
        case missing([String])
    }

    /// Works out the TK from the confirm values and the STK from the randoms.
    /// - Parameters:
    ///   - addresses: InitA, AdvA and whether each is random, from the CONNECT_IND.
    ///   - givenTKs: TKs the user gave (OOB), tried first.
    func recover(addresses: (ia: BDAddr, iatRandom: Bool, ra: BDAddr, ratRandom: Bool)?, givenTKs: [Block128]) -> Outcome {
        finished = true
        var missing: [String] = []
        if preq == nil { missing.append("the Pairing Request") }
        if pres == nil { missing.append("the Pairing Response") }
        if mconfirm == nil && sconfirm == nil { missing.append("both Pairing Confirms") }
        if mrand == nil { missing.append("the central's Pairing Random") }
        if srand == nil { missing.append("the peripheral's Pairing Random") }
        if addresses == nil { missing.append("the CONNECT_IND (the device addresses)") }
        guard missing.isEmpty, let preq, let pres, let addresses, let mrand, let srand,
              let p1 = LegacyPairingFunctions.p1(preq: preq[...], pres: pres[...], iat: addresses.iatRandom ? 1 : 0,
                                                 rat: addresses.ratRandom ? 1 : 0) else { return .missing(missing) }
        let p2 = LegacyPairingFunctions.p2(ia: addresses.ia, ra: addresses.ra)
        // The central's confirm and random, else the peripheral's: either pins the TK down.
        let (confirm, random) = mconfirm.map { ($0, mrand) } ?? (sconfirm!, srand)
        func stk(_ tk: Block128) -> Block128 { LegacyPairingFunctions.s1(k: tk, r1: srand, r2: mrand) }
        // A given TK is tried in both octet orders: tools print OOB data either way (bsniffhub's
        // example names its TK least significant octet first).
        for given in givenTKs {
            for reversed in [false, true] {
                guard let tk = reversed ? Block128(msbFirst: given.msbFirst.reversed()) : given,
                      LegacyPairingFunctions.c1(k: tk, r: random, p1: p1, p2: p2) == confirm else { continue }
                return .recovered(tk: tk, passkey: nil, tkGiven: true, reversed: reversed, stk: stk(tk))
            }
        }
        // OOB TKs are 128 random bits: no search (a TK of 0-999,999 would still be found below,
        // but a device that uses one is broken, and the search would be wasted on the rest).
        if method == .outOfBand { return .tkMissing }
        guard let passkey = LegacyPairingFunctions.findPasskey(confirm: confirm, random: random, p1: p1, p2: p2) else {
            return .notFound
        }
        let tk = LegacyPairingFunctions.tk(passkey: passkey)
        return .recovered(tk: tk, passkey: passkey, tkGiven: false, reversed: false, stk: stk(tk))
    }

    enum SecureConnectionsOutcome {
        /// The LTK, and the side whose private key was known (the debug key, or one given).
        case derived(ltk: Block128, centralKeyKnown: Bool, debugKey: Bool)
        /// Neither public key is the debug key nor belongs to a given private key.
        case noPrivateKey
        /// A public key that is not a point of P-256.
        case invalidPublicKey
        /// Values the sniffer missed, by name.
        case missing([String])
    }

    /// The LTK of an LE Secure Connections pairing (2.3.5.6.5): DHKey = one side's private key
    /// times the other side's public key, MacKey || LTK = f5(DHKey, Na, Nb, A, B), with Na and Nb
    /// the last Pairing Randoms (the twentieth under Passkey Entry).
    /// - Parameter privateKeys: private keys the user gave (32 octets, most significant first),
    ///   tried after the debug key.
    func deriveSecureConnections(addresses: (ia: BDAddr, iatRandom: Bool, ra: BDAddr, ratRandom: Bool)?,
                                 privateKeys: [[UInt8]]) -> SecureConnectionsOutcome {
        finished = true
        var missing: [String] = []
        if centralPublicKey == nil { missing.append("the central's Pairing Public Key") }
        if peripheralPublicKey == nil { missing.append("the peripheral's Pairing Public Key") }
        if mrand == nil { missing.append("the central's Pairing Random") }
        if srand == nil { missing.append("the peripheral's Pairing Random") }
        if addresses == nil { missing.append("the CONNECT_IND (the device addresses)") }
        guard missing.isEmpty, let centralPublicKey, let peripheralPublicKey, let mrand, let srand,
              let addresses else { return .missing(missing) }
        guard let pka = P256Point(smpX: centralPublicKey.x[...], smpY: centralPublicKey.y[...]),
              let pkb = P256Point(smpX: peripheralPublicKey.x[...], smpY: peripheralPublicKey.y[...]) else { return .invalidPublicKey }
        // Whose private key is known: the debug key's owner shows it by its X coordinate; a given
        // private key is tried on both sides (its public key is not known to match either).
        var attempts: [(key: [UInt8], other: P256Point, central: Bool, debug: Bool)] = []
        if pka.xMSBFirst == SecureConnectionsFunctions.debugPublicKeyX {
            attempts.append((SecureConnectionsFunctions.debugPrivateKey, pkb, true, true))
        }
        if pkb.xMSBFirst == SecureConnectionsFunctions.debugPublicKeyX {
            attempts.append((SecureConnectionsFunctions.debugPrivateKey, pka, false, true))
        }
        for k in privateKeys {
            guard let own = P256Point.generator.multiplied(by: U256(msbFirst: k) ?? U256()) else { continue }
            if own == pka { attempts.append((k, pkb, true, false)) }
            if own == pkb { attempts.append((k, pka, false, false)) }
        }
        guard let a = attempts.first, let dhKey = a.other.sharedSecret(privateKey: a.key) else { return .noPrivateKey }
        let keys = SecureConnectionsFunctions.f5(w: dhKey, n1: mrand, n2: srand, a1: addresses.ia, a1Random: addresses.iatRandom,
                                                 a2: addresses.ra, a2Random: addresses.ratRandom)
        return .derived(ltk: keys.ltk, centralKeyKnown: a.central, debugKey: a.debug)
    }
}
