import Wire

/// A small description language for HCI parameter lists (Core Vol 4 Part E §5.2, §7) and the one
/// interpreter that turns a description plus bytes into `Field`s. Commands, return parameters,
/// events and LE subevents are all described as `[ParamSpec]` in tables.

/// How an integer parameter reads.
enum ParamFormat: Sendable {
    /// Hex with as many digits as the parameter has nibbles.
    case hex
    case dec
    /// An HCI error code (Status, Reason), named by `HCIErrors`.
    case status
    /// Enumerated value, index = value; "" or out of range = reserved.
    case names([FieldLabel])
    /// Enumerated value with a sparse or external table.
    case lookup(@Sendable (UInt64) -> String?)
    /// raw × factor, in unit (0x0010 slots of 0.625 ms → 10 ms).
    case unit(Double, String)
    /// Bit field, index = bit number; "" = reserved.
    case flags(BitNames)
    /// A table of names given as text: interned once (`BitNames`).
    static func flags(_ names: [String]) -> ParamFormat { .flags(BitNames(names)) }
    /// Signed power level in dBm where 127 means "not available".
    case dBm
    /// Two's complement value in the given unit.
    case signed(String)
}

/// One parameter (or group of parameters) of an HCI packet, in wire order.
enum ParamSpec: Sendable {
    case u8(FieldLabel, ParamFormat)
    case u16(FieldLabel, ParamFormat)
    case u24(FieldLabel, ParamFormat)
    case u32(FieldLabel, ParamFormat)
    case u64(FieldLabel, ParamFormat)
    case address(FieldLabel)
    /// Fixed-size opaque octets (keys, maps, codec IDs).
    case bytes(FieldLabel, Int)
    /// Everything that is left, raw.
    case rest(FieldLabel)
    /// UTF-8 name, NUL-terminated inside a field of at most the given size (Local Name: 248).
    case text(FieldLabel, Int)
    /// A length octet, then that many octets of advertising data structures.
    case adData(length: FieldLabel, data: FieldLabel)
    /// A length octet, then a fixed-size buffer whose first `length` octets are AD structures
    /// (legacy LE Set Advertising/Scan Response Data: always 31 octets).
    case adFixed(length: FieldLabel, data: FieldLabel, size: Int)
    /// The rest as AD structures followed by zero padding (Extended Inquiry Response).
    case adPadded(FieldLabel)
    /// A length octet, then that many raw octets.
    case lengthData(length: FieldLabel, data: FieldLabel)
    /// A count octet, then that many elements, each element's parameters in order.
    case array(count: FieldLabel, element: FieldLabel, [ParamSpec])
    /// A PHY bit mask octet, then one element per bit set, lowest bit first
    /// (LE Set Extended Scan Parameters, LE Extended Create Connection).
    case perPHY(FieldLabel, [ParamSpec])
    /// Anything the table cannot say, its fields sent as they are read (what was sent before a
    /// failure is shown, as for the table's own parameters).
    case custom(FieldLabel, @Sendable (inout ByteReader, FieldSink) throws(DecodeError) -> Void)

    var label: FieldLabel {
        switch self {
        case .u8(let l, _), .u16(let l, _), .u24(let l, _), .u32(let l, _), .u64(let l, _),
             .address(let l), .bytes(let l, _), .rest(let l), .text(let l, _), .adPadded(let l),
             .perPHY(let l, _), .custom(let l, _):
            return l
        case .adData(let l, _), .adFixed(let l, _, _), .lengthData(let l, _), .array(let l, _, _):
            return l
        }
    }
}

enum ParamDecoder {
    /// Decodes `bytes` against `specs`. Short input: what is there, then a Malformed note.
    /// Extra input: "Unexpected Data" and a Malformed note.
    static func decode(_ specs: [ParamSpec], _ bytes: Bytes) -> [Field] {
        FieldList.build { write(specs, bytes, to: $0) }
    }

