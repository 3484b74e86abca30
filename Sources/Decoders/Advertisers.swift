#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Wire

/// Aggregates advertising reports per advertiser for a device list. Memory per device is flat:
/// RSSI goes into a fixed histogram and advertising gaps into a fixed ring. The number of devices
/// is capped too: anyone in range can advertise from a new random address in every report, so
/// past `maxTracked` advertisers the rest are only counted (`untracked`).
public final class Advertisers {
    /// Advertisers kept in full detail unless told otherwise. One costs about 1 KiB (the RSSI
    /// histogram, the gap ring, its dictionary entry), up to about 3 KiB with two 248-byte names
    /// and 64 service UUIDs: the table stays under 32 MiB.
    public static let defaultMaxTracked = 10_000
    /// Advertisers past the cap kept in full while they are recent, so one the host connects to
    /// (which follows its advertising closely) keeps its detail; the oldest is counted when a new
    /// one arrives.
    public static let recentKept = 256

    /// User-given UUIDs to test overflow-area bitmaps against, besides those seen in the capture.
    public let candidateUUIDs: [BluetoothUUID]
    /// Advertisers kept in full, besides those the host connected to.
    public let maxTracked: Int
    var order: [BDAddr] = []
    var byAddress: [BDAddr: AdvertiserState] = [:]
    /// Advertisers past the cap that the host connected to, kept in full too (at most `maxTracked`
    /// of them: a crafted capture can make the host connect to anything).
    var promoted = 0
    /// Recent advertisers past the cap, and the order they came in (a ring of `recentKept`).
    var recent: [BDAddr: AdvertiserState] = [:]
    var recentRing: [BDAddr] = []
    var recentNext = 0
    var counted = UntrackedAdvertisers()
    /// 128-bit UUIDs seen anywhere in advertising: overflow-area candidates (kept from tracked
    /// advertisers only, so bounded with them).
    var seen128 = Set<BluetoothUUID>()

    public init(candidateUUIDs: [BluetoothUUID] = [], maxTracked: Int = Advertisers.defaultMaxTracked) {
        self.candidateUUIDs = candidateUUIDs
        self.maxTracked = max(0, maxTracked)
    }

    /// Adds one report, whose data is `data`. A scan response is merged into the device of the same address.
    public func add(_ report: AdvertisingReport, data: Bytes, frame: Int, time: Int64) {
        guard report.syncHandle == nil else { return }  // periodic reports carry no address
        if let d = byAddress[report.address] {
            d.add(report, data: data, frame: frame, time: time, seen128: &seen128)
        } else if order.count &- promoted < maxTracked {
            let d = AdvertiserState(address: report.address, addressType: report.addressType, frame: frame, time: time)
            byAddress[report.address] = d
            order.append(report.address)
            d.add(report, data: data, frame: frame, time: time, seen128: &seen128)
        } else {
            var ignored = Set<BluetoothUUID>()
            recentState(report, frame: frame, time: time).add(report, data: data, frame: frame, time: time, seen128: &ignored)
        }
    }

    /// The recent untracked advertiser of the report's address, made (and the oldest one counted)
    /// when there is none.
    private func recentState(_ report: AdvertisingReport, frame: Int, time: Int64) -> AdvertiserState {
        if let d = recent[report.address] { return d }
        let d = AdvertiserState(address: report.address, addressType: report.addressType, frame: frame, time: time)
        recent[report.address] = d
        if recentRing.count < Advertisers.recentKept {
            recentRing.append(report.address)
        } else {
            // The slot's advertiser may have been promoted already (then it is no longer here).
            if let old = recent.removeValue(forKey: recentRing[recentNext]) { counted.add(old) }
            recentRing[recentNext] = report.address
            recentNext = (recentNext + 1) % Advertisers.recentKept
        }
        return d
    }

