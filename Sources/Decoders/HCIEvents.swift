import Wire

/// HCI events (Core Vol 4 Part E §7.7) and LE Meta subevents (§7.7.65): names and parameters.
public enum HCIEvents {
    public static let commandComplete: UInt8 = 0x0E
    public static let commandStatus: UInt8 = 0x0F
    public static let leMeta: UInt8 = 0x3E
    public static let vendor: UInt8 = 0xFF

    /// "Command Complete", "LE Meta", "Vendor"; "Unknown Event (0x..)" otherwise.
    public static func name(_ code: UInt8) -> String {
        eventIndex[Int(code)] >= 0 ? eventNames[Int(eventIndex[Int(code)])] : "Unknown Event (" + Hex.prefixed(code, width: 2) + ")"
    }

    /// "LE Connection Complete", ...; "Unknown LE Subevent (0x..)" otherwise.
    public static func leSubeventName(_ sub: UInt8) -> String {
        subeventIndex[Int(sub)] >= 0 ? subeventNames[Int(subeventIndex[Int(sub)])] : "Unknown LE Subevent (" + Hex.prefixed(sub, width: 2) + ")"
    }

    /// `name` and `leSubeventName` as labels: a known code's literal, another's text interned.
    static func label(_ code: UInt8) -> FieldLabel { labels[Int(code)] ?? FieldLabel(name(code)) }
    static func subeventLabel(_ sub: UInt8) -> FieldLabel { subeventLabels[Int(sub)] ?? FieldLabel(leSubeventName(sub)) }
    /// The known codes' literals as labels, by code.
    private static let labels = (0..<256).map { eventIndex[$0] < 0 ? nil : FieldLabel(stringLiteral: events[Int(eventIndex[$0])].name) }
    private static let subeventLabels = (0..<256).map {
        subeventIndex[$0] < 0 ? nil : FieldLabel(stringLiteral: subevents[Int(subeventIndex[$0])].name)
    }

    /// Writes `name(code)`: a known event's name copied as the literal it is.
    public static func writeName(_ code: UInt8, to line: inout TextLine) {
        let i = Int(eventIndex[Int(code)])
        if i >= 0 { line += events[i].name } else { line.write(name(code)) }
    }

    /// Writes `leSubeventName(sub)` the same way.
    public static func writeLESubeventName(_ sub: UInt8, to line: inout TextLine) {
        let i = Int(subeventIndex[Int(sub)])
        if i >= 0 { line += subevents[i].name } else { line.write(leSubeventName(sub)) }
    }

    public static func isKnown(_ code: UInt8) -> Bool { eventIndex[Int(code)] >= 0 }
    public static func isKnownLESubevent(_ sub: UInt8) -> Bool { subeventIndex[Int(sub)] >= 0 }

    /// Full decode of an event's parameters. LE Meta: the subevent code and that subevent's
    /// parameters. Command Complete/Status: packets, opcode with its name, status, and the return
    /// parameters of the command.
    public static func parameters(code: UInt8, _ params: Bytes) -> [Field] {
        FieldList.build { writeParameters(code: code, params, to: $0) }
    }

    public static func writeParameters(code: UInt8, _ params: Bytes, to out: FieldSink) {
        switch code {
        case commandComplete: writeCommandComplete(params, to: out)
        case commandStatus: ParamDecoder.write(commandStatusSpec, params, to: out)
        case leMeta:
            guard let sub = params.first else { return out.malformed("LE Meta event without Subevent Code") }
            out.add("Subevent Code", .named(UInt64(sub), hex: 2, subeventLabel(sub)))
            writeLESubeventParameters(sub, params.dropFirst(), to: out)
        default:
            let i = eventIndex[Int(code)]
            guard i >= 0, let specs = events[Int(i)].params else {
                if !params.isEmpty { out.add(code == vendor ? "Vendor Data" : "Parameters", .bytes(params)) }
                return
            }
            ParamDecoder.write(specs, params, to: out)
        }
    }

    /// Parameters of one LE Meta subevent (without the subevent code).
    public static func leSubeventParameters(_ sub: UInt8, _ params: Bytes) -> [Field] {
        FieldList.build { writeLESubeventParameters(sub, params, to: $0) }
    }

