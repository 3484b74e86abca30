import Decoders
import Report
import Wire

// ATT PDUs on one LE connection (opened by an LE Connection Complete): each chunk is one PDU,
// wrapped in a whole L2CAP frame and one ACL packet. Tag bit 0 is the direction; bits 1-2 pick
// the channel (ATT mostly, also SMP and LE signaling so bearers and pairing interact), bit 3
// splits the frame into two ACL fragments.
let channels: [UInt16] = [L2CAPChannel.att, L2CAPChannel.att, L2CAPChannel.smp, L2CAPChannel.leSignaling]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzATT(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let dissector = Dissector()
    let connect: [UInt8] = [0x3E, 19, 0x01, 0x00, 0x40, 0x00, 0x00, 0x01, 1, 2, 3, 4, 5, 6, 0x18, 0, 0, 0, 0x48, 0, 0]
    _ = dissector.dissect(Packet(number: 1, timestamp: 0, direction: .received, adapter: 0, kind: .hci(.event), payload: connect[...]))
    var n = 1
    func send(_ acl: [UInt8], _ dir: Direction) {
        n += 1
        let d = dissector.dissect(Packet(number: n, timestamp: Int64(n) * 1_000_000, direction: dir, adapter: 0,
                                         kind: .hci(.aclData), payload: acl[...]))
        consume(d.summary)
        for layer in d.layers { consume(layer.fields.map(\.label)) }
    }
    for (tag, pdu) in Chunks(input(data, size)) {
        let cid = channels[Int(tag >> 1 & 3)]
        let dir: Direction = tag & 1 == 0 ? .sent : .received
        let frame = [UInt8(pdu.count & 0xFF), UInt8(pdu.count >> 8), UInt8(cid & 0xFF), UInt8(cid >> 8)] + pdu
        if tag & 8 != 0, frame.count > 5 {
            let a = frame[..<5], b = frame[5...]
            send([0x40, 0x00, UInt8(a.count), 0] + a, dir)
            send([0x40, 0x10, UInt8(b.count & 0xFF), UInt8(b.count >> 8)] + b, dir)
        } else {
            send([0x40, 0x20, UInt8(frame.count & 0xFF), UInt8(frame.count >> 8)] + frame, dir)
        }
    }
    // Hook: when the GATT database / auditor land, walk them here too.
    return 0
}
