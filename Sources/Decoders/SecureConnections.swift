import Wire

/// LE Secure Connections seen by a sniffer (Core Vol 3 Part H 2.3.5.6): the LTK comes from an
/// elliptic-curve Diffie-Hellman key a listener cannot compute, unless it knows one side's private
/// key: the debug key pair the specification publishes (2.3.5.6.1), which a device in debug mode
/// uses and its peer must accept, or a private key the user gives. With it, the DHKey and f5
/// give the LTK, and the link encrypted with it can be read.
public enum SecureConnectionsFunctions {
    /// The debug private key (2.3.5.6.1), most significant octet first.
    public static let debugPrivateKey: [UInt8] =
        U256(hex: "3f49f6d4a3c55f3874c9b3e3d2103f504aff607beb40b7995899b8a6cd3c1abd").msbFirst
    /// Its public key's X coordinate, most significant octet first: a Pairing Public Key with this
    /// X is the debug key.
    public static let debugPublicKeyX: [UInt8] =
        U256(hex: "20b003d2f297be2c5e2c83a7e9f9a5b9eff49111acf4fddbcc0301480e359de6").msbFirst

    /// AES-CMAC (RFC 4493) of `message` (octets most significant first) under `key`.
    public static func cmac(key: Block128, _ message: [UInt8]) -> Block128 {
        let aes = AESWords(key: key)
        func shifted(_ b: Block128) -> Block128 {
            let s = Block128(b[0] << 1 | b[1] >> 31, b[1] << 1 | b[2] >> 31, b[2] << 1 | b[3] >> 31, b[3] << 1)
            return b[0] >> 31 == 1 ? s ^ Block128(0, 0, 0, 0x87) : s
        }
        let k1 = shifted(aes.encrypt(Block128(repeating: 0))), k2 = shifted(k1)
        let blocks = max(1, (message.count + 15) / 16)
        let complete = !message.isEmpty && message.count % 16 == 0
        var x = Block128(repeating: 0)
        for i in 0..<blocks {
            var chunk = Array(message[min(message.count, 16 * i)..<min(message.count, 16 * i + 16)])
            var last = Block128(repeating: 0)
            if i == blocks - 1 {
                if complete {
                    last = k1
                } else {
                    chunk.append(0x80)
                    last = k2
                }
                chunk += [UInt8](repeating: 0, count: 16 - chunk.count)
            }
            x = aes.encrypt(x ^ Block128(msbFirst: chunk)! ^ last)
        }
        return x
    }

    /// f5's SALT (2.2.7).
    static let salt = Block128(0x6C88_8391, 0xAAF5_A538, 0x6037_0BDB, 0x5A60_83BE)

    /// f5(W, N1, N2, A1, A2) = MacKey || LTK (2.2.7). W is the DHKey (32 octets, most significant
    /// first); A1 and A2 are the initiator's and responder's addresses with their types (1 random).
    public static func f5(w: [UInt8], n1: Block128, n2: Block128, a1: BDAddr, a1Random: Bool,
                          a2: BDAddr, a2Random: Bool) -> (macKey: Block128, ltk: Block128) {
        let t = cmac(key: salt, w)
        func address(_ a: BDAddr, _ random: Bool) -> [UInt8] {
            [random ? 1 : 0] + (0..<6).map { UInt8(truncatingIfNeeded: a.raw >> (8 * UInt64(5 - $0))) }
        }
        func message(_ counter: UInt8) -> [UInt8] {
            [counter] + Array("btle".utf8) + n1.msbFirst + n2.msbFirst + address(a1, a1Random) + address(a2, a2Random) + [0x01, 0x00]
        }
        return (cmac(key: t, message(0)), cmac(key: t, message(1)))
    }
}
