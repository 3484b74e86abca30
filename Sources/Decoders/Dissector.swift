/// Decodes a capture frame by frame, keeping the state that spans frames: connections by
/// handle, L2CAP reassembly, ATT bearers and GATT databases, pairing, advertisers.
/// One instance per capture; frames must come in capture order.
public final class Dissector {
    public private(set) var connections: [Int: Connection] = [:]
    /// Live connections by (adapter, handle).
    private var live: [UInt32: Connection] = [:]
    private var nextConnectionID = 1
    /// Connections that ended, oldest first, kept so reports can list them (bounded: between
    /// `maxEndedKept` and an eighth more).
    public private(set) var ended: [Connection] = []
    public static let maxEndedKept = 10_000
    /// Live connections kept at once: every valid handle (0x000-0xEFF) on four adapters. Monitor
    /// captures can name 65,536 adapters, so without a cap made-up traffic grows the table freely.
    public static let maxLiveConnections = 4 * 0xF00
    /// Set when the cap made the table drop a connection; reported on the frame that caused it.
    private var capNote: String?

    /// Advertisers seen in reports; only kept when asked for (`devices`, reports), so plain
    /// decoding does not pay for it.
    public let advertisers: Advertisers?

    public init(trackAdvertisers: Bool = false, candidateUUIDs: [BluetoothUUID] = []) {
        advertisers = trackAdvertisers ? Advertisers(candidateUUIDs: candidateUUIDs) : nil
    }

    /// Every connection seen, in order of first appearance.
    public var allConnections: [Connection] { connections.values.sorted { $0.id < $1.id } }

    public func dissect(_ packet: Packet) -> Decoded {
        var d = Decoded(packet: packet)
        switch packet.kind {
        case .hci(.command): command(&d)
        case .hci(.event): event(&d)
        case .hci(.aclData): acl(&d)
        case .hci(.scoData), .hci(.isoData): isochronous(&d)
        case .monitor, .linkLayer, .unsupported, .unknownHCIType: break
        case .truncatedHeader: d.problem("record too short for its link-layer header")
        }
        if let note = capNote {
            d.problem(note)
            capNote = nil
        }
        return d
    }

    // MARK: HCI commands

    private func command(_ d: inout Decoded) {
        var r = ByteReader(d.packet.payload)
        guard let opcode = try? r.u16(), let len = try? r.u8() else {
            d.problem("HCI command header truncated")
            return
        }
        let params = r.rest()
        d.hci = .command(opcode: opcode, params: params)
        if params.count != Int(len) {
            d.problem("parameter length \(len) but \(params.count) bytes follow")
        }
    }

    // MARK: HCI events

    private func event(_ d: inout Decoded) {
        var r = ByteReader(d.packet.payload)
        guard let code = try? r.u8(), let len = try? r.u8() else {
            d.problem("HCI event header truncated")
            return
        }
        let params = r.rest()
        d.hci = .event(code: code, params: params)
        if params.count != Int(len) {
            d.problem("parameter length \(len) but \(params.count) bytes follow")
        }
        let p = d.packet
        switch code {
        case 0x03: // Connection Complete (BR/EDR)
            guard params.byte(0) == 0, let h = params.le16(1) else { return }
            var rr = ByteReader(params.from(3))
            let c = open(adapter: p.adapter, handle: h & 0x0FFF, isLE: false, frame: p.number, time: p.timestamp, complete: true)
            c.peer = try? rr.address()
            c.peerAddressType = 0
            d.connection = c
        case 0x05: // Disconnection Complete
            guard let h = params.le16(1) else { return }
            d.connection = live[key(p.adapter, h & 0x0FFF)]
            guard params.byte(0) == 0, let c = d.connection else { return }
            c.endedFrame = p.number
            c.endedTime = p.timestamp
            c.endReason = params.byte(3)
            close(c)
        case 0x08, 0x59: // Encryption Change v1, v2
            guard params.byte(0) == 0, let h = params.le16(1), let on = params.byte(3) else { return }
            let c = connection(p.adapter, h & 0x0FFF, frame: p.number, time: p.timestamp)
            c.encrypted = on != 0
            if on != 0, c.encryptedFrame == nil { c.encryptedFrame = p.number }
            d.connection = c
        case 0x30: // Encryption Key Refresh Complete
            guard let h = params.le16(1) else { return }
            d.connection = live[key(p.adapter, h & 0x0FFF)]
        case 0x3E: leMeta(&d, params)
        default: break
        }
    }

