import Decoders

/// A shortened name is what is left after everything else took the space: scanners show a cut name
/// unless they ask for the scan response.
struct BLE503LocalNameTruncated: AdvertisingDataRule {
    static let info = RuleInfo.ble503
    static let advertisingInterest: AdvertisingInterest = .seen(.shortenedName)

    /// Advertisers that sent a Shortened Local Name: the first one, and the advertiser as last seen.
    private var shortened = BoundedMap<AdvertiserKey, (frame: FrameRef, name: String, advertiser: Advertiser)>(capacity: 10_000)
    let includeReceived: Bool

    init(settings: RuleSettings) { includeReceived = settings.flag("include-received") }

    mutating func judge(_ o: AdvertisingDataObservation, at frame: FrameRef, emit: RuleContext) {
        guard o.advertiser.seen.contains(.shortenedName) else { return }
        if o.new.contains(.shortenedName) {
            // The name becomes a string once per advertiser, not per packet.
            shortened[o.key] = (frame, o.facts.shortenedName(in: o.data), o.advertiser)
        } else if shortened.contains(o.key) {
            shortened.update(o.key, default: (frame, "", o.advertiser)) { $0.advertiser = o.advertiser }
        }
    }

    mutating func finish(at frame: FrameRef?, emit: RuleContext) {
        // What this host sets is all there is; a received advertiser's scan response must have been seen.
        let pending = shortened.storage.filter { k, s in
            !s.advertiser.seen.contains(.completeName) && (k.host || s.advertiser.scanResponseAfterName)
        }
        // By frame, then by advertiser: one event can report several.
        let ordered = pending.map { (key: $0.key, s: $0.value, address: $0.key.address?.description ?? "") }
            .sorted { a, b in a.s.frame.number != b.s.frame.number ? a.s.frame.number < b.s.frame.number : a.address < b.address }
        for (key, s, _) in ordered {
            emit(finding("Shortened Local Name \"\(s.name)\" (AD 0x08) advertised; the Complete Local Name was never sent",
                         key, at: s.frame, detail: "shortened name"))
        }
        shortened.removeAll()
    }
}
