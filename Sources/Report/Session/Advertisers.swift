import Decoders
import Wire

/// The AD structures of advertising or scan-response data (Core Vol 3 Part C 11: length, type,
/// value), walked without decoding the values.
enum ADWalk {
    /// Calls `body` with each structure's type and the indices of its value in `data`; returns the
    /// offset of the first structure whose length runs past the data, or nil when the data is well
    /// formed. A zero length ends the data early (what follows is padding). Offsets are from the
    /// start of the data: `data`, or its `range` (walked in place, with no slice to retain).
    @discardableResult
    static func walk(_ data: borrowing Bytes, in range: Range<Int>? = nil,
                     _ body: (_ type: UInt8, _ value: Range<Int>) -> Void) -> Int? {
        let start = range?.lowerBound ?? data.startIndex, end = range?.upperBound ?? data.endIndex
        var i = start
        while i < end {
            let length = Int(data[i])
            if length == 0 { return nil }
            guard length <= end &- i &- 1 else { return i &- start }
            // Indices, not a slice: a slice per structure is a retain and a release of the data.
            // Wrapping and unchecked: the guard above keeps i + 1 + length within the data.
            body(data[i &+ 1], Range(uncheckedBounds: (i &+ 2, i &+ 1 &+ length)))
            i &+= 1 &+ length
        }
        return nil
    }

    /// Apple's "overflow area": manufacturer data 0x004C, type 0x01, then a 16-byte bitmap of
    /// hashed service UUIDs that only explicit scanners on Apple devices match. `value` indexes
    /// `data` (no slice: every manufacturer structure is asked).
    static func isAppleOverflowArea(_ type: UInt8, _ data: Bytes, _ value: Range<Int>) -> Bool {
        guard type == 0xFF, value.count >= 19 else { return false }
        let i = value.lowerBound
        return data[i] == 0x4C && data[i &+ 1] == 0x00 && data[i &+ 2] == 0x01
    }
}

