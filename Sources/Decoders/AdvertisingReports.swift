import Wire

/// One advertising report from an LE Meta event (Core Vol 4 Part E 7.7.65.2, .11, .13, .15, .15v2).
/// Legacy event types are mapped onto the extended event type bits, so code looking at
/// `properties` treats both alike. It holds no reference: its data is a range of the bytes it was
/// read from, so handing a report on copies plain bytes (one report per event in a scan).
public struct AdvertisingReport: Sendable {
    public var subevent: UInt8
    /// The event type as sent: legacy 0...4 for subevent 0x02/0x0B, the 16-bit bit field for 0x0D.
    public var eventType: UInt16
    /// Extended-report event type bits (legacy types mapped onto them).
    public var properties: UInt16
    /// 0x00 public, 0x01 random, 0x02 public identity, 0x03 random static identity, 0xFF anonymous.
    public var addressType: UInt8
    public var address: BDAddr
    public var primaryPHY: UInt8 = 0x01
    public var secondaryPHY: UInt8 = 0x00
    /// 0xFF when not available.
    public var sid: UInt8 = 0xFF
    /// dBm; 127 when not available.
    public var txPower: Int8 = 127
    /// dBm; 127 when not available.
    public var rssi: Int8 = 127
    /// Units of 1.25 ms; 0 when there is no periodic advertising.
    public var periodicInterval: UInt16 = 0
    public var directAddressType: UInt8?
    public var directAddress: BDAddr?
    /// Periodic reports: sync handle, CTE type, event counter and subevent (v2).
    public var syncHandle: UInt16?
    public var cteType: UInt8?
    public var periodicEventCounter: UInt16?
    public var periodicSubevent: UInt8?
    /// Periodic reports carry their own data status; extended ones have it in the event type.
    public var periodicDataStatus: UInt8?
    /// Where the advertising data is, by the indices of the bytes the report was read from (the
    /// slices of one frame share them).
    public var dataRange: Range<Int>

    @inlinable
    public init(subevent: UInt8, eventType: UInt16, properties: UInt16, addressType: UInt8, address: BDAddr,
                dataRange: Range<Int>) {
        self.subevent = subevent
        self.eventType = eventType
        self.properties = properties
        self.addressType = addressType
        self.address = address
        self.dataRange = dataRange
    }

    /// The advertising data in `bytes`, the bytes (or any slice of the frame that holds them) the
    /// report was read from; empty when they do not hold it.
    @inlinable public func data(in bytes: Bytes) -> Bytes {
        holdsData(bytes) ? bytes[dataRange] : bytes[bytes.startIndex..<bytes.startIndex]
    }

    /// The indices of the advertising data in `bytes`; empty when they do not hold it.
    @inlinable public func dataRange(in bytes: borrowing Bytes) -> Range<Int> {
        holdsData(bytes) ? dataRange : bytes.startIndex..<bytes.startIndex
    }

    @inlinable func holdsData(_ bytes: borrowing Bytes) -> Bool {
        dataRange.lowerBound >= bytes.startIndex && dataRange.upperBound <= bytes.endIndex
    }

    public var isConnectable: Bool { properties & 0x01 != 0 }
    public var isScannable: Bool { properties & 0x02 != 0 }
    public var isDirected: Bool { properties & 0x04 != 0 }
    public var isScanResponse: Bool { properties & 0x08 != 0 }
    public var isLegacy: Bool { properties & 0x10 != 0 }
    public var dataStatus: AdvertisingDataStatus {
        AdvertisingDataStatus(rawValue: periodicDataStatus ?? UInt8(properties >> 5 & 0x3)) ?? .reserved
    }
    /// RSSI when the controller measured it.
    public var rssiValue: Int8? { rssi == 127 ? nil : rssi }
    public var txPowerValue: Int8? { txPower == 127 ? nil : txPower }
    /// The kind of a random address (static, resolvable, non-resolvable).
    public var randomKind: RandomAddressKind? { addressType == 0x01 ? address.randomKind : nil }

