import Decoders
import Wire

/// Each advertising event costs three transmissions; a short interval kept on for long drains a
/// peripheral's battery for little gain once it has been found.
struct BLE505AdvIntervalAggressive: AuditRule {
    static let info = RuleInfo(
        id: "BLE505", name: "adv-interval-aggressive", severity: .note,
        summary: "Advertising with a short interval kept on for a long time",
        help: """
            Use a short advertising interval only briefly (to be found quickly), then a longer one. An \
            interval under about 100 ms kept on for long multiplies the peripheral's radio time and \
            crowds the advertising channels for everyone nearby.
            """,
        guidance: "Minimise radio use (Core Bluetooth Programming Guide: advertise only when you need to)",
        options: [RuleOption("interval", .duration, 100_000_000, "advertising interval maximum below which it is aggressive"),
                  RuleOption("duration", .duration, 30_000_000_000, "how long a short interval may stay on")],
        platforms: PlatformTable(
            apple: .stack("Core Bluetooth chooses the advertising interval itself; the app has no setting for it"),
            android: .stack("Android apps cannot advertise faster than every 100 ms (AdvertisingSetParameters.INTERVAL_MIN): a shorter interval is the system's own advertising (Nearby, Fast Pair, the maker's services)"),
            linuxBluez: .app("set MinInterval/MaxInterval of the LEAdvertisement1 object to 100 ms or more"),
            embedded: .app("set an advertising interval of 100 ms or more once the device has been found")))

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

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: (Finding) -> Void) {
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

    mutating func finish(at frame: FrameRef?, emit: (Finding) -> Void) {
        guard let f = frame else { return }
        for adapter in adapters.keys { end(adapter, at: f, emit: emit) }
    }

    private mutating func end(_ adapter: UInt16, at frame: FrameRef, emit: (Finding) -> Void) {
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
