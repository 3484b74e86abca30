import Wire

/// Connection-oriented L2CAP channels opened by signaling (Core 5.4 Vol 3 Part A 3.4, 4.22–4.28,
/// 10.1): which CIDs belong together, their MTU/MPS/credits, and K-frame reassembly into SDUs.

/// Which end of a connection sent something: this host or its peer.
/// Who sent a PDU on a connection: this host (`.local`, sent to its controller) or the peer.
/// One value for each side of a link, stored in place: a two-element array is an allocation.
struct BothSides<Value> {
    var local: Value
    var remote: Value

    subscript(side: Side) -> Value {
        get { side == .local ? local : remote }
        _modify {
            if side == .local { yield &local } else { yield &remote }
        }
    }
}

public enum Side: Int, Sendable, Hashable {
    case local = 0, remote = 1

    public var other: Side { self == .local ? .remote : .local }

    /// Sent to the controller: this host; received: the peer. Unknown directions have no side.
    public init?(_ direction: Direction) {
        switch direction {
        case .sent: self = .local
        case .received: self = .remote
        case .unknown: return nil
        }
    }
}

/// What a K-frame adds to its channel's SDU.
public enum SDUResult: Sendable, Equatable {
    /// A segment was stored; more K-frames follow.
    case incomplete
    /// A whole SDU and the frames that carried it.
    case sdu([UInt8], frames: [Int])
    /// The K-frame broke the channel's rules; any partial SDU is dropped.
    case malformed(String)
}

/// How a channel frames its data.
public enum ChannelMode: Sendable {
    /// BR/EDR connection-oriented channel; each B-frame is one SDU.
    case basic
    /// LE Credit Based Flow Control (opened by 0x14/0x15).
    case leCreditBased
    /// Enhanced Credit Based Flow Control (opened by 0x17/0x18).
    case enhancedCreditBased
}

/// One end of a channel.
public struct ChannelEndpoint: Sendable, Equatable {
    /// The CID this end receives on (its Source CID in the signaling).
    public var cid: UInt16
    /// Largest SDU this end accepts.
    public var mtu: UInt16
    /// Largest K-frame payload this end accepts (SDU length field included).
    public var mps: UInt16
    /// K-frames the other end may still send to this one.
    public var credits: UInt16

    public init(cid: UInt16, mtu: UInt16, mps: UInt16, credits: UInt16) {
        self.cid = cid
        self.mtu = mtu
        self.mps = mps
        self.credits = credits
    }
}

/// A dynamic channel between the two sides of a connection.
public final class DynamicChannel {
    /// PSM (BR/EDR) or SPSM (LE and enhanced credit based).
    public let psm: UInt16
    public let mode: ChannelMode
    /// Frame of the response that opened the channel.
    public let openedFrame: Int
    public internal(set) var local: ChannelEndpoint
    public internal(set) var remote: ChannelEndpoint
    /// K-frames received when their receiver had granted no credit (Vol 3 Part A 10.1).
    public internal(set) var framesWithoutCredit = 0

    /// SDUs of this channel are ATT PDUs (Enhanced ATT bearer, SPSM 0x0027).
    public var isEATT: Bool { psm == PSM.eatt && mode != .basic }
    /// SDUs of this channel are ATT PDUs of the connection's ATT bearer (ATT over BR/EDR, PSM 0x001F).
    public var isATTOverBREDR: Bool { psm == PSM.att && mode == .basic }

    /// An SDU being reassembled toward one side.
    private struct Reassembly {
        var expected: Int
        var buffer: [UInt8]
        var frames: [Int]
    }
    private var toLocal: Reassembly?
    private var toRemote: Reassembly?

    public init(psm: UInt16, mode: ChannelMode, local: ChannelEndpoint, remote: ChannelEndpoint, openedFrame: Int) {
        self.psm = psm
        self.mode = mode
        self.local = local
        self.remote = remote
        self.openedFrame = openedFrame
    }

    public func endpoint(_ side: Side) -> ChannelEndpoint { side == .local ? local : remote }

    func update(_ side: Side, _ body: (inout ChannelEndpoint) -> Void) {
        if side == .local { body(&local) } else { body(&remote) }
    }

