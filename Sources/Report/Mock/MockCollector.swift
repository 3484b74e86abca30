import Decoders
import Wire

/// Gathers, frame by frame, what `MockDevice` needs beyond the rebuilt GATT databases: every
/// value an attribute took over the capture (the databases keep only the last), the timing of
/// notifications and indications, and the raw advertising data of each advertiser.
///
/// Values are taken from the databases themselves after each ATT PDU, so a value is whatever
/// `gatt` would show as the last value at that moment (long reads and long writes reassembled,
/// writes once confirmed): nothing is decoded twice.
public final class MockCollector {
    /// Distinct values kept per attribute, and notifications or indications per characteristic:
    /// enough to replay a session, small enough for a script someone reads.
    public static let maxValues = 64
    public static let maxEmissions = 1000
    /// Bytes of values and emissions kept over all peers: a crafted capture with thousands of
    /// handles cannot make the collector hold gigabytes.
    public static let maxStoredBytes = 32 << 20

    struct Emission { var handle: UInt16; var frame: Int; var time: Int64; var connection: Int; var value: [UInt8]; var indication: Bool }
    struct Subscription { var cccd: UInt16; var frame: Int; var time: Int64; var connection: Int }

    final class PeerLog {
        var history: [UInt16: [[UInt8]]] = [:]
        /// The value last recorded per handle, and its frame: a change shows a new value.
        var last: [UInt16: (frame: Int, bytes: [UInt8])] = [:]
        /// Index in `history` of a value appended by the latest read, which a Read Blob continues.
        var partial: [UInt16: Int] = [:]
        var emissions: [Emission] = []
        var emissionCounts: [UInt16: Int] = [:]
        var subscriptions: [Subscription] = []
        var connectionStart: [Int: Int64] = [:]
        var capped: Set<UInt16> = []

        /// Returns the bytes newly kept.
        func record(_ h: UInt16, _ bytes: [UInt8], continuing: Bool, room: Bool) -> Int {
            var added = 0
            var list = history[h, default: []]
            if continuing, let i = partial[h], i == list.count - 1, bytes.starts(with: list[i]) {
                added -= list.removeLast().count // the first piece of this long value
            }
            partial[h] = nil
            if !list.contains(bytes) {
                if list.count < MockCollector.maxValues && room {
                    list.append(bytes)
                    added += bytes.count
                    partial[h] = list.count - 1
                } else {
                    capped.insert(h)
                }
            }
            history[h] = list
            return added
        }
    }

    struct Advertising { var data: [UInt8]?; var scanResponse: [UInt8]? }

    let gatt: GATTStore<GATTServer>
    var peers: [PeerKey: PeerLog] = [:]
    var advertising: [BDAddr: Advertising] = [:]
    var storedBytes = 0
    var room: Bool { storedBytes < MockCollector.maxStoredBytes }

    public init(gatt: GATTStore<GATTServer>) { self.gatt = gatt }

    public func add(_ d: Decoded) {
        if case .event(0x3E) = d.hci, case let params = d.hciParameters, let sub = params.byte(0), AdvertisingReports.isReport(subevent: sub) {
            AdvertisingReports.forEach(subevent: sub, params.from(1)) { r, reports in advertised(r, r.data(in: reports)) }
        }
        if let r = d.linkLayerReport { advertised(r, r.data(in: d.packet.payload)) }
        guard case .att(let r, _)? = d.upper, let c = d.connection else { return }
        // Only PDUs that concern the peer's database: its answers and what it sends on its own,
        // and what this host asks of it.
        let kind = r.pdu.kind
        switch (r.side, kind) {
        case (.remote, .response), (.remote, .notification), (.remote, .indication), (.local, .request), (.local, .command): break
        default: return
        }
        let key = c.peerKey
        let log = peers[key] ?? PeerLog()
        peers[key] = log
        let time = d.packet.timestamp
        if log.connectionStart[c.id] == nil { log.connectionStart[c.id] = c.createdTime ?? time }
        let db = gatt.database(for: .peer(key))
        var seen = Set<UInt16>()
        for e in r.entries {
            let h = e.attribute.handle
            if (kind == .notification || kind == .indication), let v = e.value {
                if log.emissionCounts[h, default: 0] < MockCollector.maxEmissions && room {
                    log.emissionCounts[h, default: 0] += 1
                    storedBytes += v.count
                    log.emissions.append(Emission(handle: h, frame: d.packet.number, time: time, connection: c.id, value: Array(v),
                                                  indication: kind == .indication))
                } else {
                    log.capped.insert(h)
                }
            }
            guard seen.insert(h).inserted, let v = db.lastValue(h) else { continue }
            if let prev = log.last[h], prev.frame == v.frame, prev.bytes == v.bytes { continue }
            log.last[h] = (v.frame, v.bytes)
            if e.attribute.role == .descriptor, e.attribute.uuid?.uuid16 == 0x2902 {
                if v.bytes.first.map({ $0 & 3 != 0 }) == true, room {
                    storedBytes += 32
                    log.subscriptions.append(Subscription(cccd: h, frame: d.packet.number, time: time, connection: c.id))
                }
                continue
            }
            storedBytes += log.record(h, v.bytes, continuing: r.pdu.opcode == .readBlobResponse, room: room)
        }
    }

