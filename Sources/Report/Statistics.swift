import Decoders
import Wire

/// `read -z NAME`: tables over the frames a read keeps, as tshark's `-z` gives them, printed after
/// the frames (`-q` prints only them):
/// - `conv`: per connection, its handle and peer, frames and ACL/link-layer payload octets each
///   way, first frame, start and duration;
/// - `hci`: HCI commands and events (LE subevents by name) with their counts;
/// - `att`: ATT PDUs by opcode and handle, with counts and value octets;
/// - `io,stat,SECONDS`: frames and octets in each interval of that many seconds (default 1).
/// Counts are bounded (`maxRows` per table; the rest is summed in one row).
public final class Statistics {
    public enum Table: Equatable, Sendable {
        case conversations, hci, att
        case io(intervalNs: Int64)

        /// tshark's spelling: `conv`, `conv,bluetooth`, `hci`, `att`, `io,stat[,SECONDS]`.
        public init?(_ spec: String) {
            let parts = spec.split(separator: ",").map(String.init)
            switch parts.first {
            case "conv", "conversations": self = .conversations
            case "hci": self = .hci
            case "att": self = .att
            case "io":
                guard parts.count >= 2, parts[1] == "stat" else { return nil }
                let seconds = parts.count > 2 ? Double(parts[2]) : 1
                guard let s = seconds, s > 0, s <= 86_400 else { return nil }
                self = .io(intervalNs: Int64(s * 1e9))
            default: return nil
            }
        }
    }

    public static let maxRows = 10_000

    struct Conversation {
        var id: Int, handle: UInt16, peer: BDAddr?
        var firstFrame: Int, start: Int64, end: Int64
        var frames = [0, 0], bytes = [0, 0]
    }

    struct Count { var count = 0, bytes = 0 }

    public let tables: [Table]
    private var conversations: [Int: Conversation] = [:]
    private var hci: [String: Int] = [:]
    private var att: [String: Count] = [:]
    private var io: [Int64: Count] = [:]
    private var start = CaptureStart()
    private var firstTime: Int64?

    public init(_ tables: [Table]) { self.tables = tables }

    public func add(_ d: Decoded) {
        let p = d.packet
        _ = start.see(p)
        if firstTime == nil { firstTime = p.timestamp }
        for t in tables {
            switch t {
            case .conversations: conversation(d)
            case .hci: hciCount(d)
            case .att: attCount(d)
            case .io(let ns):
                let slot = (start.relative(p.timestamp)) / ns
                if io[slot] != nil || io.count < Self.maxRows { io[slot, default: Count()].count &+= 1; io[slot]!.bytes &+= p.payload.count }
            }
        }
    }

    private func conversation(_ d: Decoded) {
        guard let c = d.connection else { return }
        let p = d.packet
        var octets = 0
        if case .acl = d.hci { octets = d.hciParameters.count } else if let ll = d.linkLayer?.dataPDU { octets = Int(ll.length) }
        let side = d.linkLayer?.direction.map { $0 == .centralToPeripheral ? 0 : 1 } ?? (p.direction == .received ? 1 : 0)
        if conversations[c.id] == nil {
            guard conversations.count < Self.maxRows else { return }
            conversations[c.id] = Conversation(id: c.id, handle: c.handle, peer: c.peer, firstFrame: p.number, start: p.timestamp, end: p.timestamp)
        }
        conversations[c.id]!.peer = c.peer ?? conversations[c.id]!.peer
        conversations[c.id]!.end = max(conversations[c.id]!.end, p.timestamp)
        conversations[c.id]!.frames[side] &+= 1
        conversations[c.id]!.bytes[side] &+= octets
    }

    private func hciCount(_ d: Decoded) {
        let name: String
        switch d.hci {
        case .command(let op): name = "Command " + HCICommands.name(op)
        case .event(let code):
            name = "Event " + (code == 0x3E ? d.hciParameters.byte(0).map(HCIEvents.leSubeventName) ?? "LE Meta" : HCIEvents.name(code))
        case .acl: name = "ACL data"
        case .isochronous: name = d.packet.kind == .hci(.scoData) ? "SCO data" : "ISO data"
        default: return
        }
        if hci[name] != nil || hci.count < Self.maxRows { hci[name, default: 0] &+= 1 }
    }

    private func attCount(_ d: Decoded) {
        guard case .att(let r, _)? = d.upper else { return }
        var key = r.pdu.opcode.name
        // A response names no handle: the request's, when it concerned one attribute.
        let handle = r.pdu.handle ?? (r.entries.count == 1 ? r.entries[0].attribute.handle : nil)
        if let h = handle { key += "\t" + Hex.prefixed(h, width: 4) } else { key += "\t-" }
        guard att[key] != nil || att.count < Self.maxRows else { return }
        att[key, default: Count()].count &+= 1
        att[key]!.bytes &+= r.pdu.value?.count ?? 0
    }

    /// The tables as text, one after another, each headed with rules of "=" as tshark's are.
    public func write(to out: Output) {
        let rule = String(repeating: "=", count: 80) + "\n"
        for t in tables {
            out.write(rule)
            switch t {
            case .conversations:
                out.write("Connections\n")
                out.write(pad("#", 5) + pad("handle", 8) + pad("peer", 19) + pad("frames →", 10) + pad("octets →", 10)
                          + pad("frames ←", 10) + pad("octets ←", 10) + pad("first", 8) + pad("start s", 12) + "duration s\n")
                for c in conversations.values.sorted(by: { $0.id < $1.id }) {
                    out.write(pad(String(c.id), 5) + pad(Hex.prefixed(c.handle, width: 4), 8) + pad(c.peer?.description ?? "?", 19)
                              + pad(String(c.frames[0]), 10) + pad(String(c.bytes[0]), 10) + pad(String(c.frames[1]), 10)
                              + pad(String(c.bytes[1]), 10) + pad(String(c.firstFrame), 8)
                              + pad(Self.seconds(start.relative(c.start)), 12) + Self.seconds(c.end &- c.start) + "\n")
                }
                out.write("→: sent by this host, or central to peripheral over the air; ←: the other way\n")
            case .hci:
                out.write("HCI packets\n")
                for (name, n) in hci.sorted(by: { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }) {
                    out.write(pad(String(n), 10) + name + "\n")
                }
            case .att:
                out.write("ATT PDUs by opcode and handle\n" + pad("count", 10) + pad("octets", 10) + pad("handle", 8) + "opcode\n")
                for (key, c) in att.sorted(by: { $0.value.count != $1.value.count ? $0.value.count > $1.value.count : $0.key < $1.key }) {
                    let parts = key.split(separator: "\t", omittingEmptySubsequences: false)
                    out.write(pad(String(c.count), 10) + pad(String(c.bytes), 10) + pad(String(parts[1]), 8) + String(parts[0]) + "\n")
                }
            case .io(let ns):
                out.write("IO statistics, interval " + Self.seconds(ns) + " s\n" + pad("from s", 14) + pad("frames", 10) + "octets\n")
                for (slot, c) in io.sorted(by: { $0.key < $1.key }) {
                    out.write(pad(Self.seconds(slot &* ns), 14) + pad(String(c.count), 10) + String(c.bytes) + "\n")
                }
            }
        }
        if !tables.isEmpty { out.write(rule) }
    }

    private func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
    }

    /// Seconds with six decimals.
    static func seconds(_ ns: Int64) -> String {
        let us = ns / 1000
        let frac = String(abs(us % 1_000_000))
        return (us < 0 ? "-" : "") + String(abs(us / 1_000_000)) + "." + String(repeating: "0", count: 6 - frac.count) + frac
    }
}