    /// `decode`, sent field by field to `out`.
    static func write(_ specs: [ParamSpec], _ bytes: Bytes, to out: FieldSink) {
        var r = ByteReader(bytes)
        do {
            try run(specs, &r, out)
        } catch {
            out.malformed(message(error))
            return
        }
        if !r.isAtEnd {
            let extra = r.rest()
            out.add("Unexpected Data", .bytes(extra))
            out.malformed("\(extra.count) octets after the last parameter")
        }
    }

    static func message(_ e: DecodeError) -> String {
        switch e {
        case .invalid(let why): return why
        case .truncated(let needed, let available): return "parameters too short: needed \(needed) octets, \(available) left"
        }
    }

    static func run(_ specs: [ParamSpec], _ r: inout ByteReader, _ out: FieldSink) throws(DecodeError) {
        for s in specs {
            do {
                try one(s, &r, out)
            } catch {
                // Name the parameter the data ran out in; nested failures keep their own message.
                if case .truncated = error { throw DecodeError.invalid("parameters end in \(s.label)") }
                throw error
            }
        }
    }

    static func one(_ s: ParamSpec, _ r: inout ByteReader, _ out: FieldSink) throws(DecodeError) {
        switch s {
        case .u8(let l, let f): out.add(l, value(UInt64(try r.u8()), width: 1, f))
        case .u16(let l, let f): out.add(l, value(UInt64(try r.u16()), width: 2, f))
        case .u24(let l, let f): out.add(l, value(UInt64(try r.u24()), width: 3, f))
        case .u32(let l, let f): out.add(l, value(UInt64(try r.u32()), width: 4, f))
        case .u64(let l, let f): out.add(l, value(try r.u64(), width: 8, f))
        case .address(let l): out.add(l, .address(try r.address()))
        case .bytes(let l, let n): out.add(l, .bytes(try r.take(n)))
        case .rest(let l):
            let b = r.rest()
            if !b.isEmpty { out.add(l, .bytes(b)) }
        case .text(let l, let size):
            let b = r.remaining > size ? try r.take(size) : r.rest()
            let end = b.firstIndex(of: 0) ?? b.endIndex
            out.add(l, .received(b[b.startIndex..<end]))
        case .adData(let ll, let dl):
            let n = try r.u8()
            out.add(ll, .uint(UInt64(n), hex: 0))
            advertisingData(dl, try takeShowingRest(Int(n), dl, &r, out), to: out)
        case .adFixed(let ll, let dl, let size):
            let n = try r.u8()
            out.add(ll, .uint(UInt64(n), hex: 0))
            guard Int(n) <= size else { throw .invalid("\(ll) \(n) exceeds \(size)") }
            advertisingData(dl, try takeShowingRest(Int(n), dl, &r, out), to: out)
            // The rest of the fixed buffer is padding, not significant, but it must be there.
            let pad = size - Int(n)
            if r.remaining < pad {
                try r.skip(r.remaining)
                out.malformed("\(dl) field shorter than \(size) octets")
            } else {
                try r.skip(pad)
            }
        case .adPadded(let l):
            // The significant part ends at the first zero length octet between structures;
            // zeros inside a structure's data are data.
            let b = r.rest()
            var i = b.startIndex
            while i < b.endIndex, b[i] != 0 { i = i &+ 1 &+ Int(b[i]) }
            advertisingData(l, b[b.startIndex..<min(i, b.endIndex)], to: out)
        case .lengthData(let ll, let dl):
            let n = try r.u8()
            out.add(ll, .uint(UInt64(n), hex: 0))
            out.add(dl, .bytes(try takeShowingRest(Int(n), dl, &r, out)))
        case .array(let cl, let el, let specs):
            let n = try r.u8()
            out.add(cl, .uint(UInt64(n), hex: 0))
            for _ in 0..<n {
                out.begin(el, .none)
                defer { out.end() }
                try run(specs, &r, out)
            }
        case .perPHY(let l, let specs):
            let bits = try r.u8()
            out.add(l, value(UInt64(bits), width: 1, .flags(HCINames.phyBits)))
            for bit in 0..<8 where bits & (1 << bit) != 0 {
                out.begin(HCINames.phyLabels[bit], .none)
                defer { out.end() }
                try run(specs, &r, out)
            }
        case .custom(_, let fn):
            try fn(&r, out)
        }
    }

