import Decoders
import Wire

// Over-the-air link-layer records through one tracker (connections, CRC, retransmissions,
// encryption). Tag bits 0-1 pick the link type (251, 256, 272); bit 2 gives the tracker a
// long-term key, so encrypted connections are attempted.
let llTypes: [UInt32] = [LinkType.leLL, LinkType.leLLWithPHDR, LinkType.nordicBLE, LinkType.nordicBLE]
let key = LTK(msbFirst: Array(0..<16))!

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLL(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = input(data, size)
    let tracker = LinkLayerTracker(keys: bytes.first.map { $0 & 4 != 0 } == true ? [key] : [])
    var n = 0
    for (tag, chunk) in Chunks(bytes) {
        n += 1
        let t = llTypes[Int(tag & 3)]
        let p = Packet(Record(number: n, timestamp: Int64(n) * 1_250_000, linkType: t, data: chunk, fileLength: chunk.count))
        let f = tracker.process(p)
        consume(f.summary)
        consume(f.fields.map(\.label))
    }
    consume(tracker.knownConnections.count)
    return 0
}
