import XCTest
@testable import Decoders
@testable import Report
import Wire

/// Builds synthetic event streams: each event gets the next frame number, the given time and a
/// made-up file position, so findings can be checked frame by frame.
struct EventStream {
    private(set) var recorded: [(AuditEvent, FrameRef)] = []
    private var nextID = 1
    /// Frame numbers given so far (a scan command that changes nothing takes one too).
    private var frames = 0
    /// Scans as the feed's scan model makes them (without its restart gap), and which scan last
    /// reported each advertiser.
    private var scans: [UInt16: Scan] = [:]
    private var scanCount = 0
    /// Reads told from continuations as the audit feed does.
    private var reads = ConnectionTable<ReadTracker>(capacity: 64)
    /// Advertisers as the feed's model keeps them.
    private var advertisers = AdvertiserModel()
    /// This host's advertising, started and stopped as the feed's model does.
    private var advertising: [UInt16: HostAdvertising] = [:]

    /// Adds an event at `t` seconds; returns its frame number.
    @discardableResult
    mutating func add(_ t: Double, _ e: AuditEvent) -> Int {
        var e = e
        if case .att(let c, var a) = e, ReadTracker.looksAt(a) {
            a.newRead = reads.update(c.id, default: ReadTracker()) { $0.classify(a) }
            e = .att(c, a)
        }
        var counted: (adapter: UInt16, address: BDAddr, reports: Int)?
        if case .advertisingData(let o) = e {
            if let r = o.report {
                let a = o.key.adapter
                let scan = scans[a].map { (number: $0.number, app: $0.owner.kind == .app) }
                let u = advertisers.received(o.key, data: o.data, o.data.indices, scanResponse: o.scanResponse, legacy: o.legacy,
                                             scan: scan)
                if scan != nil, !o.scanResponse, let address = o.key.address { counted = (a, address, u.reportsInScan) }
                e = .advertisingData(u.observation(o.key, data: o.data, scanResponse: o.scanResponse, legacy: o.legacy,
                                                   addressType: r.addressType, rssi: r.rssi, scan: scan?.number))
            } else {
                e = .advertisingData(advertisers.hostData(o.key, data: o.data, scanResponse: o.scanResponse, legacy: o.legacy))
            }
        }
        // A central connecting stops this host's advertising first, as in the feed.
        if case .connected(let c) = e, c.isCentral == false, c.isLE, let a = advertising.removeValue(forKey: c.adapter) {
            add(t, .advertisingStopped(a))
        }
        frames += 1
        let n = frames
        let f = FrameRef(number: n, time: Int64((t * 1e9).rounded()), fileOffset: Int64(24 + n * 100), fileLength: 40)
        // What the scan brought in, as the feed's scan model counts it.
        if let c = counted { scans[c.adapter]?.yield.add(from: c.address, reports: c.reports, at: f) }
        recorded.append((e, f))
        if case .connected(let c) = e {
            // The feed says whose a connection is in the same frame.
            let found = c.peer.flatMap { advertisers.advertiser(AdvertiserKey(adapter: c.adapter, address: $0, host: false)) }
            recorded.append((.connectionOwner(c, ConnectionOrigin(owner: .unknown, foundIn: found?.foundIn)), f))
        }
        return n
    }

    /// A discovery response listing `found`: its `.discovery`, then its `.att`, in one frame as the
    /// feed says them.
    @discardableResult
    mutating func add(_ t: Double, discovery a: ATTObservation, on c: Connection, found: [BluetoothUUID]) -> Int {
        let n = add(t, .att(c, a))
        let d = DiscoveryObservation(origin: a.origin, opcode: a.opcode, service: a.service, found: found)
        recorded.insert((.discovery(c, d), recorded[recorded.count - 1].1), at: recorded.count - 1)
        return n
    }

    /// LE Set (Extended) Scan Enable at `t` seconds, turned into scans as the feed does: an enable
    /// while on with the same duplicate filter changes nothing, with another ends the scan and
    /// starts a new one.
    @discardableResult
    mutating func scanEnable(_ t: Double, adapter: UInt16 = 0, enabled: Bool, filterDuplicates: UInt8 = 1,
                             extended: Bool = false, owner: ActivityOwner = .unknown) -> Int {
        let next = frames + 1
        let f = FrameRef(number: next, time: Int64((t * 1e9).rounded()), fileOffset: Int64(24 + next * 100), fileLength: 40)
        if let s = scans[adapter], !enabled || s.filterDuplicates != filterDuplicates || s.owner != owner {
            scans[adapter] = nil
            recorded.append((.scanStopped(s), f))
        }
        if enabled, scans[adapter] == nil {
            scanCount += 1
            let s = Scan(number: scanCount, adapter: adapter, start: f, filterDuplicates: filterDuplicates, extended: extended,
                         owner: owner)
            scans[adapter] = s
            recorded.append((.scanStarted(s), f))
        }
        frames = next
        return next
    }

    /// LE Set Advertising Enable at `t` seconds, as `HostAdvertisingModel` turns it into events.
    mutating func advertisingEnable(_ t: Double, adapter: UInt16 = 0, enabled: Bool) {
        if enabled, advertising[adapter] == nil {
            let f = FrameRef(number: frames + 1, time: Int64((t * 1e9).rounded()))
            let a = HostAdvertising(adapter: adapter, start: f)
            advertising[adapter] = a
            add(t, .advertisingStarted(a))
        } else if !enabled, let a = advertising.removeValue(forKey: adapter) {
            add(t, .advertisingStopped(a))
        }
    }