    /// Advertising data with its AD structures as children.
    private static func advertisingData(_ label: FieldLabel, _ data: Bytes, to out: FieldSink) {
        out.begin(label, .bytes(data))
        AdvertisingData(data).writeFields(to: out)
        out.end()
    }

    /// `n` octets of a length-prefixed parameter; when fewer are left, shows them raw and stops.
    static func takeShowingRest(_ n: Int, _ label: FieldLabel, _ r: inout ByteReader, _ out: FieldSink) throws(DecodeError) -> Bytes {
        guard r.remaining >= n else {
            let have = r.rest()
            out.add(label, .bytes(have))
            throw .invalid("\(label) has \(have.count) of \(n) octets")
        }
        return try r.take(n)
    }

    /// The field value of an integer parameter `width` octets wide.
    static func value(_ v: UInt64, width: Int, _ f: ParamFormat) -> FieldValue {
        let digits = width * 2
        switch f {
        case .hex: return .uint(v, hex: digits)
        case .dec: return .uint(v, hex: 0)
        case .status: return .named(v, hex: 2, HCIErrors.label(UInt8(truncatingIfNeeded: v)))
        case .names(let t):
            let name: FieldLabel = v < UInt64(t.count) && !t[Int(v)].isEmpty ? t[Int(v)] : "Reserved"
            return .named(v, hex: digits, name)
        case .lookup(let fn): return .named(v, hex: digits, fn(v).map(FieldLabel.init) ?? "Reserved")
        case .unit(let factor, let unit): return .quantity(v, hex: digits, Double(v) * factor, unit: unit)
        case .flags(let t): return .flags(v, hex: digits, SetBitNames(v, in: t, reserved: true))
        case .dBm:
            let s = signExtend(v, width: width)
            return s == 127 ? .named(v, hex: digits, "Not available") : .signed(s, unit: "dBm")
        case .signed(let unit): return .signed(signExtend(v, width: width), unit: unit)
        }
    }

    static func signExtend(_ v: UInt64, width: Int) -> Int64 {
        let shift = UInt64(64 - 8 * min(max(width, 1), 8))
        return Int64(bitPattern: v << shift) >> Int64(shift)
    }

}