    /// Decoded advertising data (legacy reports are limited to 31 bytes), from the bytes it was read from.
    public func advertisingData(in bytes: Bytes) -> AdvertisingData { AdvertisingData(data(in: bytes), legacy: hasLegacyData) }
    /// Legacy advertising data: at most 31 bytes.
    var hasLegacyData: Bool { subevent == AdvertisingReports.legacy || isLegacy }

    /// Name of the PDU for legacy event types ("ADV_IND"), else the set properties.
    public var eventTypeName: String { eventTypeLabel.string }

    /// `eventTypeName` as a label.
    var eventTypeLabel: FieldLabel {
        if hasLegacyPDU {
            guard eventType < 0x100, let n = AdvertisingReports.legacyNames[UInt8(eventType)] else { return "Reserved" }
            return FieldLabel(stringLiteral: n)
        }
        if let pdu = AdvertisingReports.legacyPDULabels[UInt8(properties & 0x1F)], isLegacy { return pdu }
        return AdvertisingReports.propertyTextLabels[Int(properties & 0x7F)]
    }

    /// Writes `eventTypeName`, a legacy report's copied as the literal it is.
    func writeEventTypeName(to s: inout TextLine) {
        if let pdu = legacyPDUName { s += pdu } else { s.write(name: eventTypeLabel) }
    }

    /// A legacy or directed report: its event type is a legacy PDU's.
    private var hasLegacyPDU: Bool { subevent == AdvertisingReports.legacy || subevent == AdvertisingReports.directed }

    /// A legacy or directed report's PDU name (short enough to be a String without an allocation).
    private var legacyPDUName: StaticString? {
        guard hasLegacyPDU else { return nil }
        return eventType < 0x100 ? AdvertisingReports.legacyNames[UInt8(eventType)] ?? "Reserved" : "Reserved"
    }
}

public enum AdvertisingDataStatus: UInt8, Sendable {
    case complete = 0, incompleteMore = 1, incompleteTruncated = 2, reserved = 3
    /// Periodic v2: the controller failed to receive an AUX_SYNC_SUBEVENT_RSP.
    case notReceived = 0xFF

    public var name: String { label.string }

    public var label: FieldLabel {
        switch self {
        case .complete: return "Complete"
        case .incompleteMore: return "Incomplete, more data to come"
        case .incompleteTruncated: return "Incomplete, data truncated, no more to come"
        case .reserved: return "Reserved"
        case .notReceived: return "Failed to receive"
        }
    }
}

public enum AdvertisingReports {
    public static let legacy: UInt8 = 0x02, directed: UInt8 = 0x0B, extended: UInt8 = 0x0D
    public static let periodic: UInt8 = 0x0F, periodicV2: UInt8 = 0x25

    static let legacyNames: ByteTable<StaticString> = [0: "ADV_IND", 1: "ADV_DIRECT_IND", 2: "ADV_SCAN_IND", 3: "ADV_NONCONN_IND", 4: "SCAN_RSP"]
    /// Legacy event types as extended event type bits (Core Vol 4 Part E 7.7.65.13, table of legacy PDUs).
    /// SCAN_RSP does not say which PDU it answered; it is marked scannable, not connectable.
    @usableFromInline static let legacyProperties: [UInt16] = [0x13, 0x15, 0x12, 0x10, 0x1A]
    static let legacyPDUByProperties: ByteTable<String> = [
        0x13: "ADV_IND", 0x15: "ADV_DIRECT_IND", 0x12: "ADV_SCAN_IND", 0x10: "ADV_NONCONN_IND",
        0x1B: "SCAN_RSP to ADV_IND", 0x1A: "SCAN_RSP to ADV_SCAN_IND",
    ]
    static let legacyPDULabels = legacyPDUByProperties.map(FieldLabel.init)
    static let propertyBits = ["Connectable", "Scannable", "Directed", "Scan Response", "Legacy"]
    static let propertyLabels = propertyBits.map(FieldLabel.init)
    /// "Report 1" ... "Report 255" (an event holds at most 255), made once.
    static let numberedReports = (0...255).map { FieldLabel("Report \($0)") }