    /// Notes that a connection to the address was made (LE Connection Complete, CONNECT_IND).
    public func noteConnection(to address: BDAddr, frame: Int) {
        if let d = byAddress[address] {
            if d.connectionFrame == nil { d.connectionFrame = frame }
            return
        }
        guard promoted < maxTracked, let d = recent.removeValue(forKey: address) else { return }
        d.connectionFrame = frame
        byAddress[address] = d
        order.append(address)
        promoted += 1
    }

    /// Advertisers with full detail.
    public var count: Int { order.count }

    /// Every advertiser seen: those in detail and those only counted.
    public var totalCount: Int { order.count + untracked.advertisers }

    /// What is known of the advertisers past the cap.
    public var untracked: UntrackedAdvertisers {
        var all = counted
        for d in recent.values { all.add(d) }
        return all
    }

    /// One summary per advertiser, in order of first appearance (those promoted by a connection
    /// after the ones tracked from the start).
    public var devices: [DeviceSummary] {
        let candidates = Array(seen128).sorted() + candidateUUIDs
        return order.compactMap { byAddress[$0]?.summary(candidates: candidates) }
    }

    /// Addresses listed at most in a device's `addressesSeen` (a device that changes its address
    /// every 15 minutes uses 96 a day).
    public static let maxAddressesListed = 64

    /// One summary per device: the advertisers whose resolvable private addresses a known IRK
    /// resolves, and the identity address itself when it advertised (also as a controller reports
    /// an address it resolved, address type 2 or 3), are one device named by its identity. The
    /// same as `devices` when no IRK is known.
    public func devices(resolvingWith resolver: AddressResolver) -> [DeviceSummary] {
        guard !resolver.isEmpty else { return devices }
        let candidates = Array(seen128).sorted() + candidateUUIDs
        var groups: [IdentityAddress: [AdvertiserState]] = [:]
        var slots: [Either] = []
        for a in order {
            guard let d = byAddress[a] else { continue }
            guard let id = identity(of: d, resolver) else {
                slots.append(.alone(d))
                continue
            }
            if groups[id] == nil { slots.append(.identity(id)) }
            groups[id, default: []].append(d)
        }
        return slots.compactMap { slot -> DeviceSummary? in
            switch slot {
            case .alone(let d): return d.summary(candidates: candidates)
            case .identity(let id):
                guard let members = groups[id], let key = resolver.key(for: id) else { return nil }
                var s = AdvertiserState.merged(members, as: id).summary(candidates: candidates)
                s.identity = key
                s.addressesSeen = Array(members.prefix(Self.maxAddressesListed).map(\.address))
                s.addressCount = members.count
                return s
            }
        }
    }

    private enum Either {
        case alone(AdvertiserState)
        case identity(IdentityAddress)
    }

    /// The identity an advertiser's address belongs to: resolved from a resolvable private
    /// address, or the identity address itself (HCI address types 2 and 3 are identity addresses
    /// the controller resolved, Vol 4 Part E 7.7.65.2).
    private func identity(of d: AdvertiserState, _ resolver: AddressResolver) -> IdentityAddress? {
        switch d.addressType {
        case 0, 2:
            let id = IdentityAddress(d.address, type: 0)
            return resolver.key(for: id) == nil ? nil : id
        case 1 where !PrivateAddressFunctions.isResolvable(d.address), 3:
            let id = IdentityAddress(d.address, type: 1)
            return resolver.key(for: id) == nil ? nil : id
        case 1:
            return resolver.identity(of: d.address, type: 1)?.identity
        default:
            return nil
        }
    }
}

/// Advertisers past the cap: per address type, how many (estimated, in fixed memory), their
/// reports and RSSI range.
public struct UntrackedAdvertisers: Sendable {
    public struct Group: Sendable {
        public let addressType: UInt8
        /// Distinct addresses, estimated (exact for small counts, within about 1% up to millions).
        public fileprivate(set) var advertisers = 0
        /// True when the estimate saturated: `advertisers` is then a lower bound.
        public fileprivate(set) var atLeast = false
        public fileprivate(set) var reports = 0
        public fileprivate(set) var rssiMin: Int?
        public fileprivate(set) var rssiMax: Int?
        fileprivate var distinct = DistinctCounter()

