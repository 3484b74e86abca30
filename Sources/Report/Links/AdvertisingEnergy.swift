/// What this host's advertising on one adapter was: how it was set, how long it was on, and the
/// radio charge that costs.
public struct AdvertisingSummary: Sendable {
    public var adapter: UInt16
    /// The last parameters set (nil: advertising was enabled with the controller's defaults).
    public var parameters: HostAdvertisingParameters?
    /// Octets of the last advertising data and scan response data set.
    public var dataOctets = 0
    public var scanResponseOctets = 0
    /// Times advertising was turned on, and how long it was on in all (nanoseconds).
    public var periods = 0
    public var onTime: Int64 = 0
    /// The frame that first turned it on.
    public var firstFrame: Int

    /// Without parameters, the defaults of LE Set Advertising Parameters (Core Vol 4 Part E 7.8.5):
    /// ADV_IND every 1.28 s on all three channels.
    public var effectiveParameters: HostAdvertisingParameters {
        parameters ?? HostAdvertisingParameters(adapter: adapter, intervalMin: 0x0800, intervalMax: 0x0800, legacy: true,
                                                scannable: true, connectable: true, channels: 3, primaryPHY: 1, secondaryPHY: 1)
    }

    public func energy(_ profile: RadioProfile) -> AdvertisingEnergy {
        AdvertisingEnergy.estimate(effectiveParameters, dataOctets: dataOctets, profile: profile)
    }
}

/// The radio charge of one advertising event, estimated.
///
/// Legacy advertising sends its PDU (AdvA and the data) on each primary channel used, each after
/// the radio's start-up; a scannable or connectable advertiser then listens for T_IFS plus a
/// request's preamble and access address (Core Vol 6 Part B 4.4.2) before the next channel.
/// Extended advertising sends ADV_EXT_IND (extended header: flags, ADI, AuxPtr) on the primary
/// channels, then the data in AUX_ADV_IND and as many AUX_CHAIN_IND as it needs on a secondary
/// channel, listening after AUX_ADV_IND when scannable or connectable. Events come every interval
/// plus advDelay, 0 to 10 ms and 5 on average (Vol 6 Part B 4.4.2.2.1). Left out: the scan
/// responses and connections answered (an HCI log shows no scan request), the CPU, the crystal's
/// start-up and sleep current.
public struct AdvertisingEnergy: Sendable, Equatable {
    public var profile: String
    /// Radio charge of one advertising event, nanocoulombs.
    public var nanocoulombsPerEvent: Double
    /// Mean time between events at the shortest and the longest interval allowed, nanoseconds.
    public var shortestPeriod: Int64
    public var longestPeriod: Int64

    public var microcoulombsPerEvent: Double { nanocoulombsPerEvent / 1000 }

    /// Average radio current while advertising, µA, events `period` nanoseconds apart.
    public func averageMicroamps(period: Int64) -> Double {
        period > 0 ? nanocoulombsPerEvent / (Double(period) / 1e9) / 1000 : 0
    }

    /// Advertising events in `time` nanoseconds, at the shortest interval allowed.
    public func events(in time: Int64) -> Int { shortestPeriod > 0 ? Int(time / shortestPeriod) : 0 }

    /// Mean advDelay.
    static let meanAdvDelay: Int64 = 5_000_000
    /// Extended header of ADV_EXT_IND: length and mode, flags, ADI, AuxPtr.
    static let extendedIndication = 1 + 1 + 2 + 3
    /// AUX_ADV_IND's own octets (length and mode, flags, AdvA, ADI) and an AUX_CHAIN_IND's (no AdvA).
    static let auxiliaryHeader = 1 + 1 + 6 + 2, chainHeader = 1 + 1 + 2
    static let auxPointer = 3
    static let maxPayload = 255

    public static func estimate(_ p: HostAdvertisingParameters, dataOctets: Int, profile: RadioProfile) -> AdvertisingEnergy {
        func air(_ octets: Int, _ phy: UInt8) -> Double { Double(RadioEstimate.pduTime(octets, phy: phy, encrypted: false)) / 1000 }
        // Listening for a request: T_IFS, then its preamble and access address (Coded: and the CI and TERM1).
        func listen(_ phy: UInt8) -> Double { 150 + (phy == 3 ? 336 : 40) }
        let ramp = profile.rampMicroseconds * profile.rx1MMilliamps
        let answers = p.scannable || p.connectable
        var charge = 0.0
        if p.legacy {
            let pdu = air(6 + min(dataOctets, 31), 1) * profile.txMilliamps
            charge = Double(p.channels) * (ramp + pdu + (answers ? listen(1) * profile.rx1MMilliamps : 0))
        } else {
            charge = Double(p.channels) * (ramp + air(extendedIndication, p.primaryPHY) * profile.txMilliamps)
            // The data on the secondary channel: AUX_ADV_IND, then chained PDUs while it does not fit.
            var left = dataOctets, header = auxiliaryHeader, first = true
            repeat {
                let fits = left <= maxPayload - header
                let chunk = fits ? left : maxPayload - header - auxPointer
                charge += ramp + air(header + (fits ? 0 : auxPointer) + chunk, p.secondaryPHY) * profile.txMilliamps
                if first && answers { charge += listen(p.secondaryPHY) * profile.rx(phy: p.secondaryPHY) }
                left -= chunk
                header = chainHeader
                first = false
            } while left > 0
        }
        return AdvertisingEnergy(profile: profile.name, nanocoulombsPerEvent: charge,
                                 shortestPeriod: Int64(p.intervalMin) * 625_000 + meanAdvDelay,
                                 longestPeriod: Int64(max(p.intervalMax, p.intervalMin)) * 625_000 + meanAdvDelay)
    }
}

/// This host's advertising, adapter by adapter, from the feed's events.
struct AdvertisingCollector {
    private var adapters: [UInt16: AdvertisingSummary] = [:]
    /// What is on: the feed says nothing of it at the end of the capture.
    private var open: [UInt16: HostAdvertising] = [:]

    mutating func observe(_ event: AuditEvent, at f: FrameRef) {
        func summary(_ a: UInt16, _ change: (inout AdvertisingSummary) -> Void) {
            change(&adapters[a, default: AdvertisingSummary(adapter: a, firstFrame: f.number)])
        }
        switch event {
        case .advertisingParameters(let p):
            summary(p.adapter) { $0.parameters = p }
        case .advertisingData(let o) where o.key.host:
            summary(o.key.adapter) { s in
                if o.scanResponse { s.scanResponseOctets = o.data.count } else { s.dataOctets = o.data.count }
            }
        case .advertisingStarted(let h):
            open[h.adapter] = h
            summary(h.adapter) { s in
                s.periods += 1
                if s.periods == 1 { s.firstFrame = f.number }
            }
        case .advertisingStopped(let h):
            open[h.adapter] = nil
            adapters[h.adapter]?.onTime += max(f.time &- h.start.time, 0)
        default: break
        }
    }

    /// The adapters that advertised, what is still on counted up to `end`.
    mutating func finish(at end: FrameRef?) -> [AdvertisingSummary] {
        for (adapter, h) in open { adapters[adapter]?.onTime += max((end?.time ?? h.start.time) &- h.start.time, 0) }
        open = [:]
        return adapters.values.filter { $0.periods > 0 }.sorted { $0.adapter < $1.adapter }
    }
}