/// Value tables shared by commands and events (Core Vol 4 Part E §7.8 unless noted).
enum HCINames {
    static let disabledEnabled: [FieldLabel] = ["Disabled", "Enabled"]
    static let phyBits = ["LE 1M", "LE 2M", "LE Coded"]
    /// A PHY bit's name as a field label, for each of the eight bits, made once.
    static let phyLabels = (0..<8).map { FieldLabel($0 < phyBits.count ? phyBits[$0] : "PHY bit \($0)") }
    static let phy: [FieldLabel] = ["", "LE 1M", "LE 2M", "LE Coded"]
    /// LE Transmitter Test, Enhanced Read Transmit Power Level: coded PHY split by coding.
    static let phyCoding: [FieldLabel] = ["", "LE 1M", "LE 2M", "LE Coded S=8", "LE Coded S=2"]
    static let phyOptions: [FieldLabel] = ["No preferred coding", "Prefer S=2 coding", "Prefer S=8 coding"]
    static let advPhyOptions: [FieldLabel] = ["No preference", "Prefer S=2 coding", "Prefer S=8 coding", "Require S=2 coding", "Require S=8 coding"]
    static let allPhys = ["No TX PHY preference", "No RX PHY preference"]
    static let role: [FieldLabel] = ["Central", "Peripheral"]
    static let ownAddressType: [FieldLabel] = ["Public Device Address", "Random Device Address",
                                 "Resolvable Private Address or Public Address",
                                 "Resolvable Private Address or Random Address"]
    static let addressType: [FieldLabel] = ["Public Device Address", "Random Device Address"]
    static let identityAddressType: [FieldLabel] = ["Public Device Address", "Random Device Address",
                                      "Public Identity Address", "Random (static) Identity Address"]
    static let identityOnly: [FieldLabel] = ["Public Identity Address", "Random (static) Identity Address"]
    static let filterAcceptListAddressType: @Sendable (UInt64) -> String? = { v in
        v == 0xFF ? "Anonymous Advertisements" : v < 2 ? addressType[Int(v)].string : nil
    }
    static let advertisingType: [FieldLabel] = ["Connectable and scannable undirected (ADV_IND)",
                                  "Connectable high duty cycle directed (ADV_DIRECT_IND)",
                                  "Scannable undirected (ADV_SCAN_IND)",
                                  "Non connectable undirected (ADV_NONCONN_IND)",
                                  "Connectable low duty cycle directed (ADV_DIRECT_IND)"]
    static let advertisingReportEventType: [FieldLabel] = ["ADV_IND", "ADV_DIRECT_IND", "ADV_SCAN_IND", "ADV_NONCONN_IND", "SCAN_RSP"]
    static let advertisingFilterPolicy: [FieldLabel] = ["Process scan and connection requests from all devices",
                                          "Process connection requests from all devices and scan requests only from Filter Accept List",
                                          "Process scan requests from all devices and connection requests only from Filter Accept List",
                                          "Process scan and connection requests only from Filter Accept List"]
    static let channelMap = ["Channel 37", "Channel 38", "Channel 39"]
    static let scanType: [FieldLabel] = ["Passive", "Active"]
    static let scanningFilterPolicy: [FieldLabel] = ["Accept all advertisements, except directed not addressed to this device",
                                       "Accept only advertisements from Filter Accept List",
                                       "Accept all advertisements, including directed to a resolvable private address",
                                       "Accept Filter Accept List advertisements, including directed to a resolvable private address"]
    static let initiatorFilterPolicy: [FieldLabel] = ["Use Peer Address", "Use Filter Accept List"]
    static let filterDuplicates: [FieldLabel] = ["Disabled", "Enabled", "Enabled, reset for each scan period"]
    static let clockAccuracy: [FieldLabel] = ["500 ppm", "250 ppm", "150 ppm", "100 ppm", "75 ppm", "50 ppm", "30 ppm", "20 ppm"]
    /// Sleep clock accuracy ranges (Vol 6 Part B 2.3.3.1 SCA).
    static let sca: [FieldLabel] = ["251 ppm to 500 ppm", "151 ppm to 250 ppm", "101 ppm to 150 ppm", "76 ppm to 100 ppm",
                      "51 ppm to 75 ppm", "31 ppm to 50 ppm", "21 ppm to 30 ppm", "0 ppm to 20 ppm"]
    static let advertisingEventProperties = ["Connectable", "Scannable", "Directed", "High Duty Cycle Directed Connectable",
                                             "Use legacy advertising PDUs", "Omit advertiser's address", "Include TxPower"]
    static let extendedReportEventType = ["Connectable", "Scannable", "Directed", "Scan response", "Legacy PDU",
                                          "Data Status: Incomplete, more data to come", "Data Status: Incomplete, data truncated"]
    static let reportAddressType: @Sendable (UInt64) -> String? = { v in
        v == 0xFF ? "Anonymous" : v < 4 ? identityAddressType[Int(v)].string : nil
    }
    static let dataOperation: [FieldLabel] = ["Intermediate fragment", "First fragment", "Last fragment", "Complete data", "Unchanged data"]
    static let fragmentPreference: [FieldLabel] = ["Controller may fragment", "Controller should not fragment"]
    static let syncOptions = ["Use Periodic Advertiser List", "Reporting initially disabled", "Duplicate filtering initially enabled"]
    static let syncCTEType = ["Do not sync to packets with AoA CTE", "Do not sync to packets with AoD CTE (1 µs slots)",
                              "Do not sync to packets with AoD CTE (2 µs slots)", "Do not sync to packets with type 3 CTE",
                              "Do not sync to packets without a CTE"]
    static let cteType = ["AoA", "AoD (1 µs slots)", "AoD (2 µs slots)"]
    static let cteTypeLabels = FieldLabel.table(cteType)
    static let packing: [FieldLabel] = ["Sequential", "Interleaved"]
    static let framing: [FieldLabel] = ["Unframed", "Framed"]
    static let encryption: [FieldLabel] = ["Unencrypted", "Encrypted"]
    static let dataPathDirection = ["Input (Host to Controller)", "Output (Controller to Host)"]
    static let dataPathDirectionLabels = FieldLabel.table(dataPathDirection)
    static let isoPayloadType: [FieldLabel] = ["Zero length", "Variable length", "Maximum length"]
    static let privacyMode: [FieldLabel] = ["Network Privacy Mode", "Device Privacy Mode"]
    static let pastMode: [FieldLabel] = ["No sync, no reports", "Sync, reports disabled", "Sync, reports enabled",
                           "Sync, reports enabled with duplicate filtering"]
    static let periodicEnable = ["Enable", "Include ADI"]
    static let periodicReceiveEnable = ["Reporting enabled", "Duplicate filtering enabled"]
    static let periodicProperties = ["", "", "", "", "", "", "Include TxPower"]
    static let testPayload: [FieldLabel] = ["PRBS9", "11110000", "10101010", "PRBS15", "11111111", "00000000", "00001111", "01010101"]
    static let modulationIndex: [FieldLabel] = ["Standard", "Stable"]
    static let dhKeyType: [FieldLabel] = ["Use generated private key", "Use debug private key"]
    static let sleepClockAction: [FieldLabel] = ["Switch to a more accurate clock", "Switch to a less accurate clock"]
    static let dataStatus: [FieldLabel] = ["Complete", "Incomplete, more data to come", "Incomplete, data truncated"]
    static let channelSelectionAlgorithm: [FieldLabel] = ["LE Channel Selection Algorithm #1", "LE Channel Selection Algorithm #2"]
    static let pathLossZone: [FieldLabel] = ["Low", "Middle", "High"]
    static let powerReportingReason: [FieldLabel] = ["Local transmit power changed", "Remote transmit power changed",
                                       "HCI_LE_Read_Remote_Transmit_Power_Level command completed"]
    static let powerLevelFlags = ["Minimum", "Maximum"]
    static let addressChangeReasons = ["Change on advertising data change", "Change on scan response data change"]
    static let leFeatures = [
        "LE Encryption", "Connection Parameters Request Procedure", "Extended Reject Indication",
        "Peripheral-initiated Features Exchange", "LE Ping", "LE Data Packet Length Extension", "LL Privacy",
        "Extended Scanner Filter Policies", "LE 2M PHY", "Stable Modulation Index - Transmitter",
        "Stable Modulation Index - Receiver", "LE Coded PHY", "LE Extended Advertising", "LE Periodic Advertising",
        "Channel Selection Algorithm #2", "LE Power Class 1", "Minimum Number of Used Channels Procedure",
        "Connection CTE Request", "Connection CTE Response", "Connectionless CTE Transmitter",
        "Connectionless CTE Receiver", "Antenna Switching During CTE Transmission (AoD)",
        "Antenna Switching During CTE Reception (AoA)", "Receiving Constant Tone Extensions",
        "Periodic Advertising Sync Transfer - Sender", "Periodic Advertising Sync Transfer - Recipient",
        "Sleep Clock Accuracy Updates", "Remote Public Key Validation", "Connected Isochronous Stream - Central",
        "Connected Isochronous Stream - Peripheral", "Isochronous Broadcaster", "Synchronized Receiver",
        "Connected Isochronous Stream (Host Support)", "LE Power Control Request", "LE Power Control Request",
        "LE Path Loss Monitoring", "Periodic Advertising ADI support", "Connection Subrating",
        "Connection Subrating (Host Support)", "Channel Classification", "Advertising Coding Selection",
        "Advertising Coding Selection (Host Support)", "Decision-Based Advertising Filtering",
        "Periodic Advertising with Responses - Advertiser", "Periodic Advertising with Responses - Scanner",
        "Unsegmented Framed Mode", "Channel Sounding", "Channel Sounding (Host Support)",
        "Channel Sounding Tone Quality Indication",
    ]
    static let leFeaturesLabels = FieldLabel.table(leFeatures)
    /// `leFeatures` by bit, for a field of feature bits.
    static let leFeatureBits = BitNames(leFeatures)
    /// LMP features page 0 (Vol 2 Part C 3.3).
    static let lmpFeatures = [
        "3 slot packets", "5 slot packets", "Encryption", "Slot offset", "Timing accuracy", "Role switch", "Hold mode", "Sniff mode",
        "Previously used", "Power control requests", "Channel quality driven data rate (CQDDR)", "SCO link", "HV2 packets", "HV3 packets", "u-law log synchronous data", "A-law log synchronous data",
        "CVSD synchronous data", "Paging parameter negotiation", "Power control", "Transparent synchronous data", "Flow control lag (least significant bit)", "Flow control lag (middle bit)", "Flow control lag (most significant bit)", "Broadcast Encryption",
        "", "Enhanced Data Rate ACL 2 Mb/s mode", "Enhanced Data Rate ACL 3 Mb/s mode", "Enhanced inquiry scan", "Interlaced inquiry scan", "Interlaced page scan", "RSSI with inquiry results", "Extended SCO link (EV3 packets)",
        "EV4 packets", "EV5 packets", "", "AFH capable peripheral", "AFH classification peripheral", "BR/EDR Not Supported", "LE Supported (Controller)", "3-slot Enhanced Data Rate ACL packets",
        "5-slot Enhanced Data Rate ACL packets", "Sniff subrating", "Pause encryption", "AFH capable central", "AFH classification central", "Enhanced Data Rate eSCO 2 Mb/s mode", "Enhanced Data Rate eSCO 3 Mb/s mode", "3-slot Enhanced Data Rate eSCO packets",
        "Extended Inquiry Response", "Simultaneous LE and BR/EDR to Same Device Capable (Controller)", "", "Secure Simple Pairing (Controller Support)", "Encapsulated PDU", "Erroneous Data Reporting", "Non-flushable Packet Boundary Flag", "",
        "HCI_Link_Supervision_Timeout_Changed event", "Variable Inquiry TX Power Level", "Enhanced Power Control", "", "", "", "", "Extended features",
    ]
    static let linkPolicy = ["Enable Role Switch", "Enable Hold Mode", "Enable Sniff Mode", "Enable Park State"]
    static let packetType: [String] = ["", "2-DH1 may not be used", "3-DH1 may not be used", "DM1", "DH1", "", "", "", "2-DH3 may not be used",
                                       "3-DH3 may not be used", "DM3", "DH3", "2-DH5 may not be used", "3-DH5 may not be used", "DM5", "DH5"]
    static let hciVersion: [FieldLabel] = ["Bluetooth Core Specification 1.0b", "Bluetooth Core Specification 1.1",
                             "Bluetooth Core Specification 1.2", "Bluetooth Core Specification 2.0 + EDR",
                             "Bluetooth Core Specification 2.1 + EDR", "Bluetooth Core Specification 3.0 + HS",
                             "Bluetooth Core Specification 4.0", "Bluetooth Core Specification 4.1",
                             "Bluetooth Core Specification 4.2", "Bluetooth Core Specification 5.0",
                             "Bluetooth Core Specification 5.1", "Bluetooth Core Specification 5.2",
                             "Bluetooth Core Specification 5.3", "Bluetooth Core Specification 5.4",
                             "Bluetooth Core Specification 6.0", "Bluetooth Core Specification 6.1"]
    static let company: @Sendable (UInt64) -> String? = { v in
        v <= 0xFFFF ? AssignedNumbers.companyName(UInt16(v)) : nil
    }
    static let linkType: [FieldLabel] = ["SCO", "ACL", "eSCO"]
    static let overflowLinkType: [FieldLabel] = ["Synchronous", "ACL", "ISO"]
    static let encryptionEnabled: [FieldLabel] = ["Off", "On (E0 for BR/EDR, AES-CCM for LE)", "On (AES-CCM for BR/EDR)"]
    static let pageScanRepetitionMode: [FieldLabel] = ["R0", "R1", "R2"]
    static let allowRoleSwitch: [FieldLabel] = ["Local device will be Central, no role switch", "Local device may be Central or Peripheral"]
    static let acceptRole: [FieldLabel] = ["Become the Central", "Remain the Peripheral"]
    static let ioCapability: [FieldLabel] = ["DisplayOnly", "DisplayYesNo", "KeyboardOnly", "NoInputNoOutput"]
    static let oobDataPresent: [FieldLabel] = ["Not present", "P-192 present", "P-256 present", "P-192 and P-256 present"]
    static let authenticationRequirements: [FieldLabel] = ["MITM Protection Not Required - No Bonding", "MITM Protection Required - No Bonding",
                                             "MITM Protection Not Required - Dedicated Bonding", "MITM Protection Required - Dedicated Bonding",
                                             "MITM Protection Not Required - General Bonding", "MITM Protection Required - General Bonding"]
    static let keyType: [FieldLabel] = ["Combination Key", "Local Unit Key", "Remote Unit Key", "Debug Combination Key",
                          "Unauthenticated Combination Key generated from P-192",
                          "Authenticated Combination Key generated from P-192", "Changed Combination Key",
                          "Unauthenticated Combination Key generated from P-256", "Authenticated Combination Key generated from P-256"]
    static let keypress: [FieldLabel] = ["Passkey entry started", "Passkey digit entered", "Passkey digit erased", "Passkey cleared", "Passkey entry completed"]
    static let currentMode: [FieldLabel] = ["Active Mode", "Hold Mode", "Sniff Mode"]
    static let scanEnable: [FieldLabel] = ["No Scans enabled", "Inquiry Scan enabled, Page Scan disabled",
                             "Inquiry Scan disabled, Page Scan enabled", "Inquiry Scan enabled, Page Scan enabled"]
    static let pinType: [FieldLabel] = ["Variable PIN", "Fixed PIN"]
    static let powerLevelType: [FieldLabel] = ["Current Transmit Power Level", "Maximum Transmit Power Level"]
    static let flowControlEnable: [FieldLabel] = ["Off", "ACL on, Synchronous off", "ACL off, Synchronous on", "ACL on, Synchronous on"]
    static let inquiryMode: [FieldLabel] = ["Standard Inquiry Result", "Inquiry Result with RSSI", "Inquiry Result with RSSI or Extended Inquiry Result"]
    static let scanTypeBREDR: [FieldLabel] = ["Standard Scan", "Interlaced Scan"]
    static let flowControlMode: [FieldLabel] = ["Packet based", "Data block based"]
    static let whichClock: [FieldLabel] = ["Local Clock", "Piconet Clock"]
    static let eventFilterType: [FieldLabel] = ["Clear All Filters", "Inquiry Result", "Connection Setup"]
    static let filterConditionType: [FieldLabel] = ["Return responses from all devices", "A device with a specific Class of Device",
                                      "A device with a specific BD_ADDR"]
    static let autoAccept: [FieldLabel] = ["", "Do not auto-accept", "Auto-accept, role switch disabled", "Auto-accept, role switch enabled"]
    static let loopbackMode: [FieldLabel] = ["No Loopback", "Local Loopback", "Remote Loopback"]
    static let readAll: [FieldLabel] = ["Return the key for the BD_ADDR", "Return all stored keys"]
    static let deleteAll: [FieldLabel] = ["Delete only the key for the BD_ADDR", "Delete all stored keys"]
    static let flushPacketType: [FieldLabel] = ["Automatically flushable only"]
    static let serviceType: [FieldLabel] = ["No Traffic", "Best Effort", "Guaranteed"]
    static let airMode: [FieldLabel] = ["µ-law log", "A-law log", "CVSD", "Transparent Data"]
    static let codecTransport = ["BR/EDR ACL", "BR/EDR SCO and eSCO", "LE CIS", "LE BIS"]
    static let logicalTransportType: [FieldLabel] = ["BR/EDR ACL", "BR/EDR SCO or eSCO", "LE CIS", "LE BIS"]
    static let simplePairingOptions = ["Remote public key validation"]
    static let lmpFeaturesPage1 = ["Secure Simple Pairing (Host Support)", "LE Supported (Host)", "Previously used",
                                   "Secure Connections (Host Support)"]
    static let lmpFeaturesPage2 = ["Connectionless Peripheral Broadcast - Central Operation",
                                   "Connectionless Peripheral Broadcast - Peripheral Operation", "Synchronization Train",
                                   "Synchronization Scan", "HCI_Inquiry_Response_Notification event", "Generalized interlaced scan",
                                   "Coarse Clock Adjustment", "", "Secure Connections (Controller Support)", "Ping",
                                   "Slot Availability Mask", "Train nudging"]
    static let lmpFeaturePages = [lmpFeatures, lmpFeaturesPage1, lmpFeaturesPage2]