        fileprivate mutating func add(_ d: AdvertiserState) {
            distinct.insert(d.address.raw)
            (advertisers, atLeast) = distinct.estimate
            reports += d.activity.advertisingReports + d.activity.scanResponses
            if let lo = d.rssi.min { rssiMin = Swift.min(rssiMin ?? lo, lo) }
            if let hi = d.rssi.max { rssiMax = Swift.max(rssiMax ?? hi, hi) }
        }
    }

    /// By address type; at most 256 groups.
    var byType: [UInt8: Group] = [:]

    public init() {}

    mutating func add(_ d: AdvertiserState) {
        // Changed in place: a copy of the group would copy its 256 KiB map.
        byType[d.addressType, default: Group(addressType: d.addressType)].add(d)
    }

    public var groups: [Group] { byType.values.sorted { $0.addressType < $1.addressType } }
    public var advertisers: Int { byType.values.reduce(0) { $0 + $1.advertisers } }
    public var reports: Int { byType.values.reduce(0) { $0 + $1.reports } }
    public var isEmpty: Bool { byType.isEmpty }
}

/// Counts distinct addresses in fixed memory (linear counting over a 2^21-bit map, 256 KiB made on
/// first use): a set of millions of random addresses would cost gigabytes.
struct DistinctCounter: Sendable {
    static let bits = 1 << 21
    var words: [UInt64] = []
    var zeros = DistinctCounter.bits

    mutating func insert(_ v: UInt64) {
        if words.isEmpty { words = [UInt64](repeating: 0, count: DistinctCounter.bits / 64) }
        // splitmix64's finaliser: addresses are anything but uniform.
        var z = v &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        let bit = Int(truncatingIfNeeded: z) & (DistinctCounter.bits - 1)
        let mask: UInt64 = 1 << UInt64(bit & 63)
        if words[bit >> 6] & mask == 0 {
            words[bit >> 6] |= mask
            zeros -= 1
        }
    }

    /// m·ln(m/zeros), rounded; a lower bound once no bit is left unset.
    var estimate: (Int, atLeast: Bool) {
        let m = Double(DistinctCounter.bits)
        guard zeros > 0 else { return (Int(m * log(m)), true) }
        return (Int((m * log(m / Double(zeros))).rounded()), false)
    }
}

/// Running state of one advertiser.
final class AdvertiserState {
    /// A name without its padding: stacks that pad the field with NULs (a fixed-size buffer sent
    /// whole) do not mean them as part of the name. The AD structure keeps its bytes (read -v, JSON).
    static func withoutPadding(_ bytes: [UInt8]) -> [UInt8] {
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes[end - 1] == 0 { end -= 1 }
        return Array(bytes[..<end])
    }

    let address: BDAddr
    var addressType: UInt8
    var activity: AdvertiserActivity
    var completeName: [UInt8]?
    var shortName: [UInt8]?
    var flags: UInt8?
    var appearance: UInt16?
    var uuids: [BluetoothUUID] = []
    var companies: [UInt16] = []
    var txPower: Int8?
    var rssi = RSSIHistogram()
    var intervals = GapRing()
    var connectable = false
    var overflow: OverflowArea?
    var connectionFrame: Int?
    var problems = 0

    init(address: BDAddr, addressType: UInt8, frame: Int, time: Int64) {
        self.address = address
        self.addressType = addressType
        activity = AdvertiserActivity(frame: frame, time: time)
    }