    /// The names of `propertySets` joined, for the seven bits they depend on, made once: every
    /// extended report's summary names them.
    static let propertyText = propertySets.map { $0.joined(separator: ", ") }
    static let propertyTextLabels = FieldLabel.table(propertyText)
    static let propertySets = (0..<128).map { p in
        SetBitNames(UInt64(p & 0x1F) | 1 << (5 + UInt64(p >> 5 & 3)), in: eventTypeBitNames)
    }

    /// The property bits' names, then the four data statuses': an extended report's event type
    /// names its set properties and then its status, from this one table.
    static let eventTypeBitNames = BitNames(propertyBits + (0..<4).map {
        "Data Status: " + (AdvertisingDataStatus(rawValue: UInt8($0)) ?? .reserved).name
    })

    public static let addressTypeNames: ByteTable<String> = [0x00: "Public Device Address", 0x01: "Random Device Address",
                                          0x02: "Public Identity Address", 0x03: "Random (static) Identity Address",
                                          0xFE: "Random Device Address (unresolved)", 0xFF: "Anonymous"]
    static let addressTypeLabels = addressTypeNames.map(FieldLabel.init)
    public static let phyNames: [Int: FieldLabel] = [0x00: "No packets on the secondary advertising channel", 0x01: "LE 1M", 0x02: "LE 2M", 0x03: "LE Coded"]
    static let cteNames: [Int: FieldLabel] = [0x00: "AoA Constant Tone Extension", 0x01: "AoD Constant Tone Extension with 1 µs slots",
                           0x02: "AoD Constant Tone Extension with 2 µs slots", 0xFF: "No Constant Tone Extension"]

    @inlinable public static func isReport(subevent: UInt8) -> Bool {
        // One bit per report subevent (legacy, directed, extended, periodic, periodic v2): asked of every LE Meta event.
        subevent < 64 && (1 as UInt64) << subevent & reportSubevents != 0
    }
    @inlinable static var reportSubevents: UInt64 { 1 << 0x02 | 1 << 0x0B | 1 << 0x0D | 1 << 0x0F | 1 << 0x25 }

    /// Reports of an LE Meta subevent (parameters after the subevent code). Reports before a
    /// fault are returned along with a description of the fault.
    public static func parse(subevent: UInt8, _ params: Bytes) -> (reports: [AdvertisingReport], malformed: String?) {
        var reports: [AdvertisingReport] = []
        let malformed = forEach(subevent: subevent, params) { r, _ in reports.append(r) }
        return (reports, malformed)
    }

    /// `parse` without collecting: `body` gets each report in turn, with `params` (where its data
    /// is), lent back rather than copied again by the caller. Returns the description of a fault
    /// after the reports before it.
    @discardableResult @inlinable
    public static func forEach(subevent: UInt8, _ params: consuming Bytes,
                               _ body: (AdvertisingReport, _ params: borrowing Bytes) -> Void) -> String? {
        var r = ByteReader(params)
        var count = 0
        do throws(DecodeError) {
            switch subevent {
            case legacy, directed, extended:
                let n = Int(try r.u8())
                for _ in 0..<n {
                    switch subevent {
                    case legacy: body(try legacyReport(&r), r.bytes)
                    case directed: body(try directedReport(&r), r.bytes)
                    default: body(try extendedReport(&r), r.bytes)
                    }
                    count += 1
                }
            case periodic, periodicV2:
                body(try periodicReport(&r, v2: subevent == periodicV2), r.bytes)
                count += 1
            default:
                return nil
            }
        } catch {
            return describe(error, reports: count)
        }
        if r.remaining > 0 { return "\(r.remaining) bytes after the last report" }
        return nil
    }

    @usableFromInline static func describe(_ e: DecodeError, reports: Int) -> String {
        switch e {
        case .truncated(let needed, let available):
            return "report \(reports + 1) truncated: needed \(needed) bytes, \(available) left"
        case .invalid(let why): return "report \(reports + 1): " + why
        }
    }