    static func writeLESubeventParameters(_ sub: UInt8, _ params: Bytes, to out: FieldSink) {
        if AdvertisingReports.writeFields(subevent: sub, params, to: out) { return }
        let i = subeventIndex[Int(sub)]
        guard i >= 0, let specs = subevents[Int(i)].params else {
            if !params.isEmpty { out.add("Parameters", .bytes(params)) }
            return
        }
        ParamDecoder.write(specs, params, to: out)
    }

    static func writeCommandComplete(_ params: Bytes, to out: FieldSink) {
        var r = ByteReader(params)
        guard let n = try? r.u8() else { return out.malformed("Command Complete without Num HCI Command Packets") }
        out.add("Num HCI Command Packets", .uint(UInt64(n), hex: 0))
        guard let op = try? r.u16() else { return out.malformed("Command Complete without Command Opcode") }
        out.add("Command Opcode", .named(UInt64(op), hex: 4, HCICommands.label(op)))
        HCICommands.writeReturnParameters(opcode: op, r.rest(), to: out)
    }

    static let commandStatusSpec: [ParamSpec] = [
        .status, .u8("Num HCI Command Packets", .dec),
        .custom("Command Opcode") { (r, out) throws(DecodeError) in
            let op = try r.u16()
            out.add("Command Opcode", .named(UInt64(op), hex: 4, HCICommands.label(op)))
        },
    ]

    /// Event Mask bit n enables event code n + 1 (§7.3.1).
    static let eventMaskBits: [String] = (0..<64).map { bit in
        let code = bit + 1
        return code < 0x40 && eventIndex[code] >= 0 ? eventNames[Int(eventIndex[code])] : ""
    }

    /// Event Mask Page 2 bit n enables event code 0x40 + n (§7.3.69).
    static let eventMaskPage2Bits: [String] = (0..<64).map { bit in
        let code = 0x40 + bit
        return code < 0xFF && eventIndex[code] >= 0 ? eventNames[Int(eventIndex[code])] : ""
    }

    /// LE Event Mask bit n enables LE subevent n + 1 (§7.8.1).
    static let leEventMaskBits: [String] = (0..<64).map { bit in
        let sub = bit + 1
        return subeventIndex[sub] >= 0 ? subeventNames[Int(subeventIndex[sub])] : ""
    }

    static let eventIndex: [Int16] = index(events)
    static let subeventIndex: [Int16] = index(subevents)
    /// The names as Strings, made once: what fields hold.
    static let eventNames = events.map(\.name.description)
    static let subeventNames = subevents.map(\.name.description)

    private static func index(_ t: [EventInfo]) -> [Int16] {
        var a = [Int16](repeating: -1, count: 256)
        for (i, e) in t.enumerated() { a[Int(e.code)] = Int16(i) }
        return a
    }
}

struct EventInfo: Sendable {
    let code: UInt8
    let name: StaticString
    /// nil: parameters shown raw.
    let params: [ParamSpec]?
}

private func e(_ code: UInt8, _ name: StaticString, _ params: [ParamSpec]? = nil) -> EventInfo {
    EventInfo(code: code, name: name, params: params)
}

