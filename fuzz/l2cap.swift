import Decoders
import Report
import Wire

// A sequence of HCI ACL fragments on one dissector. Each chunk's tag: bits 0-1 pick one of four
// handles, bits 2-3 the packet boundary flag, bit 4 the direction, bit 5 makes the ACL length
// field lie (data length + 1), bit 6 sends an LE Connection Complete for the handle first,
// bit 7 a Disconnection Complete after.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzL2CAP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let dissector = Dissector()
    var n = 0
    for (tag, chunk) in Chunks(input(data, size)) {
        let handle = UInt16(tag & 3) | 0x0040
        if tag & 0x40 != 0 {
            n += 1
            let ev: [UInt8] = [0x3E, 19, 0x01, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x00, 0x01,
                               1, 2, 3, 4, 5, 6, 0x18, 0, 0, 0, 0x48, 0, 0]
            let d = dissector.dissect(Packet(number: n, timestamp: Int64(n), direction: .received, adapter: 0,
                                             kind: .hci(.event), payload: ev[...]))
            consume(d.summary)
        }
        n += 1
        let pb = UInt16(tag >> 2 & 3)
        let length = chunk.count + (tag & 0x20 != 0 ? 1 : 0)
        let acl = [UInt8(handle & 0xFF), UInt8(handle >> 8 | pb << 4), UInt8(length & 0xFF), UInt8(length >> 8)] + chunk
        let d = dissector.dissect(Packet(number: n, timestamp: Int64(n), direction: tag & 0x10 != 0 ? .received : .sent,
                                         adapter: 0, kind: .hci(.aclData), payload: acl[...]))
        consume(d.summary)
        for layer in d.layers { consume(layer.fields.map(\.label)) }
        if tag & 0x80 != 0 {
            n += 1
            let ev: [UInt8] = [0x05, 4, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x13]
            consume(dissector.dissect(Packet(number: n, timestamp: Int64(n), direction: .received, adapter: 0,
                                             kind: .hci(.event), payload: ev[...])).summary)
        }
    }
    consume(dissector.allConnections.count)
    return 0
}