    private func advertised(_ r: AdvertisingReport, _ data: Bytes) {
        guard r.dataStatus == .complete, !data.isEmpty else { return }
        var a = advertising[r.address] ?? Advertising()
        if r.isScanResponse { a.scanResponse = Array(data) } else { a.data = Array(data) }
        advertising[r.address] = a
    }

    /// Peers whose database the capture shows, in the order they first appeared, and whether
    /// any service of theirs was discovered.
    public var peerDatabases: [(peer: PeerKey, database: GATTDatabase, discovered: Bool)] {
        gatt.databases.compactMap { entry in
            guard let p = entry.key.peer else { return nil }
            return (p, entry.database, !entry.database.serviceTree.isEmpty)
        }
    }

    /// Whether an address was seen advertising.
    public func advertised(_ a: BDAddr) -> Bool { advertising[a] != nil }

    /// The stand-in for `peer`, from its database and what was gathered.
    public func device(_ peer: PeerKey, database: GATTDatabase, advertiser: DeviceSummary?) -> MockDevice? {
        // A capture that starts mid-connection never names the peer: a random static address stands in.
        let address = peer.address ?? BDAddr(0xC0FF_EE00_0001)
        let log = peers[peer] ?? PeerLog()
        let services = database.serviceTree
        let adv = peer.address.flatMap { advertising[$0] }
        // GAP Device Name: discovered, or read by its UUID without discovery (as iOS does on
        // every connection, its database cached).
        let deviceName = (services.lazy.flatMap(\.characteristics).first { $0.uuid.uuid16 == 0x2A00 }?.lastValue
            ?? database.orphanCharacteristics.first { $0.uuid.uuid16 == 0x2A00 }?.lastValue
            ?? database.undiscoveredValues.first { $0.type?.uuid16 == 0x2A00 }?.value)
            .map { String(decoding: $0.bytes, as: UTF8.self) }
        return MockDevice(
            address: address, addressKnown: peer.address != nil, addressType: peer.address == nil ? 1 : peer.type,
            name: advertiser?.completeName ?? advertiser?.shortName ?? deviceName,
            advertisingData: adv?.data, scanResponseData: adv?.scanResponse,
            advertisingInterval: advertiser?.advertisingInterval,
            services: services, values: log.history,
            emissions: emissions(log, services), capped: log.capped)
    }

    /// Each emission's delay: since the previous one of its characteristic in the same
    /// connection, else since the subscription that enabled it, else since the connection began.
    func emissions(_ log: PeerLog, _ services: [GATTService]) -> [UInt16: [MockEmission]] {
        var cccdOf: [UInt16: UInt16] = [:]
        for s in services {
            for c in s.characteristics {
                if let d = c.descriptors.first(where: { $0.uuid.uuid16 == 0x2902 }) { cccdOf[c.valueHandle] = d.handle }
            }
        }
        var previous: [UInt16: (connection: Int, time: Int64)] = [:]
        var out: [UInt16: [MockEmission]] = [:]
        // Both lists are in frame order: one sweep keeps the latest subscription per CCCD.
        var subscribed: [UInt16: Subscription] = [:]
        var next = 0
        for e in log.emissions {
            while next < log.subscriptions.count, log.subscriptions[next].frame <= e.frame {
                subscribed[log.subscriptions[next].cccd] = log.subscriptions[next]
                next += 1
            }
            var anchor = log.connectionStart[e.connection] ?? e.time
            if let cccd = cccdOf[e.handle], let s = subscribed[cccd], s.connection == e.connection {
                anchor = max(anchor, s.time)
            }
            if let p = previous[e.handle], p.connection == e.connection { anchor = max(anchor, p.time) }
            previous[e.handle] = (e.connection, e.time)
            let delay = Double(max(0, e.time - anchor)) / 1e9
            out[e.handle, default: []].append(MockEmission(delay: delay, value: e.value, indication: e.indication))
        }
        return out
    }
}