private let statusHandle: [ParamSpec] = [.status, .connectionHandle]
private let inquiryResponse: [ParamSpec] = [
    .bdAddr, .u8("Page Scan Repetition Mode", .names(HCINames.pageScanRepetitionMode)),
]
private let leConnectionTiming: [ParamSpec] = [
    .u16("Connection Interval", .interval), .u16("Peripheral Latency", .dec), .u16("Supervision Timeout", .ms10),
]
private let leConnectionCompleteParameters: [ParamSpec] = [
    .status, .connectionHandle, .u8("Role", .names(HCINames.role)),
    .u8("Peer Address Type", .names(HCINames.identityAddressType)), .address("Peer Address"),
]
private let enhancedConnectionComplete: [ParamSpec] = leConnectionCompleteParameters + [
    .address("Local Resolvable Private Address"), .address("Peer Resolvable Private Address"),
] + leConnectionTiming + [.u8("Central Clock Accuracy", .names(HCINames.clockAccuracy))]
private let syncEstablished: [ParamSpec] = [
    .status, .syncHandle, .u8("Advertising SID", .dec),
    .u8("Advertiser Address Type", .names(HCINames.identityAddressType)), .address("Advertiser Address"),
    .u8("Advertiser PHY", .names(HCINames.phy)), .u16("Periodic Advertising Interval", .interval),
    .u8("Advertiser Clock Accuracy", .names(HCINames.clockAccuracy)),
]
private let pawrTiming: [ParamSpec] = [
    .u8("Num Subevents", .dec), .u8("Subevent Interval", .interval),
    .u8("Response Slot Delay", .interval), .u8("Response Slot Spacing", .unit(0.125, "ms")),
]
private let pastReceived: [ParamSpec] = [
    .status, .connectionHandle, .u16("Service Data", .hex), .syncHandle, .u8("Advertising SID", .dec),
    .u8("Advertiser Address Type", .names(HCINames.identityAddressType)), .address("Advertiser Address"),
    .u8("Advertiser PHY", .names(HCINames.phy)), .u16("Periodic Advertising Interval", .interval),
    .u8("Advertiser Clock Accuracy", .names(HCINames.clockAccuracy)),
]
private let cisEstablished: [ParamSpec] = [
    .status, .connectionHandle, .u24("CIG Sync Delay", .us), .u24("CIS Sync Delay", .us),
    .u24("Transport Latency C To P", .us), .u24("Transport Latency P To C", .us),
    .u8("PHY C To P", .names(HCINames.phy)), .u8("PHY P To C", .names(HCINames.phy)), .u8("NSE", .dec),
    .u8("BN C To P", .dec), .u8("BN P To C", .dec), .u8("FT C To P", .dec), .u8("FT P To C", .dec),
    .u16("Max PDU C To P", .octets), .u16("Max PDU P To C", .octets), .u16("ISO Interval", .interval),
]
private let iqSamples = ParamSpec.array(count: "Sample Count", element: "Sample", [.u8("I Sample", .signed("")), .u8("Q Sample", .signed(""))])
private let iqHeader: [ParamSpec] = [
    .u16("RSSI", .signed("0.1 dBm")), .u8("RSSI Antenna ID", .dec), .u8("CTE Type", .names(HCINames.cteTypeLabels)),
    .u8("Slot Durations", .hex), .u8("Packet Status", .hex),
]
private let bigHandle = ParamSpec.u8("BIG Handle", .hex)
private let bisHandles = ParamSpec.array(count: "Num BIS", element: "BIS", [.connectionHandle])
private let bigParameters: [ParamSpec] = [
    .u8("NSE", .dec), .u8("BN", .dec), .u8("PTO", .dec), .u8("IRC", .dec), .u16("Max PDU", .octets), .u16("ISO Interval", .interval),
]
private let qos: [ParamSpec] = [
    .u8("Unused", .hex), .u8("Service Type", .names(HCINames.serviceType)),
    .u32("Token Rate", .dec), .u32("Peak Bandwidth", .dec), .u32("Latency", .us), .u32("Delay Variation", .us),
]
private let synchronousTiming: [ParamSpec] = [
    .u8("Transmission Interval", .dec), .u8("Retransmission Window", .dec),
    .u16("RX Packet Length", .octets), .u16("TX Packet Length", .octets),
]
private let advertisingData = ParamSpec.adData(length: "Data Length", data: "Data")