    func add(_ r: AdvertisingReport, data: Bytes, frame: Int, time: Int64, seen128: inout Set<BluetoothUUID>) {
        if let v = r.rssiValue { rssi.add(v) }
        if let gap = activity.report(frame: frame, time: time, scanResponse: r.isScanResponse,
                                     continued: r.dataStatus == .incompleteMore) {
            intervals.add(gap)
        }
        if !r.isScanResponse, r.isConnectable { connectable = true }
        if r.txPowerValue != nil, txPower == nil { txPower = r.txPowerValue }
        guard !data.isEmpty else { return }
        let ad = AdvertisingData(data, legacy: r.isLegacy)
        problems += ad.problemCount
        for s in ad.structures {
            switch s.type {
            case ADType.flags: flags = s.data.first
            case ADType.completeLocalName: if completeName.map({ !$0.elementsEqual(s.data) }) ?? true { completeName = Array(s.data) }
            case ADType.shortenedLocalName: if shortName.map({ !$0.elementsEqual(s.data) }) ?? true { shortName = Array(s.data) }
            case ADType.appearance: appearance = s.data.le16(0)
            case ADType.txPowerLevel: txPower = s.data.first.map { Int8(bitPattern: $0) }
            case ADType.manufacturerSpecific:
                guard let c = s.data.le16(0) else { break }
                if !companies.contains(c) { companies.append(c) }
                if let o = OverflowArea(company: c, data: s.data.dropFirst(2)) { overflow = o }
                if let b = IBeacon(company: c, data: s.data.dropFirst(2)) { seen128.insert(b.proximityUUID) }
            default:
                if let w = ADType.listWidth(s.type) {
                    for u in s.uuids(width: w) { note(u, &seen128) }
                } else if let w = ADType.serviceDataWidth[s.type], s.data.count >= w,
                          let u = BluetoothUUID(littleEndian: s.data.prefix(w)) {
                    note(u, &seen128)
                }
            }
        }
    }

    /// One state for advertisers that are one device (its addresses in order of first
    /// appearance): counts add up, RSSI histograms and interval gaps combine, a value seen once
    /// is kept from the advertiser that sent it last.
    static func merged(_ members: [AdvertiserState], as id: IdentityAddress) -> AdvertiserState {
        let first = members[0]
        let m = AdvertiserState(address: id.address, addressType: id.type, frame: first.activity.firstFrame,
                                time: first.activity.firstSeen)
        for d in members.sorted(by: { $0.activity.lastFrame < $1.activity.lastFrame }) {
            m.activity.merge(d.activity)
            m.completeName = d.completeName ?? m.completeName
            m.shortName = d.shortName ?? m.shortName
            m.flags = d.flags ?? m.flags
            m.appearance = d.appearance ?? m.appearance
            m.txPower = d.txPower ?? m.txPower
            m.overflow = d.overflow ?? m.overflow
            for u in d.uuids where m.uuids.count < 64 && !m.uuids.contains(u) { m.uuids.append(u) }
            for c in d.companies where !m.companies.contains(c) { m.companies.append(c) }
            m.rssi.add(d.rssi)
            for g in d.intervals.gaps { m.intervals.add(g) }
            m.connectable = m.connectable || d.connectable
            if let c = d.connectionFrame { m.connectionFrame = min(m.connectionFrame ?? c, c) }
            m.problems += d.problems
        }
        return m
    }

    func note(_ u: BluetoothUUID, _ seen128: inout Set<BluetoothUUID>) {
        if u.width == 16 { seen128.insert(u) }
        if uuids.count < 64, !uuids.contains(u) { uuids.append(u) }
    }

    func summary(candidates: [BluetoothUUID]) -> DeviceSummary {
        var services = uuids.map { DeviceService(uuid: $0, viaOverflow: false, collidesWith: []) }
        var bits: [Int] = []
        if let o = overflow {
            bits = o.bits
            for m in o.matches(candidates) where !uuids.contains(m.uuid) {
                services.append(DeviceService(uuid: m.uuid, viaOverflow: true, collidesWith: m.collidesWith))
            }
        }
        return DeviceSummary(
            address: address, addressType: addressType,
            completeNameBytes: completeName.map(Self.withoutPadding), shortNameBytes: shortName.map(Self.withoutPadding),
            flags: flags, appearance: appearance, services: services, overflowBits: overflow == nil ? nil : bits,
            companies: companies, txPower: txPower, rssiMin: rssi.min, rssiMedian: rssi.median, rssiMax: rssi.max,
            advertisingReports: activity.advertisingReports, scanResponses: activity.scanResponses,
            firstFrame: activity.firstFrame, lastFrame: activity.lastFrame, firstSeen: activity.firstSeen, lastSeen: activity.lastSeen,
            advertisingInterval: intervals.median, connectable: connectable, connectionFrame: connectionFrame,
            malformedStructures: problems)
    }
}

