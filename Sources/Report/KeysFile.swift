#if canImport(Glibc)
import Glibc
#endif
import Decoders
import Wire

/// A keys file (`--keys FILE`): the keys of each device, so they need not be typed.
///
///     devices:
///       - name: bonded sensor               # for the reader
///         address: 04:ee:03:4a:8b:38        # for the reader
///         ltk: 0F241772AC270CAFEE654186F0A65D5F
///       - tk: 5E882417A987222423A1A9EC719AED27    # OOB legacy pairing
///       - passkey: 123456                         # legacy Passkey Entry
///       - private_key: 3f49f6d4a3c55f3874c9b3e3d2103f504aff607beb40b7995899b8a6cd3c1abd
///                                                 # an LE Secure Connections private key (64 hex digits)
///       - name: phone
///         irk: EC0234A357C8AD05341010A60A397D9B   # resolves the phone's private addresses
///         identity: f0:18:98:12:34:56 public      # to this identity address
///
/// Keys are 32 hex digits (a private key 64), most significant first. Every key is tried on every
/// connection: the MIC (an LTK), the confirm values (a TK, a passkey) or the public keys (a private
/// key) tell which one belongs.
public struct KeysFile: Sendable {
    public struct Entry: Sendable {
        /// What the file says the device is (`name`, else `address`), to name the key's origin.
        public var device: String?
        public var ltk: LTK?
        /// A TK, or a passkey as its TK (the passkey as a 128-bit number).
        public var tk: LTK?
        public var passkey: UInt32?
        /// An LE Secure Connections private key (P-256), 32 octets most significant first: with it
        /// the DHKey, and so the LTK, of a sniffed pairing by that device can be worked out.
        public var privateKey: [UInt8]?
        /// An IRK and the identity address it resolves private addresses to (given together).
        public var irk: LTK?
        public var identity: IdentityAddress?
    }

    public let path: String
    public let entries: [Entry]

    /// The LTKs, each naming this file and its device.
    public var linkKeys: [LinkKey] {
        entries.compactMap { e in
            e.ltk.map { LinkKey($0, origin: .given("from keys file " + path + (e.device.map { " (" + $0 + ")" } ?? ""))) }
        }
    }

    public var temporaryKeys: [LTK] { entries.compactMap(\.tk) }

    public var privateKeys: [[UInt8]] { entries.compactMap(\.privateKey) }

    /// The IRKs with their identities, each naming this file and its device.
    public var identityKeys: [IdentityKey] {
        entries.compactMap { e in
            guard let k = e.irk, let irk = Block128(msbFirst: k.msbFirst), let id = e.identity else { return nil }
            return IdentityKey(irk: irk, identity: id, source: "keys file " + path + (e.device.map { " (" + $0 + ")" } ?? ""))
        }
    }

    /// An identity address: "aa:bb:cc:dd:ee:ff", then "public" or "random" (random static). A
    /// random static address has 0b11 as its two most significant bits (Vol 6 Part B 1.3.2.1), so
    /// an address without them is public; one with them may be either and needs the word.
    static func identity(_ text: String) -> IdentityAddress?? {
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        guard words.count == 1 || words.count == 2, let a = BDAddr(parsing: String(words[0])) else { return nil }
        if words.count == 2 {
            switch words[1].lowercased() {
            case "public": return .some(IdentityAddress(a, type: 0))
            case "random", "static", "random_static": return a.raw >> 46 == 0b11 ? .some(IdentityAddress(a, type: 1)) : nil
            default: return nil
            }
        }
        return a.raw >> 46 == 0b11 ? .some(nil) : .some(IdentityAddress(a, type: 0))
    }

    public static func load(path: String) throws(ConfigurationError) -> KeysFile {
        let text: String
        do { text = try TextFile.read(path) } catch {
            throw ConfigurationError(file: path, key: "", problem: error == .tooLarge ? "larger than 1 MiB: not a keys file" : "cannot read the keys file")
        }
        return try parse(text, path: path)
    }

    public static func parse(_ text: String, path: String) throws(ConfigurationError) -> KeysFile {
        func error(_ node: YAMLNode?, _ key: String, _ problem: String) -> ConfigurationError {
            ConfigurationError(file: path, line: node?.mark?.line, key: key, problem: problem)
        }
        let root: YAMLNode?
        do {
            root = try YAML.compose(text)
        } catch {
            throw ConfigurationError(file: path, key: "", problem: "not valid YAML: " + String(describing: error))
        }
        guard let root else { return KeysFile(path: path, entries: []) }
        guard let top = root.mapping else { throw error(root, "", "expected a mapping with a devices list") }
        var entries: [Entry] = []
        for (k, v) in top {
            guard k.string == "devices" else { throw error(k, k.string ?? "", "unknown key (expected devices)") }
            guard let items = v.sequence else { throw error(v, "devices", "expected a list of devices") }
            for (i, item) in items.enumerated() {
                let at = "devices[\(i)]"
                guard let fields = item.mapping else { throw error(item, at, "expected a mapping (name, address, ltk, tk, passkey, private_key, irk, identity)") }
                var e = Entry()
                var name: String?, address: String?
                for (fk, fv) in fields {
                    let key = fk.string ?? ""
                    guard let value = fv.string else { throw error(fv, at + "." + key, "expected a value") }
                    switch key {
                    case "name": name = value
                    case "address": address = value
                    case "ltk", "tk":
                        guard let k = LTK(hex: value) else { throw error(fv, at + "." + key, "expected 32 hex digits") }
                        if key == "ltk" { e.ltk = k } else { e.tk = k }
                    case "passkey":
                        guard value.count <= 6, let p = UInt32(value), p <= LegacyPairingFunctions.maxPasskey else {
                            throw error(fv, at + ".passkey", "expected a passkey of 6 digits (000000-999999)")
                        }
                        e.passkey = p
                        if e.tk == nil { e.tk = LTK(msbFirst: LegacyPairingFunctions.tk(passkey: p).msbFirst) }
                    case "private_key":
                        guard let octets = LTK.octets(hex: value), octets.count == 32 else {
                            throw error(fv, at + ".private_key", "expected 64 hex digits")
                        }
                        e.privateKey = octets
                    case "irk":
                        guard let k = LTK(hex: value) else { throw error(fv, at + ".irk", "expected 32 hex digits") }
                        e.irk = k
                    case "identity":
                        guard let parsed = identity(value) else {
                            throw error(fv, at + ".identity", "expected an identity address: aa:bb:cc:dd:ee:ff, then public or random (random static)")
                        }
                        guard let id = parsed else {
                            throw error(fv, at + ".identity", "public or random static? Add public or random after the address")
                        }
                        e.identity = id
                    default:
                        throw error(fk, at + "." + key, "unknown key (expected name, address, ltk, tk, passkey, private_key, irk or identity)")
                    }
                }
                // An IRK resolves addresses to an identity: one without the other says nothing.
                if (e.irk == nil) != (e.identity == nil) {
                    throw error(item, at, e.irk == nil ? "identity without irk" : "irk without identity (the device's identity address)")
                }
                e.device = name ?? address
                entries.append(e)
            }
        }
        return KeysFile(path: path, entries: entries)
    }
}
