import Decoders

/// A shortened name is what is left after everything else took the space: scanners show a cut name
/// unless they ask for the scan response.
struct BLE503LocalNameTruncated: AuditRule {
    static let info = RuleInfo(
        id: "BLE503", name: "local-name-truncated", severity: .note,
        summary: "Shortened Local Name advertised and the complete name never sent",
        help: """
            The local name gets only the space the rest of the advertising data leaves. When it does not \
            fit it is sent as a Shortened Local Name (AD 0x08); put the Complete Local Name (AD 0x09) in \
            the scan response, or shorten what else is advertised, so scanners can show the real name.
            """,
        guidance: "Core Bluetooth Programming Guide: the local name gets only the space left",
        notAFinding: """
            a Complete Local Name sent by the same advertiser (for example in its scan response); a \
            received advertiser whose scan response the capture never shows (passive scanning, a sniffer \
            that missed it): its scan response may hold the complete name
            """,
        options: [includeReceivedOption])

    struct Advertiser {
        var shortened: (FrameRef, String)?
        var complete = false
        /// A scan response of this advertiser was seen: what it holds is known.
        var scanResponseSeen = false
    }

    static let consumes: AuditEventKinds = [.advertisingData]
    let settings: RuleSettings
    /// Options read once: a lookup by name per event costs a string hash.
    private let includeReceivedSetting: Bool
    private var advertisers = BoundedMap<AdvertiserKey, Advertiser>(capacity: 10_000)

    init(settings: RuleSettings) {
        self.settings = settings
        includeReceivedSetting = settings.flag("include-received")
    }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: (Finding) -> Void) {
        guard case .advertisingData(let adapter, let advertiser, let data, let scanResponse, _, let byHost) = event,
              byHost || includeReceivedSetting else { return }
        var short: ArraySlice<UInt8>?
        var complete = false
        ADWalk.walk(data) { type, value in
            if type == 0x08 { short = value }
            if type == 0x09 { complete = true }
        }
        let key = AdvertiserKey(adapter: adapter, address: byHost ? nil : advertiser, host: byHost)
        guard short != nil || complete || (scanResponse && advertisers.contains(key)) else { return }
        advertisers.update(key, default: Advertiser()) { a in
            if complete { a.complete = true }
            if scanResponse { a.scanResponseSeen = true }
            // The name becomes a string once per advertiser, not per packet.
            if let s = short, a.shortened == nil { a.shortened = (frame, String(decoding: s, as: UTF8.self)) }
        }
    }

    mutating func finish(at frame: FrameRef?, emit: (Finding) -> Void) {
        // What this host sets is all there is; a received advertiser's scan response must have been seen.
        let pending = advertisers.storage.compactMap { k, a in
            a.complete || !(k.host || a.scanResponseSeen) ? nil : a.shortened.map { (k, $0.0, $0.1) }
        }
        for (key, f, name) in pending.sorted(by: { $0.1.number < $1.1.number }) {
            emit(finding("Shortened Local Name \"\(name)\" (AD 0x08) advertised; the Complete Local Name was never sent",
                         subject: key.subject, evidence: [f], decisive: f, detail: "shortened name", actor: key.host ? .host : .peer))
        }
        advertisers.removeAll()
    }
}
