import Wire

/// Link-layer encryption (Core Vol 6 Part E): AES-128 (FIPS-197, encryption only, as CCM needs no
/// inverse cipher) and AES-CCM with a 4-byte MIC and 2-byte length field.
/// Byte order: AES works on blocks most significant octet first (FIPS-197); the link layer sends
/// its numbers least significant octet first, so the helpers below reverse where the spec says.

/// AES-128 block cipher with an expanded key.
public struct AES128: Sendable {
    private var roundKeys: [UInt8]

    /// - Parameter key: 16 bytes, most significant octet first (FIPS-197 order).
    public init?(key: [UInt8]) {
        guard key.count == 16 else { return nil }
        var w = key
        w.reserveCapacity(176)
        var rcon: UInt8 = 1
        for i in 4..<44 {
            var t0 = w[(i - 1) * 4], t1 = w[(i - 1) * 4 + 1], t2 = w[(i - 1) * 4 + 2], t3 = w[(i - 1) * 4 + 3]
            if i % 4 == 0 {
                // RotWord, SubWord, Rcon
                let r = t0
                t0 = AES128.sbox[Int(t1)] ^ rcon
                t1 = AES128.sbox[Int(t2)]
                t2 = AES128.sbox[Int(t3)]
                t3 = AES128.sbox[Int(r)]
                rcon = AES128.xtime(rcon)
            }
            w.append(w[(i - 4) * 4] ^ t0)
            w.append(w[(i - 4) * 4 + 1] ^ t1)
            w.append(w[(i - 4) * 4 + 2] ^ t2)
            w.append(w[(i - 4) * 4 + 3] ^ t3)
        }
        roundKeys = w
    }

    @inline(__always) static func xtime(_ b: UInt8) -> UInt8 { (b << 1) ^ (b & 0x80 != 0 ? 0x1B : 0) }

    /// Encrypts one 16-byte block (FIPS-197 order in and out). Returns zeros for a wrong length.
    public func encrypt(_ block: [UInt8]) -> [UInt8] {
        guard block.count == 16 else { return [UInt8](repeating: 0, count: 16) }
        var s = block
        for i in 0..<16 { s[i] ^= roundKeys[i] }
        for round in 1...10 {
            // SubBytes and ShiftRows together: state is column-major, s[r + 4c].
            var t = [UInt8](repeating: 0, count: 16)
            for c in 0..<4 {
                for r in 0..<4 { t[r + 4 * c] = AES128.sbox[Int(s[r + 4 * ((c + r) & 3)])] }
            }
            if round < 10 {
                for c in 0..<4 {
                    let a0 = t[4 * c], a1 = t[4 * c + 1], a2 = t[4 * c + 2], a3 = t[4 * c + 3]
                    let all = a0 ^ a1 ^ a2 ^ a3
                    t[4 * c] = a0 ^ all ^ AES128.xtime(a0 ^ a1)
                    t[4 * c + 1] = a1 ^ all ^ AES128.xtime(a1 ^ a2)
                    t[4 * c + 2] = a2 ^ all ^ AES128.xtime(a2 ^ a3)
                    t[4 * c + 3] = a3 ^ all ^ AES128.xtime(a3 ^ a0)
                }
            }
            let k = round * 16
            for i in 0..<16 { t[i] ^= roundKeys[k + i] }
            s = t
        }
        return s
    }