    private func leMeta(_ d: inout Decoded, _ params: Bytes) {
        guard let sub = params.byte(0) else { return }
        let p = d.packet
        switch sub {
        case 0x01, 0x0A, 0x29: // LE Connection Complete, Enhanced v1/v2
            var r = ByteReader(params.from(1))
            guard let status = try? r.u8(), status == 0, let h = try? r.u16(), let role = try? r.u8(),
                  let type = try? r.u8(), let addr = try? r.address() else { return }
            if sub != 0x01 { _ = try? r.skip(12) } // local and peer resolvable private addresses
            let c = open(adapter: p.adapter, handle: h & 0x0FFF, isLE: true, frame: p.number, time: p.timestamp, complete: true)
            c.isCentral = role == 0
            c.peer = addr
            c.peerAddressType = type
            c.interval = try? r.u16()
            c.latency = try? r.u16()
            c.supervisionTimeout = try? r.u16()
            d.connection = c
            advertisers?.noteConnection(to: addr, frame: p.number)
        case 0x03: // LE Connection Update Complete
            var r = ByteReader(params.from(1))
            guard let status = try? r.u8(), status == 0, let h = try? r.u16(), let i = try? r.u16(),
                  let l = try? r.u16(), let t = try? r.u16() else { return }
            let c = connection(p.adapter, h & 0x0FFF, frame: p.number, time: p.timestamp)
            c.interval = i
            c.latency = l
            c.supervisionTimeout = t
            if c.updates.count < 1000 { c.updates.append((p.number, i, l, t)) }
            d.connection = c
        case 0x04, 0x05, 0x06, 0x07, 0x0C, 0x14: // per-connection subevents: tie them to the connection
            if let h = params.le16(sub == 0x04 || sub == 0x0C ? 2 : 1) {
                d.connection = live[key(p.adapter, h & 0x0FFF)]
            }
        default:
            if let adv = advertisers, AdvertisingReports.isReport(subevent: sub) {
                let parsed = AdvertisingReports.parse(subevent: sub, params.from(1))
                for r in parsed.reports { adv.add(r, frame: p.number, time: p.timestamp) }
            }
        }
    }

    // MARK: ACL data and L2CAP

    private func acl(_ d: inout Decoded) {
        let p = d.packet
        guard let h = ACLHeader(p.payload) else {
            d.problem("ACL header truncated")
            return
        }
        let data = p.payload.from(4)
        d.hci = .acl(h, data)
        if data.count != Int(h.length) {
            if p.truncated {
                d.problem("ACL data truncated in the capture (\(data.count) of \(h.length) bytes)")
            } else {
                d.problem("ACL length \(h.length) but \(data.count) bytes follow")
            }
        }
        let c = connection(p.adapter, h.handle, frame: p.number, time: p.timestamp)
        c.lastActivity = p.timestamp
        d.connection = c
        let sent = p.direction == .sent
        let (result, dropped) = sent
            ? c.reassembly.sent.add(data, start: h.isStart, frame: p.number)
            : c.reassembly.received.add(data, start: h.isStart, frame: p.number)
        if case .malformed(let why, let frames)? = dropped { d.problem(why + " (frames \(frames.map(String.init).joined(separator: ", ")))") }
        switch result {
        case .frame(let f):
            d.l2cap = f
            upper(&d, f, c)
        case .pending(let have, let of):
            d.fragment = (have, of)
        case .malformed(let why, _):
            d.problem(why)
        }
    }

    /// Hands a whole L2CAP frame to the protocol of its channel.
    private func upper(_ d: inout Decoded, _ f: L2CAPFrame, _ c: Connection) {
        let side: Side = d.packet.direction == .sent ? .local : .remote
        let n = d.packet.number
        switch f.cid {
        case L2CAPChannel.smp:
            let pdu = SMPPDU(f.payload)
            c.isLE = true
            c.pairing.feed(pdu, from: side, frame: n)
            if let m = pdu.malformed { d.problem("SMP: " + m) }
            d.upper = .smp(pdu)
        case L2CAPChannel.leSignaling, L2CAPChannel.signaling:
            let frame = SignalingFrame(f.payload, channel: f.cid == L2CAPChannel.signaling ? .bredr : .le)
            if f.cid == L2CAPChannel.leSignaling { c.isLE = true } else { c.isLE = false }
            c.channels.feed(frame, from: side, frame: n)
            if let m = frame.malformed { d.problem("L2CAP signaling: " + m) }
            for cmd in frame.commands { if let m = cmd.malformed { d.problem(cmd.name + ": " + m) } }
            d.upper = .signaling(frame)
        case 0x0040...:
            guard let ch = c.channels.channel(cid: f.cid, from: side) else {
                d.upper = .raw(cid: f.cid, f.payload)
                return
            }
            let result = ch.receive(f.payload, from: side, frame: n)
            if case .malformed(let why) = result { d.problem("K-frame: " + why) }
            d.upper = .channel(cid: f.cid, psm: ch.psm, result)
        default:
            d.upper = .raw(cid: f.cid, f.payload)
        }
    }

