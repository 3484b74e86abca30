import Wire

/// Pseudo headers that sniffers put in front of over-the-air link-layer packets:
/// LINKTYPE_BLUETOOTH_LE_LL (251, none), LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR (256, Ubertooth and
/// others), LINKTYPE_NORDIC_BLE (272, nRF Sniffer board, protocol versions 0–3) and LINKTYPE_PPI
/// (192) around one of them or around DLT_USER0 (147), as old Ubertooth firmware wrote it.

/// Which physical channel kind the sniffer says a packet came from.
public enum LLChannelKind: UInt8, Sendable {
    case unknown, advertising, data
    /// CIS or BIS PDUs (Vol 6 Part B 2.6), not decoded.
    case isochronous
}

/// LE PHY (Vol 6 Part A), as sniffers number it.
public enum LLPhy {
    public static let names = ["LE 1M", "LE 2M", "LE Coded"]
    /// `names` by bit, for a field of PHY bits.
    static let bitNames = BitNames(names)
    public static func name(_ v: UInt8) -> String { Int(v) < names.count ? names[Int(v)] : "Reserved (\(v))" }
    /// `name` as a label.
    static func label(_ v: UInt8) -> FieldLabel { Int(v) < nameLabels.count ? nameLabels[Int(v)] : FieldLabel(name(v)) }
    private static let nameLabels = FieldLabel.table(names)
}

/// What a sniffer told about one packet. Fields it did not give are nil.
public struct LLPseudoHeader: Sendable {
    public var linkType: UInt32
    /// Channel index 0...39 (37–39 primary advertising).
    public var channel: UInt8?
    public var rssi: Int8?
    public var noise: Int8?
    public var phy: UInt8?
    public var crcChecked = false
    public var crcValid = false
    public var micChecked = false
    public var micValid = false
    /// Data PDUs only: true central → peripheral, false peripheral → central.
    public var centralToPeripheral: Bool?
    public var channelKind: LLChannelKind = .unknown
    /// Nordic: which AUX PDU a 0b0111 PDU on a secondary channel is (0 AUX_ADV_IND, 1 AUX_CHAIN_IND,
    /// 2 AUX_SYNC_IND, 3 AUX_SCAN_RSP).
    public var auxType: UInt8?
    /// An advertising PDU on the secondary channel (AUX_ PDUs), as LE_LL_WITH_PHDR says.
    public var auxiliary = false
    public var eventCounter: UInt16?
    /// The sniffer decrypted the payload (MIC still present, checked by the sniffer).
    public var decrypted = false
    /// False when a 256 header says the bits are still whitened.
    public var dewhitened = true

    // LE_LL_WITH_PHDR (256) extras
    public var rfChannel: UInt8?
    public var accessAddressOffenses: UInt8?
    public var referenceAccessAddress: UInt32?
    public var phdrFlags: UInt16?

    // NORDIC_BLE (272) extras
    public var board: UInt8?
    public var protocolVersion: UInt8?
    public var packetCounter: UInt16?
    public var packetID: UInt8?
    public var nordicFlags: UInt8?
    /// Version < 3: microseconds from the end of the previous packet; version 3: firmware timestamp.
    public var nordicTime: UInt32?
    /// The header said its payload is longer or shorter than the record.
    public var lengthMismatch = false

    // PPI (192) extras: the link type inside, and Ubertooth's BTLE field (type 30006).
    public var ppiLinkType: UInt32?
    public var ppiFlags: UInt8?
    /// Centre frequency in MHz.
    public var ppiFrequency: UInt16?
    /// Ubertooth's clock in units of 100 ns.
    public var ppiClock100ns: UInt32?
    public var ppiRSSIMax: Int8?
    public var ppiRSSIMin: Int8?
    public var ppiRSSIAverage: Int8?
    public var ppiRSSICount: UInt8?

    public init(linkType: UInt32) { self.linkType = linkType }

