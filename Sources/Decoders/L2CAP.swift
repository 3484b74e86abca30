import Wire

/// L2CAP basic frames (Core Vol 3 Part A 3.1) and their reassembly from HCI ACL fragments.

/// Fixed channel identifiers (Vol 3 Part A 2.1).
public enum L2CAPChannel {
    public static let signaling: UInt16 = 0x0001
    public static let connectionless: UInt16 = 0x0002
    public static let att: UInt16 = 0x0004
    public static let leSignaling: UInt16 = 0x0005
    public static let smp: UInt16 = 0x0006
    public static let smpBREDR: UInt16 = 0x0007

    public static func name(_ cid: UInt16) -> String? { label(cid)?.string }

    /// `name` as a label.
    public static func label(_ cid: UInt16) -> FieldLabel? {
        switch cid {
        case signaling: return "L2CAP Signaling"
        case connectionless: return "Connectionless"
        case 0x0003: return "AMP Manager"
        case att: return "ATT"
        case leSignaling: return "LE Signaling"
        case smp: return "SMP"
        case smpBREDR: return "BR/EDR SMP"
        default: return cid >= 0x0040 ? "Dynamic" : nil
        }
    }
}

/// HCI ACL Data packet header (Vol 4 Part E 5.4.2).
public struct ACLHeader: Sendable {
    public let handle: UInt16
    /// Packet boundary flag: 0 first non-flushable, 1 continuing fragment, 2 first (flushable), 3 complete.
    public let boundary: UInt8
    public let broadcast: UInt8
    public let length: UInt16

    public init?(_ b: borrowing Bytes) {
        guard let w = b.le16(0), let len = b.le16(2) else { return nil }
        handle = w & 0x0FFF
        boundary = UInt8((w >> 12) & 0x3)
        broadcast = UInt8(w >> 14)
        length = len
    }

    public var isStart: Bool { boundary != 1 }

    public static let boundaryNames: [FieldLabel] = ["First Non-Automatically-Flushable", "Continuing Fragment",
                                       "First Automatically Flushable", "Complete L2CAP PDU"]
}

/// A basic L2CAP frame's header, as a decode keeps it: its payload went to the protocol of its
/// channel, which holds what it needs of it (a decode that kept the payload too held a second
/// reference to the same bytes, a retain and a release a frame).
public struct L2CAPFrame: Sendable {
    public let cid: UInt16
    /// Length from the basic header.
    public let length: UInt16
    /// Payload bytes the capture holds: `length`, unless it cut the packet short.
    public let captured: Int
    /// Frames this PDU was reassembled from (empty when it came in one ACL packet).
    public var fragments: [Int] { reassembledFrom ?? [] }
    /// Nil, not an empty array, for a PDU in one packet, most of them: an empty array costs a
    /// retain where it is made and a release where the frame is dropped.
    let reassembledFrom: [Int]?

    init(cid: UInt16, length: UInt16, captured: Int, fragments: [Int]? = nil) {
        self.cid = cid
        self.length = length
        self.captured = captured
        reassembledFrom = fragments
    }
}

/// Reassembles the ACL fragments of one direction of one connection into L2CAP frames.
/// Never merges fragments into the wrong PDU: a start while a PDU is pending drops the pending one
/// (reported), a continuation with nothing pending is reported and dropped.
public struct L2CAPReassembler: Sendable {
    /// The PDU being put together and the frames of its fragments. Emptied when the next PDU
    /// starts, not when one completes: by then the frame that carried the last one is usually
    /// gone, and the storage is used again instead of allocated anew.
    private var buffer: [UInt8] = []
    /// The buffer before, taken back at the next PDU: the last PDU's bytes are usually still held
    /// then (the ATT layer keeps the result it handed out last), the ones before it no longer, so
    /// the two buffers take turns rather than one being allocated anew for every reassembled PDU.
    private var spare: [UInt8] = []
    /// The PDU's length with its header; -1 while the start was too short to tell; 0: none pending.
    private var expected = 0
    private var frames: [Int] = []

    public init() {}

    public enum Result: Sendable {
        /// A whole frame: its header and its information payload.
        case frame(L2CAPFrame, payload: Bytes)
        /// A fragment was stored; the PDU is not complete yet.
        case pending(have: Int, of: Int)
        /// The fragment could not be used; decoding goes on with the next one.
        case malformed(String, dropped: [Int])
    }

    public var isPending: Bool { expected != 0 }

    /// Feeds one ACL payload (the bytes after the 4-byte ACL header).
    /// `data` is consumed: a PDU in one fragment is a slice of it, made without another reference.
    public mutating func add(_ data: consuming Bytes, start: Bool, frame: Int) -> (Result, dropped: Result?) {
        var dropped: Result?
        if start {
            if isPending {
                dropped = .malformed("L2CAP PDU incomplete: \(buffer.count) of \(expected) bytes, next PDU started in frame \(frame)", dropped: frames)
                expected = 0
            }
            guard let len = data.le16(0) else {
                // A start too short for the length field: keep it and wait for the rest.
                reset()
                buffer.append(contentsOf: data)
                expected = -1
                frames.append(frame)
                return (.pending(have: buffer.count, of: 0), dropped)
            }
            let total = Int(len) + 4
            if data.count == total, let cid = data.le16(2) {
                return (.frame(L2CAPFrame(cid: cid, length: len, captured: total &- 4), payload: data.from(4)), dropped)
            }
            if data.count > total {
                return (.malformed("ACL data longer than the L2CAP length (\(data.count) > \(total))", dropped: [frame]), dropped)
            }
            // No reserveCapacity(total): the length is untrusted, so memory follows the bytes seen.
            reset()
            buffer.append(contentsOf: data)
            expected = total
            frames.append(frame)
            return (.pending(have: buffer.count, of: total), dropped)
        }
        guard isPending else {
            return (.malformed("continuation fragment without a start", dropped: [frame]), nil)
        }
        buffer.append(contentsOf: data)
        frames.append(frame)
        if expected < 0, buffer.count >= 2 {
            expected = Int(UInt16(buffer[0]) | UInt16(buffer[1]) << 8) + 4
        }
        if expected < 0 || buffer.count < expected { return (.pending(have: buffer.count, of: max(expected, 0)), nil) }
        if buffer.count > expected {
            let r = Result.malformed("fragments carry \(buffer.count) bytes, L2CAP length says \(expected)", dropped: frames)
            expected = 0
            return (r, nil)
        }
        let whole = buffer[...]
        let f = L2CAPFrame(cid: whole.le16(2) ?? 0, length: UInt16(expected - 4), captured: expected &- 4, fragments: frames)
        expected = 0
        return (.frame(f, payload: whole.from(4)), nil)
    }

    /// The reassembler of an ended connection made ready for a new one: nothing pending, the
    /// buffers' storage kept (emptied at its first PDU, as every PDU's are).
    public mutating func reuse() {
        expected = 0
        frames.removeAll(keepingCapacity: true)
    }

    /// Empties the buffers for the next PDU, keeping their storage when nothing else holds it.
    private mutating func reset() {
        swap(&buffer, &spare)
        buffer.removeAll(keepingCapacity: true)
        expected = 0
        frames.removeAll(keepingCapacity: true)
    }
}