extension HCIEvents {
    static let events: [EventInfo] = [
        e(0x01, "Inquiry Complete", [.status]),
        e(0x02, "Inquiry Result", [.array(count: "Num Responses", element: "Response", inquiryResponse + [.u8("Reserved", .hex), .u8("Reserved", .hex), .classOfDevice, .u16("Clock Offset", .hex)])]),
        e(connectionComplete, "Connection Complete", statusHandle + [.bdAddr, .u8("Link Type", .names(HCINames.linkType)), .u8("Encryption Enabled", .enable)]),
        e(0x04, "Connection Request", [.bdAddr, .classOfDevice, .u8("Link Type", .names(HCINames.linkType))]),
        e(disconnectionComplete, "Disconnection Complete", statusHandle + [.reason]),
        e(0x06, "Authentication Complete", statusHandle),
        e(0x07, "Remote Name Request Complete", [.status, .bdAddr, .text("Remote Name", 248)]),
        e(encryptionChange, "Encryption Change", statusHandle + [.u8("Encryption Enabled", .names(HCINames.encryptionEnabled))]),
        e(0x09, "Change Connection Link Key Complete", statusHandle),
        e(0x0A, "Link Key Type Changed", statusHandle + [.u8("Key Flag", .names(["Semi-permanent Link Key", "Temporary Link Key"]))]),
        e(0x0B, "Read Remote Supported Features Complete", statusHandle + [.u64("LMP Features", .flags(HCINames.lmpFeatures))]),
        e(0x0C, "Read Remote Version Information Complete", statusHandle + [.u8("Version", .names(HCINames.hciVersion)), .u16("Company Identifier", .lookup(HCINames.company)), .u16("Subversion", .hex)]),
        e(0x0D, "QoS Setup Complete", statusHandle + qos),
        e(0x0E, "Command Complete"),
        e(0x0F, "Command Status"),
        e(0x10, "Hardware Error", [.u8("Hardware Code", .hex)]),
        e(0x11, "Flush Occurred", [.connectionHandle]),
        e(0x12, "Role Change", [.status, .bdAddr, .u8("New Role", .names(HCINames.role))]),
        e(0x13, "Number Of Completed Packets", [.array(count: "Num Handles", element: "Handle", [.connectionHandle, .u16("Num Completed Packets", .dec)])]),
        e(0x14, "Mode Change", statusHandle + [.u8("Current Mode", .names(HCINames.currentMode)), .u16("Interval", .slots)]),
        e(0x15, "Return Link Keys", [.array(count: "Num Keys", element: "Key", [.bdAddr, .bytes("Link Key", 16)])]),
        e(0x16, "PIN Code Request", [.bdAddr]),
        e(0x17, "Link Key Request", [.bdAddr]),
        e(0x18, "Link Key Notification", [.bdAddr, .bytes("Link Key", 16), .u8("Key Type", .names(HCINames.keyType))]),
        e(0x19, "Loopback Command", [.rest("HCI Command Packet")]),
        e(0x1A, "Data Buffer Overflow", [.u8("Link Type", .names(HCINames.overflowLinkType))]),
        e(0x1B, "Max Slots Change", [.connectionHandle, .u8("LMP Max Slots", .dec)]),
        e(0x1C, "Read Clock Offset Complete", statusHandle + [.u16("Clock Offset", .hex)]),
        e(0x1D, "Connection Packet Type Changed", statusHandle + [.u16("Packet Type", .hex)]),
        e(0x1E, "QoS Violation", [.connectionHandle]),
        e(0x1F, "Page Scan Mode Change", [.bdAddr, .u8("Page Scan Mode", .hex)]),
        e(0x20, "Page Scan Repetition Mode Change", inquiryResponse),
        e(0x21, "Flow Specification Complete", statusHandle + [.u8("Unused", .hex), .u8("Flow Direction", .names(["Outgoing", "Incoming"])), .u8("Service Type", .names(HCINames.serviceType)), .u32("Token Rate", .dec), .u32("Token Bucket Size", .dec), .u32("Peak Bandwidth", .dec), .u32("Access Latency", .us)]),
        e(0x22, "Inquiry Result with RSSI", [.array(count: "Num Responses", element: "Response", inquiryResponse + [.u8("Reserved", .hex), .classOfDevice, .u16("Clock Offset", .hex), .rssi])]),
        e(0x23, "Read Remote Extended Features Complete", statusHandle + [.extendedFeatures]),
        e(0x2C, "Synchronous Connection Complete", statusHandle + [.bdAddr, .u8("Link Type", .names(HCINames.linkType))] + synchronousTiming + [.u8("Air Mode", .names(HCINames.airMode))]),
        e(0x2D, "Synchronous Connection Changed", statusHandle + synchronousTiming),
        e(0x2E, "Sniff Subrating", statusHandle + [.u16("Max TX Latency", .slots), .u16("Max RX Latency", .slots), .u16("Min Remote Timeout", .slots), .u16("Min Local Timeout", .slots)]),
        e(0x2F, "Extended Inquiry Result", [.u8("Num Responses", .dec)] + inquiryResponse + [.u8("Reserved", .hex), .classOfDevice, .u16("Clock Offset", .hex), .rssi, .adPadded("Extended Inquiry Response")]),
        e(encryptionKeyRefreshComplete, "Encryption Key Refresh Complete", statusHandle),
        e(0x31, "IO Capability Request", [.bdAddr]),
        e(0x32, "IO Capability Response", [.bdAddr, .u8("IO Capability", .names(HCINames.ioCapability)), .u8("OOB Data Present", .names(HCINames.oobDataPresent)), .u8("Authentication Requirements", .names(HCINames.authenticationRequirements))]),
        e(0x33, "User Confirmation Request", [.bdAddr, .u32("Numeric Value", .dec)]),
        e(0x34, "User Passkey Request", [.bdAddr]),
        e(0x35, "Remote OOB Data Request", [.bdAddr]),
        e(0x36, "Simple Pairing Complete", [.status, .bdAddr]),
        e(0x38, "Link Supervision Timeout Changed", [.connectionHandle, .u16("Link Supervision Timeout", .slots)]),
        e(0x39, "Enhanced Flush Complete", [.connectionHandle]),
        e(0x3B, "User Passkey Notification", [.bdAddr, .u32("Passkey", .dec)]),
        e(0x3C, "Keypress Notification", [.bdAddr, .u8("Notification Type", .names(HCINames.keypress))]),
        e(0x3D, "Remote Host Supported Features Notification", [.bdAddr, .u64("Host Supported Features", .hex)]),
        e(0x3E, "LE Meta"),
        e(0x40, "Physical Link Complete"),
        e(0x41, "Channel Selected"),
        e(0x42, "Disconnection Physical Link Complete"),
        e(0x43, "Physical Link Loss Early Warning"),
        e(0x44, "Physical Link Recovery"),
        e(0x45, "Logical Link Complete"),
        e(0x46, "Disconnection Logical Link Complete"),
        e(0x47, "Flow Spec Modify Complete"),
        e(0x48, "Number Of Completed Data Blocks", [.u16("Total Num Data Blocks", .dec), .array(count: "Num Handles", element: "Handle", [.connectionHandle, .u16("Num Completed Packets", .dec), .u16("Num Completed Blocks", .dec)])]),
        e(0x49, "AMP Start Test"),
        e(0x4A, "AMP Test End"),
        e(0x4B, "AMP Receiver Report"),
        e(0x4C, "Short Range Mode Change Complete"),
        e(0x4D, "AMP Status Change"),
        e(0x4E, "Triggered Clock Capture", [.connectionHandle, .u8("Which Clock", .names(HCINames.whichClock)), .u32("Clock", .hex), .u16("Slot Offset", .dec)]),
        e(0x4F, "Synchronization Train Complete", [.status]),
        e(0x50, "Synchronization Train Received", [.status, .bdAddr, .u32("Clock Offset", .hex), .bytes("AFH Channel Map", 10), .u8("LT_ADDR", .hex), .u32("Next Broadcast Instant", .hex), .u16("Connectionless Peripheral Broadcast Interval", .slots), .u8("Service Data", .hex)]),
        e(0x51, "Connectionless Peripheral Broadcast Receive", [.bdAddr, .u8("LT_ADDR", .hex), .u32("CLK", .hex), .u32("Offset", .hex), .u8("Receive Status", .names(["Packet received successfully", "Packet not received"])), .u8("Fragment", .hex), .lengthData(length: "Data Length", data: "Data")]),
        e(0x52, "Connectionless Peripheral Broadcast Timeout", [.bdAddr, .u8("LT_ADDR", .hex)]),
        e(0x53, "Truncated Page Complete", [.status, .bdAddr]),
        e(0x54, "Peripheral Page Response Timeout", []),
        e(0x55, "Connectionless Peripheral Broadcast Channel Map Change", [.bytes("Channel Map", 10)]),
        e(0x56, "Inquiry Response Notification", [.u24("LAP", .hex), .rssi]),
        e(0x57, "Authenticated Payload Timeout Expired", [.connectionHandle]),
        e(0x58, "SAM Status Change", [.connectionHandle, .u8("Local SAM Index", .dec), .u8("Local SAM TX Availability", .hex), .u8("Local SAM RX Availability", .hex), .u8("Remote SAM Index", .dec), .u8("Remote SAM TX Availability", .hex), .u8("Remote SAM RX Availability", .hex)]),
        e(encryptionChangeV2, "Encryption Change [v2]", statusHandle + [.u8("Encryption Enabled", .names(HCINames.encryptionEnabled)), .u8("Encryption Key Size", .octets)]),
        e(0xFF, "Vendor"),
    ]

