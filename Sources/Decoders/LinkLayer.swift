import Wire

/// LE link-layer packets and PDUs over the air (Core 5.4 Vol 6 Part B 2): the access address, the
/// advertising and data physical channel PDUs, LL control PDUs, and the CRC-24 (3.1.1).

/// Access address, PDU and CRC as a sniffer delivers them (preamble stripped).
public struct LLPacket: Sendable {
    public static let advertisingAccessAddress: UInt32 = 0x8E89_BED6
    public static let advertisingCRCInit: UInt32 = 0x555555

    public let accessAddress: UInt32
    /// Header (2 octets) and payload, without the CRC.
    public let pdu: Bytes
    /// The CRC as sent (LFSR value, bit 23 first on air); nil when the capture cut it off.
    public let crc: UInt32?
    /// The same three octets read as a little-endian number: how some tools (SweynTooth's capture
    /// writer) store the LFSR value instead of its bits in air order.
    public let crcAsNumber: UInt32?

    /// Microseconds a packet with a PDU (header and payload) of `pduLength` octets is on air
    /// (Vol 6 Part B 2.1): LE 1M 8 µs an octet with a 1-octet preamble, LE 2M 4 µs with 2, LE Coded
    /// taken at S=8 (the longest): 80 µs preamble, 256 access address, 16 CI, 24 TERM1, 64 µs an
    /// octet of PDU and CRC, 24 TERM2.
    public static func airTime(pduLength: Int, phy: UInt8) -> Int64 {
        switch phy {
        case 1: return Int64(9 + pduLength) * 4
        case 2: return 400 + Int64(pduLength + 3) * 64
        default: return Int64(8 + pduLength) * 8
        }
    }

    /// LE Coded PHY only: the Coding Indicator (Vol 6 Part B 2.2.3; 0 S=8, 1 S=2), which a sniffer
    /// header of link type 256 keeps in an octet after the access address.
    public let codingIndicator: UInt8?

    /// Splits access address + PDU + CRC. The PDU's length octet decides where the CRC is; extra
    /// bytes are ignored, a short packet keeps what there is (no CRC). `coded`: an octet holding the
    /// Coding Indicator follows the access address.
    public init?(_ b: borrowing Bytes, coded: Bool = false) {
        // By index: each slice of the record (what follows the access address, the PDU, the
        // CRC) was a retain and a release.
        let s = b.startIndex, start = s &+ (coded ? 5 : 4), end = b.endIndex
        guard start <= end else { return nil }
        accessAddress = UInt32(b[s]) | UInt32(b[s &+ 1]) << 8 | UInt32(b[s &+ 2]) << 16 | UInt32(b[s &+ 3]) << 24
        codingIndicator = coded ? b[s &+ 4] & 0x03 : nil
        guard end &- start >= 2 else {
            pdu = b[start..<end]
            crc = nil
            crcAsNumber = nil
            return
        }
        let pduEnd = start &+ 2 &+ Int(b[start &+ 1])
        if end &- pduEnd >= 3 {
            pdu = b[start..<pduEnd]
            let c0 = b[pduEnd], c1 = b[pduEnd &+ 1], c2 = b[pduEnd &+ 2]
            // Bytes on air are sent LSB first; the CRC is sent bit 23 first.
            crc = UInt32(LLCRC.reverse(c0)) << 16 | UInt32(LLCRC.reverse(c1)) << 8 | UInt32(LLCRC.reverse(c2))
            crcAsNumber = UInt32(c0) | UInt32(c1) << 8 | UInt32(c2) << 16
        } else {
            pdu = b[start..<Swift.min(pduEnd, end)]
            crc = nil
            crcAsNumber = nil
        }
    }

    public var isAdvertising: Bool { accessAddress == LLPacket.advertisingAccessAddress }

    static let codingIndicatorNames: [FieldLabel] = ["FEC Block 2 coded using S=8", "FEC Block 2 coded using S=2", "Reserved", "Reserved"]
}

/// CRC-24, polynomial x^24 + x^10 + x^9 + x^6 + x^4 + x^3 + x + 1 (Vol 6 Part B 3.1.1).
public enum LLCRC {
    /// LFSR over `data` (each octet LSB first) from `initial` (the CRCInit value as the spec and
    /// CONNECT_IND give it); the result compares with `LLPacket.crc`.
    public static func compute(_ data: Bytes, initial: UInt32) -> UInt32 {
        // Reflected form: position 0 of the spec's register is bit 23 here.
        var state = reverse24(initial)
        for byte in data { state = state >> 8 ^ octetSteps[Int((state ^ UInt32(byte)) & 0xFF)] }
        return reverse24(state)
    }

    /// The register after eight shifts from each low octet (the LFSR is linear, so a whole octet
    /// is one lookup): the polynomial x^24 + x^10 + x^9 + x^6 + x^4 + x^3 + x + 1, reflected.
    static let octetSteps: [UInt32] = (0..<256).map { (i: UInt32) in
        var state = i
        for _ in 0..<8 { state = state & 1 != 0 ? state >> 1 ^ 0xDA6000 : state >> 1 }
        return state
    }

