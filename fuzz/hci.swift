import Decoders
import Report
import Wire

// One capture record of any link type: first byte picks the link type, the next four are the
// btsnoop flags, the rest is the record. Decoded, then summarised and expanded into fields.
let linkTypes: [UInt32] = [LinkType.h4, LinkType.h4WithPHDR, LinkType.linuxMonitor, LinkType.btsnoopH1,
                           LinkType.btsnoopH4, LinkType.btsnoopMonitor, LinkType.leLL, LinkType.leLLWithPHDR,
                           LinkType.nordicBLE, 192]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHCI(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = input(data, size)
    guard bytes.count >= 5 else { return 0 }
    let linkType = linkTypes[Int(bytes[0]) % linkTypes.count]
    let flags = UInt32(bytes[1]) | UInt32(bytes[2]) << 8 | UInt32(bytes[3]) << 16 | UInt32(bytes[4]) << 24
    let record = bytes[5...]
    let p = Packet(Record(number: 1, timestamp: 0, linkType: linkType, flags: flags, data: record, originalLength: record.count + (bytes[0] & 0x80 != 0 ? 1 : 0), fileLength: record.count))
    let d = Dissector(trackAdvertisers: true).dissect(p)
    consume(d.summary)
    for layer in d.layers { consume(layer.fields.map(\.label)) }
    return 0
}