    /// Class of Device (Assigned Numbers 2.8): service class bits, major and minor device class.
    static let majorServiceClasses: BitNames = ["Limited Discoverable Mode", "LE audio", "", "Positioning", "Networking", "Rendering",
                                      "Capturing", "Object Transfer", "Audio", "Telephony", "Information"]
    static let majorDeviceClasses: [FieldLabel] = ["Miscellaneous", "Computer", "Phone", "LAN/Network Access Point", "Audio/Video",
                                     "Peripheral", "Imaging", "Wearable", "Toy", "Health"]

    static func classOfDevice(_ v: UInt32) -> Field {
        let major = UInt64(v >> 8 & 0x1F)
        let majorName: FieldLabel = major == 0x1F ? "Uncategorized" : major < UInt64(majorDeviceClasses.count) ? majorDeviceClasses[Int(major)] : "Reserved"
        return Field("Class of Device", .uint(UInt64(v), hex: 6), [
            Field("Major Service Classes", .flags(UInt64(v >> 13), hex: 3, SetBitNames(UInt64(v >> 13), in: majorServiceClasses, reserved: true))),
            Field("Major Device Class", .named(major, hex: 2, majorName)),
            Field("Minor Device Class", .uint(UInt64(v >> 2 & 0x3F), hex: 2)),
        ])
    }
}