    static let subevents: [EventInfo] = [
        e(leConnectionComplete, "LE Connection Complete", leConnectionCompleteParameters + leConnectionTiming + [.u8("Central Clock Accuracy", .names(HCINames.clockAccuracy))]),
        e(0x02, "LE Advertising Report", [.array(count: "Num Reports", element: "Report", [.u8("Event Type", .names(HCINames.advertisingReportEventType)), .u8("Address Type", .names(HCINames.identityAddressType)), .address("Address"), advertisingData, .rssi])]),
        e(leConnectionUpdateComplete, "LE Connection Update Complete", statusHandle + leConnectionTiming),
        e(0x04, "LE Read Remote Features Complete", statusHandle + [.u64("LE Features", .flags(HCINames.leFeatures))]),
        e(0x05, "LE Long Term Key Request", [.connectionHandle, .u64("Random Number", .hex), .u16("Encrypted Diversifier", .hex)]),
        e(0x06, "LE Remote Connection Parameter Request", [.connectionHandle, .u16("Interval Min", .interval), .u16("Interval Max", .interval), .u16("Max Latency", .dec), .u16("Timeout", .ms10)]),
        e(0x07, "LE Data Length Change", [.connectionHandle, .u16("Max TX Octets", .octets), .u16("Max TX Time", .us), .u16("Max RX Octets", .octets), .u16("Max RX Time", .us)]),
        e(0x08, "LE Read Local P-256 Public Key Complete", [.status, .bytes("Local P-256 Public Key", 64)]),
        e(0x09, "LE Generate DHKey Complete", [.status, .bytes("DHKey", 32)]),
        e(leEnhancedConnectionComplete, "LE Enhanced Connection Complete", enhancedConnectionComplete),
        e(0x0B, "LE Directed Advertising Report", [.array(count: "Num Reports", element: "Report", [.u8("Event Type", .names(HCINames.advertisingReportEventType)), .u8("Address Type", .names(HCINames.identityAddressType)), .address("Address"), .u8("Direct Address Type", .hex), .address("Direct Address"), .rssi])]),
        e(0x0C, "LE PHY Update Complete", statusHandle + [.u8("TX PHY", .names(HCINames.phy)), .u8("RX PHY", .names(HCINames.phy))]),
        e(0x0D, "LE Extended Advertising Report", [.array(count: "Num Reports", element: "Report", [.u16("Event Type", .flags(HCINames.extendedReportEventType)), .u8("Address Type", .lookup(HCINames.reportAddressType)), .address("Address"), .u8("Primary PHY", .names(HCINames.phy)), .u8("Secondary PHY", .names(["No packets on the secondary advertising physical channel", "LE 1M", "LE 2M", "LE Coded"])), .u8("Advertising SID", .dec), .u8("TX Power", .dBm), .rssi, .u16("Periodic Advertising Interval", .interval), .u8("Direct Address Type", .hex), .address("Direct Address"), advertisingData])]),
        e(0x0E, "LE Periodic Advertising Sync Established", syncEstablished),
        e(0x0F, "LE Periodic Advertising Report", [.syncHandle, .u8("TX Power", .dBm), .rssi, .u8("CTE Type", .names(HCINames.cteTypeLabels + ["", "", "", "", "", "", "", "", "", "", "", "", "No Constant Tone Extension"])), .u8("Data Status", .names(HCINames.dataStatus)), advertisingData]),
        e(0x10, "LE Periodic Advertising Sync Lost", [.syncHandle]),
        e(0x11, "LE Scan Timeout", []),
        e(0x12, "LE Advertising Set Terminated", [.status, .advertisingHandle, .connectionHandle, .u8("Num Completed Extended Advertising Events", .dec)]),
        e(0x13, "LE Scan Request Received", [.advertisingHandle, .u8("Scanner Address Type", .names(HCINames.identityAddressType)), .address("Scanner Address")]),
        e(0x14, "LE Channel Selection Algorithm", [.connectionHandle, .u8("Channel Selection Algorithm", .names(HCINames.channelSelectionAlgorithm))]),
        e(0x15, "LE Connectionless IQ Report", [.syncHandle, .u8("Channel Index", .dec)] + iqHeader + [.u16("Periodic Event Counter", .dec), iqSamples]),
        e(0x16, "LE Connection IQ Report", [.connectionHandle, .u8("RX PHY", .names(HCINames.phy)), .u8("Data Channel Index", .dec)] + iqHeader + [.u16("Connection Event Counter", .dec), iqSamples]),
        e(0x17, "LE CTE Request Failed", statusHandle),
        e(0x18, "LE Periodic Advertising Sync Transfer Received", pastReceived),
        e(0x19, "LE CIS Established", cisEstablished),
        e(0x1A, "LE CIS Request", [.u16("ACL Connection Handle", .hex), .u16("CIS Connection Handle", .hex), .u8("CIG ID", .hex), .u8("CIS ID", .hex)]),
        e(0x1B, "LE Create BIG Complete", [.status, bigHandle, .u24("BIG Sync Delay", .us), .u24("Transport Latency BIG", .us), .u8("PHY", .names(HCINames.phy))] + bigParameters + [bisHandles]),
        e(0x1C, "LE Terminate BIG Complete", [bigHandle, .reason]),
        e(0x1D, "LE BIG Sync Established", [.status, bigHandle, .u24("Transport Latency BIG", .us)] + bigParameters + [bisHandles]),
        e(0x1E, "LE BIG Sync Lost", [bigHandle, .reason]),
        e(0x1F, "LE Request Peer SCA Complete", statusHandle + [.u8("Peer Clock Accuracy", .names(HCINames.sca))]),
        e(0x20, "LE Path Loss Threshold", [.connectionHandle, .u8("Current Path Loss", .dB), .u8("Zone Entered", .names(HCINames.pathLossZone))]),
        e(0x21, "LE Transmit Power Reporting", statusHandle + [.u8("Reason", .names(HCINames.powerReportingReason)), .u8("PHY", .names(HCINames.phyCoding)), .u8("TX Power Level", .dBm), .u8("TX Power Level Flag", .flags(HCINames.powerLevelFlags)), .u8("Delta", .signed("dB"))]),
        e(0x22, "LE BIGInfo Advertising Report", [.syncHandle, .u8("Num BIS", .dec), .u8("NSE", .dec), .u16("ISO Interval", .interval), .u8("BN", .dec), .u8("PTO", .dec), .u8("IRC", .dec), .u16("Max PDU", .octets), .u24("SDU Interval", .us), .u16("Max SDU", .octets), .u8("PHY", .names(HCINames.phy)), .u8("Framing", .names(HCINames.framing)), .u8("Encryption", .names(HCINames.encryption))]),
        e(0x23, "LE Subrate Change", statusHandle + [.u16("Subrate Factor", .dec), .u16("Peripheral Latency", .dec), .u16("Continuation Number", .dec), .u16("Supervision Timeout", .ms10)]),
        e(0x24, "LE Periodic Advertising Sync Established [v2]", syncEstablished + pawrTiming),
        e(0x25, "LE Periodic Advertising Report [v2]", [.syncHandle, .u8("TX Power", .dBm), .rssi, .u8("CTE Type", .hex), .u16("Periodic Event Counter", .dec), .u8("Subevent", .dec), .u8("Data Status", .names(HCINames.dataStatus)), advertisingData]),
        e(0x26, "LE Periodic Advertising Sync Transfer Received [v2]", pastReceived + pawrTiming),
        e(0x27, "LE Periodic Advertising Subevent Data Request", [.advertisingHandle, .u8("Subevent Start", .dec), .u8("Subevent Data Count", .dec)]),
        e(0x28, "LE Periodic Advertising Response Report", [.advertisingHandle, .u8("Subevent", .dec), .u8("TX Status", .hex), .array(count: "Num Responses", element: "Response", [.u8("TX Power", .dBm), .rssi, .u8("CTE Type", .hex), .u8("Response Slot", .dec), .u8("Data Status", .names(HCINames.dataStatus)), advertisingData])]),
        e(leEnhancedConnectionCompleteV2, "LE Enhanced Connection Complete [v2]", enhancedConnectionComplete + [.advertisingHandle, .syncHandle]),
        e(0x2A, "LE CIS Established [v2]", cisEstablished + [.u24("Sub Interval", .us), .u16("Max SDU C To P", .octets), .u16("Max SDU P To C", .octets), .u24("SDU Interval C To P", .us), .u24("SDU Interval P To C", .us), .u8("Framing", .names(HCINames.framing))]),
        e(0x2B, "LE Read All Remote Features Complete", statusHandle + [.u8("Max Remote Page", .dec), .u8("Max Valid Page", .dec), .bytes("LE Features", 248)]),
        e(0x2C, "LE CS Read Remote Supported Capabilities Complete"),
        e(0x2D, "LE CS Read Remote FAE Table Complete"),
        e(0x2E, "LE CS Security Enable Complete", statusHandle),
        e(0x2F, "LE CS Config Complete"),
        e(0x30, "LE CS Procedure Enable Complete"),
        e(0x31, "LE CS Subevent Result"),
        e(0x32, "LE CS Subevent Result Continue"),
        e(0x33, "LE CS Test End Complete", [.status]),
    ]
}