    /// The fixed fields before a report's data (or its end), each report's checked at once
    /// (`ByteReader.fields`, a width a nibble from the lowest): event type, address type, address,
    /// then data length (legacy), direct address type, direct address and RSSI (directed), or
    /// PHYs, SID, TX power, RSSI, periodic interval, direct address type, direct address and data
    /// length (extended).
    @usableFromInline static let legacyFields: UInt64 = 0x1611, directedFields: UInt64 = 0x16_1611
    @usableFromInline static let extendedFields: UInt64 = 0x1612_1111_1612

    @inlinable static func legacyReport(_ r: inout ByteReader) throws(DecodeError) -> AdvertisingReport {
        let i = try r.fields(9, widths: Self.legacyFields)
        let type = r.u8(at: i)
        let length = Int(r.u8(at: i &+ 8))
        // The data and the RSSI after it checked at once: nearly every report holds both.
        let data: Range<Int>, rssi: Int8
        if _fastPath(r.remaining > length) {
            data = Range(uncheckedBounds: (r.index, r.index &+ length))
            rssi = r.i8(at: data.upperBound)
            r.index = data.upperBound &+ 1
        } else {
            data = try r.range(length)
            rssi = try r.i8()
        }
        let props = Int(type) < legacyProperties.count ? legacyProperties[Int(type)] : 0
        var rep = AdvertisingReport(subevent: legacy, eventType: UInt16(type), properties: props,
                                    addressType: r.u8(at: i &+ 1), address: r.address(at: i &+ 2), dataRange: data)
        rep.rssi = rssi
        return rep
    }

    @inlinable static func directedReport(_ r: inout ByteReader) throws(DecodeError) -> AdvertisingReport {
        let i = try r.fields(16, widths: Self.directedFields)
        var rep = AdvertisingReport(subevent: directed, eventType: UInt16(r.u8(at: i)), properties: 0x15,
                                    addressType: r.u8(at: i &+ 1), address: r.address(at: i &+ 2), dataRange: (i &+ 8)..<(i &+ 8))
        rep.directAddressType = r.u8(at: i &+ 8)
        rep.directAddress = r.address(at: i &+ 9)
        rep.rssi = r.i8(at: i &+ 15)
        return rep
    }

    @inlinable static func extendedReport(_ r: inout ByteReader) throws(DecodeError) -> AdvertisingReport {
        let i = try r.fields(24, widths: Self.extendedFields)
        let type = r.u16(at: i)
        let length = Int(r.u8(at: i &+ 23))
        let data: Range<Int>
        if _fastPath(r.remaining >= length) {
            data = Range(uncheckedBounds: (r.index, r.index &+ length))
            r.index = data.upperBound
        } else {
            data = try r.range(length)
        }
        var rep = AdvertisingReport(subevent: extended, eventType: type, properties: type, addressType: r.u8(at: i &+ 2),
                                    address: r.address(at: i &+ 3), dataRange: data)
        rep.primaryPHY = r.u8(at: i &+ 9)
        rep.secondaryPHY = r.u8(at: i &+ 10)
        rep.sid = r.u8(at: i &+ 11)
        rep.txPower = r.i8(at: i &+ 12)
        rep.rssi = r.i8(at: i &+ 13)
        rep.periodicInterval = r.u16(at: i &+ 14)
        if type & 0x04 != 0 {
            rep.directAddressType = r.u8(at: i &+ 16)
            rep.directAddress = r.address(at: i &+ 17)
        }
        return rep
    }

    @inlinable static func periodicReport(_ r: inout ByteReader, v2: Bool) throws(DecodeError) -> AdvertisingReport {
        // No address: the sync handle names the advertiser.
        var rep = AdvertisingReport(subevent: v2 ? periodicV2 : periodic, eventType: 0, properties: 0,
                                    addressType: 0xFF, address: BDAddr(0), dataRange: 0..<0)
        rep.syncHandle = try r.u16()
        rep.txPower = try r.i8()
        rep.rssi = try r.i8()
        rep.cteType = try r.u8()
        if v2 {
            rep.periodicEventCounter = try r.u16()
            rep.periodicSubevent = try r.u8()
        }
        rep.periodicDataStatus = try r.u8()
        rep.dataRange = try r.range(Int(try r.u8()))
        return rep
    }