/// RSSI counts over −127...+20 dBm (the range HCI reports), so median costs no memory growth.
struct RSSIHistogram {
    static let low = -127, high = 20
    var counts = [UInt32](repeating: 0, count: high - low + 1)
    var total = 0

    mutating func add(_ v: Int8) {
        let i = Swift.min(Swift.max(Int(v), RSSIHistogram.low), RSSIHistogram.high) - RSSIHistogram.low
        counts[i] &+= 1
        total += 1
    }

    /// Adds another histogram's counts.
    mutating func add(_ other: RSSIHistogram) {
        for i in counts.indices { counts[i] &+= other.counts[i] }
        total += other.total
    }

    var min: Int? { counts.firstIndex { $0 > 0 }.map { $0 + RSSIHistogram.low } }
    var max: Int? { counts.lastIndex { $0 > 0 }.map { $0 + RSSIHistogram.low } }
    /// Lower median.
    var median: Int? {
        guard total > 0 else { return nil }
        let target = (total + 1) / 2
        var seen = 0
        for (i, c) in counts.enumerated() {
            seen += Int(c)
            if seen >= target { return i + RSSIHistogram.low }
        }
        return nil
    }
}

/// The most recent gaps between advertising events (ns), for a median interval.
struct GapRing {
    static let capacity = 64
    var gaps: [Int64] = []
    var next = 0

    mutating func add(_ gap: Int64) {
        if gaps.count < GapRing.capacity {
            gaps.append(gap)
        } else {
            gaps[next] = gap
            next = (next + 1) % GapRing.capacity
        }
    }

    /// Lower median.
    var median: Int64? {
        guard !gaps.isEmpty else { return nil }
        let s = gaps.sorted()
        return s[(s.count - 1) / 2]
    }
}

/// A service UUID of a device; `viaOverflow` when only Apple's overflow-area bitmap suggests it.
public struct DeviceService: Sendable, Equatable {
    public let uuid: BluetoothUUID
    public let viaOverflow: Bool
    /// Other candidates with the same overflow bit (the match is ambiguous).
    public let collidesWith: [BluetoothUUID]
}

/// Everything seen of one advertiser.
public struct DeviceSummary: Sendable {
    public let address: BDAddr
    public let addressType: UInt8
    /// Names as the device sent them (possibly invalid UTF-8).
    public let completeNameBytes: [UInt8]?
    public let shortNameBytes: [UInt8]?
    public let flags: UInt8?
    public let appearance: UInt16?
    public let services: [DeviceService]
    /// Set bits of an overflow area, when the device sent one.
    public let overflowBits: [Int]?
    public let companies: [UInt16]
    public let txPower: Int8?
    public let rssiMin: Int?
    public let rssiMedian: Int?
    public let rssiMax: Int?
    public let advertisingReports: Int
    public let scanResponses: Int
    public let firstFrame: Int
    public let lastFrame: Int
    /// Nanoseconds since the Unix epoch.
    public let firstSeen: Int64
    public let lastSeen: Int64
    /// Median gap between advertising events, in nanoseconds.
    public let advertisingInterval: Int64?
    public let connectable: Bool
    /// Frame of the first connection to the device after it advertised.
    public let connectionFrame: Int?
    public let malformedStructures: Int
    /// The identity the device's addresses resolved to, with the IRK that resolved them; nil
    /// when no known IRK is the device's.
    public internal(set) var identity: IdentityKey? = nil
    /// The addresses the device advertised from (the first `Advertisers.maxAddressesListed`), and
    /// how many there were.
    public internal(set) var addressesSeen: [BDAddr] = []
    public internal(set) var addressCount = 0

