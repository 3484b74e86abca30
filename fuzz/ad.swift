import Decoders
import Report
import Wire

// Advertising data on its own and inside every kind of LE advertising report event.
// First byte: bit 0 legacy, bits 1-3 pick the report subevent; the rest is the data / parameters.
let subevents: [UInt8] = [AdvertisingReports.legacy, AdvertisingReports.directed, AdvertisingReports.extended,
                          AdvertisingReports.periodic, AdvertisingReports.periodicV2, 0x02, 0x0D, 0x0D]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAD(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = input(data, size)
    guard let first = bytes.first else { return 0 }
    let rest = bytes[1...]
    let ad = AdvertisingData(rest, legacy: first & 1 != 0)
    consume(ad.summary)
    consume(ad.fields.map(\.label))
    consume(ad.localName)
    let sub = subevents[Int(first >> 1 & 7)]
    let parsed = AdvertisingReports.parse(subevent: sub, rest)
    consume(AdvertisingReports.fields(subevent: sub, rest)?.count)
    let advertisers = Advertisers()
    var assembler = ExtendedAdvertisingAssembler(maxPending: 4, maxLength: 1650)
    for (i, r) in parsed.reports.enumerated() {
        consume(r.summary(in: rest))
        consume(r.fields(in: rest).map(\.label))
        consume(r.advertisingData(in: rest).fields.count)
        advertisers.add(r, data: r.data(in: rest), frame: i + 1, time: Int64(i))
        if let whole = assembler.add(r, in: rest) { consume(AdvertisingData(whole.data[...]).fields.count) }
    }
    for d in advertisers.devices { consume(d.services.count) }
    // The same parameters as an HCI event through the dissector (summary and fields).
    var ev: [UInt8] = [0x3E, UInt8(min(rest.count + 1, 255)), sub]
    ev += rest
    let d = Dissector(trackAdvertisers: true).dissect(Packet(number: 1, timestamp: 0, direction: .received, adapter: 0,
                                                             kind: .hci(.event), payload: ev[...]))
    consume(d.summary)
    for layer in d.layers { consume(layer.fields.map(\.label)) }
    return 0
}