    /// Whether the full decode of a report subevent marks a fault: in the report list, or in a
    /// report's advertising data. Checked without writing the fields.
    public static func hasFaults(subevent: UInt8, _ params: Bytes) -> Bool {
        // The two lists nearly every capture carries are read where they lie: a report's data and
        // whether it is legacy are all the check needs, and building each report cost more than
        // walking its data.
        if subevent == legacy { return listHasFaults(params, fixed: 9, trailer: 1, extended: false) }
        if subevent == extended { return listHasFaults(params, fixed: 24, trailer: 0, extended: true) }
        var bad = false
        let listFault = forEach(subevent: subevent, params) { r, params in
            if !bad, AdvertisingData.hasProblems(params[r.dataRange(in: params)], legacy: r.hasLegacyData) { bad = true }
        }
        return bad || listFault != nil
    }

    /// `hasFaults` for a legacy or extended report list: Num_Reports, then each report's `fixed`
    /// octets ending in its Data_Length, its data, and `trailer` octets after it (a legacy report's
    /// RSSI). Faulty exactly when `forEach` reports a fault or a report's data has problems.
    private static func listHasFaults(_ p: Bytes, fixed: Int, trailer: Int, extended: Bool) -> Bool {
        let end = p.endIndex
        var i = p.startIndex
        guard i < end else { return true }
        let n = Int(p[i])
        i &+= 1
        for _ in 0..<n {
            guard end &- i >= fixed else { return true }
            let data = i &+ fixed, length = Int(p[data &- 1])
            guard end &- data >= length &+ trailer else { return true }
            // An extended report's data is legacy when its event type says a legacy PDU (bit 4).
            if AdvertisingData.hasProblems(p[data..<(data &+ length)], legacy: !extended || p[i] & 0x10 != 0) { return true }
            i = data &+ length &+ trailer
        }
        return i != end
    }

    /// Full decode of a report subevent's parameters; nil when the subevent is not a report.
    public static func fields(subevent: UInt8, _ params: Bytes) -> [Field]? {
        guard isReport(subevent: subevent) else { return nil }
        return FieldList.build { writeFields(subevent: subevent, params, to: $0) }
    }

    /// `fields`, sent to `out`; false (nothing sent) when the subevent carries no reports.
    @discardableResult
    public static func writeFields(subevent: UInt8, _ params: Bytes, to out: FieldSink) -> Bool {
        guard isReport(subevent: subevent) else { return false }
        if subevent != periodic && subevent != periodicV2, let n = params.byte(0) {
            out.add("Num Reports", .uint(UInt64(n), hex: 0))
        }
        // Numbered where the event can hold several (a periodic report event holds one).
        var number = 0
        let malformed = forEach(subevent: subevent, params) { rep, params in
            number += 1
            out.begin(subevent <= extended ? numberedReports[min(number, 255)] : "Report", .none)
            rep.writeFields(in: params, to: out)
            out.end()
        }
        if let m = malformed { out.malformed(m) }
        return true
    }
}

extension AdvertisingReport {
    static func addressType(_ t: UInt8) -> FieldValue {
        .named(UInt64(t), hex: 2, AdvertisingReports.addressTypeLabels[t] ?? "Reserved")
    }

    static func address(_ label: FieldLabel, _ a: BDAddr, type: UInt8, to out: FieldSink) {
        out.begin(label, .address(a))
        if type == 0x01 || type == 0xFE { out.add("Random Address Kind", .text(a.randomKind.rawValue)) }
        out.end()
    }

    static func signedOrNA(_ label: FieldLabel, _ v: Int8, to out: FieldSink) {
        out.add(label, v == 127 ? .named(127, hex: 0, "not available") : .signed(Int64(v), unit: "dBm"))
    }

    /// The report's fields as the specification names them, with its data (in `bytes`) decoded.
    public func fields(in bytes: Bytes) -> [Field] { FieldList.build { writeFields(in: bytes, to: $0) } }