    /// Runs the LFSR backwards from a received CRC to the CRCInit that produced it, so a
    /// connection whose CONNECT_IND was missed can still be checked.
    public static func recoverInit(_ data: Bytes, crc: UInt32) -> UInt32 {
        var state = reverse24(crc)
        for byte in data.reversed() {
            for i in stride(from: 7, through: 0, by: -1) {
                let bit = UInt32(byte >> UInt8(i)) & 1
                let top = state >> 23 & 1 // was feedback
                if top != 0 { state ^= 0xDA6000 }
                state = (state << 1 | (top ^ bit)) & 0xFFFFFF
            }
        }
        return reverse24(state)
    }

    @inline(__always) public static func reverse(_ b: UInt8) -> UInt8 {
        var v = b
        v = (v & 0xF0) >> 4 | (v & 0x0F) << 4
        v = (v & 0xCC) >> 2 | (v & 0x33) << 2
        v = (v & 0xAA) >> 1 | (v & 0x55) << 1
        return v
    }

    @inline(__always) static func reverse24(_ v: UInt32) -> UInt32 {
        UInt32(reverse(UInt8(truncatingIfNeeded: v))) << 16 | UInt32(reverse(UInt8(truncatingIfNeeded: v >> 8))) << 8
            | UInt32(reverse(UInt8(truncatingIfNeeded: v >> 16)))
    }
}

// MARK: - Advertising physical channel PDUs

/// Advertising PDU types (Vol 6 Part B 2.3). Some values mean another PDU on a secondary channel.
public enum LLAdvType {
    public static func name(_ type: UInt8, secondary: Bool, auxType: UInt8?) -> String {
        label(type, secondary: secondary, auxType: auxType).string
    }

    static func label(_ type: UInt8, secondary: Bool, auxType: UInt8?) -> FieldLabel {
        switch type & 0xF {
        case 0: return "ADV_IND"
        case 1: return "ADV_DIRECT_IND"
        case 2: return "ADV_NONCONN_IND"
        case 3: return secondary ? "AUX_SCAN_REQ" : "SCAN_REQ"
        case 4: return "SCAN_RSP"
        case 5: return secondary ? "AUX_CONNECT_REQ" : "CONNECT_IND"
        case 6: return "ADV_SCAN_IND"
        case 7:
            guard secondary else { return "ADV_EXT_IND" }
            return LLPseudoHeader.auxTypeNames[Int((auxType ?? 0) & 3)]
        case 8: return "AUX_CONNECT_RSP"
        default: return FieldLabel("Reserved (\(type & 0xF))")
        }
    }
}

/// CONNECT_IND / AUX_CONNECT_REQ LLData (Vol 6 Part B 2.3.3.1).
public struct LLConnectInd: Sendable {
    public let initA: BDAddr, advA: BDAddr
    public let accessAddress: UInt32
    public let crcInit: UInt32
    public let winSize: UInt8
    public let winOffset: UInt16, interval: UInt16, latency: UInt16, timeout: UInt16
    /// 37 bits, bit n = data channel n used.
    public let channelMap: UInt64
    public let hop: UInt8, sca: UInt8

    init(_ p: Bytes) throws(DecodeError) {
        var r = ByteReader(p)
        initA = try r.address()
        advA = try r.address()
        accessAddress = try r.u32()
        crcInit = try r.u24()
        winSize = try r.u8()
        winOffset = try r.u16()
        interval = try r.u16()
        latency = try r.u16()
        timeout = try r.u16()
        channelMap = try r.uint(width: 5)
        let hs = try r.u8()
        hop = hs & 0x1F
        sca = hs >> 5
    }

    public static let scaNames: [FieldLabel] = ["251 ppm to 500 ppm", "151 ppm to 250 ppm", "101 ppm to 150 ppm", "76 ppm to 100 ppm",
                                  "51 ppm to 75 ppm", "31 ppm to 50 ppm", "21 ppm to 30 ppm", "0 ppm to 20 ppm"]

    func writeFields(to out: FieldSink) {
        out.add("Initiator Address", .address(initA))
        out.add("Advertising Address", .address(advA))
        out.add("Access Address", .uint(UInt64(accessAddress), hex: 8))
        out.add("CRC Init", .uint(UInt64(crcInit), hex: 6))
        out.add("Window Size", .quantity(UInt64(winSize), hex: 0, Double(winSize) * 1.25, unit: "ms"))
        out.add("Window Offset", .quantity(UInt64(winOffset), hex: 0, Double(winOffset) * 1.25, unit: "ms"))
        out.add("Interval", .quantity(UInt64(interval), hex: 0, Double(interval) * 1.25, unit: "ms"))
        out.add("Latency", .uint(UInt64(latency), hex: 0))
        out.add("Timeout", .quantity(UInt64(timeout), hex: 0, Double(timeout) * 10, unit: "ms"))
        LLFieldKind.writeChannelMap("Channel Map", channelMap, width: 5, to: out)
        out.add("Hop", .uint(UInt64(hop), hex: 0))
        out.add("Sleep Clock Accuracy", .named(UInt64(sca), hex: 0, LLConnectInd.scaNames[Int(sca & 7)]))
        if hop < 5 || hop > 16 { out.malformed("hop increment \(hop) outside 5...16") }
    }
}