    /// Splits a record into its pseudo header and the link-layer packet (access address, PDU, CRC).
    /// A broken header gives `malformed` and the best guess at the packet (possibly empty).
    public static func parse(linkType: UInt32, _ record: Bytes) -> (header: LLPseudoHeader, packet: Bytes, malformed: String?) {
        var h = LLPseudoHeader(linkType: linkType)
        let (packet, malformed) = parse(record, into: &h)
        return (h, packet, malformed)
    }

    /// The same into `h`, a fresh header of the record's link type that the caller keeps (the
    /// tracker's reused frame): the header is filled where it stays rather than copied out twice.
    static func parse(_ record: Bytes, into h: inout LLPseudoHeader) -> (packet: Bytes, malformed: String?) {
        switch h.linkType {
        case LinkType.leLLWithPHDR:
            var r = ByteReader(record)
            do {
                let rf = try r.u8()
                h.rfChannel = rf
                let signal = try r.i8(), noise = try r.i8()
                let offenses = try r.u8()
                let ref = try r.u32()
                let flags = try r.u16()
                h.phdrFlags = flags
                h.channel = rf < 40 ? LLPseudoHeader.channelIndex(rf: rf) : nil
                if flags & 0x0002 != 0 { h.rssi = signal }
                if flags & 0x0004 != 0 { h.noise = noise }
                if flags & 0x0010 != 0 { h.referenceAccessAddress = ref }
                if flags & 0x0020 != 0 { h.accessAddressOffenses = offenses }
                h.dewhitened = flags & 0x0001 != 0
                h.decrypted = flags & 0x0008 != 0
                h.crcChecked = flags & 0x0400 != 0
                h.crcValid = flags & 0x0800 != 0
                h.micChecked = flags & 0x1000 != 0
                h.micValid = flags & 0x2000 != 0
                h.phy = UInt8(truncatingIfNeeded: flags >> 14)
                switch (flags >> 7) & 7 {
                case 1: h.channelKind = .advertising; h.auxiliary = true
                case 2: h.channelKind = .data; h.centralToPeripheral = true
                case 3: h.channelKind = .data; h.centralToPeripheral = false
                case 4, 5, 6: h.channelKind = .isochronous
                default: break
                }
                return (r.rest(), nil)
            } catch {
                return (record[record.endIndex...], "LE LL pseudo header truncated (\(record.count) of 10 bytes)")
            }
        case LinkType.nordicBLE:
            return parseNordic(&h, record)
        case LinkType.ppi:
            let (outer, packet, malformed) = parsePPI(h, record)
            h = outer
            return (packet, malformed)
        default:
            return (record, nil)
        }
    }

    /// Ubertooth's PPI field with RF facts about one LE packet.
    static let ppiBTLEField: UInt16 = 30006

    /// PPI (Per-Packet Information, CACE): version, flags, header length and the link type of what
    /// follows, then typed fields. Inner LE link-layer link types are parsed as themselves; DLT_USER0
    /// (147) is how Ubertooth marked a bare link-layer packet (access address, PDU, CRC).
    private static func parsePPI(_ outer: LLPseudoHeader, _ record: Bytes) -> (header: LLPseudoHeader, packet: Bytes, malformed: String?) {
        guard let length = record.le16(2), let dltLo = record.le16(4), let dltHi = record.le16(6),
              Int(length) >= 8, Int(length) <= record.count else {
            return (outer, record[record.endIndex...], "PPI header truncated (\(record.count) bytes)")
        }
        let inner = UInt32(dltLo) | UInt32(dltHi) << 16
        let bare = inner == 147 || inner == LinkType.leLL
        guard bare || inner == LinkType.leLLWithPHDR || inner == LinkType.nordicBLE else {
            return (outer, record[record.endIndex...], "PPI carries link type \(inner), not an LE link-layer packet")
        }
        var (h, packet, problem) = bare ? (LLPseudoHeader(linkType: LinkType.ppi), record.from(Int(length)), nil)
                                        : parse(linkType: inner, record.from(Int(length)))
        h.linkType = LinkType.ppi
        h.ppiLinkType = inner
        h.ppiFlags = record.byte(1)
        var at = 8
        while at + 4 <= Int(length), let type = record.le16(at), let size = record.le16(at + 2).map(Int.init) {
            let body = record.from(at + 4)
            guard at + 4 + size <= Int(length) else { problem = problem ?? "PPI field \(type) longer than the header"; break }
            if type == ppiBTLEField, size >= 12, let mhz = body.le16(1), let lo = body.le16(4), let hi = body.le16(6) {
                h.ppiFrequency = mhz
                h.ppiClock100ns = UInt32(lo) | UInt32(hi) << 16
                h.ppiRSSIMax = Int8(truncatingIfNeeded: body.byte(8)!)
                h.ppiRSSIMin = Int8(truncatingIfNeeded: body.byte(9)!)
                h.ppiRSSIAverage = Int8(truncatingIfNeeded: body.byte(10)!)
                h.ppiRSSICount = body.byte(11)
                if h.channel == nil, mhz >= 2402, mhz <= 2480, mhz % 2 == 0 { h.channel = channelIndex(rf: UInt8((mhz - 2402) / 2)) }
                if h.rssi == nil { h.rssi = h.ppiRSSIMax }
            }
            at += 4 + size
        }
        return (h, packet, problem)
    }

