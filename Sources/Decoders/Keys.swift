import Wire

/// Keys a capture reveals or the user gives, and what each one decrypted.

/// A key that can start link-layer encryption (an LTK, or an STK used in its place), with where
/// it came from. A class: every frame it decrypts points to it, and it counts them.
public final class LinkKey {
    public enum Origin: Sendable, Equatable {
        /// Typed by the user (`--ltk`) or read from a keys file.
        case given(String)
        /// The STK of an LE legacy pairing seen in the capture (Vol 3 Part H 2.3.5.5).
        case legacyPairing(method: String, passkey: UInt32?, tkGiven: Bool, frames: ClosedRange<Int>)
        /// The LTK of an LE Secure Connections pairing seen in the capture, from one side's private
        /// key: the debug key (Vol 3 Part H 2.3.5.6.1) or one given.
        case secureConnections(method: String, debugKey: Bool, centralKeyKnown: Bool, frames: ClosedRange<Int>)
        /// An LTK one device sent the other in SMP Encryption Information (Vol 3 Part H 3.6.2).
        case distributed(by: String, frame: Int)
    }

    public let key: LTK
    public let origin: Origin
    /// The LL connection (tracker index) an STK belongs to; nil for keys any connection may use.
    public let connection: Int?
    /// EDIV and Rand the central sends in LL_ENC_REQ to name this LTK (Central Identification).
    public internal(set) var ediv: UInt16?
    public internal(set) var rand: UInt64?

    /// Frames decrypted with it: how many, the first and the last.
    public internal(set) var decryptedFrames = 0
    public internal(set) var firstFrame: Int?
    public internal(set) var lastFrame: Int?
    /// LL connections (tracker index) it decrypted, in order.
    public internal(set) var connections: [Int] = []

    public init(_ key: LTK, origin: Origin, connection: Int? = nil, ediv: UInt16? = nil, rand: UInt64? = nil) {
        self.key = key
        self.origin = origin
        self.connection = connection
        self.ediv = ediv
        self.rand = rand
    }

    func noteDecrypted(frame: Int, connection index: Int) {
        decryptedFrames += 1
        if firstFrame == nil { firstFrame = frame }
        lastFrame = frame
        if connections.last != index, connections.count < 64, !connections.contains(index) { connections.append(index) }
    }

    /// Which key it is and where it came from, in a few words.
    public var description: String {
        switch origin {
        case .given(let how):
            return "LTK " + key.description + " " + how
        case .legacyPairing(let method, let passkey, let tkGiven, let frames):
            var s = "STK from LE legacy " + method + " pairing"
            if tkGiven {
                s += ", TK given"
            } else if let passkey {
                s += method == "Passkey Entry" || passkey != 0 ? ", passkey " + LinkKey.passkeyText(passkey) : ", TK 0"
            }
            return s + ", frames \(frames.lowerBound)–\(frames.upperBound)"
        case .secureConnections(let method, let debugKey, let centralKeyKnown, let frames):
            return "LTK from LE Secure Connections " + method + " pairing, " + (centralKeyKnown ? "the central's " : "the peripheral's ")
                + (debugKey ? "debug key" : "given private key") + ", frames \(frames.lowerBound)–\(frames.upperBound)"
        case .distributed(let by, let frame):
            var s = "LTK " + key.description + " distributed by the " + by + " in frame \(frame)"
            if let ediv, let rand { s += " (EDIV " + Hex.prefixed(ediv, width: 4) + ", Rand " + Hex.prefixed(rand, width: 16) + ")" }
            return s
        }
    }

    /// Six digits, as devices display a passkey.
    public static func passkeyText(_ p: UInt32) -> String {
        let s = String(p)
        return String(repeating: "0", count: max(0, 6 - s.count)) + s
    }
}

/// One key the capture shows or lets blesniff work out, for `blesniff keys`.
public struct RevealedKey {
    public enum Kind: String, Sendable {
        case tk = "TK", stk = "STK", ltk = "LTK", irk = "IRK", csrk = "CSRK"
    }