/// Common Extended Advertising Payload Format (Vol 6 Part B 2.3.4).
public struct LLExtendedHeader: Sendable {
    public let advMode: UInt8
    public let length: UInt8
    public let flags: UInt8
    public var advA: BDAddr?, targetA: BDAddr?
    public var cteInfo: UInt8?
    /// DID (12 bits) and SID (4 bits).
    public var adi: UInt16?
    public var auxPtr: UInt32?
    public var syncInfo: Bytes?
    public var txPower: Int8?
    public var acad: Bytes?
    public var malformed: String?

    /// Reads the extended header; `r` is left at the advertising data.
    init(_ r: inout ByteReader) throws(DecodeError) {
        let b0 = try r.u8()
        length = b0 & 0x3F
        advMode = b0 >> 6
        var h = ByteReader(try r.take(Int(length)))
        flags = length > 0 ? try h.u8() : 0
        do {
            if flags & 0x01 != 0 { advA = try h.address() }
            if flags & 0x02 != 0 { targetA = try h.address() }
            if flags & 0x04 != 0 { cteInfo = try h.u8() }
            if flags & 0x08 != 0 { adi = try h.u16() }
            if flags & 0x10 != 0 { auxPtr = try h.u24() }
            if flags & 0x20 != 0 { syncInfo = try h.take(18) }
            if flags & 0x40 != 0 { txPower = try h.i8() }
            if !h.isAtEnd { acad = h.rest() }
        } catch {
            malformed = "extended header fields longer than its length \(length)"
        }
    }

    public static let advModeNames: [FieldLabel] = ["Non-connectable, non-scannable", "Connectable", "Scannable", "Reserved"]
    static let flagNames: BitNames = ["AdvA", "TargetA", "CTEInfo", "AdvDataInfo", "AuxPtr", "SyncInfo", "TxPower", "RFU"]

    func writeFields(to out: FieldSink) {
        out.add("Extended Header Length", .uint(UInt64(length), hex: 0))
        out.add("AdvMode", .named(UInt64(advMode), hex: 0, LLExtendedHeader.advModeNames[Int(advMode & 3)]))
        guard length > 0 else { return }
        out.add("Extended Header Flags", .flags(UInt64(flags), hex: 2, SetBitNames(UInt64(flags), in: LLExtendedHeader.flagNames)))
        if let a = advA { out.add("Advertising Address", .address(a)) }
        if let a = targetA { out.add("Target Address", .address(a)) }
        if let c = cteInfo { LLFieldKind.writeCTEInfo(c, to: out) }
        if let adi {
            out.begin("AdvDataInfo", .uint(UInt64(adi), hex: 4))
            out.add("Advertising Data ID", .uint(UInt64(adi & 0x0FFF), hex: 3))
            out.add("Advertising Set ID", .uint(UInt64(adi >> 12), hex: 0))
            out.end()
        }
        if let p = auxPtr {
            let offsetUnits = p >> 7 & 1
            let offset = p >> 8 & 0x1FFF
            out.begin("AuxPtr", .uint(UInt64(p), hex: 6))
            out.add("Channel Index", .uint(UInt64(p & 0x3F), hex: 0))
            out.add("Clock Accuracy", .text(p >> 6 & 1 == 0 ? "51 ppm to 500 ppm" : "0 ppm to 50 ppm"))
            out.add("Offset Units", .named(UInt64(offsetUnits), hex: 0, offsetUnits == 0 ? "30 µs" : "300 µs"))
            out.add("Aux Offset", .quantity(UInt64(offset), hex: 0, Double(offset) * (offsetUnits == 0 ? 30 : 300), unit: "µs"))
            out.add("Aux PHY", .named(UInt64(p >> 21), hex: 0, LLPhy.label(UInt8(truncatingIfNeeded: p >> 21))))
            out.end()
        }
        if let s = syncInfo { out.add("SyncInfo", .bytes(s)) }
        if let t = txPower { out.add("TX Power", .signed(Int64(t), unit: "dBm")) }
        if let a = acad { out.add("ACAD", .bytes(a)) }
        if let m = malformed { out.malformed(m) }
    }
}

/// One advertising physical channel PDU.
public struct LLAdvertisingPDU: Sendable, Dissectable {
    public let type: UInt8
    public let chSel: Bool, txAdd: Bool, rxAdd: Bool
    public let length: UInt8
    /// The PDU type's name (`LLAdvType`).
    public let label: FieldLabel
    public var name: String { label.string }
    public let payload: Bytes

    public enum Body: Sendable {
        /// ADV_IND, ADV_NONCONN_IND, ADV_SCAN_IND, SCAN_RSP.
        case advertising(advA: BDAddr, data: Bytes)
        case direct(advA: BDAddr, targetA: BDAddr)
        /// SCAN_REQ, AUX_SCAN_REQ.
        case scanRequest(scanA: BDAddr, advA: BDAddr)
        case connect(LLConnectInd)
        case extended(LLExtendedHeader, data: Bytes)
        case reserved
        case malformed(String)
    }
    public let body: Body

