import Wire

/// HCI commands (Core Vol 4 Part E §7.1–7.8): names, parameters and Command Complete return
/// parameters, all from one table.
public enum HCICommands {
    /// Opcode Group Field: the upper 6 bits.
    @inlinable public static func ogf(_ opcode: UInt16) -> UInt16 { opcode >> 10 }
    /// Opcode Command Field: the lower 10 bits.
    @inlinable public static func ocf(_ opcode: UInt16) -> UInt16 { opcode & 0x03FF }
    /// OGF 0x3F: vendor-specific commands.
    @inlinable public static func isVendor(_ opcode: UInt16) -> Bool { ogf(opcode) == 0x3F }

    /// Whether the specification defines the opcode.
    public static func isKnown(_ opcode: UInt16) -> Bool { index(opcode) != nil }

    /// Specification name: "LE Set Scan Enable". Vendor OGF 0x3F: "Vendor Command (OCF 0x0123)".
    /// Unknown: "Unknown Command (0x....)".
    public static func name(_ opcode: UInt16) -> String {
        if let i = index(opcode) { return names[i] }
        if isVendor(opcode) { return "Vendor Command (OCF " + Hex.prefixed(ocf(opcode), width: 4) + ")" }
        return "Unknown Command (" + Hex.prefixed(opcode, width: 4) + ")"
    }

    /// `name(opcode)` as a label: a known command's literal, another's text interned.
    public static func label(_ opcode: UInt16) -> FieldLabel {
        if let i = index(opcode) { return FieldLabel(stringLiteral: table[i].name) }
        return FieldLabel(name(opcode))
    }

    /// Writes `name(opcode)`: a known command's name copied as the literal it is.
    public static func writeName(_ opcode: UInt16, to line: inout TextLine) {
        if let i = index(opcode) { line += table[i].name } else { line.write(name(opcode)) }
    }

    /// The names as Strings, made once: what fields hold.
    static let names = table.map(\.name.description)

    /// The command's parameters.
    public static func parameters(opcode: UInt16, _ params: Bytes) -> [Field] {
        FieldList.build { writeParameters(opcode: opcode, params, to: $0) }
    }

    public static func writeParameters(opcode: UInt16, _ params: Bytes, to out: FieldSink) {
        guard let i = index(opcode), let specs = table[i].params else {
            if !params.isEmpty { out.add("Parameters", .bytes(params)) }
            return
        }
        ParamDecoder.write(specs, params, to: out)
    }

    /// Return parameters of the command, as carried by the Command Complete event.
    public static func returnParameters(opcode: UInt16, _ params: Bytes) -> [Field] {
        FieldList.build { writeReturnParameters(opcode: opcode, params, to: $0) }
    }

    public static func writeReturnParameters(opcode: UInt16, _ params: Bytes, to out: FieldSink) {
        guard let i = index(opcode) else {
            if !params.isEmpty { out.add("Return Parameters", .bytes(params)) }
            return
        }
        // Every specified command's return parameters start with Status.
        guard let specs = table[i].returns, !specs.isEmpty else {
            var r = ByteReader(params)
            guard let status = try? r.u8() else { return }
            out.add("Status", ParamDecoder.value(UInt64(status), width: 1, .status))
            let rest = r.rest()
            if !rest.isEmpty { out.add("Return Parameters", .bytes(rest)) }
            return
        }
        // On failure controllers may return the Status alone.
        if params.count == 1, let s = params.first, s != 0 {
            out.add("Status", ParamDecoder.value(UInt64(s), width: 1, .status))
            return
        }
        ParamDecoder.write(specs, params, to: out)
    }

    /// All opcodes in the table, in table order.
    public static var allOpcodes: [UInt16] { table.map(\.opcode) }

    /// Where the opcode is in `table`. (Reading fields of `table[i]` copies only them, not the entry.)
    static func index(_ opcode: UInt16) -> Int? {
        let g = Int(ogf(opcode)), f = Int(ocf(opcode))
        guard g < slots.count, f < slots[g].count else { return nil }
        let i = Int(slots[g][f])
        return i >= 0 ? i : nil
    }

    /// slots[OGF][OCF] = index into `table`, or -1.
    static let slots: [[Int16]] = {
        var s = [[Int16]](repeating: [], count: 9)
        for (i, e) in table.enumerated() {
            let g = Int(ogf(e.opcode)), f = Int(ocf(e.opcode))
            guard g < s.count else { continue }
            if s[g].count <= f { s[g] += [Int16](repeating: -1, count: f + 1 - s[g].count) }
            s[g][f] = Int16(i)
        }
        return s
    }()
}

struct CommandInfo: Sendable {
    let opcode: UInt16
    let name: StaticString
    /// nil: parameters shown raw.
    let params: [ParamSpec]?
    /// nil: Status then raw bytes (or the command completes with Command Status only).
    let returns: [ParamSpec]?
}

private func c(_ opcode: UInt16, _ name: StaticString, _ params: [ParamSpec]? = nil, _ returns: [ParamSpec]? = nil) -> CommandInfo {
    CommandInfo(opcode: opcode, name: name, params: params, returns: returns)
}

// Parameter groups several commands share.
private let ok: [ParamSpec] = [.status]
private let handleOnly: [ParamSpec] = [.connectionHandle]
private let statusHandle: [ParamSpec] = [.status, .connectionHandle]
private let addrOnly: [ParamSpec] = [.bdAddr]
private let statusAddr: [ParamSpec] = [.status, .bdAddr]
private let connectionParameters: [ParamSpec] = [
    .u16("Connection Interval Min", .interval), .u16("Connection Interval Max", .interval),
    .u16("Max Latency", .dec), .u16("Supervision Timeout", .ms10),
    .u16("Min CE Length", .slots), .u16("Max CE Length", .slots),
]
private let initiatingPHY: [ParamSpec] = [.u16("Scan Interval", .slots), .u16("Scan Window", .slots)] + connectionParameters
private let extendedCreateConnection: [ParamSpec] = [
    .u8("Initiator Filter Policy", .names(HCINames.initiatorFilterPolicy)),
    .u8("Own Address Type", .names(HCINames.ownAddressType)),
    .u8("Peer Address Type", .names(HCINames.identityAddressType)), .address("Peer Address"),
    .perPHY("Initiating PHYs", initiatingPHY),
]
private let extendedAdvertisingParameters: [ParamSpec] = [
    .advertisingHandle, .u16("Advertising Event Properties", .flags(HCINames.advertisingEventProperties)),
    .u24("Primary Advertising Interval Min", .slots), .u24("Primary Advertising Interval Max", .slots),
    .u8("Primary Advertising Channel Map", .flags(HCINames.channelMap)),
    .u8("Own Address Type", .names(HCINames.ownAddressType)),
    .u8("Peer Address Type", .names(HCINames.addressType)), .address("Peer Address"),
    .u8("Advertising Filter Policy", .names(HCINames.advertisingFilterPolicy)),
    .u8("Advertising TX Power", .dBm), .u8("Primary Advertising PHY", .names(HCINames.phy)),
    .u8("Secondary Advertising Max Skip", .dec), .u8("Secondary Advertising PHY", .names(HCINames.phy)),
    .u8("Advertising SID", .dec), .u8("Scan Request Notification Enable", .enable),
]
private let periodicAdvertisingParameters: [ParamSpec] = [
    .advertisingHandle, .u16("Periodic Advertising Interval Min", .interval),
    .u16("Periodic Advertising Interval Max", .interval),
    .u16("Periodic Advertising Properties", .flags(HCINames.periodicProperties)),
]
private let resolvingListEntry: [ParamSpec] = [
    .u8("Peer Identity Address Type", .names(HCINames.identityOnly)), .address("Peer Identity Address"),
]
private let periodicAdvertiserListEntry: [ParamSpec] = [
    .u8("Advertiser Address Type", .names(HCINames.addressType)), .address("Advertiser Address"), .u8("Advertising SID", .dec),
]
private let filterAcceptListEntry: [ParamSpec] = [
    .u8("Address Type", .lookup(HCINames.filterAcceptListAddressType)), .address("Address"),
]
private let cigReturn: [ParamSpec] = [.status, .u8("CIG ID", .hex), .array(count: "CIS Count", element: "CIS", [.connectionHandle])]
private let isoTestCounters: [ParamSpec] = [
    .status, .connectionHandle, .u32("Received SDU Count", .dec), .u32("Missed SDU Count", .dec), .u32("Failed SDU Count", .dec),
]
private let subrateParameters: [ParamSpec] = [
    .u16("Subrate Min", .dec), .u16("Subrate Max", .dec), .u16("Max Latency", .dec),
    .u16("Continuation Number", .dec), .u16("Supervision Timeout", .ms10),
]
private let pastParameters: [ParamSpec] = [
    .u8("Mode", .names(HCINames.pastMode)), .u16("Skip", .dec), .u16("Sync Timeout", .ms10),
    .u8("CTE Type", .flags(HCINames.syncCTEType)),
]
private let pathLossParameters: [ParamSpec] = [
    .connectionHandle, .u8("High Threshold", .dB), .u8("High Hysteresis", .dB),
    .u8("Low Threshold", .dB), .u8("Low Hysteresis", .dB), .u16("Min Time Spent", .dec),
]
private let transmitterTestV3: [ParamSpec] = [
    .u8("TX Channel", .dec), .u8("Test Data Length", .octets), .u8("Packet Payload", .names(HCINames.testPayload)),
    .u8("PHY", .names(HCINames.phyCoding)), .u8("CTE Length", .dec), .u8("CTE Type", .names(HCINames.cteTypeLabels)),
    .lengthData(length: "Switching Pattern Length", data: "Antenna IDs"),
]
private let codecPath: [ParamSpec] = [
    .bytes("Codec ID", 5), .u8("Logical Transport Type", .names(HCINames.logicalTransportType)),
    .u8("Direction", .names(HCINames.dataPathDirectionLabels)),
]
/// Channel Sounding capabilities (Core 6.0 §7.8.130).
private let csCapabilities: [ParamSpec] = [
    .u8("Num Config Supported", .dec), .u16("Max Consecutive Procedures Supported", .dec),
    .u8("Num Antennas Supported", .dec), .u8("Max Antenna Paths Supported", .dec),
    .u8("Roles Supported", .flags(["Initiator", "Reflector"])), .u8("Modes Supported", .flags(["Mode 3"])),
    .u8("RTT Capability", .hex), .u8("RTT AA Only N", .dec), .u8("RTT Sounding N", .dec), .u8("RTT Random Payload N", .dec),
    .u16("NADM Sounding Capability", .hex), .u16("NADM Random Capability", .hex), .u8("CS SYNC PHYs Supported", .flags(["", "LE 2M", "LE 2M 2BT"])),
    .u16("Subfeatures Supported", .hex), .u16("T IP1 Times Supported", .hex), .u16("T IP2 Times Supported", .hex),
    .u16("T FCS Times Supported", .hex), .u16("T PM Times Supported", .hex), .u8("T SW Time Supported", .us),
    .u8("TX SNR Capability", .hex),
]
private let ioCapability: [ParamSpec] = [
    .bdAddr, .u8("IO Capability", .names(HCINames.ioCapability)),
    .u8("OOB Data Present", .names(HCINames.oobDataPresent)),
    .u8("Authentication Requirements", .names(HCINames.authenticationRequirements)),
]
private let syncConnection: [ParamSpec] = [
    .u32("Transmit Bandwidth", .dec), .u32("Receive Bandwidth", .dec), .u16("Max Latency", .ms),
    .u16("Voice Setting", .hex), .u8("Retransmission Effort", .hex), .u16("Packet Type", .hex),
]

