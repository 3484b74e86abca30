import Decoders
import Wire

/// Each advertising event costs three transmissions; a short interval kept on for long drains a
/// peripheral's battery for little gain once it has been found.
struct BLE505AdvIntervalAggressive: AuditRule {
    static let info = RuleInfo.ble505

    struct Adapter {
        var intervalMax: UInt32?
        var enabled = false
        var since: FrameRef?
    }

    static let consumes: AuditEventKinds = [.advertisingParameters, .advertising]
    private let intervalSetting: Int64
    private let durationSetting: Int64
    private var adapters = AdapterTable<Adapter>()

    init(settings: RuleSettings) {
        intervalSetting = settings.duration("interval")
        durationSetting = settings.duration("duration")
    }

    private func aggressive(_ v: UInt32?) -> Bool {
        guard let v else { return false }
        return Int64(v) &* 625_000 < intervalSetting
    }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: RuleContext) {
        switch event {
        case .advertisingParameters(let p):
            let adapter = p.adapter, intervalMax = p.intervalMax
            var a = adapters[adapter] ?? Adapter()
            if a.since != nil && !aggressive(intervalMax) { end(adapter, at: frame, emit: emit); a.since = nil }
            a.intervalMax = intervalMax
            if a.enabled && a.since == nil && aggressive(intervalMax) { a.since = frame }
            adapters[adapter] = a
        case .advertisingStarted(let a):
            let adapter = a.adapter
            adapters.update(adapter, default: Adapter()) { $0.enabled = true }
            if adapters[adapter]!.since == nil && aggressive(adapters[adapter]!.intervalMax) {
                adapters[adapter]!.since = frame
            }
        case .advertisingStopped(let a):
            end(a.adapter, at: frame, emit: emit)
            adapters[a.adapter]?.enabled = false
        default: break
        }
    }

    mutating func finish(at frame: FrameRef?, emit: RuleContext) {
        guard let f = frame else { return }
        for adapter in adapters.keys { end(adapter, at: f, emit: emit) }
    }

    private mutating func end(_ adapter: UInt16, at frame: FrameRef, emit: RuleContext) {
        guard let a = adapters[adapter], let since = a.since, let v = a.intervalMax else { return }
        adapters[adapter]!.since = nil
        let on = frame.time &- since.time
        guard on > durationSetting else { return }
        emit(finding("""
            advertising interval max \(FieldRendering.decimal(Double(v) * 0.625)) ms (\(Hex.prefixed(v, width: 4))) \
            kept on for \(seconds: on)
            """,
                     subject: .host(adapter: adapter), evidence: [since, frame], decisive: since, detail: "interval"))
    }
}