    public var randomKind: RandomAddressKind? { addressType == 0x01 ? address.randomKind : nil }
    public var completeName: String? { completeNameBytes.map { String(decoding: $0, as: UTF8.self) } }
    public var shortName: String? { shortNameBytes.map { String(decoding: $0, as: UTF8.self) } }
    public var name: String? { completeName ?? shortName }
    public var nameBytes: [UInt8]? { completeNameBytes ?? shortNameBytes }
    public var connected: Bool { connectionFrame != nil }

    public var fields: [Field] {
        var addrChildren = [Field("Address Type", AdvertisingReport.addressType(addressType))]
        if let k = randomKind { addrChildren.append(Field("Random Address Kind", .text(k.rawValue))) }
        if let id = identity { addrChildren.append(Field("Identity", .text(id.identity.kind + ", IRK from " + id.source))) }
        var out = [Field("Address", .address(address), addrChildren)]
        if identity != nil {
            var seen = addressesSeen.map(\.description).joined(separator: ", ")
            if addressCount > addressesSeen.count { seen += " and \(addressCount - addressesSeen.count) more" }
            out.append(Field("Addresses Seen", .text(seen)))
        }
        if let n = completeNameBytes { out.append(Field("Complete Local Name", .received(n[...]))) }
        if let n = shortNameBytes { out.append(Field("Shortened Local Name", .received(n[...]))) }
        if let f = flags { out.append(ADValue.flags([f][...]).first ?? Field.u8("Flags", f)) }
        if let a = appearance { out.append(ADValue.appearanceField(a)) }
        for s in services {
            var f = ADValue.uuidField("Service UUID", s.uuid)
            if s.viaOverflow {
                f.children.append(Field("Source", .text("Apple overflow area (bit \(OverflowArea.bit(for: s.uuid)))")))
                if !s.collidesWith.isEmpty {
                    f.children.append(Field("Collision", .text("same bit as " + s.collidesWith.map(\.description).joined(separator: ", "))))
                }
            }
            out.append(f)
        }
        if let bits = overflowBits { out.append(Field("Overflow Area Bits", .text(bits.map(String.init).joined(separator: " ")))) }
        for c in companies {
            out.append(Field("Manufacturer", .company(c) ?? .named(UInt64(c), hex: 4, "Unknown")))
        }
        if let t = txPower { out.append(Field("TX Power", .signed(Int64(t), unit: "dBm"))) }
        if let lo = rssiMin, let med = rssiMedian, let hi = rssiMax {
            out.append(Field("RSSI", .signed(Int64(med), unit: "dBm"),
                             [Field("Min", .signed(Int64(lo), unit: "dBm")), Field("Median", .signed(Int64(med), unit: "dBm")),
                              Field("Max", .signed(Int64(hi), unit: "dBm"))]))
        }
        out.append(Field.dec("Advertising Reports", advertisingReports))
        out.append(Field.dec("Scan Responses", scanResponses))
        out.append(Field("First Seen", .int(firstSeen), [Field.dec("Frame", firstFrame)]))
        out.append(Field("Last Seen", .int(lastSeen), [Field.dec("Frame", lastFrame)]))
        if let i = advertisingInterval {
            out.append(Field("Advertising Interval", .quantity(UInt64(max(0, i)), hex: 0, Double(i) / 1_000_000, unit: "ms")))
        }
        out.append(Field("Connectable", .bool(connectable)))
        out.append(Field("Connected", .bool(connected), connectionFrame.map { [Field.dec("Frame", $0)] } ?? []))
        if malformedStructures > 0 { out.append(Field("Malformed AD Structures", .int(Int64(malformedStructures)))) }
        return out
    }
}