    /// RF channel (frequency order, 2402 + 2k MHz) to channel index (Vol 6 Part B 1.4.1).
    public static func channelIndex(rf: UInt8) -> UInt8 {
        switch rf {
        case 0: return 37
        case 12: return 38
        case 39: return 39
        case 1...11: return rf - 1
        default: return rf &- 2
        }
    }

    private static func parseNordic(_ h: inout LLPseudoHeader, _ record: Bytes) -> (packet: Bytes, malformed: String?) {
        // Read where the fields lie, each group after one test of the length: a record cut short
        // keeps the fields before the cut, as a field-by-field read would.
        let s = record.startIndex, n = record.count
        func u16(_ i: Int) -> UInt16 { UInt16(record[s &+ i]) | UInt16(record[s &+ i &+ 1]) << 8 }
        func truncated() -> (packet: Bytes, malformed: String?) {
            (record[record.endIndex...], "nRF Sniffer header truncated (\(n) bytes)")
        }
        let headerLength: Int, payloadLength: Int
        if n >= 2 && record[s] == 0xBE && record[s &+ 1] == 0xEF {
            // Version 0 (legacy): marker, packet ID, counter, 2 unused, payload length.
            h.protocolVersion = 0
            guard n >= 3 else { return truncated() }
            h.packetID = record[s &+ 2]
            guard n >= 5 else { return truncated() }
            h.packetCounter = u16(3)
            guard n >= 8 else { return truncated() }
            payloadLength = Int(record[s &+ 7])
            headerLength = 8
        } else {
            // Board, header and payload lengths (version 1) or the payload length, protocol
            // version, counter, packet ID.
            guard n >= 1 else { return truncated() }
            h.board = record[s]
            guard n >= 4 else { return truncated() }
            let version = record[s &+ 3]
            h.protocolVersion = version
            if version == 1 {
                headerLength = Int(record[s &+ 1]) &+ 1
                payloadLength = Int(record[s &+ 2])
            } else {
                payloadLength = Int(u16(1))
                headerLength = 7
            }
            guard n >= 6 else { return truncated() }
            h.packetCounter = u16(4)
            guard n >= 7 else { return truncated() }
            h.packetID = record[s &+ 6]
        }
        h.lengthMismatch = headerLength &+ payloadLength != n
        // Event packet header: length (not in version 0), flags, channel, RSSI, event counter, time.
        guard n >= 13 else { return truncated() }
        h.eventCounter = u16(11)
        guard n >= nordicHeaderLength else { return truncated() }
        h.nordicTime = UInt32(u16(13)) | UInt32(u16(15)) << 16
        let flags = record[s &+ 8], channel = record[s &+ 9]
        h.nordicFlags = flags
        h.channel = channel
        h.rssi = Int8(truncatingIfNeeded: -Int(record[s &+ 10]))
        h.crcChecked = true
        h.crcValid = flags & 1 != 0
        h.phy = (flags >> 4) & 7
        // Version 3 says the kind in the packet ID; older ones by the access address.
        if h.protocolVersion ?? 0 >= 3 {
            h.channelKind = h.packetID == 0x06 ? .data : h.packetID == 0x02 ? .advertising : .unknown
        } else if n >= nordicHeaderLength &+ 4 {
            let aa = UInt32(u16(nordicHeaderLength)) | UInt32(u16(nordicHeaderLength &+ 2)) << 16
            h.channelKind = aa == LLPacket.advertisingAccessAddress ? .advertising : .data
        }
        if h.channelKind == .data {
            h.centralToPeripheral = flags & 2 != 0
            h.micChecked = flags & 4 != 0
            h.decrypted = h.micChecked
            h.micValid = h.micChecked && flags & 8 != 0
        } else if h.channelKind == .advertising, channel < 37 {
            h.auxType = (flags >> 1) & 3
        }
        let packet = record[(s &+ nordicHeaderLength)...]
        return (packet, h.lengthMismatch ? "nRF Sniffer header length \(headerLength) + payload \(payloadLength) ≠ record \(n)" : nil)
    }