    /// - Parameters: secondary: the packet came on a data channel index (0–36), where type 3, 5 and 7
    ///   mean AUX_ PDUs; auxType: the sniffer's word on which 0b0111 PDU it is.
    public init(_ pdu: borrowing Bytes, secondary: Bool = false, auxType: UInt8? = nil) {
        let h0 = pdu.byte(0) ?? 0
        type = h0 & 0x0F
        chSel = h0 & 0x20 != 0
        txAdd = h0 & 0x40 != 0
        rxAdd = h0 & 0x80 != 0
        length = pdu.byte(1) ?? 0
        let label = LLAdvType.label(type, secondary: secondary, auxType: auxType)
        self.label = label
        payload = pdu.from(2)
        guard pdu.count >= 2 else { body = .malformed("PDU header truncated"); return }
        var r = ByteReader(payload)
        do {
            switch type {
            case 0, 2, 4, 6:
                body = .advertising(advA: try r.address(), data: r.rest())
            case 1:
                body = .direct(advA: try r.address(), targetA: try r.address())
            case 3:
                body = .scanRequest(scanA: try r.address(), advA: try r.address())
            case 5:
                body = .connect(try LLConnectInd(payload))
            case 7, 8:
                let h = try LLExtendedHeader(&r)
                body = .extended(h, data: r.rest())
            default:
                body = .reserved
            }
        } catch {
            body = .malformed("\(label) payload truncated (\(payload.count) bytes)")
        }
    }

    public var connectInd: LLConnectInd? { if case .connect(let c) = body { return c } else { return nil } }

    /// The advertising report an HCI controller would have given for this PDU, so sniffer captures
    /// feed the same advertiser model and rules as HCI logs: legacy ADV_IND, ADV_DIRECT_IND,
    /// ADV_NONCONN_IND, ADV_SCAN_IND and SCAN_RSP, and extended PDUs that carry an advertiser and
    /// data (AUX_ADV_IND, AUX_SCAN_RSP). Nil for requests, CONNECT_IND, and PDUs that carry no
    /// advertising data of their own (ADV_EXT_IND, AUX_CHAIN_IND).
    public func report(rssi: Int8?) -> AdvertisingReport? {
        let addressType: UInt8 = txAdd ? 1 : 0
        var rep: AdvertisingReport
        switch body {
        case .advertising(let a, let data):
            // Legacy event properties (Core Vol 4 Part E 7.7.65.13): the SCAN_RSP's advertisement
            // is not in the PDU; ADV_IND's is the common one.
            let properties: UInt16
            switch type {
            case 0: properties = 0x13 // ADV_IND
            case 6: properties = 0x12 // ADV_SCAN_IND
            case 4: properties = 0x1B // SCAN_RSP
            default: properties = 0x10 // ADV_NONCONN_IND
            }
            rep = AdvertisingReport(subevent: AdvertisingReports.legacy, eventType: properties, properties: properties,
                                    addressType: addressType, address: a, dataRange: data.startIndex..<data.endIndex)
        case .direct(let a, _):
            rep = AdvertisingReport(subevent: AdvertisingReports.legacy, eventType: 0x15, properties: 0x15,
                                    addressType: addressType, address: a, dataRange: 0..<0)
        case .extended(let h, let data):
            guard let a = h.advA, !data.isEmpty else { return nil }
            let properties = UInt16(h.advMode & 0x03) | (type == 7 && label == "AUX_SCAN_RSP" ? 0x08 : 0)
            rep = AdvertisingReport(subevent: AdvertisingReports.extended, eventType: properties, properties: properties,
                                    addressType: addressType, address: a, dataRange: data.startIndex..<data.endIndex)
            if let t = h.txPower { rep.txPower = t }
        default:
            return nil
        }
        if let r = rssi { rep.rssi = r }
        return rep
    }

    public var advertiser: BDAddr? {
        switch body {
        case .advertising(let a, _), .direct(let a, _), .scanRequest(_, let a): return a
        case .connect(let c): return c.advA
        case .extended(let h, _): return h.advA
        default: return nil
        }
    }

    public var summary: String { TextLine.make(writeSummary) }

    public func writeSummary(to s: inout TextLine) {
        s.write(label: label)
        switch body {
        case .advertising(let a, _): s.write(byte: 32); s.write(a)
        case .direct(let a, let t): s.write(byte: 32); s.write(a); s += " → "; s.write(t)
        case .scanRequest(let scanner, let a): s.write(byte: 32); s.write(scanner); s += " → "; s.write(a)
        case .connect(let c):
            s.write(byte: 32); s.write(c.initA); s += " → "; s.write(c.advA)
            s += " AA "; s.write(hex: c.accessAddress, width: 8)
        case .extended(let h, _): if let a = h.advA { s.write(byte: 32); s.write(a) }
        case .reserved: break
        case .malformed(let m): s += " (malformed: "; s.write(m); s.write(byte: UInt8(ascii: ")"))
        }
    }

    public var fields: [Field] { FieldList.build(writeFields) }

