/// Acknowledgement and flow control (Core Vol 6 Part B 4.5.9) as a sniffer can follow it.
///
/// Each side sends SN and NESN. A side changes its SN only after the peer acknowledged its last
/// PDU (the peer's NESN moved past that SN), and sends the same PDU again until then. So a PDU is a
/// retransmission when its SN equals the SN of the sender's previous PDU; the sniffer knows that SN
/// when it saw every PDU the sender sent since. When it missed some, the peer's NESN still counts
/// the sender's PDUs it accepted: two changes since the sender's last seen PDU mean the sender
/// moved on at least twice, so the same SN is new data; so is other content under the same SN (a
/// retransmission repeats the PDU). Otherwise the sniffer cannot tell.

/// What the sequence numbers say about a data PDU.
public enum LLSequence: Sendable, Equatable {
    case new
    /// The sender had not seen its previous PDU acknowledged and sent it again.
    case retransmission
    /// The same SN as the sender's last PDU the sniffer saw, after packets the sniffer missed that
    /// could have carried two acknowledged PDUs in between.
    case unknown
}

/// One side's sequence numbers as the sniffer saw them.
struct LLSideSequence {
    /// SN and content of this side's last PDU seen.
    var sn: Bool?
    var hash: UInt64 = 0
    /// NESN of this side's last PDU seen.
    var nesn: Bool?
    /// Changes of the peer's NESN since this side's last PDU seen: PDUs of this side it accepted.
    var acknowledged = 0
    /// This side sent PDUs the sniffer did not see (or saw damaged) since its last one.
    var missed = false
}

/// Follows SN and NESN of one connection.
struct LLSequenceTracker {
    private var sides = [LLSideSequence(), LLSideSequence()]
    /// The connection event of the last PDU seen (event counter, else channel), its sender and
    /// whether it or the PDU it answered set More Data.
    private var lastEvent: UInt32?
    private var lastSide: LLDirection?
    private var moreData = false
    /// Times the sniffer is known to have missed packets on this connection so far (a skipped
    /// event, a side out of turn, a damaged PDU): ATT tells a lost response from pipelining by it.
    private(set) var gaps = 0

    /// Reads a PDU with a good CRC: its place in the sequence, whether it repeats the content of
    /// the sender's last PDU seen, then what it tells about its peer.
    mutating func receive(from side: LLDirection, header: UInt8, hash: UInt64, event: UInt32?,
                          counted: Bool) -> (sequence: LLSequence, repeats: Bool) {
        noteGap(side, event: event, counted: counted)
        let sn = header & 0x08 != 0, nesn = header & 0x04 != 0, md = header & 0x10 != 0
        let me = side.index, peer = 1 - me
        let s = sides[me]
        let repeats = s.sn != nil && s.hash == hash
        // A retransmission is the same PDU again (only NESN and MD may change): other content
        // under the same SN means the sender moved on twice in packets the sniffer missed.
        let result: LLSequence
        if s.sn != sn || s.acknowledged >= 2 || (s.sn != nil && !repeats) {
            result = .new
        } else if !s.missed {
            result = .retransmission
        } else {
            result = .unknown
        }
        sides[me].sn = sn
        sides[me].hash = hash
        sides[me].acknowledged = 0
        sides[me].missed = false
        if let previous = s.nesn, previous != nesn { sides[peer].acknowledged += 1 }
        sides[me].nesn = nesn
        let sameEvent = event != nil && event == lastEvent && lastSide != side
        moreData = md || (sameEvent && moreData)
        lastEvent = event
        lastSide = side
        return (result, repeats)
    }

    /// A PDU the sniffer caught damaged: its sender sent something the sniffer cannot read.
    mutating func damaged(from side: LLDirection) {
        sides[side.index].missed = true
        gaps &+= 1
    }

    /// Packets missed before this one (Vol 6 Part B 4.5.1, 4.5.6): the central opens each
    /// connection event and the sides alternate in it, so a skipped event, an event opened by the
    /// peripheral, the same side twice in one event, or an event left while More Data was set hide
    /// packets.
    private mutating func noteGap(_ side: LLDirection, event: UInt32?, counted: Bool) {
        guard let event, let last = lastEvent, let lastSide else { return }
        let central = LLDirection.centralToPeripheral.index, peripheral = LLDirection.peripheralToCentral.index
        if event == last {
            if lastSide == side {
                sides[1 - side.index].missed = true
                gaps &+= 1
            }
            return
        }
        // An event counter tells skipped events apart (a channel only tells a new event).
        if counted, UInt16(truncatingIfNeeded: event &- last) > 1 {
            sides[central].missed = true
            sides[peripheral].missed = true
            gaps &+= 1
        }
        if side == .peripheralToCentral || (lastSide == .peripheralToCentral && moreData) {
            sides[central].missed = true
            gaps &+= 1
        }
    }
}