/// Set Event Filter (§7.3.3): the condition's shape depends on the filter and condition types.
private let setEventFilter = ParamSpec.custom("Filter Type") { (r, out) throws(DecodeError) in
    let type = try r.u8()
    out.add("Filter Type", ParamDecoder.value(UInt64(type), width: 1, .names(HCINames.eventFilterType)))
    guard type == 1 || type == 2 else { return }
    let cond = try r.u8()
    out.add("Filter Condition Type", ParamDecoder.value(UInt64(cond), width: 1, .names(HCINames.filterConditionType)))
    switch cond {
    case 1:
        out.add("Class of Device", .uint(UInt64(try r.u24()), hex: 6))
        out.add("Class of Device Mask", .uint(UInt64(try r.u24()), hex: 6))
    case 2:
        out.add("BD_ADDR", .address(try r.address()))
    default: break
    }
    if type == 2 {
        out.add("Auto Accept Flag", ParamDecoder.value(UInt64(try r.u8()), width: 1, .names(HCINames.autoAccept)))
    }
}

// One line per opcode where it fits. Names as the specification writes them, without "HCI_".
extension HCICommands {
    static let table: [CommandInfo] = [
    c(0x0000, "No Operation", [], []),

    // Link Control (OGF 0x01)
    c(0x0401, "Inquiry", [.u24("LAP", .hex), .u8("Inquiry Length", .s128), .u8("Num Responses", .dec)]),
    c(0x0402, "Inquiry Cancel", [], ok),
    c(0x0403, "Periodic Inquiry Mode", [.u16("Max Period Length", .s128), .u16("Min Period Length", .s128), .u24("LAP", .hex), .u8("Inquiry Length", .s128), .u8("Num Responses", .dec)], ok),
    c(0x0404, "Exit Periodic Inquiry Mode", [], ok),
    c(0x0405, "Create Connection", [.bdAddr, .u16("Packet Type", .flags(HCINames.packetType)), .u8("Page Scan Repetition Mode", .names(HCINames.pageScanRepetitionMode)), .u8("Reserved", .hex), .u16("Clock Offset", .hex), .u8("Allow Role Switch", .names(HCINames.allowRoleSwitch))]),
    c(disconnect, "Disconnect", [.connectionHandle, .reason]),
    c(0x0407, "Add SCO Connection", [.connectionHandle, .u16("Packet Type", .hex)]),
    c(0x0408, "Create Connection Cancel", addrOnly, statusAddr),
    c(0x0409, "Accept Connection Request", [.bdAddr, .u8("Role", .names(HCINames.acceptRole))]),
    c(0x040A, "Reject Connection Request", [.bdAddr, .reason]),
    c(0x040B, "Link Key Request Reply", [.bdAddr, .bytes("Link Key", 16)], statusAddr),
    c(0x040C, "Link Key Request Negative Reply", addrOnly, statusAddr),
    c(0x040D, "PIN Code Request Reply", [.bdAddr, .u8("PIN Code Length", .dec), .bytes("PIN Code", 16)], statusAddr),
    c(0x040E, "PIN Code Request Negative Reply", addrOnly, statusAddr),
    c(0x040F, "Change Connection Packet Type", [.connectionHandle, .u16("Packet Type", .flags(HCINames.packetType))]),
    c(0x0411, "Authentication Requested", handleOnly),
    c(0x0413, "Set Connection Encryption", [.connectionHandle, .u8("Encryption Enable", .enable)]),
    c(0x0415, "Change Connection Link Key", handleOnly),
    c(0x0417, "Link Key Selection", [.u8("Key Flag", .names(["Semi-permanent Link Key", "Temporary Link Key"]))]),
    c(0x0419, "Remote Name Request", [.bdAddr, .u8("Page Scan Repetition Mode", .names(HCINames.pageScanRepetitionMode)), .u8("Reserved", .hex), .u16("Clock Offset", .hex)]),
    c(0x041A, "Remote Name Request Cancel", addrOnly, statusAddr),
    c(0x041B, "Read Remote Supported Features", handleOnly),
    c(0x041C, "Read Remote Extended Features", [.connectionHandle, .u8("Page Number", .dec)]),
    c(0x041D, "Read Remote Version Information", handleOnly),
    c(0x041F, "Read Clock Offset", handleOnly),
    c(0x0420, "Read LMP Handle", handleOnly, [.status, .connectionHandle, .u8("LMP Handle", .hex), .u32("Reserved", .hex)]),
    c(0x0428, "Setup Synchronous Connection", [.connectionHandle] + syncConnection),
    c(0x0429, "Accept Synchronous Connection Request", [.bdAddr] + syncConnection),
    c(0x042A, "Reject Synchronous Connection Request", [.bdAddr, .reason]),
    c(0x042B, "IO Capability Request Reply", ioCapability, statusAddr),
    c(0x042C, "User Confirmation Request Reply", addrOnly, statusAddr),
    c(0x042D, "User Confirmation Request Negative Reply", addrOnly, statusAddr),
    c(0x042E, "User Passkey Request Reply", [.bdAddr, .u32("Numeric Value", .dec)], statusAddr),
    c(0x042F, "User Passkey Request Negative Reply", addrOnly, statusAddr),
    c(0x0430, "Remote OOB Data Request Reply", [.bdAddr, .bytes("C", 16), .bytes("R", 16)], statusAddr),
    c(0x0433, "Remote OOB Data Request Negative Reply", addrOnly, statusAddr),
    c(0x0434, "IO Capability Request Negative Reply", [.bdAddr, .reason], statusAddr),
    c(0x0435, "Create Physical Link"),
    c(0x0436, "Accept Physical Link"),
    c(0x0437, "Disconnect Physical Link"),
    c(0x0438, "Create Logical Link"),
    c(0x0439, "Accept Logical Link"),
    c(0x043A, "Disconnect Logical Link"),
    c(0x043B, "Logical Link Cancel"),
    c(0x043C, "Flow Spec Modify"),
    c(0x043D, "Enhanced Setup Synchronous Connection"),
    c(0x043E, "Enhanced Accept Synchronous Connection Request"),
    c(0x043F, "Truncated Page", [.bdAddr, .u8("Page Scan Repetition Mode", .names(HCINames.pageScanRepetitionMode)), .u16("Clock Offset", .hex)]),
    c(0x0440, "Truncated Page Cancel", addrOnly, statusAddr),
    c(0x0441, "Set Connectionless Peripheral Broadcast"),
    c(0x0442, "Set Connectionless Peripheral Broadcast Receive"),
    c(0x0443, "Start Synchronization Train", []),
    c(0x0444, "Receive Synchronization Train"),
    c(0x0445, "Remote OOB Extended Data Request Reply", [.bdAddr, .bytes("C 192", 16), .bytes("R 192", 16), .bytes("C 256", 16), .bytes("R 256", 16)], statusAddr),

    // Link Policy (OGF 0x02)
    c(0x0801, "Hold Mode", [.connectionHandle, .u16("Hold Mode Max Interval", .slots), .u16("Hold Mode Min Interval", .slots)]),
    c(0x0803, "Sniff Mode", [.connectionHandle, .u16("Sniff Max Interval", .slots), .u16("Sniff Min Interval", .slots), .u16("Sniff Attempt", .dec), .u16("Sniff Timeout", .dec)]),
    c(0x0804, "Exit Sniff Mode", handleOnly),
    c(0x0805, "Park State"),
    c(0x0806, "Exit Park State"),
    c(0x0807, "QoS Setup", [.connectionHandle, .u8("Unused", .hex), .u8("Service Type", .names(HCINames.serviceType)), .u32("Token Rate", .dec), .u32("Peak Bandwidth", .dec), .u32("Latency", .us), .u32("Delay Variation", .us)]),
    c(0x0809, "Role Discovery", handleOnly, [.status, .connectionHandle, .u8("Current Role", .names(HCINames.role))]),
    c(0x080B, "Switch Role", [.bdAddr, .u8("Role", .names(HCINames.role))]),
    c(0x080C, "Read Link Policy Settings", handleOnly, [.status, .connectionHandle, .u16("Link Policy Settings", .flags(HCINames.linkPolicy))]),
    c(0x080D, "Write Link Policy Settings", [.connectionHandle, .u16("Link Policy Settings", .flags(HCINames.linkPolicy))], statusHandle),
    c(0x080E, "Read Default Link Policy Settings", [], [.status, .u16("Default Link Policy Settings", .flags(HCINames.linkPolicy))]),
    c(0x080F, "Write Default Link Policy Settings", [.u16("Default Link Policy Settings", .flags(HCINames.linkPolicy))], ok),
    c(0x0810, "Flow Specification", [.connectionHandle, .u8("Unused", .hex), .u8("Flow Direction", .names(["Outgoing", "Incoming"])), .u8("Service Type", .names(HCINames.serviceType)), .u32("Token Rate", .dec), .u32("Token Bucket Size", .dec), .u32("Peak Bandwidth", .dec), .u32("Access Latency", .us)]),
    c(0x0811, "Sniff Subrating", [.connectionHandle, .u16("Max Latency", .slots), .u16("Min Remote Timeout", .slots), .u16("Min Local Timeout", .slots)], statusHandle),

    // Controller & Baseband (OGF 0x03)
    c(0x0C01, "Set Event Mask", [.u64("Event Mask", .flags(HCIEvents.eventMaskBits))], ok),
    c(0x0C03, "Reset", [], ok),
    c(0x0C05, "Set Event Filter", [setEventFilter], ok),
    c(0x0C08, "Flush", handleOnly, statusHandle),
    c(0x0C09, "Read PIN Type", [], [.status, .u8("PIN Type", .names(HCINames.pinType))]),
    c(0x0C0A, "Write PIN Type", [.u8("PIN Type", .names(HCINames.pinType))], ok),
    c(0x0C0B, "Create New Unit Key", [], ok),
    c(0x0C0D, "Read Stored Link Key", [.bdAddr, .u8("Read All", .names(HCINames.readAll))], [.status, .u16("Max Num Keys", .dec), .u16("Num Keys Read", .dec)]),
    c(0x0C11, "Write Stored Link Key", [.array(count: "Num Keys To Write", element: "Key", [.bdAddr, .bytes("Link Key", 16)])], [.status, .u8("Num Keys Written", .dec)]),
    c(0x0C12, "Delete Stored Link Key", [.bdAddr, .u8("Delete All", .names(HCINames.deleteAll))], [.status, .u16("Num Keys Deleted", .dec)]),
    c(0x0C13, "Write Local Name", [.text("Local Name", 248)], ok),
    c(0x0C14, "Read Local Name", [], [.status, .text("Local Name", 248)]),
    c(0x0C15, "Read Connection Accept Timeout", [], [.status, .u16("Connection Accept Timeout", .slots)]),
    c(0x0C16, "Write Connection Accept Timeout", [.u16("Connection Accept Timeout", .slots)], ok),
    c(0x0C17, "Read Page Timeout", [], [.status, .u16("Page Timeout", .slots)]),
    c(0x0C18, "Write Page Timeout", [.u16("Page Timeout", .slots)], ok),
    c(0x0C19, "Read Scan Enable", [], [.status, .u8("Scan Enable", .names(HCINames.scanEnable))]),
    c(0x0C1A, "Write Scan Enable", [.u8("Scan Enable", .names(HCINames.scanEnable))], ok),
    c(0x0C1B, "Read Page Scan Activity", [], [.status, .u16("Page Scan Interval", .slots), .u16("Page Scan Window", .slots)]),
    c(0x0C1C, "Write Page Scan Activity", [.u16("Page Scan Interval", .slots), .u16("Page Scan Window", .slots)], ok),
    c(0x0C1D, "Read Inquiry Scan Activity", [], [.status, .u16("Inquiry Scan Interval", .slots), .u16("Inquiry Scan Window", .slots)]),
    c(0x0C1E, "Write Inquiry Scan Activity", [.u16("Inquiry Scan Interval", .slots), .u16("Inquiry Scan Window", .slots)], ok),
    c(0x0C1F, "Read Authentication Enable", [], [.status, .u8("Authentication Enable", .enable)]),
    c(0x0C20, "Write Authentication Enable", [.u8("Authentication Enable", .enable)], ok),
    c(0x0C21, "Read Encryption Mode", [], [.status, .u8("Encryption Mode", .hex)]),
    c(0x0C22, "Write Encryption Mode", [.u8("Encryption Mode", .hex)], ok),
    c(0x0C23, "Read Class of Device", [], [.status, .classOfDevice]),
    c(0x0C24, "Write Class of Device", [.classOfDevice], ok),
    c(0x0C25, "Read Voice Setting", [], [.status, .u16("Voice Setting", .hex)]),
    c(0x0C26, "Write Voice Setting", [.u16("Voice Setting", .hex)], ok),
    c(0x0C27, "Read Automatic Flush Timeout", handleOnly, [.status, .connectionHandle, .u16("Flush Timeout", .slots)]),
    c(0x0C28, "Write Automatic Flush Timeout", [.connectionHandle, .u16("Flush Timeout", .slots)], statusHandle),
    c(0x0C29, "Read Num Broadcast Retransmissions", [], [.status, .u8("Num Broadcast Retransmissions", .dec)]),
    c(0x0C2A, "Write Num Broadcast Retransmissions", [.u8("Num Broadcast Retransmissions", .dec)], ok),
    c(0x0C2B, "Read Hold Mode Activity", [], [.status, .u8("Hold Mode Activity", .hex)]),
    c(0x0C2C, "Write Hold Mode Activity", [.u8("Hold Mode Activity", .hex)], ok),
    c(0x0C2D, "Read Transmit Power Level", [.connectionHandle, .u8("Type", .names(HCINames.powerLevelType))], [.status, .connectionHandle, .u8("TX Power Level", .dBm)]),
    c(0x0C2E, "Read Synchronous Flow Control Enable", [], [.status, .u8("Synchronous Flow Control Enable", .enable)]),
    c(0x0C2F, "Write Synchronous Flow Control Enable", [.u8("Synchronous Flow Control Enable", .enable)], ok),
    c(0x0C31, "Set Controller To Host Flow Control", [.u8("Flow Control Enable", .names(HCINames.flowControlEnable))], ok),
    c(0x0C33, "Host Buffer Size", [.u16("Host ACL Data Packet Length", .octets), .u8("Host Synchronous Data Packet Length", .octets), .u16("Host Total Num ACL Data Packets", .dec), .u16("Host Total Num Synchronous Data Packets", .dec)], ok),
    c(0x0C35, "Host Number Of Completed Packets", [.array(count: "Num Handles", element: "Handle", [.connectionHandle, .u16("Host Num Completed Packets", .dec)])], ok),
    c(0x0C36, "Read Link Supervision Timeout", handleOnly, [.status, .connectionHandle, .u16("Link Supervision Timeout", .slots)]),
    c(0x0C37, "Write Link Supervision Timeout", [.connectionHandle, .u16("Link Supervision Timeout", .slots)], statusHandle),
    c(0x0C38, "Read Number Of Supported IAC", [], [.status, .u8("Num Supported IAC", .dec)]),
    c(0x0C39, "Read Current IAC LAP", [], [.status, .array(count: "Num Current IAC", element: "IAC", [.u24("IAC LAP", .hex)])]),
    c(0x0C3A, "Write Current IAC LAP", [.array(count: "Num Current IAC", element: "IAC", [.u24("IAC LAP", .hex)])], ok),
    c(0x0C3B, "Read Page Scan Period Mode", [], [.status, .u8("Page Scan Period Mode", .hex)]),
    c(0x0C3C, "Write Page Scan Period Mode", [.u8("Page Scan Period Mode", .hex)], ok),
    c(0x0C3D, "Read Page Scan Mode", [], [.status, .u8("Page Scan Mode", .hex)]),
    c(0x0C3E, "Write Page Scan Mode", [.u8("Page Scan Mode", .hex)], ok),
    c(0x0C3F, "Set AFH Host Channel Classification", [.bytes("AFH Host Channel Classification", 10)], ok),
    c(0x0C42, "Read Inquiry Scan Type", [], [.status, .u8("Inquiry Scan Type", .names(HCINames.scanTypeBREDR))]),
    c(0x0C43, "Write Inquiry Scan Type", [.u8("Inquiry Scan Type", .names(HCINames.scanTypeBREDR))], ok),
    c(0x0C44, "Read Inquiry Mode", [], [.status, .u8("Inquiry Mode", .names(HCINames.inquiryMode))]),
    c(0x0C45, "Write Inquiry Mode", [.u8("Inquiry Mode", .names(HCINames.inquiryMode))], ok),
    c(0x0C46, "Read Page Scan Type", [], [.status, .u8("Page Scan Type", .names(HCINames.scanTypeBREDR))]),
    c(0x0C47, "Write Page Scan Type", [.u8("Page Scan Type", .names(HCINames.scanTypeBREDR))], ok),
    c(0x0C48, "Read AFH Channel Assessment Mode", [], [.status, .u8("AFH Channel Assessment Mode", .enable)]),
    c(0x0C49, "Write AFH Channel Assessment Mode", [.u8("AFH Channel Assessment Mode", .enable)], ok),
    c(0x0C51, "Read Extended Inquiry Response", [], [.status, .u8("FEC Required", .hex), .adPadded("Extended Inquiry Response")]),
    c(0x0C52, "Write Extended Inquiry Response", [.u8("FEC Required", .hex), .adPadded("Extended Inquiry Response")], ok),
    c(0x0C53, "Refresh Encryption Key", handleOnly),
    c(0x0C55, "Read Simple Pairing Mode", [], [.status, .u8("Simple Pairing Mode", .enable)]),
    c(0x0C56, "Write Simple Pairing Mode", [.u8("Simple Pairing Mode", .enable)], ok),
    c(0x0C57, "Read Local OOB Data", [], [.status, .bytes("C", 16), .bytes("R", 16)]),
    c(0x0C58, "Read Inquiry Response Transmit Power Level", [], [.status, .u8("TX Power", .dBm)]),
    c(0x0C59, "Write Inquiry Transmit Power Level", [.u8("TX Power", .dBm)], ok),
    c(0x0C5A, "Read Default Erroneous Data Reporting", [], [.status, .u8("Erroneous Data Reporting", .enable)]),
    c(0x0C5B, "Write Default Erroneous Data Reporting", [.u8("Erroneous Data Reporting", .enable)], ok),
    c(0x0C5F, "Enhanced Flush", [.connectionHandle, .u8("Packet Type", .names(HCINames.flushPacketType))]),
    c(0x0C60, "Send Keypress Notification", [.bdAddr, .u8("Notification Type", .names(HCINames.keypress))], statusAddr),
    c(0x0C61, "Read Logical Link Accept Timeout"),
    c(0x0C62, "Write Logical Link Accept Timeout"),
    c(0x0C63, "Set Event Mask Page 2", [.u64("Event Mask Page 2", .flags(HCIEvents.eventMaskPage2Bits))], ok),
    c(0x0C64, "Read Location Data"),
    c(0x0C65, "Write Location Data"),
    c(0x0C66, "Read Flow Control Mode", [], [.status, .u8("Flow Control Mode", .names(HCINames.flowControlMode))]),
    c(0x0C67, "Write Flow Control Mode", [.u8("Flow Control Mode", .names(HCINames.flowControlMode))], ok),
    c(0x0C68, "Read Enhanced Transmit Power Level", [.connectionHandle, .u8("Type", .names(HCINames.powerLevelType))], [.status, .connectionHandle, .u8("TX Power Level GFSK", .dBm), .u8("TX Power Level DQPSK", .dBm), .u8("TX Power Level 8DPSK", .dBm)]),
    c(0x0C69, "Read Best Effort Flush Timeout"),
    c(0x0C6A, "Write Best Effort Flush Timeout"),
    c(0x0C6B, "Short Range Mode"),
    c(0x0C6C, "Read LE Host Support", [], [.status, .u8("LE Supported Host", .enable), .u8("Unused", .hex)]),
    c(0x0C6D, "Write LE Host Support", [.u8("LE Supported Host", .enable), .u8("Unused", .hex)], ok),
    c(0x0C6E, "Set MWS Channel Parameters"),
    c(0x0C6F, "Set External Frame Configuration"),
    c(0x0C70, "Set MWS Signaling"),
    c(0x0C71, "Set MWS Transport Layer"),
    c(0x0C72, "Set MWS Scan Frequency Table"),
    c(0x0C73, "Set MWS PATTERN Configuration"),
    c(0x0C74, "Set Reserved LT_ADDR"),
    c(0x0C75, "Delete Reserved LT_ADDR"),
    c(0x0C76, "Set Connectionless Peripheral Broadcast Data"),
    c(0x0C77, "Read Synchronization Train Parameters"),
    c(0x0C78, "Write Synchronization Train Parameters"),
    c(0x0C79, "Read Secure Connections Host Support", [], [.status, .u8("Secure Connections Host Support", .enable)]),
    c(0x0C7A, "Write Secure Connections Host Support", [.u8("Secure Connections Host Support", .enable)], ok),
    c(0x0C7B, "Read Authenticated Payload Timeout", handleOnly, [.status, .connectionHandle, .u16("Authenticated Payload Timeout", .ms10)]),
    c(0x0C7C, "Write Authenticated Payload Timeout", [.connectionHandle, .u16("Authenticated Payload Timeout", .ms10)], statusHandle),
    c(0x0C7D, "Read Local OOB Extended Data", [], [.status, .bytes("C 192", 16), .bytes("R 192", 16), .bytes("C 256", 16), .bytes("R 256", 16)]),
    c(0x0C7E, "Read Extended Page Timeout", [], [.status, .u16("Extended Page Timeout", .slots)]),
    c(0x0C7F, "Write Extended Page Timeout", [.u16("Extended Page Timeout", .slots)], ok),
    c(0x0C80, "Read Extended Inquiry Length", [], [.status, .u16("Extended Inquiry Length", .slots)]),
    c(0x0C81, "Write Extended Inquiry Length", [.u16("Extended Inquiry Length", .slots)], ok),
    c(0x0C82, "Set Ecosystem Base Interval", [.u16("Interval", .interval)], ok),
    c(0x0C83, "Configure Data Path", [.u8("Data Path Direction", .names(HCINames.dataPathDirectionLabels)), .u8("Data Path ID", .hex), .lengthData(length: "Vendor Specific Config Length", data: "Vendor Specific Config")], ok),
    c(0x0C84, "Set Min Encryption Key Size", [.u8("Min Encryption Key Size", .octets)], ok),

    // Informational (OGF 0x04)
    c(0x1001, "Read Local Version Information", [], [.status, .u8("HCI Version", .names(HCINames.hciVersion)), .u16("HCI Subversion", .hex), .u8("LMP Version", .names(HCINames.hciVersion)), .u16("Company Identifier", .lookup(HCINames.company)), .u16("LMP Subversion", .hex)]),
    c(0x1002, "Read Local Supported Commands", [], [.status, supportedCommands]),
    c(0x1003, "Read Local Supported Features", [], [.status, .u64("LMP Features", .flags(HCINames.lmpFeatures))]),
    c(0x1004, "Read Local Extended Features", [.u8("Page Number", .dec)], [.status, .extendedFeatures]),
    c(0x1005, "Read Buffer Size", [], [.status, .u16("ACL Data Packet Length", .octets), .u8("Synchronous Data Packet Length", .octets), .u16("Total Num ACL Data Packets", .dec), .u16("Total Num Synchronous Data Packets", .dec)]),
    c(0x1007, "Read Country Code", [], [.status, .u8("Country Code", .hex)]),
    c(0x1009, "Read BD_ADDR", [], [.status, .bdAddr]),
    c(0x100A, "Read Data Block Size", [], [.status, .u16("Max ACL Data Packet Length", .octets), .u16("Data Block Length", .octets), .u16("Total Num Data Blocks", .dec)]),
    c(0x100B, "Read Local Supported Codecs", [], [.status, .array(count: "Num Supported Standard Codecs", element: "Standard Codec", [.u8("Codec ID", .hex)]), .array(count: "Num Supported Vendor Specific Codecs", element: "Vendor Specific Codec", [.u32("Codec ID", .hex)])]),
    c(0x100C, "Read Local Simple Pairing Options", [], [.status, .u8("Simple Pairing Options", .flags(HCINames.simplePairingOptions)), .u8("Max Encryption Key Size", .octets)]),
    c(0x100D, "Read Local Supported Codecs [v2]", [], [.status, .array(count: "Num Supported Standard Codecs", element: "Standard Codec", [.u8("Codec ID", .hex), .u8("Codec Transport", .flags(HCINames.codecTransport))]), .array(count: "Num Supported Vendor Specific Codecs", element: "Vendor Specific Codec", [.u32("Codec ID", .hex), .u8("Codec Transport", .flags(HCINames.codecTransport))])]),
    c(0x100E, "Read Local Supported Codec Capabilities", codecPath, [.status, .array(count: "Num Codec Capabilities", element: "Codec Capability", [.lengthData(length: "Codec Capability Length", data: "Codec Capability")])]),
    c(0x100F, "Read Local Supported Controller Delay", codecPath + [.lengthData(length: "Codec Configuration Length", data: "Codec Configuration")], [.status, .u24("Min Controller Delay", .us), .u24("Max Controller Delay", .us)]),

    // Status Parameters (OGF 0x05)
    c(0x1401, "Read Failed Contact Counter", handleOnly, [.status, .connectionHandle, .u16("Failed Contact Counter", .dec)]),
    c(0x1402, "Reset Failed Contact Counter", handleOnly, statusHandle),
    c(0x1403, "Read Link Quality", handleOnly, [.status, .connectionHandle, .u8("Link Quality", .dec)]),
    c(0x1405, "Read RSSI", handleOnly, [.status, .connectionHandle, .u8("RSSI", .signed("dB"))]),
    c(0x1406, "Read AFH Channel Map", handleOnly, [.status, .connectionHandle, .u8("AFH Mode", .enable), .bytes("AFH Channel Map", 10)]),
    c(0x1407, "Read Clock", [.connectionHandle, .u8("Which Clock", .names(HCINames.whichClock))], [.status, .connectionHandle, .u32("Clock", .hex), .u16("Accuracy", .dec)]),
    c(0x1408, "Read Encryption Key Size", handleOnly, [.status, .connectionHandle, .u8("Key Size", .octets)]),
    c(0x1409, "Read Local AMP Info"),
    c(0x140A, "Read Local AMP ASSOC"),
    c(0x140B, "Write Remote AMP ASSOC"),
    c(0x140C, "Get MWS Transport Layer Configuration"),
    c(0x140D, "Set Triggered Clock Capture"),

    // Testing (OGF 0x06)
    c(0x1801, "Read Loopback Mode", [], [.status, .u8("Loopback Mode", .names(HCINames.loopbackMode))]),
    c(0x1802, "Write Loopback Mode", [.u8("Loopback Mode", .names(HCINames.loopbackMode))], ok),
    c(0x1803, "Enable Device Under Test Mode", [], ok),
    c(0x1804, "Write Simple Pairing Debug Mode", [.u8("Debug Mode", .enable)], ok),
    c(0x1807, "Enable AMP Receiver Reports"),
    c(0x1808, "AMP Test End"),
    c(0x1809, "AMP Test"),
    c(0x180A, "Write Secure Connections Test Mode", [.connectionHandle, .u8("DM1 ACL-U Mode", .enable), .u8("eSCO Loopback Mode", .enable)], statusHandle),

    // LE Controller (OGF 0x08)
    c(0x2001, "LE Set Event Mask", [.u64("LE Event Mask", .flags(HCIEvents.leEventMaskBits))], ok),
    c(0x2002, "LE Read Buffer Size", [], [.status, .u16("LE ACL Data Packet Length", .octets), .u8("Total Num LE ACL Data Packets", .dec)]),
    c(0x2003, "LE Read Local Supported Features", [], [.status, .u64("LE Features", .flags(HCINames.leFeatures))]),
    c(0x2005, "LE Set Random Address", [.address("Random Address")], ok),
    c(leSetAdvertisingParameters, "LE Set Advertising Parameters", [.u16("Advertising Interval Min", .slots), .u16("Advertising Interval Max", .slots), .u8("Advertising Type", .names(HCINames.advertisingType)), .u8("Own Address Type", .names(HCINames.ownAddressType)), .u8("Peer Address Type", .names(HCINames.addressType)), .address("Peer Address"), .u8("Advertising Channel Map", .flags(HCINames.channelMap)), .u8("Advertising Filter Policy", .names(HCINames.advertisingFilterPolicy))], ok),
    c(0x2007, "LE Read Advertising Physical Channel Tx Power", [], [.status, .u8("TX Power Level", .dBm)]),
    c(leSetAdvertisingData, "LE Set Advertising Data", [.adFixed(length: "Advertising Data Length", data: "Advertising Data", size: 31)], ok),
    c(leSetScanResponseData, "LE Set Scan Response Data", [.adFixed(length: "Scan Response Data Length", data: "Scan Response Data", size: 31)], ok),
    c(leSetAdvertisingEnable, "LE Set Advertising Enable", [.u8("Advertising Enable", .enable)], ok),
    c(leSetScanParameters, "LE Set Scan Parameters", [.u8("LE Scan Type", .names(HCINames.scanType)), .u16("LE Scan Interval", .slots), .u16("LE Scan Window", .slots), .u8("Own Address Type", .names(HCINames.ownAddressType)), .u8("Scanning Filter Policy", .names(HCINames.scanningFilterPolicy))], ok),
    c(leSetScanEnable, "LE Set Scan Enable", [.u8("LE Scan Enable", .enable), .u8("Filter Duplicates", .enable)], ok),
    c(leCreateConnection, "LE Create Connection", [.u16("LE Scan Interval", .slots), .u16("LE Scan Window", .slots), .u8("Initiator Filter Policy", .names(HCINames.initiatorFilterPolicy)), .u8("Peer Address Type", .names(HCINames.identityAddressType)), .address("Peer Address"), .u8("Own Address Type", .names(HCINames.ownAddressType))] + connectionParameters),
    c(0x200E, "LE Create Connection Cancel", [], ok),
    c(0x200F, "LE Read Filter Accept List Size", [], [.status, .u8("Filter Accept List Size", .dec)]),
    c(0x2010, "LE Clear Filter Accept List", [], ok),
    c(0x2011, "LE Add Device To Filter Accept List", filterAcceptListEntry, ok),
    c(0x2012, "LE Remove Device From Filter Accept List", filterAcceptListEntry, ok),
    c(0x2013, "LE Connection Update", [.connectionHandle] + connectionParameters),
    c(0x2014, "LE Set Host Channel Classification", [.bytes("Channel Map", 5)], ok),
    c(0x2015, "LE Read Channel Map", handleOnly, [.status, .connectionHandle, .bytes("Channel Map", 5)]),
    c(0x2016, "LE Read Remote Features", handleOnly),
    c(0x2017, "LE Encrypt", [.bytes("Key", 16), .bytes("Plaintext Data", 16)], [.status, .bytes("Encrypted Data", 16)]),
    c(0x2018, "LE Rand", [], [.status, .u64("Random Number", .hex)]),
    c(0x2019, "LE Enable Encryption", [.connectionHandle, .u64("Random Number", .hex), .u16("Encrypted Diversifier", .hex), .bytes("Long Term Key", 16)]),
    c(0x201A, "LE Long Term Key Request Reply", [.connectionHandle, .bytes("Long Term Key", 16)], statusHandle),
    c(0x201B, "LE Long Term Key Request Negative Reply", handleOnly, statusHandle),
    c(0x201C, "LE Read Supported States", [], [.status, .u64("LE States", .hex)]),
    c(0x201D, "LE Receiver Test", [.u8("RX Channel", .dec)], ok),
    c(0x201E, "LE Transmitter Test", [.u8("TX Channel", .dec), .u8("Test Data Length", .octets), .u8("Packet Payload", .names(HCINames.testPayload))], ok),
    c(0x201F, "LE Test End", [], [.status, .u16("Num Packets", .dec)]),
    c(0x2020, "LE Remote Connection Parameter Request Reply", [.connectionHandle] + connectionParameters, statusHandle),
    c(0x2021, "LE Remote Connection Parameter Request Negative Reply", [.connectionHandle, .reason], statusHandle),
    c(0x2022, "LE Set Data Length", [.connectionHandle, .u16("TX Octets", .octets), .u16("TX Time", .us)], statusHandle),
    c(0x2023, "LE Read Suggested Default Data Length", [], [.status, .u16("Suggested Max TX Octets", .octets), .u16("Suggested Max TX Time", .us)]),
    c(0x2024, "LE Write Suggested Default Data Length", [.u16("Suggested Max TX Octets", .octets), .u16("Suggested Max TX Time", .us)], ok),
    c(0x2025, "LE Read Local P-256 Public Key", []),
    c(0x2026, "LE Generate DHKey", [.bytes("Remote P-256 Public Key", 64)]),
    c(0x2027, "LE Add Device To Resolving List", resolvingListEntry + [.bytes("Peer IRK", 16), .bytes("Local IRK", 16)], ok),
    c(0x2028, "LE Remove Device From Resolving List", resolvingListEntry, ok),
    c(0x2029, "LE Clear Resolving List", [], ok),
    c(0x202A, "LE Read Resolving List Size", [], [.status, .u8("Resolving List Size", .dec)]),
    c(0x202B, "LE Read Peer Resolvable Address", resolvingListEntry, [.status, .address("Peer Resolvable Address")]),
    c(0x202C, "LE Read Local Resolvable Address", resolvingListEntry, [.status, .address("Local Resolvable Address")]),
    c(0x202D, "LE Set Address Resolution Enable", [.u8("Address Resolution Enable", .enable)], ok),
    c(0x202E, "LE Set Resolvable Private Address Timeout", [.u16("RPA Timeout", .s)], ok),
    c(0x202F, "LE Read Maximum Data Length", [], [.status, .u16("Supported Max TX Octets", .octets), .u16("Supported Max TX Time", .us), .u16("Supported Max RX Octets", .octets), .u16("Supported Max RX Time", .us)]),
    c(0x2030, "LE Read PHY", handleOnly, [.status, .connectionHandle, .u8("TX PHY", .names(HCINames.phy)), .u8("RX PHY", .names(HCINames.phy))]),
    c(0x2031, "LE Set Default PHY", [.u8("All PHYs", .flags(HCINames.allPhys)), .u8("TX PHYs", .flags(HCINames.phyBits)), .u8("RX PHYs", .flags(HCINames.phyBits))], ok),
    c(0x2032, "LE Set PHY", [.connectionHandle, .u8("All PHYs", .flags(HCINames.allPhys)), .u8("TX PHYs", .flags(HCINames.phyBits)), .u8("RX PHYs", .flags(HCINames.phyBits)), .u16("PHY Options", .names(HCINames.phyOptions))]),
    c(0x2033, "LE Receiver Test [v2]", [.u8("RX Channel", .dec), .u8("PHY", .names(HCINames.phy)), .u8("Modulation Index", .names(HCINames.modulationIndex))], ok),
    c(0x2034, "LE Transmitter Test [v2]", [.u8("TX Channel", .dec), .u8("Test Data Length", .octets), .u8("Packet Payload", .names(HCINames.testPayload)), .u8("PHY", .names(HCINames.phyCoding))], ok),
    c(0x2035, "LE Set Advertising Set Random Address", [.advertisingHandle, .address("Random Address")], ok),
    c(leSetExtendedAdvertisingParameters, "LE Set Extended Advertising Parameters", extendedAdvertisingParameters, [.status, .u8("Selected TX Power", .dBm)]),
    c(leSetExtendedAdvertisingData, "LE Set Extended Advertising Data", [.advertisingHandle, .u8("Operation", .names(HCINames.dataOperation)), .u8("Fragment Preference", .names(HCINames.fragmentPreference)), .adData(length: "Advertising Data Length", data: "Advertising Data")], ok),
    c(leSetExtendedScanResponseData, "LE Set Extended Scan Response Data", [.advertisingHandle, .u8("Operation", .names(HCINames.dataOperation)), .u8("Fragment Preference", .names(HCINames.fragmentPreference)), .adData(length: "Scan Response Data Length", data: "Scan Response Data")], ok),
    c(leSetExtendedAdvertisingEnable, "LE Set Extended Advertising Enable", [.u8("Enable", .enable), .array(count: "Num Sets", element: "Advertising Set", [.advertisingHandle, .u16("Duration", .ms10), .u8("Max Extended Advertising Events", .dec)])], ok),
    c(0x203A, "LE Read Maximum Advertising Data Length", [], [.status, .u16("Max Advertising Data Length", .octets)]),
    c(0x203B, "LE Read Number of Supported Advertising Sets", [], [.status, .u8("Num Supported Advertising Sets", .dec)]),
    c(0x203C, "LE Remove Advertising Set", [.advertisingHandle], ok),
    c(0x203D, "LE Clear Advertising Sets", [], ok),
    c(0x203E, "LE Set Periodic Advertising Parameters", periodicAdvertisingParameters, ok),
    c(0x203F, "LE Set Periodic Advertising Data", [.advertisingHandle, .u8("Operation", .names(HCINames.dataOperation)), .adData(length: "Advertising Data Length", data: "Advertising Data")], ok),
    c(0x2040, "LE Set Periodic Advertising Enable", [.u8("Enable", .flags(HCINames.periodicEnable)), .advertisingHandle], ok),
    c(leSetExtendedScanParameters, "LE Set Extended Scan Parameters", [.u8("Own Address Type", .names(HCINames.ownAddressType)), .u8("Scanning Filter Policy", .names(HCINames.scanningFilterPolicy)), .perPHY("Scanning PHYs", [.u8("Scan Type", .names(HCINames.scanType)), .u16("Scan Interval", .slots), .u16("Scan Window", .slots)])], ok),
    c(leSetExtendedScanEnable, "LE Set Extended Scan Enable", [.u8("Enable", .enable), .u8("Filter Duplicates", .names(HCINames.filterDuplicates)), .u16("Duration", .ms10), .u16("Period", .s128)], ok),
    c(leExtendedCreateConnection, "LE Extended Create Connection", extendedCreateConnection),
    c(0x2044, "LE Periodic Advertising Create Sync", [.u8("Options", .flags(HCINames.syncOptions)), .u8("Advertising SID", .dec), .u8("Advertiser Address Type", .names(HCINames.addressType)), .address("Advertiser Address"), .u16("Skip", .dec), .u16("Sync Timeout", .ms10), .u8("Sync CTE Type", .flags(HCINames.syncCTEType))]),
    c(0x2045, "LE Periodic Advertising Create Sync Cancel", [], ok),
    c(0x2046, "LE Periodic Advertising Terminate Sync", [.syncHandle], ok),
    c(0x2047, "LE Add Device To Periodic Advertiser List", periodicAdvertiserListEntry, ok),
    c(0x2048, "LE Remove Device From Periodic Advertiser List", periodicAdvertiserListEntry, ok),
    c(0x2049, "LE Clear Periodic Advertiser List", [], ok),
    c(0x204A, "LE Read Periodic Advertiser List Size", [], [.status, .u8("Periodic Advertiser List Size", .dec)]),
    c(0x204B, "LE Read Transmit Power", [], [.status, .u8("Min TX Power", .dBm), .u8("Max TX Power", .dBm)]),
    c(0x204C, "LE Read RF Path Compensation", [], [.status, .u16("RF TX Path Compensation Value", .signed("0.1 dB")), .u16("RF RX Path Compensation Value", .signed("0.1 dB"))]),
    c(0x204D, "LE Write RF Path Compensation", [.u16("RF TX Path Compensation Value", .signed("0.1 dB")), .u16("RF RX Path Compensation Value", .signed("0.1 dB"))], ok),
    c(0x204E, "LE Set Privacy Mode", resolvingListEntry + [.u8("Privacy Mode", .names(HCINames.privacyMode))], ok),
    c(0x204F, "LE Receiver Test [v3]", [.u8("RX Channel", .dec), .u8("PHY", .names(HCINames.phy)), .u8("Modulation Index", .names(HCINames.modulationIndex)), .u8("Expected CTE Length", .dec), .u8("Expected CTE Type", .names(HCINames.cteTypeLabels)), .u8("Slot Durations", .hex), .lengthData(length: "Switching Pattern Length", data: "Antenna IDs")], ok),
    c(0x2050, "LE Transmitter Test [v3]", transmitterTestV3, ok),
    c(0x2051, "LE Set Connectionless CTE Transmit Parameters", [.advertisingHandle, .u8("CTE Length", .dec), .u8("CTE Type", .names(HCINames.cteTypeLabels)), .u8("CTE Count", .dec), .lengthData(length: "Switching Pattern Length", data: "Antenna IDs")], ok),
    c(0x2052, "LE Set Connectionless CTE Transmit Enable", [.advertisingHandle, .u8("CTE Enable", .enable)], ok),
    c(0x2053, "LE Set Connectionless IQ Sampling Enable", [.syncHandle, .u8("Sampling Enable", .enable), .u8("Slot Durations", .hex), .u8("Max Sampled CTEs", .dec), .lengthData(length: "Switching Pattern Length", data: "Antenna IDs")], [.status, .syncHandle]),
    c(0x2054, "LE Set Connection CTE Receive Parameters", [.connectionHandle, .u8("Sampling Enable", .enable), .u8("Slot Durations", .hex), .lengthData(length: "Switching Pattern Length", data: "Antenna IDs")], statusHandle),
    c(0x2055, "LE Set Connection CTE Transmit Parameters", [.connectionHandle, .u8("CTE Types", .flags(HCINames.cteType)), .lengthData(length: "Switching Pattern Length", data: "Antenna IDs")], statusHandle),
    c(0x2056, "LE Connection CTE Request Enable", [.connectionHandle, .u8("Enable", .enable), .u16("CTE Request Interval", .dec), .u8("Requested CTE Length", .dec), .u8("Requested CTE Type", .names(HCINames.cteTypeLabels))], statusHandle),
    c(0x2057, "LE Connection CTE Response Enable", [.connectionHandle, .u8("Enable", .enable)], statusHandle),
    c(0x2058, "LE Read Antenna Information", [], [.status, .u8("Supported Switching Sampling Rates", .hex), .u8("Num Antennae", .dec), .u8("Max Switching Pattern Length", .dec), .u8("Max CTE Length", .dec)]),
    c(0x2059, "LE Set Periodic Advertising Receive Enable", [.syncHandle, .u8("Enable", .flags(HCINames.periodicReceiveEnable))], ok),
    c(0x205A, "LE Periodic Advertising Sync Transfer", [.connectionHandle, .u16("Service Data", .hex), .syncHandle], statusHandle),
    c(0x205B, "LE Periodic Advertising Set Info Transfer", [.connectionHandle, .u16("Service Data", .hex), .advertisingHandle], statusHandle),
    c(0x205C, "LE Set Periodic Advertising Sync Transfer Parameters", [.connectionHandle] + pastParameters, statusHandle),
    c(0x205D, "LE Set Default Periodic Advertising Sync Transfer Parameters", pastParameters, ok),
    c(0x205E, "LE Generate DHKey [v2]", [.bytes("Remote P-256 Public Key", 64), .u8("Key Type", .names(HCINames.dhKeyType))]),
    c(0x205F, "LE Modify Sleep Clock Accuracy", [.u8("Action", .names(HCINames.sleepClockAction))], ok),
    c(0x2060, "LE Read Buffer Size [v2]", [], [.status, .u16("LE ACL Data Packet Length", .octets), .u8("Total Num LE ACL Data Packets", .dec), .u16("ISO Data Packet Length", .octets), .u8("Total Num ISO Data Packets", .dec)]),
    c(0x2061, "LE Read ISO TX Sync", handleOnly, [.status, .connectionHandle, .u16("Packet Sequence Number", .dec), .u32("TX Time Stamp", .us), .u24("Time Offset", .us)]),
    c(0x2062, "LE Set CIG Parameters", [.u8("CIG ID", .hex), .u24("SDU Interval C To P", .us), .u24("SDU Interval P To C", .us), .u8("Worst Case SCA", .names(HCINames.sca)), .u8("Packing", .names(HCINames.packing)), .u8("Framing", .names(HCINames.framing)), .u16("Max Transport Latency C To P", .ms), .u16("Max Transport Latency P To C", .ms), .array(count: "CIS Count", element: "CIS", [.u8("CIS ID", .hex), .u16("Max SDU C To P", .octets), .u16("Max SDU P To C", .octets), .u8("PHY C To P", .flags(HCINames.phyBits)), .u8("PHY P To C", .flags(HCINames.phyBits)), .u8("RTN C To P", .dec), .u8("RTN P To C", .dec)])], cigReturn),
    c(0x2063, "LE Set CIG Parameters Test", [.u8("CIG ID", .hex), .u24("SDU Interval C To P", .us), .u24("SDU Interval P To C", .us), .u8("FT C To P", .dec), .u8("FT P To C", .dec), .u16("ISO Interval", .interval), .u8("Worst Case SCA", .names(HCINames.sca)), .u8("Packing", .names(HCINames.packing)), .u8("Framing", .names(HCINames.framing)), .array(count: "CIS Count", element: "CIS", [.u8("CIS ID", .hex), .u8("NSE", .dec), .u16("Max SDU C To P", .octets), .u16("Max SDU P To C", .octets), .u16("Max PDU C To P", .octets), .u16("Max PDU P To C", .octets), .u8("PHY C To P", .flags(HCINames.phyBits)), .u8("PHY P To C", .flags(HCINames.phyBits)), .u8("BN C To P", .dec), .u8("BN P To C", .dec)])], cigReturn),
    c(0x2064, "LE Create CIS", [.array(count: "CIS Count", element: "CIS", [.u16("CIS Connection Handle", .hex), .u16("ACL Connection Handle", .hex)])]),
    c(0x2065, "LE Remove CIG", [.u8("CIG ID", .hex)], [.status, .u8("CIG ID", .hex)]),
    c(0x2066, "LE Accept CIS Request", handleOnly),
    c(0x2067, "LE Reject CIS Request", [.connectionHandle, .reason], statusHandle),
    c(0x2068, "LE Create BIG", [.u8("BIG Handle", .hex), .advertisingHandle, .u8("Num BIS", .dec), .u24("SDU Interval", .us), .u16("Max SDU", .octets), .u16("Max Transport Latency", .ms), .u8("RTN", .dec), .u8("PHY", .flags(HCINames.phyBits)), .u8("Packing", .names(HCINames.packing)), .u8("Framing", .names(HCINames.framing)), .u8("Encryption", .names(HCINames.encryption)), .bytes("Broadcast Code", 16)]),
    c(0x2069, "LE Create BIG Test", [.u8("BIG Handle", .hex), .advertisingHandle, .u8("Num BIS", .dec), .u24("SDU Interval", .us), .u16("ISO Interval", .interval), .u8("NSE", .dec), .u16("Max SDU", .octets), .u16("Max PDU", .octets), .u8("PHY", .flags(HCINames.phyBits)), .u8("Packing", .names(HCINames.packing)), .u8("Framing", .names(HCINames.framing)), .u8("BN", .dec), .u8("IRC", .dec), .u8("PTO", .dec), .u8("Encryption", .names(HCINames.encryption)), .bytes("Broadcast Code", 16)]),
    c(0x206A, "LE Terminate BIG", [.u8("BIG Handle", .hex), .reason]),
    c(0x206B, "LE BIG Create Sync", [.u8("BIG Handle", .hex), .syncHandle, .u8("Encryption", .names(HCINames.encryption)), .bytes("Broadcast Code", 16), .u8("MSE", .dec), .u16("BIG Sync Timeout", .ms10), .array(count: "Num BIS", element: "BIS", [.u8("BIS Index", .dec)])]),
    c(0x206C, "LE BIG Terminate Sync", [.u8("BIG Handle", .hex)], [.status, .u8("BIG Handle", .hex)]),
    c(0x206D, "LE Request Peer SCA", handleOnly),
    c(0x206E, "LE Setup ISO Data Path", [.connectionHandle, .u8("Data Path Direction", .names(HCINames.dataPathDirectionLabels)), .u8("Data Path ID", .hex), .bytes("Codec ID", 5), .u24("Controller Delay", .us), .lengthData(length: "Codec Configuration Length", data: "Codec Configuration")], statusHandle),
    c(0x206F, "LE Remove ISO Data Path", [.connectionHandle, .u8("Data Path Direction", .flags(HCINames.dataPathDirection))], statusHandle),
    c(0x2070, "LE ISO Transmit Test", [.connectionHandle, .u8("Payload Type", .names(HCINames.isoPayloadType))], statusHandle),
    c(0x2071, "LE ISO Receive Test", [.connectionHandle, .u8("Payload Type", .names(HCINames.isoPayloadType))], statusHandle),
    c(0x2072, "LE ISO Read Test Counters", handleOnly, isoTestCounters),
    c(0x2073, "LE ISO Test End", handleOnly, isoTestCounters),
    c(0x2074, "LE Set Host Feature", [.u8("Bit Number", .names(HCINames.leFeaturesLabels)), .u8("Bit Value", .dec)], ok),
    c(0x2075, "LE Read ISO Link Quality", handleOnly, [.status, .connectionHandle, .u32("TX UnACKed Packets", .dec), .u32("TX Flushed Packets", .dec), .u32("TX Last Subevent Packets", .dec), .u32("Retransmitted Packets", .dec), .u32("CRC Error Packets", .dec), .u32("RX Unreceived Packets", .dec), .u32("Duplicate Packets", .dec)]),
    c(0x2076, "LE Enhanced Read Transmit Power Level", [.connectionHandle, .u8("PHY", .names(HCINames.phyCoding))], [.status, .connectionHandle, .u8("PHY", .names(HCINames.phyCoding)), .u8("Current TX Power Level", .dBm), .u8("Max TX Power Level", .dBm)]),
    c(0x2077, "LE Read Remote Transmit Power Level", [.connectionHandle, .u8("PHY", .names(HCINames.phyCoding))]),
    c(0x2078, "LE Set Path Loss Reporting Parameters", pathLossParameters, statusHandle),
    c(0x2079, "LE Set Path Loss Reporting Enable", [.connectionHandle, .u8("Enable", .enable)], statusHandle),
    c(0x207A, "LE Set Transmit Power Reporting Enable", [.connectionHandle, .u8("Local Enable", .enable), .u8("Remote Enable", .enable)], statusHandle),
    c(0x207B, "LE Transmitter Test [v4]", transmitterTestV3 + [.u8("TX Power Level", .dBm)], ok),
    c(0x207C, "LE Set Data Related Address Changes", [.advertisingHandle, .u8("Change Reasons", .flags(HCINames.addressChangeReasons))], ok),
    c(0x207D, "LE Set Default Subrate", subrateParameters, ok),
    c(0x207E, "LE Subrate Request", [.connectionHandle] + subrateParameters),
    c(leSetExtendedAdvertisingParametersV2, "LE Set Extended Advertising Parameters [v2]", extendedAdvertisingParameters + [.u8("Primary Advertising PHY Options", .names(HCINames.advPhyOptions)), .u8("Secondary Advertising PHY Options", .names(HCINames.advPhyOptions))], [.status, .u8("Selected TX Power", .dBm)]),
    c(0x2080, "LE Set Decision Data"),
    c(0x2081, "LE Set Decision Instructions"),
    c(0x2082, "LE Set Periodic Advertising Subevent Data", [.advertisingHandle, .array(count: "Num Subevents", element: "Subevent", [.u8("Subevent", .dec), .u8("Response Slot Start", .dec), .u8("Response Slot Count", .dec), .adData(length: "Subevent Data Length", data: "Subevent Data")])], [.status, .advertisingHandle]),
    c(0x2083, "LE Set Periodic Advertising Response Data", [.syncHandle, .u16("Request Event", .dec), .u8("Request Subevent", .dec), .u8("Response Subevent", .dec), .u8("Response Slot", .dec), .adData(length: "Response Data Length", data: "Response Data")], [.status, .syncHandle]),
    c(0x2084, "LE Set Periodic Sync Subevent", [.syncHandle, .u16("Periodic Advertising Properties", .flags(HCINames.periodicProperties)), .array(count: "Num Subevents", element: "Subevent", [.u8("Subevent", .dec)])], [.status, .syncHandle]),
    c(leExtendedCreateConnectionV2, "LE Extended Create Connection [v2]", [.advertisingHandle, .u8("Subevent", .dec)] + extendedCreateConnection),
    c(0x2086, "LE Set Periodic Advertising Parameters [v2]", periodicAdvertisingParameters + [.u8("Num Subevents", .dec), .u8("Subevent Interval", .interval), .u8("Response Slot Delay", .interval), .u8("Response Slot Spacing", .unit(0.125, "ms")), .u8("Num Response Slots", .dec)], [.status, .advertisingHandle]),
    c(0x2087, "LE Read All Local Supported Features"),
    c(0x2088, "LE Read All Remote Features"),
    c(0x2089, "LE CS Read Local Supported Capabilities", [], [.status] + csCapabilities),
    c(0x208A, "LE CS Read Remote Supported Capabilities", handleOnly),
    c(0x208B, "LE CS Write Cached Remote Supported Capabilities", [.connectionHandle] + csCapabilities, statusHandle),
    c(0x208C, "LE CS Security Enable", handleOnly),
    c(0x208D, "LE CS Set Default Settings"),
    c(0x208E, "LE CS Read Remote FAE Table", handleOnly),
    c(0x208F, "LE CS Write Cached Remote FAE Table"),
    c(0x2090, "LE CS Create Config"),
    c(0x2091, "LE CS Remove Config"),
    c(0x2092, "LE CS Set Channel Classification"),
    c(0x2093, "LE CS Set Procedure Parameters"),
    c(0x2094, "LE CS Procedure Enable"),
    c(0x2095, "LE CS Test"),
    c(0x2096, "LE CS Test End", [], ok),
]
}