    public func writeFields(to out: FieldSink) {
        out.begin("Packet Header", .uint(UInt64(type) | UInt64(txAdd ? 0x40 : 0) | UInt64(rxAdd ? 0x80 : 0) | UInt64(chSel ? 0x20 : 0) | UInt64(length) << 8, hex: 4))
        out.add("PDU Type", .named(UInt64(type), hex: 1, label))
        out.add("ChSel", .named(chSel ? 1 : 0, hex: 0, chSel ? "#2" : "#1"))
        out.add("TxAdd", .named(txAdd ? 1 : 0, hex: 0, txAdd ? "Random" : "Public"))
        out.add("RxAdd", .named(rxAdd ? 1 : 0, hex: 0, rxAdd ? "Random" : "Public"))
        out.add("Length", .uint(UInt64(length), hex: 0))
        out.end()
        func advertisingData(_ label: FieldLabel, _ data: Bytes) {
            out.begin(label, .bytes(data))
            AdvertisingData(data).writeFields(to: out)
            out.end()
        }
        switch body {
        case .advertising(let a, let data):
            out.add("Advertising Address", .address(a))
            advertisingData(type == 4 ? "Scan Response Data" : "Advertising Data", data)
        case .direct(let a, let t):
            out.add("Advertising Address", .address(a))
            out.add("Target Address", .address(t))
        case .scanRequest(let s, let a):
            out.add("Scanning Address", .address(s))
            out.add("Advertising Address", .address(a))
        case .connect(let c):
            c.writeFields(to: out)
        case .extended(let h, let data):
            h.writeFields(to: out)
            if !data.isEmpty { advertisingData("Advertising Data", data) }
        case .reserved:
            out.add("Payload", .bytes(payload))
        case .malformed(let m):
            out.add("Payload", .bytes(payload))
            out.malformed(m)
        }
    }
}

// MARK: - Data physical channel PDUs

/// LLID (Vol 6 Part B 2.4): 01 continuation or empty, 10 start or complete, 11 control.
public enum LLID: UInt8, Sendable {
    case reserved = 0, continuation = 1, start = 2, control = 3

    public var name: String { label.string }

    public var label: FieldLabel {
        switch self {
        case .reserved: return "Reserved"
        case .continuation: return "Continuation fragment of an L2CAP message, or an Empty PDU"
        case .start: return "Start of an L2CAP message or a complete L2CAP message with no fragmentation"
        case .control: return "LL Control PDU"
        }
    }
}

/// A data physical channel PDU. `payload` excludes the CTEInfo octet and the MIC.
public struct LLDataPDU: Sendable, Dissectable {
    public let header: UInt8
    public let length: UInt8
    public let cteInfo: UInt8?
    public let payload: Bytes
    public let mic: Bytes?
    /// Still ciphertext (no key): the payload cannot be read.
    public let encrypted: Bool
    public let malformed: String?

    public var llid: LLID { LLID(rawValue: header & 3) ?? .reserved }
    public var nesn: Bool { header & 0x04 != 0 }
    public var sn: Bool { header & 0x08 != 0 }
    public var md: Bool { header & 0x10 != 0 }
    public var cp: Bool { header & 0x20 != 0 }
    public var isEmpty: Bool { llid == .continuation && length == 0 }

    /// - Parameters: hasMIC: the payload ends with a 4-byte MIC (encrypted link, non-empty PDU);
    ///   encrypted: the payload is still ciphertext.
    public init(_ pdu: borrowing Bytes, hasMIC: Bool = false, encrypted: Bool = false) {
        header = pdu.byte(0) ?? 0
        length = pdu.byte(1) ?? 0
        var body = pdu.from(2)
        var problem: String? = pdu.count < 2 ? "PDU header truncated" : nil
        if header & 0x20 != 0, let c = body.first {
            cteInfo = c
            body = body.dropFirst()
        } else {
            cteInfo = nil
        }
        if body.count < Int(length) &- (cteInfo == nil ? 0 : 1), problem == nil {
            problem = "length \(length) but \(body.count) bytes follow"
        }
        if hasMIC && body.count >= 4 {
            mic = body.suffix(4)
            body = body.dropLast(4)
        } else {
            if hasMIC && problem == nil { problem = "encrypted PDU shorter than its MIC" }
            mic = nil
        }
        payload = body
        self.encrypted = encrypted
        if problem == nil, header & 3 == 0 { problem = "reserved LLID 0" }
        malformed = problem
    }

    public var control: LLControlPDU? {
        guard llid == .control, !encrypted, let op = payload.first else { return nil }
        return LLControlPDU(opcode: op, parameters: payload.dropFirst())
    }

    public var summary: String { TextLine.make(writeSummary) }

    public func writeSummary(to s: inout TextLine) {
        func bytes(_ head: StaticString) { s += head; s.write(payload.count); s += " bytes)" }
        if encrypted {
            if length == 0 { s += "Empty PDU" } else { bytes("Encrypted data (") }
            return
        }
        if let c = control { c.writeSummary(to: &s); return }
        if isEmpty { s += "Empty PDU"; return }
        switch llid {
        case .start: bytes("L2CAP start (")
        case .continuation: bytes("L2CAP continuation (")
        case .control: s += "LL Control PDU (no opcode)"
        case .reserved: s += "Reserved LLID"
        }
    }

    public var fields: [Field] { FieldList.build(writeFields) }

    public func writeFields(to out: FieldSink) {
        out.begin("Data Header", .uint(UInt64(header) | UInt64(length) << 8, hex: 4))
        out.add("LLID", .named(UInt64(header & 3), hex: 0, llid.label))
        out.add("NESN", .uint(nesn ? 1 : 0, hex: 0))
        out.add("SN", .uint(sn ? 1 : 0, hex: 0))
        out.add("More Data", .bool(md))
        out.add("CTEInfo Present", .bool(cp))
        out.add("Length", .uint(UInt64(length), hex: 0))
        out.end()
        if let c = cteInfo { LLFieldKind.writeCTEInfo(c, to: out) }
        if encrypted {
            if !payload.isEmpty { out.add("Encrypted Payload", .bytes(payload)) }
        } else if let c = control {
            out.begin(c.label, .uint(UInt64(c.opcode), hex: 2))
            c.writeFields(to: out)
            out.end()
        } else if !payload.isEmpty {
            out.add("Payload", .bytes(payload))
        }
        if let m = mic { out.add("MIC", .bytes(m)) }
        if let m = malformed { out.malformed(m) }
    }
}