    public func writeFields(in bytes: Bytes, to out: FieldSink) {
        if let handle = syncHandle {
            out.add("Sync Handle", .uint(UInt64(handle), hex: 4))
            AdvertisingReport.signedOrNA("TX Power", txPower, to: out)
            AdvertisingReport.signedOrNA("RSSI", rssi, to: out)
            if let c = cteType { out.add("CTE Type", .named(UInt64(c), hex: 2, AdvertisingReports.cteNames[Int(c)] ?? "Reserved")) }
            if let c = periodicEventCounter { out.add("Periodic Event Counter", .uint(UInt64(c), hex: 0)) }
            if let s = periodicSubevent { out.add("Subevent", .uint(UInt64(s), hex: 0)) }
            out.add("Data Status", .named(UInt64(periodicDataStatus ?? 0), hex: 2, dataStatus.label))
        } else {
            if subevent == AdvertisingReports.extended {
                out.begin("Event Type", .flags(UInt64(eventType), hex: 4, AdvertisingReports.propertySets[Int(properties & 0x7F)]))
                for (i, label) in AdvertisingReports.propertyLabels.enumerated() { out.add(label, .bool(properties >> UInt16(i) & 1 == 1)) }
                out.add("Data Status", .named(UInt64(properties >> 5 & 3), hex: 1, dataStatus.label))
                if let pdu = AdvertisingReports.legacyPDUByProperties[UInt8(properties & 0x1F)], isLegacy { out.add("Legacy PDU", .text(pdu)) }
                out.end()
            } else {
                out.add("Event Type", .named(UInt64(eventType), hex: 2, eventTypeLabel))
            }
            out.add("Address Type", AdvertisingReport.addressType(addressType))
            AdvertisingReport.address("Address", address, type: addressType, to: out)
            if subevent == AdvertisingReports.extended {
                out.add("Primary PHY", .named(UInt64(primaryPHY), hex: 2, AdvertisingReports.phyNames[Int(primaryPHY)] ?? "Reserved"))
                out.add("Secondary PHY", .named(UInt64(secondaryPHY), hex: 2, AdvertisingReports.phyNames[Int(secondaryPHY)] ?? "Reserved"))
                out.add("Advertising SID", sid == 0xFF ? .named(0xFF, hex: 2, "not available") : .uint(UInt64(sid), hex: 2))
                AdvertisingReport.signedOrNA("TX Power", txPower, to: out)
                AdvertisingReport.signedOrNA("RSSI", rssi, to: out)
                out.add("Periodic Advertising Interval", periodicInterval == 0 ? .named(0, hex: 4, "no periodic advertising")
                    : .quantity(UInt64(periodicInterval), hex: 4, Double(periodicInterval) * 1.25, unit: "ms"))
            }
            if let t = directAddressType, let a = directAddress {
                out.add("Direct Address Type", AdvertisingReport.addressType(t))
                AdvertisingReport.address("Direct Address", a, type: t, to: out)
            }
            if subevent != AdvertisingReports.extended { AdvertisingReport.signedOrNA("RSSI", rssi, to: out) }
        }
        if subevent != AdvertisingReports.directed {
            let data = data(in: bytes)
            out.add("Data Length", .uint(UInt64(data.count), hex: 0))
            if !data.isEmpty {
                out.begin("Advertising Data", .derived(.advertisingSummary(data, legacy: hasLegacyData)))
                AdvertisingData(data, legacy: hasLegacyData).writeFields(to: out)
                out.end()
            }
        }
    }

    /// One line: "ADV_IND 11:22:33:44:55:66 (public) -60 dBm Flags 0x06, ...", with its data in `bytes`.
    public func summary(in bytes: Bytes) -> String { TextLine.make { writeSummary(in: bytes, to: &$0) } }