extension ParamFormat {
    /// Baseband slots and LE advertising/scan timing: 0.625 ms.
    static let slots = ParamFormat.unit(0.625, "ms")
    /// LE connection intervals: 1.25 ms.
    static let interval = ParamFormat.unit(1.25, "ms")
    static let ms10 = ParamFormat.unit(10, "ms")
    static let ms = ParamFormat.unit(1, "ms")
    static let us = ParamFormat.unit(1, "µs")
    static let s = ParamFormat.unit(1, "s")
    static let s128 = ParamFormat.unit(1.28, "s")
    static let octets = ParamFormat.unit(1, "octets")
    static let dB = ParamFormat.unit(1, "dB")
    static let enable = ParamFormat.names(HCINames.disabledEnabled)
}

extension ParamSpec {
    static let status = ParamSpec.u8("Status", .status)
    static let reason = ParamSpec.u8("Reason", .status)
    static let connectionHandle = ParamSpec.u16("Connection Handle", .hex)
    static let syncHandle = ParamSpec.u16("Sync Handle", .hex)
    static let advertisingHandle = ParamSpec.u8("Advertising Handle", .hex)
    static let bdAddr = ParamSpec.address("BD_ADDR")
    static let rssi = ParamSpec.u8("RSSI", .dBm)
    static let classOfDevice = ParamSpec.custom("Class of Device") { (r, out) throws(DecodeError) in
        out.add(HCINames.classOfDevice(try r.u24()))
    }

    /// Page Number, Max Page Number, then that page's LMP feature bits (Vol 2 Part C 3.3).
    static let extendedFeatures = ParamSpec.custom("Extended LMP Features") { (r, out) throws(DecodeError) in
        let page = try r.u8()
        out.add("Page Number", .uint(UInt64(page), hex: 0))
        out.add("Max Page Number", .uint(UInt64(try r.u8()), hex: 0))
        let bits = try r.u64()
        let names = Int(page) < HCINames.lmpFeaturePages.count ? HCINames.lmpFeaturePages[Int(page)] : []
        out.add("Extended LMP Features", ParamDecoder.value(bits, width: 8, .flags(names)))
    }
}