/// What one piece of advertising or scan-response data shows that the audit judges, found in one
/// walk of its AD structures. Offsets are from the start of the data (at most 1,650 bytes).
public struct ADFacts: Sendable {
    public struct Kinds: OptionSet, Sendable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        /// Legacy data over 31 bytes, in advertising data or in a scan response.
        public static let tooLong = Self(rawValue: 1 << 0)
        public static let tooLongScanResponse = Self(rawValue: 1 << 1)
        /// An AD structure whose length runs past the data.
        public static let malformed = Self(rawValue: 1 << 2)
        public static let malformedScanResponse = Self(rawValue: 1 << 3)
        /// A list of service UUIDs marked incomplete with no room left for one more.
        public static let incompleteList = Self(rawValue: 1 << 4)
        /// Apple's overflow area in manufacturer data.
        public static let overflowArea = Self(rawValue: 1 << 5)
        /// A Shortened Local Name (AD 0x08), a Complete Local Name (AD 0x09).
        public static let shortenedName = Self(rawValue: 1 << 6)
        public static let completeName = Self(rawValue: 1 << 7)
    }

    public private(set) var kinds: Kinds = []
    /// The structure that runs past the data, and the length it claims.
    public private(set) var faultOffset: UInt16 = 0
    public private(set) var faultLength: UInt8 = 0
    /// The first incomplete list that overflowed: its value, and the width of its UUIDs in bytes.
    public private(set) var listOffset: UInt16 = 0
    public private(set) var listLength: UInt8 = 0
    public private(set) var listWidth: UInt8 = 0
    /// The first overflow area, and how many of its 128 bits are set.
    public private(set) var overflowOffset: UInt16 = 0
    public private(set) var overflowBits: UInt8 = 0
    /// The last Shortened Local Name's value.
    public private(set) var nameOffset: UInt16 = 0
    public private(set) var nameLength: UInt8 = 0

    public init(_ data: borrowing Bytes, scanResponse: Bool, legacy: Bool) {
        self.init(data, data.indices, scanResponse: scanResponse, legacy: legacy)
    }

    /// The facts of the data at `range` in `data`. One pass notes the types present and the room
    /// used; the structures whose place and length are facts (incomplete lists, a shortened name,
    /// Apple's overflow area) are rare, and only data holding one is walked again for them.
    public init(_ data: borrowing Bytes, _ range: Range<Int>, scanResponse: Bool, legacy: Bool) {
        var types: UInt64 = 0
        var overflowArea = false
        var used = 0
        let fault = ADWalk.walk(data, in: range) { type, value in
            used &+= 2 &+ value.count
            if type < 64 {
                types |= 1 << type
            } else if !overflowArea {
                overflowArea = ADWalk.isAppleOverflowArea(type, data, value)
            }
        }
        if types & 1 << ADType.completeLocalName != 0 { kinds.insert(.completeName) }
        if let f = fault {
            kinds.insert(scanResponse ? .malformedScanResponse : .malformed)
            faultOffset = UInt16(truncatingIfNeeded: f)
            faultLength = data[range.lowerBound &+ f]
        }
        if legacy && range.count > 31 { kinds.insert(scanResponse ? .tooLongScanResponse : .tooLong) }
        if overflowArea || types & Self.placedTypes != 0 {
            // An incomplete list says UUIDs were left out; it is an overflow only when they were
            // left out for want of room: no space for one more of its width.
            let room = (legacy ? AdvertisingData.legacyMaximum : AdvertisingData.extendedMaximum) - used
            place(data, range, room: room)
        }
    }

    /// Incomplete service lists and a Shortened Local Name: the types whose structures `place` finds.
    private static let placedTypes: UInt64 = 1 << ADType.incomplete16 | 1 << ADType.incomplete32
        | 1 << ADType.incomplete128 | 1 << ADType.shortenedLocalName

    /// Finds the first incomplete list that overflowed (`room` octets were left), the last
    /// Shortened Local Name and the first overflow area.
    private mutating func place(_ data: borrowing Bytes, _ range: Range<Int>, room: Int) {
        let start = range.lowerBound
        // The first incomplete list of each width (16, 32, 128 bits); the first of those that
        // overflowed counts.
        var l16: (UInt16, UInt8)?, l32: (UInt16, UInt8)?, l128: (UInt16, UInt8)?
        ADWalk.walk(data, in: range) { type, value in
            let at = UInt16(truncatingIfNeeded: value.lowerBound &- start)
            switch type {
            case ADType.incomplete16: if l16 == nil { l16 = (at, UInt8(truncatingIfNeeded: value.count)) }
            case ADType.incomplete32: if l32 == nil { l32 = (at, UInt8(truncatingIfNeeded: value.count)) }
            case ADType.incomplete128: if l128 == nil { l128 = (at, UInt8(truncatingIfNeeded: value.count)) }
            case ADType.shortenedLocalName:
                kinds.insert(.shortenedName)
                nameOffset = at
                nameLength = UInt8(truncatingIfNeeded: value.count)
            case ADType.manufacturerSpecific where !kinds.contains(.overflowArea) && ADWalk.isAppleOverflowArea(type, data, value):
                kinds.insert(.overflowArea)
                overflowOffset = at
                var bits = 0
                for b in data[value].dropFirst(3).prefix(16) { bits += b.nonzeroBitCount }
                overflowBits = UInt8(bits)
            default: break
            }
        }
        func consider(_ list: (UInt16, UInt8)?, width: UInt8) {
            guard room < Int(width), let (offset, length) = list,
                  !kinds.contains(.incompleteList) || offset < listOffset else { return }
            kinds.insert(.incompleteList)
            listOffset = offset
            listLength = length
            listWidth = width
        }
        consider(l16, width: 2)
        consider(l32, width: 4)
        consider(l128, width: 16)
    }

    /// The service UUIDs of the incomplete list that overflowed (the first eight).
    public func listedUUIDs(in data: Bytes) -> [BluetoothUUID] {
        guard kinds.contains(.incompleteList) else { return [] }
        let width = Int(listWidth)
        var i = data.startIndex + Int(listOffset)
        let end = i + Int(listLength)
        var listed: [BluetoothUUID] = []
        while i + width <= end, listed.count < 8 {
            if let u = BluetoothUUID(littleEndian: data[i..<(i + width)]) { listed.append(u) }
            i += width
        }
        return listed
    }

    /// The last Shortened Local Name, as text.
    public func shortenedName(in data: Bytes) -> String {
        let i = data.startIndex + Int(nameOffset)
        return String(decoding: data[i..<(i + Int(nameLength))], as: UTF8.self)
    }
}

/// Who set or sent advertising data: this host's controller or a remote advertiser.
public struct AdvertiserKey: Hashable, Sendable {
    public var adapter: UInt16
    /// The remote advertiser's address; nil for this host.
    public var address: BDAddr?
    public var host: Bool

    public init(adapter: UInt16, address: BDAddr?, host: Bool) {
        self.adapter = adapter
        self.address = host ? nil : address
        self.host = host
    }

    var subject: FindingSubject {
        host ? .host(adapter: adapter) : .advertiser(adapter: adapter, address: address)
    }

    /// One word hashed (`WordHash`): the table is looked up for every advertising report.
    private var word: UInt64 { (address?.raw ?? 0) | UInt64(adapter) << 48 }
    public func hash(into hasher: inout Hasher) { hasher.combine(word) }
    public func _rawHashValue(seed: Int) -> Int { WordHash.value(word, seed: seed) }
}

