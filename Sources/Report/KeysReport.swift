import Decoders
import Wire

/// `blesniff keys`: every key a capture reveals (distributed in SMP, handed to a controller over
/// HCI, or worked out from a sniffed LE legacy pairing), where it came from and what it unlocks,
/// and why keys could not be recovered.
public enum KeysReport {
    /// A frame's word on keys (`Decoded.keyNote`): what could not be recovered, and why.
    public struct Note: Sendable {
        public let frame: Int
        public let text: String
        public init(frame: Int, text: String) {
            self.frame = frame
            self.text = text
        }
    }

    public static func text(_ keys: [RevealedKey], notes: [Note], file: String, to out: Output) {
        out.write(file + "\n")
        if keys.isEmpty && notes.isEmpty {
            out.write("  no keys\n")
            return
        }
        for k in keys {
            var line = "  " + k.kind.rawValue + String(repeating: " ", count: max(1, 5 - k.kind.rawValue.count)) + k.hex
            if let p = k.passkey { line += "  passkey " + LinkKey.passkeyText(p) }
            if let ediv = k.ediv { line += "  EDIV " + Hex.prefixed(ediv, width: 4) }
            if let rand = k.rand { line += "  Rand " + Hex.prefixed(rand, width: 16) }
            if k.secureConnections { line += "  LE Secure Connections" }
            if let a = k.identityAddress { line += "  identity " + a.description + " (" + addressType(k.identityAddressType) + ")" }
            out.write(line + "\n")
            out.write("       " + k.source + "; " + framesText(k.frames) + (k.connection.map { ", connection \($0)" } ?? "") + "\n")
            out.write("       unlocks: " + k.unlocks + "\n")
        }
        for n in notes { out.write("  frame \(n.frame): " + n.text + "\n") }
    }

    public static func json(_ keys: [RevealedKey], notes: [Note], file: String, to out: Output) {
        out.write("{\"file\":" + JSONText.quoted(file) + ",\"keys\":[")
        for (i, k) in keys.enumerated() {
            if i > 0 { out.write(",") }
            var s = "{\"kind\":\"" + k.kind.rawValue + "\",\"value\":\"" + k.hex + "\""
            s += ",\"frames\":[" + k.frames.map(String.init).joined(separator: ",") + "]"
            if let c = k.connection { s += ",\"connection\":\(c)" }
            s += ",\"source\":" + JSONText.quoted(k.source)
            if let p = k.passkey { s += ",\"passkey\":\"" + LinkKey.passkeyText(p) + "\"" }
            if let ediv = k.ediv { s += ",\"ediv\":\(ediv)" }
            // Rand is 64 bits: a string, as JSON numbers lose precision past 2^53.
            if let rand = k.rand { s += ",\"rand\":\"" + Hex.prefixed(rand, width: 16) + "\"" }
            if k.kind == .ltk { s += ",\"secure_connections\":" + (k.secureConnections ? "true" : "false") }
            if let a = k.identityAddress {
                s += ",\"identity_address\":{\"value\":\"" + a.description + "\",\"type\":\"" + addressType(k.identityAddressType) + "\"}"
            }
            if let l = k.linkKey {
                s += ",\"decrypted_frames\":\(l.decryptedFrames)"
                if let first = l.firstFrame, let last = l.lastFrame {
                    s += ",\"first_decrypted_frame\":\(first),\"last_decrypted_frame\":\(last)"
                    s += ",\"link_layer_connections\":[" + l.connections.map(String.init).joined(separator: ",") + "]"
                }
            }
            s += ",\"unlocks\":" + JSONText.quoted(k.unlocks) + "}"
            out.write(s)
        }
        out.write("],\"notes\":[")
        for (i, n) in notes.enumerated() {
            if i > 0 { out.write(",") }
            out.write("{\"frame\":\(n.frame),\"note\":" + JSONText.quoted(n.text) + "}")
        }
        out.write("]}\n")
    }

    static func framesText(_ frames: [Int]) -> String {
        guard let first = frames.first, let last = frames.last else { return "no frame" }
        if frames.count == 1 { return "frame \(first)" }
        if frames == Array(first...last) { return "frames \(first)–\(last)" }
        return "frames " + frames.map(String.init).joined(separator: ", ")
    }

    static func addressType(_ t: UInt8?) -> String {
        switch t {
        case 0?: return "public"
        case 1?: return "random static"
        default: return "reserved"
        }
    }
}