// MARK: - LL control PDUs

/// How one LL control parameter is read and shown.
enum LLFieldKind: Sendable {
    case hex(Int)            // unsigned, width in octets, hex
    case dec(Int)            // unsigned decimal
    case signed8(String)     // signed octet with unit
    case units(Int, Double, String) // width, scale, unit
    case error
    case channelMap(Int)
    case features
    case phys
    case company
    case sca
    case address
    case bytes(Int)
    case cteReq

    static func writeChannelMap(_ label: FieldLabel, _ map: UInt64, width: Int, to out: FieldSink) {
        out.begin(label, .uint(map, hex: width * 2))
        out.add("Used Channels", .uint(UInt64(map.nonzeroBitCount), hex: 0))
        out.end()
    }

    static let cteTypes: [FieldLabel] = ["AoA", "AoD 1 µs", "AoD 2 µs", "Reserved"]

    static func writeCTEInfo(_ c: UInt8, to out: FieldSink) {
        out.begin("CTEInfo", .uint(UInt64(c), hex: 2))
        out.add("CTETime", .quantity(UInt64(c & 0x1F), hex: 0, Double(c & 0x1F) * 8, unit: "µs"))
        out.add("CTEType", .named(UInt64(c >> 6), hex: 0, cteTypes[Int(c >> 6)]))
        out.end()
    }

    /// Octets the parameter takes.
    var width: Int {
        switch self {
        case .hex(let w), .dec(let w), .units(let w, _, _), .channelMap(let w), .bytes(let w): return w
        case .signed8, .error, .phys, .sca, .cteReq: return 1
        case .features: return 8
        case .company: return 2
        case .address: return 6
        }
    }

    /// Reads one parameter and writes it; writes nothing when the PDU ends first.
    func write(_ label: FieldLabel, _ r: inout ByteReader, to out: FieldSink) throws(DecodeError) {
        switch self {
        case .hex(let w): out.add(label, .uint(try r.uint(width: w), hex: w * 2))
        case .dec(let w): out.add(label, .uint(try r.uint(width: w), hex: 0))
        case .signed8(let unit): out.add(label, .signed(Int64(try r.i8()), unit: unit))
        case .units(let w, let scale, let unit):
            let v = try r.uint(width: w)
            out.add(label, .quantity(v, hex: 0, Double(v) * scale, unit: unit))
        case .error:
            let v = try r.u8()
            out.add(label, .named(UInt64(v), hex: 2, HCIErrors.label(v)))
        case .channelMap(let w): LLFieldKind.writeChannelMap(label, try r.uint(width: w), width: w, to: out)
        case .features:
            let v = try r.u64()
            out.add(label, .flags(v, hex: 16, SetBitNames(v, in: HCINames.leFeatureBits)))
        case .phys:
            let v = try r.u8()
            out.add(label, .flags(UInt64(v), hex: 2, SetBitNames(UInt64(v), in: LLPhy.bitNames)))
        case .company:
            let v = try r.u16()
            out.add(label, .company(v) ?? .named(UInt64(v), hex: 4, "Unknown"))
        case .sca:
            let v = try r.u8()
            out.add(label, .named(UInt64(v), hex: 0, LLConnectInd.scaNames[Int(v & 7)]))
        case .address: out.add(label, .address(try r.address()))
        case .bytes(let n): out.add(label, .bytes(try r.take(n)))
        case .cteReq:
            let v = try r.u8()
            out.begin(label, .uint(UInt64(v), hex: 2))
            out.add("MinCTELenReq", .quantity(UInt64(v & 0x1F), hex: 0, Double(v & 0x1F) * 8, unit: "µs"))
            out.add("CTETypeReq", .uint(UInt64(v >> 6), hex: 0))
            out.end()
        }
    }
}

/// An LL control PDU (Vol 6 Part B 2.4.2): opcode and parameters, decoded from `LLControlPDU.table`.
public struct LLControlPDU: Sendable, Dissectable {
    public let opcode: UInt8
    public let parameters: Bytes

    public var name: String {
        Int(opcode) < LLControlPDU.table.count ? LLControlPDU.table[Int(opcode)].0 : "Unknown LL Control Opcode " + Hex.prefixed(opcode, width: 2)
    }

    /// `name` as a field label, made once per opcode.
    var label: FieldLabel {
        Int(opcode) < LLControlPDU.labels.count ? LLControlPDU.labels[Int(opcode)] : FieldLabel(name)
    }
    private static let labels = table.map { FieldLabel($0.0) }

    /// Every known control PDU's name, by opcode.
    public static var names: [String] { table.map(\.0) }

    public var summary: String { TextLine.make(writeSummary) }