    /// Adds one frame's information payload sent by `side` (so received by `side.other`).
    public func receive(_ payload: Bytes, from side: Side, frame: Int) -> SDUResult {
        if mode == .basic { return .sdu(Array(payload), frames: [frame]) }
        let rx = side.other
        update(rx) { ep in
            if ep.credits == 0 { framesWithoutCredit &+= 1 } else { ep.credits -= 1 }
        }
        let limits = endpoint(rx)
        // Moved out (not copied) so the buffer stays uniquely referenced and appends do not copy it.
        var state: Reassembly?
        if rx == .local { swap(&state, &toLocal) } else { swap(&state, &toRemote) }
        defer { if rx == .local { toLocal = state } else { toRemote = state } }
        if payload.count > Int(limits.mps) {
            state = nil
            return .malformed("K-frame payload of \(payload.count) bytes exceeds MPS \(limits.mps)")
        }
        if var r = state.take() {
            // Continuation of an SDU (no SDU length field).
            guard r.buffer.count + payload.count <= r.expected else {
                state = nil
                return .malformed("segments total \(r.buffer.count + payload.count) bytes, SDU length is \(r.expected)")
            }
            r.buffer.append(contentsOf: payload)
            r.frames.append(frame)
            if r.buffer.count == r.expected {
                state = nil
                return .sdu(r.buffer, frames: r.frames)
            }
            state = r
            return .incomplete
        }
        // First K-frame of an SDU: 2-byte SDU length, then the first segment.
        guard let length = payload.le16(0) else {
            return .malformed("first K-frame of \(payload.count) bytes has no SDU length")
        }
        // The SDU length field is 16 bits, so 65535 caps every SDU; the MTU caps it further.
        guard length <= limits.mtu else {
            return .malformed("SDU length \(length) exceeds MTU \(limits.mtu)")
        }
        let segment = payload.from(2)
        if segment.count > Int(length) {
            return .malformed("first segment of \(segment.count) bytes exceeds SDU length \(length)")
        }
        if segment.count == Int(length) { return .sdu(Array(segment), frames: [frame]) }
        // Not reserving the announced length: memory follows the bytes actually seen.
        state = Reassembly(expected: Int(length), buffer: Array(segment), frames: [frame])
        return .incomplete
    }

    /// Whether an SDU is partly received toward `side`.
    public func isReassembling(toward side: Side) -> Bool { (side == .local ? toLocal : toRemote) != nil }
}

/// The dynamic channels of one ACL connection, maintained from its signaling commands.
public final class DynamicChannels {
    /// A request waiting for its response.
    private enum Request {
        case basic(psm: UInt16, sourceCID: UInt16)
        case leCredit(spsm: UInt16, sourceCID: UInt16, mtu: UInt16, mps: UInt16, credits: UInt16)
        case enhanced(spsm: UInt16, mtu: UInt16, mps: UInt16, credits: UInt16, sourceCIDs: [UInt16])
        case reconfigure(mtu: UInt16, mps: UInt16, cids: [UInt16])
    }
    private struct RequestKey: Hashable {
        let side: Side
        let identifier: UInt8
    }

    public private(set) var channels: [DynamicChannel] = []
    private var pending: [RequestKey: Request] = [:]
    /// Open channels kept per connection; made-up signaling could open one per 16-bit CID, each
    /// with its own SDU reassembly, and lookups are linear. Past this, the oldest is forgotten.
    public static let maxChannels = 256

    public init() {}

    /// The channel a frame sent by `side` on `cid` belongs to: the CID on the air is the
    /// receiver's, so a frame from the local side carries the remote end's CID.
    public func channel(cid: UInt16, from side: Side) -> DynamicChannel? {
        let rx = side.other
        return channels.first { $0.endpoint(rx).cid == cid }
    }

    /// Feeds every command of a C-frame sent by `side`.
    public func feed(_ frame: SignalingFrame, from side: Side, frame number: Int) {
        for pdu in frame.commands { feed(pdu, from: side, frame: number) }
    }