extension HCIEvents {
    /// An event in one line: its name and code, then what tells it apart (the command it answers,
    /// the link it opened or closed, its first advertising report).
    public static func writeSummary(code: UInt8, _ params: Bytes, to line: inout TextLine) {
        HCIEvents.writeName(code, to: &line)
        line += " ("
        line.write(hex: code, width: 2)
        line.write(byte: UInt8(ascii: ")"))
        switch code {
        case 0x0E: // Command Complete: opcode, then return parameters starting with a status for most
            guard let op = params.le16(1) else { return }
            line.write(byte: 32)
            HCICommands.writeName(op, to: &line)
            if let st = params.byte(3) { line += ": "; HCIErrors.writeName(st, to: &line) }
        case 0x0F: // Command Status
            guard let st = params.byte(0), let op = params.le16(2) else { return }
            line.write(byte: 32)
            HCICommands.writeName(op, to: &line)
            line += ": "
            HCIErrors.writeName(st, to: &line)
        case 0x3E:
            guard let sub = params.byte(0) else { return }
            line.write(byte: 32)
            HCIEvents.writeLESubeventName(sub, to: &line)
            if sub == 0x01 || sub == 0x0A || sub == 0x29 {
                // Status, handle, role, peer address type and address, (RPAs), interval.
                var r = ByteReader(params.from(1))
                guard let st = try? r.u8() else { return }
                guard st == 0, let h = try? r.u16(), let role = try? r.u8(), (try? r.skip(1)) != nil, let a = try? r.address() else {
                    line += ": "
                    HCIErrors.writeName(st, to: &line)
                    return
                }
                if sub != 0x01 { _ = try? r.skip(12) }
                line += " handle "
                line.write(hex: h & 0x0FFF, width: 4)
                line.write(byte: 32)
                line.write(a)
                line += role == 0 ? " (central)" : " (peripheral)"
                if let i = try? r.u16() { line += " interval "; line.write(String(Double(i) * 1.25)); line += " ms" }
                return
            }
            if AdvertisingReports.isReport(subevent: sub) {
                // The first report, and how many follow it: no array of reports.
                var count = 0
                AdvertisingReports.forEach(subevent: sub, params.from(1)) { r, reports in
                    if count == 0 { line.write(byte: 32); r.writeSummary(in: reports, to: &line) }
                    count += 1
                }
                if count > 1 { line += " (+"; line.write(count - 1); line += " more)" }
            }
        case 0x05:
            guard let h = params.le16(1), let reason = params.byte(3) else { return }
            line += " handle "
            line.write(hex: h, width: 4)
            line += " reason "
            HCIErrors.writeName(reason, to: &line)
        case 0x08, 0x59: // Encryption Change v1/v2: status, handle, enabled
            guard let st = params.byte(0), let h = params.le16(1), let on = params.byte(3) else { return }
            line += " handle "
            line.write(hex: h, width: 4)
            if st != 0 { line += ": "; HCIErrors.writeName(st, to: &line) } else { line += on != 0 ? " encryption on" : " encryption off" }
        default:
            break
        }
    }
}