    mutating func connection(handle: UInt16 = 0x0040, peer: UInt64 = 0xC0FF_EE00_0001, central: Bool? = true,
                             adapter: UInt16 = 0) -> Connection {
        defer { nextID += 1 }
        let c = Connection(id: nextID, adapter: adapter, handle: handle, isLE: true, frame: frames + 1, time: 0)
        c.peer = BDAddr(peer)
        c.peerAddressType = 1
        c.isCentral = central
        return c
    }

    var last: FrameRef? { recorded.last?.1 }

    /// The events as the feed hands them on: those added, then at the end of the capture each scan
    /// still on, as it stands (`scanAtEnd`), in adapter order.
    var items: [(AuditEvent, FrameRef)] {
        guard let end = recorded.last?.1 else { return recorded }
        return recorded + scans.sorted { $0.key < $1.key }.map { (AuditEvent.scanAtEnd($0.value), end) }
    }
}

func att(_ c: Connection, _ origin: Side, _ op: UInt8, _ kind: ATTKind, handle: UInt16? = nil,
         end: UInt16? = nil, type: UInt16? = nil, length: Int = 0, mtu: Int = 23, characteristic: UInt16? = nil,
         service: UInt16? = nil, properties: UInt8? = nil, cccd: UInt16? = nil) -> AuditEvent {
    .att(c, ATTObservation(origin: origin, opcode: ATTOpcode(op), kind: kind, handle: handle, endHandle: end,
                           attributeType: type.map { BluetoothUUID(uuid16: $0) }, valueLength: length, mtu: mtu,
                           characteristic: characteristic.map { BluetoothUUID(uuid16: $0) },
                           service: service.map { BluetoothUUID(uuid16: $0) }, properties: properties,
                           isCCCD: cccd != nil, cccdValue: cccd))
}

/// Runs only `rule` (every other rule off) over the stream.
func audit(_ stream: EventStream, only rule: String, configure: (inout AuditConfiguration) -> Void = { _ in }) -> [Finding] {
    var config = AuditConfiguration()
    for t in AuditRules.all where t.info.id != rule { config.rules[t.info.id] = RuleOverride(enabled: false) }
    configure(&config)
    let auditor = Auditor(configuration: config, capturePath: "test.pcap")
    for (e, f) in stream.items { auditor.observe(e, at: f) }
    return auditor.finish()
}

/// Asserts exactly one finding of `rule` with that severity, evidence frames and message fragments.
func assertOne(_ findings: [Finding], _ rule: String, _ severity: Severity, frames: [Int], decisive: Int? = nil,
               message parts: [String], file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(findings.count, 1, "findings: " + findings.map { $0.rule + ": " + $0.message }.joined(separator: " | "),
                   file: file, line: line)
    guard let f = findings.first else { return }
    XCTAssertEqual(f.rule, rule, file: file, line: line)
    XCTAssertEqual(f.severity, severity, file: file, line: line)
    XCTAssertEqual(f.evidence.map(\.number), frames, file: file, line: line)
    if let d = decisive { XCTAssertEqual(f.decisive.number, d, file: file, line: line) }
    for p in parts { XCTAssertTrue(f.message.contains(p), "'" + f.message + "' lacks '" + p + "'", file: file, line: line) }
    XCTAssertEqual(f.fingerprint.count, 16, file: file, line: line)
}

func assertNone(_ findings: [Finding], file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertTrue(findings.isEmpty, findings.map { $0.rule + ": " + $0.message }.joined(separator: " | "), file: file, line: line)
}

let peerA = BDAddr(0xC0FF_EE00_0001)

extension AuditEvent {
    /// Advertising data as the feed reports it, its advertiser's facts made again by `EventStream`.
    static func advertisingData(adapter: UInt16, advertiser: BDAddr?, data: Bytes, scanResponse: Bool, legacy: Bool,
                                sentByHost: Bool) -> AuditEvent {
        var model = AdvertiserModel()
        let key = AdvertiserKey(adapter: adapter, address: advertiser, host: sentByHost)
        if sentByHost { return .advertisingData(model.hostData(key, data: data, scanResponse: scanResponse, legacy: legacy)) }
        return .advertisingData(model.received(key, data: data, data.indices, scanResponse: scanResponse, legacy: legacy, scan: nil)
            .observation(key, data: data, scanResponse: scanResponse, legacy: legacy, addressType: 0, rssi: nil, scan: nil))
    }
}

extension AuditEvent {
    /// An advertising report with no data, as `EventStream.add` completes it from its scans.
    static func advertisingReport(adapter: UInt16, address: BDAddr, addressType: UInt8, rssi: Int8?,
                                  scanResponse: Bool) -> AuditEvent {
        .advertisingData(AdvertisingDataObservation(
            key: AdvertiserKey(adapter: adapter, address: address, host: false), data: [], scanResponse: scanResponse,
            legacy: true, facts: ADFacts([], scanResponse: scanResponse, legacy: true), new: [], advertiser: Advertiser(),
            report: ReceivedReport(addressType: addressType, rssi: rssi)))
    }
}
