#if canImport(Glibc)
import Glibc
#endif
import Decoders

/// A keys file (`--keys FILE`): the keys of each device, so they need not be typed.
///
///     devices:
///       - name: bonded sensor               # for the reader
///         address: 04:ee:03:4a:8b:38        # for the reader
///         ltk: 0F241772AC270CAFEE654186F0A65D5F
///       - tk: 5E882417A987222423A1A9EC719AED27    # OOB legacy pairing
///       - passkey: 123456                         # legacy Passkey Entry
///
/// Keys are 32 hex digits, most significant first. Every key is tried on every connection: the
/// MIC (an LTK) or the confirm values (a TK, a passkey) tell which one belongs.
public struct KeysFile: Sendable {
    public struct Entry: Sendable {
        /// What the file says the device is (`name`, else `address`), to name the key's origin.
        public var device: String?
        public var ltk: LTK?
        /// A TK, or a passkey as its TK (the passkey as a 128-bit number).
        public var tk: LTK?
        public var passkey: UInt32?
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

    public static func load(path: String) throws(ConfigurationError) -> KeysFile {
        guard let f = fopen(path, "r") else { throw ConfigurationError(file: path, key: "", problem: "cannot read the keys file") }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&chunk, 1, chunk.count, f)
            if n <= 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            // A keys file is a few lines; anything this large is the wrong file.
            if bytes.count > 1 << 20 { throw ConfigurationError(file: path, key: "", problem: "larger than 1 MiB: not a keys file") }
        }
        return try parse(String(decoding: bytes, as: UTF8.self), path: path)
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
                guard let fields = item.mapping else { throw error(item, at, "expected a mapping (name, address, ltk, tk, passkey)") }
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
                    default:
                        throw error(fk, at + "." + key, "unknown key (expected name, address, ltk, tk or passkey)")
                    }
                }
                e.device = name ?? address
                entries.append(e)
            }
        }
        return KeysFile(path: path, entries: entries)
    }
}