    /// Feeds one signaling command sent by `side` in capture frame `frame`.
    public func feed(_ pdu: SignalingPDU, from side: Side, frame: Int) {
        guard let command = pdu.command else { return }
        let request = RequestKey(side: side, identifier: pdu.identifier)
        // A response answers the request the other side sent with the same identifier.
        let answered = RequestKey(side: side.other, identifier: pdu.identifier)
        switch command {
        case .connectionRequest(let psm, let scid), .createChannelRequest(let psm, let scid, _):
            pending[request] = .basic(psm: psm, sourceCID: scid)
        case .connectionResponse(let dcid, let scid, let result, _),
             .createChannelResponse(let dcid, let scid, let result, _):
            guard case .basic(let psm, let requested)? = pending[answered] else { return }
            if result == 1 { return }  // pending: a final response follows
            pending[answered] = nil
            guard result == 0, scid == requested else { return }
            // Basic mode has no MPS or credits; the MTU defaults to 672 (Vol 3 Part A 5.1).
            open(psm: psm, mode: .basic, requester: side.other, frame: frame,
                 requesterEnd: ChannelEndpoint(cid: scid, mtu: 672, mps: 0, credits: 0),
                 responderEnd: ChannelEndpoint(cid: dcid, mtu: 672, mps: 0, credits: 0))
        case .configurationRequest(let dcid, _, let options):
            // The MTU option states what the sender of the request can receive.
            if let mtu = SignalingPDU.mtuOption(options), let ch = channel(cid: dcid, from: side) {
                ch.update(side) { $0.mtu = mtu }
            }
        case .leCreditBasedConnectionRequest(let spsm, let scid, let mtu, let mps, let credits):
            pending[request] = .leCredit(spsm: spsm, sourceCID: scid, mtu: mtu, mps: mps, credits: credits)
        case .leCreditBasedConnectionResponse(let dcid, let mtu, let mps, let credits, let result):
            guard case .leCredit(let spsm, let scid, let rmtu, let rmps, let rcredits)? = pending[answered]
            else { return }
            pending[answered] = nil
            guard result == 0 else { return }
            open(psm: spsm, mode: .leCreditBased, requester: side.other, frame: frame,
                 requesterEnd: ChannelEndpoint(cid: scid, mtu: rmtu, mps: rmps, credits: rcredits),
                 responderEnd: ChannelEndpoint(cid: dcid, mtu: mtu, mps: mps, credits: credits))
        case .creditBasedConnectionRequest(let spsm, let mtu, let mps, let credits, let scids):
            pending[request] = .enhanced(spsm: spsm, mtu: mtu, mps: mps, credits: credits, sourceCIDs: scids)
        case .creditBasedConnectionResponse(let mtu, let mps, let credits, let result, let dcids):
            guard case .enhanced(let spsm, let rmtu, let rmps, let rcredits, let scids)? = pending[answered]
            else { return }
            if (0x000D...0x000F).contains(result) { return }  // all pending: a final response follows
            pending[answered] = nil
            // Channels are paired in order; a Destination CID of 0 refuses that one (4.26).
            for (scid, dcid) in zip(scids, dcids) where dcid != 0 {
                open(psm: spsm, mode: .enhancedCreditBased, requester: side.other, frame: frame,
                     requesterEnd: ChannelEndpoint(cid: scid, mtu: rmtu, mps: rmps, credits: rcredits),
                     responderEnd: ChannelEndpoint(cid: dcid, mtu: mtu, mps: mps, credits: credits))
            }
        case .flowControlCreditIndication(let cid, let credits):
            // The CID is the sender's own end: it lets the peer send more.
            guard let ch = channels.first(where: { $0.endpoint(side).cid == cid }) else { return }
            ch.update(side) { ep in ep.credits = UInt16(min(Int(ep.credits) + Int(credits), 0xFFFF)) }
        case .creditBasedReconfigureRequest(let mtu, let mps, let cids):
            pending[request] = .reconfigure(mtu: mtu, mps: mps, cids: cids)
        case .creditBasedReconfigureResponse(let result):
            guard case .reconfigure(let mtu, let mps, let cids)? = pending[answered] else { return }
            pending[answered] = nil
            guard result == 0 else { return }
            // The listed CIDs are the requester's own ends (4.27).
            for ch in channels where cids.contains(ch.endpoint(side.other).cid) {
                ch.update(side.other) { ep in ep.mtu = mtu; ep.mps = mps }
            }
        case .disconnectionResponse(let dcid, let scid):
            // The responder's end is the Destination CID, the requester's the Source CID.
            channels.removeAll { $0.endpoint(side).cid == dcid && $0.endpoint(side.other).cid == scid }
        case .commandReject:
            pending[answered] = nil
        default:
            break
        }
    }

    private func open(psm: UInt16, mode: ChannelMode, requester: Side, frame: Int,
                      requesterEnd: ChannelEndpoint, responderEnd: ChannelEndpoint) {
        let local = requester == .local ? requesterEnd : responderEnd
        let remote = requester == .local ? responderEnd : requesterEnd
        // A CID reused without a disconnection seen: the new channel replaces the old.
        channels.removeAll { $0.local.cid == local.cid || $0.remote.cid == remote.cid }
        if channels.count >= DynamicChannels.maxChannels { channels.removeFirst() }
        channels.append(DynamicChannel(psm: psm, mode: mode, local: local, remote: remote, openedFrame: frame))
    }
}

extension SignalingPDU {
    /// The MTU configuration option (type 0x01, hint bit ignored) in raw options, if present.
    static func mtuOption(_ options: Bytes) -> UInt16? {
        var r = ByteReader(options)
        while let type = try? r.u8(), let len = try? r.u8(), let value = try? r.take(Int(len)) {
            if type & 0x7F == 0x01, len == 2 { return value.le16(0) }
        }
        return nil
    }
}