    /// The nRF Sniffer's packet and event headers, in every protocol version.
    static let nordicHeaderLength = 17
}

extension LLPseudoHeader: Dissectable {
    public var summary: String {
        var s = ""
        if let c = channel { s += "ch \(c)" }
        if let r = rssi { s += (s.isEmpty ? "" : " ") + "\(r) dBm" }
        return s
    }

    public var fields: [Field] { FieldList.build(writeFields) }

    public func writeFields(to out: FieldSink) {
        switch linkType {
        case LinkType.leLLWithPHDR:
            out.begin("LE LL Pseudo Header", .none)
            if let rf = rfChannel { out.add("RF Channel", .uint(UInt64(rf), hex: 0)) }
            if let c = channel { out.add("Channel Index", .uint(UInt64(c), hex: 0)) }
            if let r = rssi { out.add("Signal Power", .signed(Int64(r), unit: "dBm")) }
            if let n = noise { out.add("Noise Power", .signed(Int64(n), unit: "dBm")) }
            if let o = accessAddressOffenses { out.add("Access Address Offenses", .uint(UInt64(o), hex: 0)) }
            if let a = referenceAccessAddress { out.add("Reference Access Address", .uint(UInt64(a), hex: 8)) }
            if let fl = phdrFlags {
                out.begin("Flags", .flags(UInt64(fl), hex: 4, SetBitNames(UInt64(fl) & LLPseudoHeader.phdrFlagBits, in: LLPseudoHeader.phdrFlagNames)))
                out.add("PDU Type", .named(UInt64((fl >> 7) & 7), hex: 0, LLPseudoHeader.phdrPDUTypes[Int((fl >> 7) & 7)]))
                out.add("PHY", .named(UInt64(fl >> 14), hex: 0, LLPhy.label(UInt8(truncatingIfNeeded: fl >> 14))))
                out.end()
            }
            out.end()
        case LinkType.nordicBLE:
            out.begin("nRF Sniffer", .none)
            if let b = board { out.add("Board", .uint(UInt64(b), hex: 0)) }
            if let v = protocolVersion { out.add("Protocol Version", .uint(UInt64(v), hex: 0)) }
            if let c = packetCounter { out.add("Packet Counter", .uint(UInt64(c), hex: 0)) }
            if let i = packetID { out.add("Packet ID", .uint(UInt64(i), hex: 2)) }
            if let fl = nordicFlags {
                let toPeripheral = fl & 2 != 0
                // The flags' names, each a bit of `nordicFlagNames`.
                var named: UInt64 = crcValid ? 0x01 : 0x02
                if channelKind == .data {
                    named |= toPeripheral ? 0x04 : 0x08
                    if micChecked { named |= micValid ? 0x30 : 0x50 }
                }
                out.begin("Flags", .flags(UInt64(fl), hex: 2, SetBitNames(named, in: LLPseudoHeader.nordicFlagNames)))
                out.add("CRC", .bool(crcValid))
                if channelKind == .data {
                    out.add("Direction", .text(toPeripheral ? "Central → Peripheral" : "Peripheral → Central"))
                    out.add("Encrypted", .bool(micChecked))
                    if micChecked { out.add("MIC", .bool(micValid)) }
                } else if let aux = auxType {
                    out.add("Aux Type", .named(UInt64(aux), hex: 0, LLPseudoHeader.auxTypeNames[Int(aux & 3)]))
                }
                out.add("PHY", .named(UInt64((fl >> 4) & 7), hex: 0, LLPhy.label((fl >> 4) & 7)))
                out.end()
            }
            if let c = channel { out.add("Channel Index", .uint(UInt64(c), hex: 0)) }
            if let r = rssi { out.add("RSSI", .signed(Int64(r), unit: "dBm")) }
            if let e = eventCounter { out.add("Event Counter", .uint(UInt64(e), hex: 0)) }
            if let t = nordicTime {
                out.add((protocolVersion ?? 0) >= 3 ? "Timestamp" : "Delta Time (end to start)",
                        .quantity(UInt64(t), hex: 0, Double(t), unit: "µs"))
            }
            if lengthMismatch { out.malformed("header and payload lengths do not match the record") }
            out.end()
        case LinkType.ppi:
            out.begin("PPI", .none)
            if let fl = ppiFlags { out.add("Flags", .uint(UInt64(fl), hex: 2)) }
            if let t = ppiLinkType { out.add("DLT", .uint(UInt64(t), hex: 0)) }
            if let mhz = ppiFrequency {
                out.begin("BTLE", .none)
                out.add("Frequency", .quantity(UInt64(mhz), hex: 0, Double(mhz), unit: "MHz"))
                if let c = channel { out.add("Channel Index", .uint(UInt64(c), hex: 0)) }
                if let c = ppiClock100ns { out.add("Clock (100 ns)", .uint(UInt64(c), hex: 0)) }
                if let v = ppiRSSIMax { out.add("RSSI Max", .signed(Int64(v), unit: "dBm")) }
                if let v = ppiRSSIMin { out.add("RSSI Min", .signed(Int64(v), unit: "dBm")) }
                if let v = ppiRSSIAverage { out.add("RSSI Average", .signed(Int64(v), unit: "dBm")) }
                if let v = ppiRSSICount { out.add("RSSI Count", .uint(UInt64(v), hex: 0)) }
                out.end()
            }
            out.end()
            if let inner = ppiLinkType, inner == LinkType.leLLWithPHDR || inner == LinkType.nordicBLE {
                var copy = self
                copy.linkType = inner
                copy.writeFields(to: out)
            }
        default:
            break
        }
    }