    private func isochronous(_ d: inout Decoded) {
        guard let w = d.packet.payload.le16(0) else {
            d.problem("header truncated")
            return
        }
        d.hci = .isochronous(handle: w & 0x0FFF, d.packet.payload.from(d.packet.kind == .hci(.scoData) ? 3 : 4))
    }

    // MARK: Connection table

    @inline(__always) private func key(_ adapter: UInt16, _ handle: UInt16) -> UInt32 {
        UInt32(adapter) << 16 | UInt32(handle)
    }

    /// The live connection on a handle, or a new one when the capture starts mid-connection.
    private func connection(_ adapter: UInt16, _ handle: UInt16, frame: Int, time: Int64) -> Connection {
        if let c = live[key(adapter, handle)] { return c }
        return open(adapter: adapter, handle: handle, isLE: true, frame: frame, time: time, complete: false)
    }

    private func open(adapter: UInt16, handle: UInt16, isLE: Bool, frame: Int, time: Int64, complete: Bool) -> Connection {
        if let old = live[key(adapter, handle)] {
            // A Connection Complete on a live handle: the old one ended unseen.
            if !complete { return old }
            close(old)
        } else if live.count >= Dissector.maxLiveConnections {
            // Drop the least recently active eighth at once, so the sort is paid rarely.
            let idle = live.values.sorted { $0.lastActivity < $1.lastActivity }.prefix(Dissector.maxLiveConnections / 8)
            for c in idle { close(c) }
            capNote = "connection table full (\(Dissector.maxLiveConnections) live): stopped tracking the \(idle.count) least recently active"
        }
        let c = Connection(id: nextConnectionID, adapter: adapter, handle: handle, isLE: isLE, frame: frame, time: time)
        nextConnectionID += 1
        if complete {
            c.createdFrame = frame
            c.createdTime = time
        }
        live[key(adapter, handle)] = c
        connections[c.id] = c
        return c
    }

    private func close(_ c: Connection) {
        live[key(c.adapter, c.handle)] = nil
        ended.append(c)
        // Trim in batches: removing one from the front per connection moved the whole array each time.
        if ended.count >= Dissector.maxEndedKept + Dissector.maxEndedKept / 8 {
            let drop = ended.count - Dissector.maxEndedKept
            for gone in ended[..<drop] { connections[gone.id] = nil }
            ended.removeFirst(drop)
        }
    }
}

/// The decode of one frame: its HCI layer, the connection it belongs to, the L2CAP frame it
/// completed (if any) and the upper-layer PDU in it. Field trees and text are made on demand.
public struct Decoded {
    public let packet: Packet
    public var hci: HCILayer = .none
    public var connection: Connection?
    public var l2cap: L2CAPFrame?
    /// An ACL fragment stored for reassembly: bytes held so far and the L2CAP total (0 if unknown yet).
    public var fragment: (have: Int, of: Int)?
    public var upper: UpperLayer?
    /// What broke the specification in this frame (empty: nothing).
    public private(set) var problems: [String] = []

    init(packet: Packet) { self.packet = packet }

    public mutating func problem(_ why: String) { problems.append(why) }
    public var isMalformed: Bool { !problems.isEmpty }
}

public enum HCILayer {
    case none
    case command(opcode: UInt16, params: Bytes)
    case event(code: UInt8, params: Bytes)
    case acl(ACLHeader, Bytes)
    case isochronous(handle: UInt16, Bytes)
}

/// What an L2CAP frame carried.
public enum UpperLayer {
    case smp(SMPPDU)
    case signaling(SignalingFrame)
    /// A K-frame on a credit-based (or BR/EDR) channel: its reassembly state or whole SDU.
    case channel(cid: UInt16, psm: UInt16, SDUResult)
    /// A channel blesniff does not decode (or a dynamic one it never saw opened).
    case raw(cid: UInt16, Bytes)
}