    static let sbox: [UInt8] = [
        0x63, 0x7c, 0x77, 0x7b, 0xf2, 0x6b, 0x6f, 0xc5, 0x30, 0x01, 0x67, 0x2b, 0xfe, 0xd7, 0xab, 0x76,
        0xca, 0x82, 0xc9, 0x7d, 0xfa, 0x59, 0x47, 0xf0, 0xad, 0xd4, 0xa2, 0xaf, 0x9c, 0xa4, 0x72, 0xc0,
        0xb7, 0xfd, 0x93, 0x26, 0x36, 0x3f, 0xf7, 0xcc, 0x34, 0xa5, 0xe5, 0xf1, 0x71, 0xd8, 0x31, 0x15,
        0x04, 0xc7, 0x23, 0xc3, 0x18, 0x96, 0x05, 0x9a, 0x07, 0x12, 0x80, 0xe2, 0xeb, 0x27, 0xb2, 0x75,
        0x09, 0x83, 0x2c, 0x1a, 0x1b, 0x6e, 0x5a, 0xa0, 0x52, 0x3b, 0xd6, 0xb3, 0x29, 0xe3, 0x2f, 0x84,
        0x53, 0xd1, 0x00, 0xed, 0x20, 0xfc, 0xb1, 0x5b, 0x6a, 0xcb, 0xbe, 0x39, 0x4a, 0x4c, 0x58, 0xcf,
        0xd0, 0xef, 0xaa, 0xfb, 0x43, 0x4d, 0x33, 0x85, 0x45, 0xf9, 0x02, 0x7f, 0x50, 0x3c, 0x9f, 0xa8,
        0x51, 0xa3, 0x40, 0x8f, 0x92, 0x9d, 0x38, 0xf5, 0xbc, 0xb6, 0xda, 0x21, 0x10, 0xff, 0xf3, 0xd2,
        0xcd, 0x0c, 0x13, 0xec, 0x5f, 0x97, 0x44, 0x17, 0xc4, 0xa7, 0x7e, 0x3d, 0x64, 0x5d, 0x19, 0x73,
        0x60, 0x81, 0x4f, 0xdc, 0x22, 0x2a, 0x90, 0x88, 0x46, 0xee, 0xb8, 0x14, 0xde, 0x5e, 0x0b, 0xdb,
        0xe0, 0x32, 0x3a, 0x0a, 0x49, 0x06, 0x24, 0x5c, 0xc2, 0xd3, 0xac, 0x62, 0x91, 0x95, 0xe4, 0x79,
        0xe7, 0xc8, 0x37, 0x6d, 0x8d, 0xd5, 0x4e, 0xa9, 0x6c, 0x56, 0xf4, 0xea, 0x65, 0x7a, 0xae, 0x08,
        0xba, 0x78, 0x25, 0x2e, 0x1c, 0xa6, 0xb4, 0xc6, 0xe8, 0xdd, 0x74, 0x1f, 0x4b, 0xbd, 0x8b, 0x8a,
        0x70, 0x3e, 0xb5, 0x66, 0x48, 0x03, 0xf6, 0x0e, 0x61, 0x35, 0x57, 0xb9, 0x86, 0xc1, 0x1d, 0x9e,
        0xe1, 0xf8, 0x98, 0x11, 0x69, 0xd9, 0x8e, 0x94, 0x9b, 0x1e, 0x87, 0xe9, 0xce, 0x55, 0x28, 0xdf,
        0x8c, 0xa1, 0x89, 0x0d, 0xbf, 0xe6, 0x42, 0x68, 0x41, 0x99, 0x2d, 0x0f, 0xb0, 0x54, 0xbb, 0x16,
    ]
}

/// A Long Term Key as the user gives it.
public struct LTK: Hashable, Sendable, CustomStringConvertible {
    /// Most significant octet first, as the specification and `HCI_LE_Encrypt` sample data print it.
    public let msbFirst: [UInt8]

    public init?(msbFirst bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        msbFirst = bytes
    }

    /// Least significant octet first, as SMP and HCI carry it.
    public init?(lsbFirst bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        msbFirst = bytes.reversed()
    }

    /// 32 hex digits, most significant first ("4C68384139F574D836BCF34E9DFB01BF"); "0x", spaces and
    /// colons are ignored.
    public init?(hex: String) {
        guard let out = LTK.octets(hex: hex) else { return nil }
        self.init(msbFirst: out)
    }

    /// The octets hex digits write, in order; "0x", spaces, colons and dashes are ignored. Nil for
    /// another character or an odd number of digits. (Keys of other lengths use it too.)
    public static func octets(hex: String) -> [UInt8]? {
        var out: [UInt8] = []
        var pending: UInt8? = nil
        var s = Substring(hex)
        if s.hasPrefix("0x") || s.hasPrefix("0X") { s = s.dropFirst(2) }
        for c in s.unicodeScalars {
            if c == " " || c == ":" || c == "-" { continue }
            guard let v = LTK.nibble(c) else { return nil }
            if let p = pending { out.append(p << 4 | v); pending = nil } else { pending = v }
        }
        return pending == nil ? out : nil
    }

    static func nibble(_ c: Unicode.Scalar) -> UInt8? {
        switch c.value {
        case 0x30...0x39: return UInt8(c.value - 0x30)
        case 0x41...0x46: return UInt8(c.value - 0x41 + 10)
        case 0x61...0x66: return UInt8(c.value - 0x61 + 10)
        default: return nil
        }
    }

    public var description: String {
        var s = ""
        for b in msbFirst { s += Hex.padded(b, width: 2) }
        return s
    }
}

/// Session material of one encrypted connection (Vol 6 Part B 5.1.3.1, Part E 1).
public struct LLSession: Sendable {
    let aes: AES128
    /// IV = IVm || IVs in the order they are sent (IVm in the first four octets).
    let iv: [UInt8]

    /// SK = e(LTK, SKD), SKD = SKDm || SKDs with SKDm in the least significant octets.
    /// - Parameters: skdm, skds, ivm, ivs: as carried in LL_ENC_REQ / LL_ENC_RSP (LSO first).
    public init?(ltk: LTK, skdm: [UInt8], skds: [UInt8], ivm: [UInt8], ivs: [UInt8]) {
        guard skdm.count == 8, skds.count == 8, ivm.count == 4, ivs.count == 4,
              let keyAES = AES128(key: ltk.msbFirst) else { return nil }
        let skd = Array((skdm + skds).reversed())
        let sk = keyAES.encrypt(skd)
        guard let a = AES128(key: sk) else { return nil }
        aes = a
        iv = ivm + ivs
        sessionKey = sk
    }