    public func writeSummary(in bytes: Bytes, to s: inout TextLine) {
        if let h = syncHandle {
            s += "Periodic sync "
            s.write(hex: h, width: 4)
        } else {
            writeEventTypeName(to: &s)
            s.write(byte: 32)
            s.write(address)
            if let k = randomKind { s += " ("; s.write(plain: k.rawValue); s.write(byte: UInt8(ascii: ")")) }
            else if let n = AdvertisingReports.addressTypeNames[addressType] { s += " ("; s.write(plain: n); s.write(byte: UInt8(ascii: ")")) }
        }
        if let r = rssiValue { s.write(byte: 32); s.write(r); s += " dBm" }
        if !dataRange.isEmpty {
            s.write(byte: 32)
            let data = data(in: bytes)
            let (dataStart, dataCount, at) = (data.startIndex, data.count, s.count)
            AdvertisingData(data, legacy: hasLegacyData).writeSummary(to: &s)
            s.markAdvertisingSummary(from: at, dataStart: dataStart, dataCount: dataCount)
        }
    }
}

/// Joins the fragments of extended advertising data (reports with data status "incomplete,
/// more data to come") per advertiser: address, address type and SID. Memory is bounded: at most
/// `maxPending` advertisers are in progress (the oldest is dropped) and each holds at most
/// `maxLength` bytes (the most an advertising set can carry, 1650).
public struct ExtendedAdvertisingAssembler: Sendable {
    public struct Key: Hashable, Sendable {
        public let address: BDAddr
        public let addressType: UInt8
        public let sid: UInt8
    }

    /// Whole advertising data of one advertising event.
    public struct Assembled: Sendable {
        public let key: Key
        public let data: Bytes
        /// How many reports it was made of.
        public let fragments: Int
        /// The controller truncated it, or it exceeded the size cap.
        public let truncated: Bool
    }

    @usableFromInline struct Pending: Sendable {
        var data: [UInt8]
        var fragments: Int
        var overflow: Bool
        var serial: Int
    }

    public let maxPending: Int
    public let maxLength: Int
    @usableFromInline var pending: [Key: Pending] = [:]
    var serial = 0
    /// Fragment chains dropped because too many were in progress.
    public private(set) var evicted = 0

    public init(maxPending: Int = 64, maxLength: Int = 1650) {
        self.maxPending = max(1, maxPending)
        self.maxLength = max(31, maxLength)
    }

    public var pendingCount: Int { pending.count }

    /// The report is whole and no chain is in progress: `add` would return it as one fragment
    /// and keep nothing, so a caller that needs only its data can skip `add`. Inlinable: called
    /// from another module on a stored assembler, it was a copy of the assembler (its table
    /// retained and released) for every extended report.
    @inlinable @inline(__always)
    public func passes(_ report: AdvertisingReport) -> Bool {
        pending.isEmpty && report.dataStatus != .incompleteMore
    }

    /// Adds a report, whose data is in `bytes`; returns the whole data when this report ends an
    /// event (status complete or truncated), nil while more is to come.
    public mutating func add(_ report: AdvertisingReport, in bytes: Bytes) -> Assembled? {
        let key = Key(address: report.address, addressType: report.addressType, sid: report.sid)
        let status = report.dataStatus
        let data = report.data(in: bytes)
        var p: Pending
        // Most reports are whole: their data is handed on as it is, and nothing is kept. With no
        // chain in progress the key is not hashed.
        if let found = pending.isEmpty ? nil : pending.removeValue(forKey: key) {
            p = found
        } else if status != .incompleteMore {
            return Assembled(key: key, data: data.prefix(maxLength), fragments: 1,
                             truncated: data.count > maxLength || status == .incompleteTruncated)
        } else {
            p = Pending(data: [], fragments: 0, overflow: false, serial: 0)
        }
        let room = maxLength - p.data.count
        if data.count > room {
            p.data += data.prefix(max(0, room))
            p.overflow = true
        } else {
            p.data += data
        }
        p.fragments += 1
        if status == .incompleteMore {
            serial &+= 1
            p.serial = serial
            if pending.count >= maxPending, let oldest = pending.min(by: { $0.value.serial < $1.value.serial })?.key {
                pending.removeValue(forKey: oldest)
                evicted += 1
            }
            pending[key] = p
            return nil
        }
        return Assembled(key: key, data: p.data[...], fragments: p.fragments, truncated: p.overflow || status == .incompleteTruncated)
    }
}