    public let kind: Kind
    /// The key's 128 bits, kept in the value rather than in an array: a capture that pairs on
    /// every connection reveals keys all along.
    let block: Block128
    /// Most significant octet first.
    public var value: [UInt8] { block.msbFirst }
    /// Frames that carried it or the values it was worked out from.
    public var frames: [Int] { frameList ?? Array(frameRun) }
    /// `frames` while they are one run of consecutive numbers, as nearly always; the list once not.
    private var frameRun: ClosedRange<Int>
    private var frameList: [Int]?
    var firstFrame: Int { frameList?.first ?? frameRun.lowerBound }
    /// The connection (`Connection.id`) it was seen on.
    public let connection: Int?
    /// Where it came from: "SMP Encryption Information from the peripheral, decrypted", "HCI LE
    /// Enable Encryption command", "LE legacy Passkey Entry pairing: passkey found from the confirm values".
    public var source: String { sender.map { origin + " " + $0.description } ?? origin }
    /// `source` in parts, joined when asked: what carried the key, and who sent it how.
    let origin: String
    let sender: KeySender?
    public internal(set) var ediv: UInt16?
    public internal(set) var rand: UInt64?
    /// An LTK of LE Secure Connections (derived, never distributed; EDIV and Rand are 0).
    public internal(set) var secureConnections = false
    /// The identity address an IRK goes with (Identity Address Information), and its type
    /// (0 public, 1 random static).
    public internal(set) var identityAddress: BDAddr?
    public internal(set) var identityAddressType: UInt8?
    /// A TK that is a passkey (Passkey Entry; 0 for Just Works).
    public let passkey: UInt32?
    /// The link key that decrypted frames with it (an STK or a distributed LTK over the air).
    public let linkKey: LinkKey?
    /// The side that sent it (SMP key distribution), to match the PDUs that complete it.
    var side: Side?

    init(_ kind: Kind, value: Block128, frames: ClosedRange<Int>, connection: Int?, source: String, sender: KeySender? = nil,
         passkey: UInt32? = nil, linkKey: LinkKey? = nil) {
        self.kind = kind
        block = value
        frameRun = frames
        self.connection = connection
        origin = source
        self.sender = sender
        self.passkey = passkey
        self.linkKey = linkKey
    }

    /// One more frame that completes the key.
    mutating func addFrame(_ n: Int) {
        if frameList == nil, n == frameRun.upperBound &+ 1 {
            frameRun = frameRun.lowerBound...n
            return
        }
        if frameList == nil { frameList = Array(frameRun) }
        frameList?.append(n)
    }

    public var hex: String { value.map { Hex.padded($0, width: 2) }.joined() }

    /// What the key gives access to, in a sentence.
    public var unlocks: String {
        switch kind {
        case .tk:
            return "the STK of this pairing (s1(TK, Srand, Mrand))"
        case .stk, .ltk:
            if let k = linkKey, k.decryptedFrames > 0, let first = k.firstFrame, let last = k.lastFrame {
                let links = k.connections.count == 1 ? "connection \(k.connections[0])" : "connections " + k.connections.map(String.init).joined(separator: ", ")
                return "decrypted \(k.decryptedFrames) frames of link-layer \(links) (frames \(first)–\(last))"
            }
            if kind == .stk { return "the link encrypted right after this pairing" }
            return ediv.map { "links encrypted with EDIV " + Hex.prefixed($0, width: 4) + (rand.map { ", Rand " + Hex.prefixed($0, width: 16) } ?? "") }
                ?? "links encrypted with this key"
        case .irk:
            return "resolves the resolvable private addresses of " + (identityAddress.map { $0.description } ?? "the device that sent it")
        case .csrk:
            return "checks the signatures of ATT Signed Write Commands from the device that sent it"
        }
    }
}

/// Who sent a key in SMP and how it was read: over the air, from the central or the peripheral, in
/// the clear or decrypted; in an HCI log, by this host or its peer when its role is not known.
struct KeySender {
    enum Who { case central, peripheral, thisHost, peer }
    enum How { case hciACL, overTheAir, decrypted, decryptedBySniffer, decryptedInCapture }
    let who: Who
    let how: How

    var description: String {
        let from: String
        switch who {
        case .thisHost: return "sent by this host (HCI ACL data)"
        case .peer: return "from the peer (HCI ACL data)"
        case .central: from = "from the central"
        case .peripheral: from = "from the peripheral"
        }
        switch how {
        case .hciACL: return from + " (HCI ACL data)"
        case .overTheAir: return from + ", over the air in the clear"
        case .decrypted: return from + ", decrypted"
        case .decryptedBySniffer: return from + ", decrypted by the sniffer"
        case .decryptedInCapture: return from + ", decrypted in the capture"
        }
    }
}