extension HCICommands {
    /// Supported_Commands (§6.27): the opcode each octet/bit stands for, 8 per row, 0 = reserved.
    static let supportedCommandBits: [UInt16] = [
        0x0401, 0x0402, 0x0403, 0x0404, 0x0405, 0x0406, 0x0407, 0x0408, // 0
        0x0409, 0x040A, 0x040B, 0x040C, 0x040D, 0x040E, 0x040F, 0x0411,
        0x0413, 0x0415, 0x0417, 0x0419, 0x041A, 0x041B, 0x041C, 0x041D,
        0x041F, 0x0420, 0, 0, 0, 0, 0, 0,
        0, 0x0801, 0x0803, 0x0804, 0x0805, 0x0806, 0x0807, 0x0809,
        0x080B, 0x080C, 0x080D, 0x080E, 0x080F, 0x0810, 0x0C01, 0x0C03, // 5
        0x0C05, 0x0C08, 0x0C09, 0x0C0A, 0x0C0B, 0x0C0D, 0x0C11, 0x0C12,
        0x0C13, 0x0C14, 0x0C15, 0x0C16, 0x0C17, 0x0C18, 0x0C19, 0x0C1A,
        0x0C1B, 0x0C1C, 0x0C1D, 0x0C1E, 0x0C1F, 0x0C20, 0x0C21, 0x0C22,
        0x0C23, 0x0C24, 0x0C25, 0x0C26, 0x0C27, 0x0C28, 0x0C29, 0x0C2A,
        0x0C2B, 0x0C2C, 0x0C2D, 0x0C2E, 0x0C2F, 0x0C31, 0x0C33, 0x0C35, // 10
        0x0C36, 0x0C37, 0x0C38, 0x0C39, 0x0C3A, 0x0C3B, 0x0C3C, 0x0C3D,
        0x0C3E, 0x0C3F, 0, 0, 0x0C42, 0x0C43, 0x0C44, 0x0C45,
        0x0C46, 0x0C47, 0x0C48, 0x0C49, 0, 0, 0, 0,
        0, 0, 0, 0x1001, 0x1002, 0x1003, 0x1004, 0x1005,
        0x1007, 0x1009, 0x1401, 0x1402, 0x1403, 0x1405, 0x1406, 0x1407, // 15
        0x1801, 0x1802, 0x1803, 0x0428, 0x0429, 0x042A, 0, 0,
        0x0C51, 0x0C52, 0x0C53, 0, 0x0811, 0x0C55, 0x0C56, 0x0C57,
        0x0C58, 0x0C59, 0x0C5A, 0x0C5B, 0, 0, 0, 0x042B,
        0x042C, 0x042D, 0x042E, 0x042F, 0x0430, 0x1804, 0x0C5F, 0x0433,
        0, 0, 0x0C60, 0x0434, 0x1408, 0, 0, 0, // 20
        0x0435, 0x0436, 0x0437, 0x0438, 0x0439, 0x043A, 0x043B, 0x043C,
        0x0C61, 0x0C62, 0x0C63, 0x0C64, 0x0C65, 0x1409, 0x140A, 0x140B,
        0x0C66, 0x0C67, 0x100A, 0, 0, 0x1807, 0x1808, 0x1809,
        0x0C68, 0, 0x0C69, 0x0C6A, 0x0C6B, 0x0C6C, 0x0C6D, 0,
        0x2001, 0x2002, 0x2003, 0, 0x2005, 0x2006, 0x2007, 0x2008, // 25
        0x2009, 0x200A, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2010,
        0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x2016, 0x2017, 0x2018,
        0x2019, 0x201A, 0x201B, 0x201C, 0x201D, 0x201E, 0x201F, 0,
        0, 0, 0, 0x043D, 0x043E, 0x100B, 0x0C6E, 0x0C6F,
        0x0C70, 0x0C71, 0x0C72, 0x140C, 0x0C73, 0x140D, 0x043F, 0x0440, // 30
        0x0441, 0x0442, 0x0443, 0x0444, 0x0C74, 0x0C75, 0x0C76, 0x0C77,
        0x0C78, 0x0445, 0x0C79, 0x0C7A, 0x0C7B, 0x0C7C, 0x0C7D, 0x180A,
        0x0C7E, 0x0C7F, 0x0C80, 0x0C81, 0x2020, 0x2021, 0x2022, 0x2023,
        0x2024, 0x2025, 0x2026, 0x2027, 0x2028, 0x2029, 0x202A, 0x202B,
        0x202C, 0x202D, 0x202E, 0x202F, 0x2030, 0x2031, 0x2032, 0x2033, // 35
        0x2034, 0x2035, 0x2036, 0x2037, 0x2038, 0x2039, 0x203A, 0x203B,
        0x203C, 0x203D, 0x203E, 0x203F, 0x2040, 0x2041, 0x2042, 0x2043,
        0x2044, 0x2045, 0x2046, 0x2047, 0x2048, 0x2049, 0x204A, 0x204B,
        0x204C, 0x204D, 0x204E, 0x204F, 0x2050, 0x2051, 0x2052, 0x2053,
        0x2054, 0x2055, 0x2056, 0x2057, 0x2058, 0x2059, 0x205A, 0x205B, // 40
        0x205C, 0x205D, 0x205E, 0x100C, 0x205F, 0x2060, 0x2061, 0x2062,
        0x2063, 0x2064, 0x2065, 0x2066, 0x2067, 0x2068, 0x2069, 0x206A,
        0x206B, 0x206C, 0x206D, 0x206E, 0x206F, 0x2070, 0x2071, 0x2072,
        0x2073, 0x2074, 0x2075, 0x2076, 0x2077, 0x2078, 0x2079, 0x207A,
        0x207B, 0x0C82, 0x100D, 0x100E, 0x100F, 0x0C83, 0x207C, 0x0C84, // 45
        0x207D, 0x207E, 0x207F, 0x2080, 0x2081, 0x2082, 0x2083, 0x2084,
        0x2085, 0x2086, 0x2087, 0x2088,
    ]

    /// The commands a Supported_Commands bit mask (64 octets) claims, one child per set bit.
    static let supportedCommands = ParamSpec.custom("Supported Commands") { (r, out) throws(DecodeError) in
        let mask = try r.take(64)
        out.begin("Supported Commands", .bytes(mask))
        for (octet, byte) in mask.enumerated() where byte != 0 {
            for bit in 0..<8 where byte & (1 << bit) != 0 {
                let i = octet * 8 + bit
                let op = i < supportedCommandBits.count ? supportedCommandBits[i] : 0
                if op != 0 {
                    out.add("Command", .named(UInt64(op), hex: 4, label(op)))
                } else {
                    out.add("Command", .text("Reserved (octet \(octet) bit \(bit))"))
                }
            }
        }
        out.end()
    }
}
