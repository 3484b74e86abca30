import Decoders

/// Data over the legacy limit is refused by the controller or cut by scanners; a structure that
/// runs past the end makes scanners drop or misread the whole packet.
struct BLE501AdvDataInvalid: AdvertisingDataRule {
    static let info = RuleInfo.ble501
    static let advertisingInterest: AdvertisingInterest = .new([.tooLong, .tooLongScanResponse, .malformed, .malformedScanResponse])

    let includeReceived: Bool

    init(settings: RuleSettings) { includeReceived = settings.flag("include-received") }

    mutating func judge(_ o: AdvertisingDataObservation, at frame: FrameRef, emit: RuleContext) {
        // Each fault once per advertiser, for advertising data and for scan responses apart.
        guard !o.new.isDisjoint(with: [.tooLong, .tooLongScanResponse, .malformed, .malformedScanResponse]) else { return }
        let what = o.scanResponse ? "scan-response data" : "advertising data"
        if !o.new.isDisjoint(with: [.tooLong, .tooLongScanResponse]) {
            emit(finding("legacy \(what) of \(o.data.count) bytes (limit 31)", o.key, at: frame, detail: "too long " + what))
        }
        if !o.new.isDisjoint(with: [.malformed, .malformedScanResponse]) {
            emit(finding("""
                AD structure at offset \(Int(o.facts.faultOffset)) (length \(Int(o.facts.faultLength))) runs past the end \
                of the \(o.data.count)-byte \(what)
                """, o.key, at: frame, detail: "malformed " + what))
        }
    }
}