    /// The session key, most significant octet first.
    public let sessionKey: [UInt8]

    /// CCM nonce (Vol 6 Part E 2.1): 39-bit packet counter LSO first, direction bit in the top bit
    /// of the fifth octet (1 = central to peripheral), then the IV.
    func nonce(counter: UInt64, centralToPeripheral: Bool) -> [UInt8] {
        var n = [UInt8](repeating: 0, count: 13)
        for i in 0..<5 { n[i] = UInt8(truncatingIfNeeded: counter >> (8 * UInt64(i))) }
        n[4] = (n[4] & 0x7F) | (centralToPeripheral ? 0x80 : 0)
        for i in 0..<8 { n[5 + i] = iv[i] }
        return n
    }

    /// Decrypts a data PDU payload (ciphertext followed by the 4-byte MIC); nil when the MIC does
    /// not match (wrong key, counter or direction) or the payload is too short.
    /// - Parameter header: first octet of the PDU header (masked here to 0xE3 for the AAD).
    public func decrypt(header: UInt8, payload: Bytes, counter: UInt64, centralToPeripheral: Bool) -> [UInt8]? {
        guard payload.count >= 4 else { return nil }
        let n = nonce(counter: counter, centralToPeripheral: centralToPeripheral)
        let cipherLen = payload.count - 4
        let cipher = payload.prefix(cipherLen)
        let mic = payload.suffix(4)
        var plain = [UInt8](repeating: 0, count: cipherLen)
        // CTR: A_i = 0x01 || nonce || i (big-endian), i from 1 for the payload, A_0 masks the MIC.
        var block = [UInt8](repeating: 0, count: 16)
        block[0] = 0x01
        for i in 0..<13 { block[1 + i] = n[i] }
        var i = 0
        var ctr: UInt16 = 1
        var it = cipher.startIndex
        while i < cipherLen {
            block[14] = UInt8(ctr >> 8); block[15] = UInt8(truncatingIfNeeded: ctr)
            let ks = aes.encrypt(block)
            var j = 0
            while j < 16 && i < cipherLen {
                plain[i] = cipher[it] ^ ks[j]
                i += 1; j += 1; it += 1
            }
            ctr &+= 1
        }
        block[14] = 0; block[15] = 0
        let s0 = aes.encrypt(block)
        let tag = cbcMAC(nonce: n, aad: header & 0xE3, plain: plain)
        var ok = true
        var k = 0
        for m in mic { if m != tag[k] ^ s0[k] { ok = false }; k += 1 }
        return ok ? plain : nil
    }

    /// Encrypts a payload; returns ciphertext followed by the MIC (used to check the cipher
    /// against the specification's sample packets).
    public func encrypt(header: UInt8, plain: [UInt8], counter: UInt64, centralToPeripheral: Bool) -> [UInt8] {
        let n = nonce(counter: counter, centralToPeripheral: centralToPeripheral)
        var block = [UInt8](repeating: 0, count: 16)
        block[0] = 0x01
        for i in 0..<13 { block[1 + i] = n[i] }
        var out = [UInt8]()
        out.reserveCapacity(plain.count + 4)
        var ctr: UInt16 = 1
        var i = 0
        while i < plain.count {
            block[14] = UInt8(ctr >> 8); block[15] = UInt8(truncatingIfNeeded: ctr)
            let ks = aes.encrypt(block)
            var j = 0
            while j < 16 && i < plain.count { out.append(plain[i] ^ ks[j]); i += 1; j += 1 }
            ctr &+= 1
        }
        block[14] = 0; block[15] = 0
        let s0 = aes.encrypt(block)
        let tag = cbcMAC(nonce: n, aad: header & 0xE3, plain: plain)
        for k in 0..<4 { out.append(tag[k] ^ s0[k]) }
        return out
    }

    /// CCM authentication (RFC 3610 with M = 4, L = 2, one octet of additional data).
    private func cbcMAC(nonce n: [UInt8], aad: UInt8, plain: [UInt8]) -> [UInt8] {
        var b = [UInt8](repeating: 0, count: 16)
        b[0] = 0x49 // Adata, M' = 1 (4-byte MIC), L' = 1 (2-byte length)
        for i in 0..<13 { b[1 + i] = n[i] }
        b[14] = UInt8(truncatingIfNeeded: plain.count >> 8)
        b[15] = UInt8(truncatingIfNeeded: plain.count)
        var x = aes.encrypt(b)
        // B1: AAD length (2) and the AAD octet, zero padded.
        x[0] ^= 0x00; x[1] ^= 0x01; x[2] ^= aad
        x = aes.encrypt(x)
        var i = 0
        while i < plain.count {
            var j = 0
            while j < 16 && i < plain.count { x[j] ^= plain[i]; i += 1; j += 1 }
            x = aes.encrypt(x)
        }
        return x
    }
}