    static let phdrPDUTypes: [FieldLabel] = ["Advertising or Data (unspecified direction)", "Auxiliary Advertising",
                               "Data, Central to Peripheral", "Data, Peripheral to Central",
                               "Connected Isochronous, Central to Peripheral", "Connected Isochronous, Peripheral to Central",
                               "Broadcast Isochronous", "Reserved"]
    static let auxTypeNames: [FieldLabel] = ["AUX_ADV_IND", "AUX_CHAIN_IND", "AUX_SYNC_IND", "AUX_SCAN_RSP"]
    /// The LE LL pseudo header's flag bits, by bit; bits 7–9 (PDU type) and 14–15 (PHY) are
    /// fields of their own, outside `phdrFlagBits`.
    static let phdrFlagNames: BitNames = ["Dewhitened", "Signal Power Valid", "Noise Power Valid", "Decrypted",
                                "Reference Access Address Valid", "Access Address Offenses Valid", "Channel Aliased",
                                "", "", "", "CRC Checked", "CRC Valid", "MIC Checked", "MIC Valid"]
    static let phdrFlagBits: UInt64 = 0x3C7F
    /// What the nRF Sniffer's flags say, in the order they are named.
    static let nordicFlagNames: BitNames = ["CRC OK", "CRC bad", "Central → Peripheral", "Peripheral → Central",
                                  "Encrypted", "MIC OK", "MIC bad"]
}
