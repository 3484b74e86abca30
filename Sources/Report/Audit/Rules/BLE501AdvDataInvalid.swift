import Decoders
import Wire

/// Data over the legacy limit is refused by the controller or cut by scanners; a structure that
/// runs past the end makes scanners drop or misread the whole packet.
struct BLE501AdvDataInvalid: AuditRule {
    static let info = RuleInfo(
        id: "BLE501", name: "adv-data-invalid", severity: .error,
        summary: "Legacy advertising data over 31 bytes, or a malformed AD structure",
        help: """
            Keep legacy advertising and scan-response data within 31 bytes, and make every AD structure's \
            length match its content. Longer data is rejected by the controller or truncated by \
            scanners, and a structure whose length runs past the data makes scanners discard the \
            packet or misread what follows.
            """,
        guidance: "Core Bluetooth Programming Guide: respect the limits of advertising data; Core Vol 3 Part C 11",
        options: [includeReceivedOption])

    static let consumes: AuditEventKinds = [.advertisingData]
    let settings: RuleSettings
    /// Options read once: a lookup by name per event costs a string hash.
    private let includeReceivedSetting: Bool
    private var seen = BoundedMap<AdvertiserKey, UInt8>(capacity: 10_000)

    init(settings: RuleSettings) {
        self.settings = settings
        includeReceivedSetting = settings.flag("include-received")
    }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: (Finding) -> Void) {
        guard case .advertisingData(let adapter, let advertiser, let data, let scanResponse, let legacy, let byHost) = event,
              byHost || includeReceivedSetting else { return }
        // Well-formed data, the usual case, needs no lookup of what was reported already.
        let tooLong = legacy && data.count > 31
        let faultAt = ADWalk.walk(data, { _, _ in })
        guard tooLong || faultAt != nil else { return }
        let key = AdvertiserKey(adapter: adapter, address: byHost ? nil : advertiser, host: byHost)
        let what = scanResponse ? "scan-response data" : "advertising data"
        let bit: UInt8 = scanResponse ? 2 : 1
        let flagged = seen[key] ?? 0
        if tooLong, flagged & bit == 0 {
            seen[key] = flagged | bit
            emit(finding("legacy \(what) of \(data.count) bytes (limit 31)",
                         subject: key.subject, evidence: [frame], decisive: frame, detail: "too long " + what, actor: key.host ? .host : .peer))
        }
        let flagged2 = seen[key] ?? 0
        if flagged2 & (bit << 2) == 0, let at = faultAt {
            seen[key] = flagged2 | (bit << 2)
            let length = Int(data.byte(at) ?? 0)
            emit(finding("AD structure at offset \(at) (length \(length)) runs past the end of the \(data.count)-byte \(what)",
                         subject: key.subject, evidence: [frame], decisive: frame, detail: "malformed " + what, actor: key.host ? .host : .peer))
        }
    }

    mutating func finish(at frame: FrameRef?, emit: (Finding) -> Void) {}
}