/// What an advertiser showed over the capture so far: the facts of its data, and the scans that
/// reported it.
public struct Advertiser: Sendable {
    /// Every fact any of its data showed.
    public internal(set) var seen: ADFacts.Kinds = []
    /// A scan response came once its name was known (then what the scan response holds is known).
    public internal(set) var scanResponseAfterName = false
    /// The scan that last reported it, and the app's scan that last did (by number).
    public internal(set) var foundIn: Int?
    public internal(set) var foundByApp: Int?
    /// Its reports in scan `foundIn`, scan responses aside.
    public internal(set) var reportsInScan = 0
}

/// How an advertising report came in, its data aside.
public struct ReceivedReport: Sendable {
    public var addressType: UInt8
    public var rssi: Int8?
    /// The scan on the adapter when it came, by number.
    public var scan: Int?
    /// The advertiser's reports in that scan so far, this one included; a scan response answers
    /// this host's scan request, so it is no report of its own and counts none.
    public var reportsInScan: Int

    public init(addressType: UInt8, rssi: Int8?, scan: Int? = nil, reportsInScan: Int = 0) {
        self.addressType = addressType
        self.rssi = rssi
        self.scan = scan
        self.reportsInScan = reportsInScan
    }
}

/// One piece of advertising or scan-response data, with its facts and its advertiser's: data this
/// host set, or a report received.
public struct AdvertisingDataObservation {
    public var key: AdvertiserKey
    /// A slice of the frame: who keeps any of it copies what it keeps.
    public var data: Bytes
    public var scanResponse: Bool
    /// Legacy data is limited to 31 bytes.
    public var legacy: Bool
    public var facts: ADFacts
    /// The facts this advertiser shows for the first time here.
    public var new: ADFacts.Kinds
    /// The advertiser, this data included.
    public var advertiser: Advertiser
    /// How the report came in; nil for data this host set.
    public var report: ReceivedReport?
}

/// The one table of advertisers: data this host set and reports received, by `AdvertiserKey`.
/// Each report updates its advertiser with one lookup: the facts its data shows, the scan that
/// found it (whose a connection to it is), its reports in that scan (how many duplicates the scan
/// brought in). At most `capacity` advertisers are kept (anyone in range can advertise from a new
/// address in every report), the oldest forgotten first.
struct AdvertiserModel {
    static let capacity = 10_000
    private var table = RingTable<AdvertiserKey, Advertiser>(capacity: AdvertiserModel.capacity)

    /// Data this host set, walked once.
    mutating func hostData(_ key: AdvertiserKey, data: Bytes, scanResponse: Bool, legacy: Bool) -> AdvertisingDataObservation {
        let facts = ADFacts(data, scanResponse: scanResponse, legacy: legacy)
        var new: ADFacts.Kinds = []
        let advertiser = table.update(key, default: Advertiser()) { a in
            new = Self.learn(&a, facts.kinds, scanResponse: scanResponse)
            return a
        }
        return AdvertisingDataObservation(key: key, data: data, scanResponse: scanResponse, legacy: legacy, facts: facts,
                                          new: new, advertiser: advertiser, report: nil)
    }

    /// What a report received showed: its data's facts, those new for its advertiser, the
    /// advertiser with it, and the advertiser's reports in the scan that brought it in. Holds no
    /// reference: the observation, which holds the data, is made only for a sink that wants it.
    struct Received {
        var facts: ADFacts
        var new: ADFacts.Kinds
        var advertiser: Advertiser
        var reportsInScan: Int

        /// The observation of the report, its data `data`, during scan `scan` (if any).
        func observation(_ key: AdvertiserKey, data: Bytes, scanResponse: Bool, legacy: Bool, addressType: UInt8,
                         rssi: Int8?, scan: Int?) -> AdvertisingDataObservation {
            AdvertisingDataObservation(key: key, data: data, scanResponse: scanResponse, legacy: legacy, facts: facts,
                                       new: new, advertiser: advertiser,
                                       report: ReceivedReport(addressType: addressType, rssi: rssi, scan: scan,
                                                              reportsInScan: reportsInScan))
        }
    }

    /// A report received during scan `scan` (if any): its data walked once, its advertiser updated.
    mutating func received(_ key: AdvertiserKey, data: borrowing Bytes, _ range: Range<Int>, scanResponse: Bool, legacy: Bool,
                           scan: (number: Int, app: Bool)?) -> Received {
        let facts = ADFacts(data, range, scanResponse: scanResponse, legacy: legacy)
        var new: ADFacts.Kinds = []
        var reportsInScan = 0
        let advertiser = table.update(key, default: Advertiser()) { a in
            if let s = scan {
                if a.foundIn != s.number {
                    a.foundIn = s.number
                    a.reportsInScan = 0
                }
                if s.app { a.foundByApp = s.number }
                if !scanResponse { a.reportsInScan &+= 1 }
                reportsInScan = a.reportsInScan
            }
            new = Self.learn(&a, facts.kinds, scanResponse: scanResponse)
            return a
        }
        return Received(facts: facts, new: new, advertiser: advertiser, reportsInScan: reportsInScan)
    }