    /// The name, and for a few PDUs what they say: an error, the unknown opcode, the version.
    public func writeSummary(to s: inout TextLine) {
        s.write(plain: name)
        switch opcode {
        case 0x02, 0x0D:
            if let e = parameters.byte(0) {
                s.write(byte: 0x20)
                s.write(plain: HCIErrors.name(e))
            }
        case 0x07:
            if let t = parameters.byte(0) {
                s.write(byte: 0x20)
                if Int(t) < LLControlPDU.table.count { s.write(plain: LLControlPDU.table[Int(t)].0) } else { s.write(hex: t, width: 2) }
            }
        case 0x0C:
            if let v = parameters.byte(0), let c = parameters.le16(1) {
                s += " version "
                s.write(v)
                s.write(byte: 0x20)
                if let company = AssignedNumbers.companyLabel(c) { s.write(name: company) } else { s.write(hex: c, width: 4) }
            }
        default: break
        }
    }

    public var fields: [Field] { FieldList.build(writeFields) }

    public func writeFields(to out: FieldSink) {
        guard Int(opcode) < LLControlPDU.table.count else {
            if !parameters.isEmpty { out.add("Parameters", .bytes(parameters)) }
            return
        }
        var r = ByteReader(parameters)
        for (label, kind) in LLControlPDU.table[Int(opcode)].1 {
            do { try kind.write(label, &r, to: out) } catch {
                out.malformed("\(name) ends before \(label)")
                return
            }
        }
        if !r.isAtEnd { out.add("Extra Bytes", .bytes(r.rest())) }
    }

    /// Whether the parameters end before the opcode's last one: the one fault its decode marks.
    var isTruncated: Bool {
        guard Int(opcode) < LLControlPDU.table.count else { return false }
        return LLControlPDU.table[Int(opcode)].1.reduce(0) { $0 + $1.1.width } > parameters.count
    }