    /// The advertiser at `key`, if kept.
    func advertiser(_ key: AdvertiserKey) -> Advertiser? { table[key] }

    /// Adds the facts of one piece of data to its advertiser; returns those it shows for the first time.
    private static func learn(_ a: inout Advertiser, _ kinds: ADFacts.Kinds, scanResponse: Bool) -> ADFacts.Kinds {
        var new: ADFacts.Kinds = []
        if !kinds.isEmpty {
            new = kinds.subtracting(a.seen)
            a.seen.formUnion(kinds)
        }
        if scanResponse && !a.seen.isDisjoint(with: [.shortenedName, .completeName]) { a.scanResponseAfterName = true }
        return new
    }
}

/// How this host set one of its adapters to advertise (LE Set Advertising Parameters, or LE Set
/// Extended Advertising Parameters for one set).
public struct HostAdvertisingParameters: Sendable, Equatable {
    public var adapter: UInt16
    /// Units of 0.625 ms; the controller picks the interval in this range.
    public var intervalMin: UInt32
    public var intervalMax: UInt32
    /// Legacy PDUs (ADV_IND and the like), or extended advertising (ADV_EXT_IND and an AUX_ADV_IND).
    public var legacy: Bool
    /// A scanner may ask for the scan response, an initiator may connect: the advertiser listens
    /// after each advertising PDU.
    public var scannable: Bool
    public var connectable: Bool
    /// Primary advertising channels used (of 37, 38 and 39).
    public var channels: Int
    /// HCI's PHY numbers: 1 LE 1M, 2 LE 2M, 3 LE Coded.
    public var primaryPHY: UInt8
    public var secondaryPHY: UInt8
}

extension HostAdvertisingParameters {
    init(adapter: UInt16, _ p: LESetAdvertisingParameters) {
        self.adapter = adapter
        intervalMin = UInt32(p.advertisingIntervalMin)
        intervalMax = UInt32(p.advertisingIntervalMax)
        legacy = true
        // Core Vol 4 Part E 7.8.5: ADV_IND, ADV_DIRECT_IND, ADV_SCAN_IND, ADV_NONCONN_IND, ADV_DIRECT_IND.
        connectable = p.advertisingType == 0 || p.advertisingType == 1 || p.advertisingType == 4
        scannable = p.advertisingType == 0 || p.advertisingType == 2
        channels = Self.channels(p.channelMap)
        primaryPHY = 1
        secondaryPHY = 1
    }

    init(adapter: UInt16, _ p: LESetExtendedAdvertisingParameters) {
        self.adapter = adapter
        intervalMin = p.primaryAdvertisingIntervalMin
        intervalMax = p.primaryAdvertisingIntervalMax
        legacy = p.usesLegacyPDUs
        connectable = p.isConnectable
        scannable = p.isScannable
        channels = Self.channels(p.primaryChannelMap)
        primaryPHY = p.primaryPHY == 3 ? 3 : 1
        secondaryPHY = (1...3).contains(p.secondaryPHY) ? p.secondaryPHY : 1
    }

    /// The channel map's three bits; a map with none is refused by the controller, read as all three.
    private static func channels(_ map: UInt8) -> Int {
        let n = (map & 0x07).nonzeroBitCount
        return n == 0 ? 3 : n
    }
}

/// This host advertising on one adapter: from an enable until a disable, or until a central
/// connects to it (the controller stops advertising then: Core Vol 4 Part E 7.8.9 for legacy
/// advertising, 7.8.56 for an extended set; the sets of one adapter are taken together).
public struct HostAdvertising: Sendable {
    public var adapter: UInt16
    public var start: FrameRef
}

/// The one definition of when this host advertises: `advertisingStarted` and
/// `advertisingStopped` events from the enable commands and the connections made to it.
struct HostAdvertisingModel {
    private var on: [UInt16: HostAdvertising] = [:]

    mutating func enable<S: AuditEventSink>(adapter: UInt16, _ enabled: Bool, at: FrameRef, _ sink: S) {
        if enabled {
            guard on[adapter] == nil else { return }
            let a = HostAdvertising(adapter: adapter, start: at)
            on[adapter] = a
            sink.observe(.advertisingStarted(a), at: at)
        } else {
            stop(adapter: adapter, at: at, sink)
        }
    }

    /// A central connected to this host: its advertising stopped.
    mutating func stop<S: AuditEventSink>(adapter: UInt16, at: FrameRef, _ sink: S) {
        guard let a = on.removeValue(forKey: adapter) else { return }
        sink.observe(.advertisingStopped(a), at: at)
    }
}