    /// Opcode order, Core 5.4 Vol 6 Part B 2.4.2.
    static let connParams: [(FieldLabel, LLFieldKind)] = [
        ("Interval_Min", .units(2, 1.25, "ms")), ("Interval_Max", .units(2, 1.25, "ms")), ("Latency", .dec(2)),
        ("Timeout", .units(2, 10, "ms")), ("PreferredPeriodicity", .dec(1)), ("ReferenceConnEventCount", .dec(2)),
        ("Offset0", .dec(2)), ("Offset1", .dec(2)), ("Offset2", .dec(2)), ("Offset3", .dec(2)), ("Offset4", .dec(2)), ("Offset5", .dec(2)),
    ]
    static let lengthParams: [(FieldLabel, LLFieldKind)] = [
        ("MaxRxOctets", .dec(2)), ("MaxRxTime", .units(2, 1, "µs")), ("MaxTxOctets", .dec(2)), ("MaxTxTime", .units(2, 1, "µs")),
    ]
    static let syncInd: [(FieldLabel, LLFieldKind)] = [
        ("ID", .hex(2)), ("SyncInfo", .bytes(18)), ("connEventCount", .dec(2)), ("lastPaEventCounter", .dec(2)),
        ("SID, AType, SCA", .hex(1)), ("PHY", .phys), ("AdvA", .address), ("syncConnEventCount", .dec(2)),
    ]
    static let table: [(String, [(FieldLabel, LLFieldKind)])] = [
        ("LL_CONNECTION_UPDATE_IND", [("WinSize", .units(1, 1.25, "ms")), ("WinOffset", .units(2, 1.25, "ms")), ("Interval", .units(2, 1.25, "ms")),
                                      ("Latency", .dec(2)), ("Timeout", .units(2, 10, "ms")), ("Instant", .dec(2))]),
        ("LL_CHANNEL_MAP_IND", [("ChM", .channelMap(5)), ("Instant", .dec(2))]),
        ("LL_TERMINATE_IND", [("ErrorCode", .error)]),
        ("LL_ENC_REQ", [("Rand", .hex(8)), ("EDIV", .hex(2)), ("SKDm", .hex(8)), ("IVm", .hex(4))]),
        ("LL_ENC_RSP", [("SKDs", .hex(8)), ("IVs", .hex(4))]),
        ("LL_START_ENC_REQ", []),
        ("LL_START_ENC_RSP", []),
        ("LL_UNKNOWN_RSP", [("UnknownType", .hex(1))]),
        ("LL_FEATURE_REQ", [("FeatureSet", .features)]),
        ("LL_FEATURE_RSP", [("FeatureSet", .features)]),
        ("LL_PAUSE_ENC_REQ", []),
        ("LL_PAUSE_ENC_RSP", []),
        ("LL_VERSION_IND", [("VersNr", .hex(1)), ("CompId", .company), ("SubVersNr", .hex(2))]),
        ("LL_REJECT_IND", [("ErrorCode", .error)]),
        ("LL_PERIPHERAL_FEATURE_REQ", [("FeatureSet", .features)]),
        ("LL_CONNECTION_PARAM_REQ", connParams),
        ("LL_CONNECTION_PARAM_RSP", connParams),
        ("LL_REJECT_EXT_IND", [("RejectOpcode", .hex(1)), ("ErrorCode", .error)]),
        ("LL_PING_REQ", []),
        ("LL_PING_RSP", []),
        ("LL_LENGTH_REQ", lengthParams),
        ("LL_LENGTH_RSP", lengthParams),
        ("LL_PHY_REQ", [("TX_PHYS", .phys), ("RX_PHYS", .phys)]),
        ("LL_PHY_RSP", [("TX_PHYS", .phys), ("RX_PHYS", .phys)]),
        ("LL_PHY_UPDATE_IND", [("PHY_C_TO_P", .phys), ("PHY_P_TO_C", .phys), ("Instant", .dec(2))]),
        ("LL_MIN_USED_CHANNELS_IND", [("PHYS", .phys), ("MinUsedChannels", .dec(1))]),
        ("LL_CTE_REQ", [("CTETypeReq", .cteReq)]),
        ("LL_CTE_RSP", []),
        ("LL_PERIODIC_SYNC_IND", syncInd),
        ("LL_CLOCK_ACCURACY_REQ", [("SCA", .sca)]),
        ("LL_CLOCK_ACCURACY_RSP", [("SCA", .sca)]),
        ("LL_CIS_REQ", [("CIG_ID", .hex(1)), ("CIS_ID", .hex(1)), ("PHY_C_To_P", .phys), ("PHY_P_To_C", .phys),
                        ("Max_SDU_C_To_P, Framed", .hex(2)), ("Max_SDU_P_To_C", .hex(2)),
                        ("SDU_Interval_C_To_P", .units(3, 1, "µs")), ("SDU_Interval_P_To_C", .units(3, 1, "µs")),
                        ("Max_PDU_C_To_P", .dec(2)), ("Max_PDU_P_To_C", .dec(2)), ("NSE", .dec(1)), ("Sub_Interval", .units(3, 1, "µs")),
                        ("BN_C_To_P, BN_P_To_C", .hex(1)), ("FT_C_To_P", .dec(1)), ("FT_P_To_C", .dec(1)),
                        ("ISO_Interval", .units(2, 1.25, "ms")), ("CIS_Offset_Min", .units(3, 1, "µs")), ("CIS_Offset_Max", .units(3, 1, "µs")),
                        ("connEventCount", .dec(2))]),
        ("LL_CIS_RSP", [("CIS_Offset_Min", .units(3, 1, "µs")), ("CIS_Offset_Max", .units(3, 1, "µs")), ("connEventCount", .dec(2))]),
        ("LL_CIS_IND", [("AA", .hex(4)), ("CIS_Offset", .units(3, 1, "µs")), ("CIG_Sync_Delay", .units(3, 1, "µs")),
                        ("CIS_Sync_Delay", .units(3, 1, "µs")), ("connEventCount", .dec(2))]),
        ("LL_CIS_TERMINATE_IND", [("CIG_ID", .hex(1)), ("CIS_ID", .hex(1)), ("ErrorCode", .error)]),
        ("LL_POWER_CONTROL_REQ", [("PHY", .dec(1)), ("Delta", .signed8("dB")), ("TxPower", .signed8("dBm"))]),
        ("LL_POWER_CONTROL_RSP", [("Min, Max", .hex(1)), ("Delta", .signed8("dB")), ("TxPower", .signed8("dBm")), ("APR", .dec(1))]),
        ("LL_POWER_CHANGE_IND", [("PHY", .dec(1)), ("Min, Max", .hex(1)), ("Delta", .signed8("dB")), ("TxPower", .signed8("dBm"))]),
        ("LL_SUBRATE_REQ", [("SubrateFactorMin", .dec(2)), ("SubrateFactorMax", .dec(2)), ("MaxLatency", .dec(2)),
                            ("ContinuationNumber", .dec(2)), ("Timeout", .units(2, 10, "ms"))]),
        ("LL_SUBRATE_IND", [("SubrateFactor", .dec(2)), ("SubrateBaseEvent", .dec(2)), ("Latency", .dec(2)),
                            ("ContinuationNumber", .dec(2)), ("Timeout", .units(2, 10, "ms"))]),
        ("LL_CHANNEL_REPORTING_IND", [("Enable", .dec(1)), ("Min_Spacing", .units(1, 200, "ms")), ("Max_Delay", .units(1, 200, "ms"))]),
        ("LL_CHANNEL_STATUS_IND", [("Channel_Classification", .bytes(10))]),
        ("LL_PERIODIC_SYNC_WR_IND", syncInd + [("RspAA", .hex(4)), ("NumSubevents", .dec(1)), ("SubeventInterval", .units(1, 1.25, "ms")),
                                               ("ResponseSlotDelay", .units(1, 1.25, "ms")), ("ResponseSlotSpacing", .units(1, 0.125, "ms"))]),
    ]
}

/// Tells an advertising event from its copies: an advertiser sends the same PDU on each primary
/// channel within a few milliseconds, and a sniffer that follows it sees each copy.
struct LLAdvertisingEvents {
    /// The last PDU of a few recent advertisers: address, kind, a hash of the data, and when.
    private var recent: [(address: BDAddr, properties: UInt16, hash: UInt64, time: Int64)] = []
    /// Copies of one event come within this time (an event lasts at most 10 ms).
    static let window: Int64 = 10_000_000

    mutating func isNew(_ r: AdvertisingReport, data: Bytes, time: Int64) -> Bool {
        let h = FNV1a.of(data)
        if let i = recent.firstIndex(where: { $0.address == r.address && $0.properties == r.properties }) {
            let copy = recent[i].hash == h && time &- recent[i].time <= Self.window
            recent[i] = (r.address, r.properties, h, copy ? recent[i].time : time)
            return !copy
        }
        if recent.count == 16 { recent.removeFirst() }
        recent.append((r.address, r.properties, h, time))
        return true
    }
}
