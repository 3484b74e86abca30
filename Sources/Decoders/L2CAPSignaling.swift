import Wire

/// L2CAP signaling commands (Core 5.4 Vol 3 Part A 4) on the BR/EDR signaling channel
/// (CID 0x0001, several commands per C-frame) and the LE signaling channel (CID 0x0005,
/// one command per C-frame).

/// The fixed channel a C-frame arrived on.
public enum SignalingChannel: UInt16, Sendable {
    case bredr = 0x0001
    case le = 0x0005
}

/// Signaling command codes (Vol 3 Part A Table 4.2).
public enum SignalingCode {
    public static let commandReject: UInt8 = 0x01
    public static let connectionRequest: UInt8 = 0x02
    public static let connectionResponse: UInt8 = 0x03
    public static let configurationRequest: UInt8 = 0x04
    public static let configurationResponse: UInt8 = 0x05
    public static let disconnectionRequest: UInt8 = 0x06
    public static let disconnectionResponse: UInt8 = 0x07
    public static let echoRequest: UInt8 = 0x08
    public static let echoResponse: UInt8 = 0x09
    public static let informationRequest: UInt8 = 0x0A
    public static let informationResponse: UInt8 = 0x0B
    public static let createChannelRequest: UInt8 = 0x0C
    public static let createChannelResponse: UInt8 = 0x0D
    public static let moveChannelRequest: UInt8 = 0x0E
    public static let moveChannelResponse: UInt8 = 0x0F
    public static let moveChannelConfirmationRequest: UInt8 = 0x10
    public static let moveChannelConfirmationResponse: UInt8 = 0x11
    public static let connectionParameterUpdateRequest: UInt8 = 0x12
    public static let connectionParameterUpdateResponse: UInt8 = 0x13
    public static let leCreditBasedConnectionRequest: UInt8 = 0x14
    public static let leCreditBasedConnectionResponse: UInt8 = 0x15
    public static let flowControlCreditIndication: UInt8 = 0x16
    public static let creditBasedConnectionRequest: UInt8 = 0x17
    public static let creditBasedConnectionResponse: UInt8 = 0x18
    public static let creditBasedReconfigureRequest: UInt8 = 0x19
    public static let creditBasedReconfigureResponse: UInt8 = 0x1A

    /// Name and the channels that may carry it (b: BR/EDR, l: LE), indexed by code − 1.
    static let table: [(name: String, bredr: Bool, le: Bool)] = [
        ("Command Reject", true, true),
        ("Connection Request", true, false),
        ("Connection Response", true, false),
        ("Configuration Request", true, false),
        ("Configuration Response", true, false),
        ("Disconnection Request", true, true),
        ("Disconnection Response", true, true),
        ("Echo Request", true, false),
        ("Echo Response", true, false),
        ("Information Request", true, false),
        ("Information Response", true, false),
        ("Create Channel Request", true, false),
        ("Create Channel Response", true, false),
        ("Move Channel Request", true, false),
        ("Move Channel Response", true, false),
        ("Move Channel Confirmation Request", true, false),
        ("Move Channel Confirmation Response", true, false),
        ("Connection Parameter Update Request", false, true),
        ("Connection Parameter Update Response", false, true),
        ("LE Credit Based Connection Request", false, true),
        ("LE Credit Based Connection Response", false, true),
        ("Flow Control Credit Indication", true, true),
        ("Credit Based Connection Request", true, true),
        ("Credit Based Connection Response", true, true),
        ("Credit Based Reconfigure Request", true, true),
        ("Credit Based Reconfigure Response", true, true),
    ]

    public static func name(_ code: UInt8) -> String {
        guard code >= 1, Int(code) <= table.count else { return "Unknown Command " + Hex.prefixed(code, width: 2) }
        return table[Int(code) - 1].name
    }

    /// Whether the specification allows `code` on `channel`.
    public static func isAllowed(_ code: UInt8, on channel: SignalingChannel) -> Bool {
        guard code >= 1, Int(code) <= table.count else { return false }
        let entry = table[Int(code) - 1]
        return channel == .le ? entry.le : entry.bredr
    }
}

/// Protocol/Service Multiplexer names (Assigned Numbers 2.2); LE SPSMs share the fixed range.
public enum PSM {
    static let names: [UInt16: String] = [
        0x0001: "SDP", 0x0003: "RFCOMM", 0x0005: "TCS-BIN", 0x0007: "TCS-BIN-CORDLESS", 0x000F: "BNEP",
        0x0011: "HID Control", 0x0013: "HID Interrupt", 0x0015: "UPnP", 0x0017: "AVCTP", 0x0019: "AVDTP",
        0x001B: "AVCTP Browsing", 0x001D: "UDI C-Plane", 0x001F: "ATT", 0x0021: "3DSP", 0x0023: "IPSP",
        0x0025: "OTS", 0x0027: "EATT",
    ]

    public static let eatt: UInt16 = 0x0027
    /// ATT over BR/EDR (GATT over Classic, Vol 3 Part F 3.2.11): a basic-mode channel each of
    /// whose B-frames is one ATT PDU.
    public static let att: UInt16 = 0x001F

    /// The layer's name for a channel on an LE PSM ("L2CAP EATT"): labels made once, not per frame.
    static func layerLabel(_ psm: UInt16) -> FieldLabel {
        layerLabels[psm] ?? (name(psm, le: true) == "Dynamic" ? "L2CAP Dynamic" : "L2CAP Unknown")
    }
    private static let layerLabels = names.mapValues { FieldLabel("L2CAP " + $0) }

    /// Name of a PSM, "Dynamic" for the dynamically assigned ranges.
    public static func name(_ psm: UInt16, le: Bool = false) -> String {
        if let n = names[psm] { return n }
        if le { return psm >= 0x0080 && psm <= 0x00FF ? "Dynamic" : "Unknown" }
        return psm >= 0x1001 ? "Dynamic" : "Unknown"
    }
}

/// Result and reason code names of the signaling commands (Vol 3 Part A 4.x).
enum SignalingNames {
    static func lookup(_ table: [String], _ v: UInt16) -> String { Int(v) < table.count ? table[Int(v)] : "Reserved" }

    static let rejectReasons = ["Command not understood", "Signaling MTU exceeded", "Invalid CID in request"]
    static let connectionResults = [
        "Connection successful", "Connection pending", "Connection refused - PSM not supported",
        "Connection refused - security block", "Connection refused - no resources available",
        "Connection refused - Controller ID not supported", "Connection refused - invalid Source CID",
        "Connection refused - Source CID already allocated",
    ]
    static let connectionStatus = [
        "No further information available", "Authentication pending", "Authorization pending",
    ]
    static let configurationResults = [
        "Success", "Failure - unacceptable parameters", "Failure - rejected", "Failure - unknown options",
        "Pending", "Failure - flow spec rejected",
    ]
    static let infoTypes = ["Reserved", "Connectionless MTU", "Extended Features Supported", "Fixed Channels Supported"]
    static let infoResults = ["Success", "Not supported"]
    static let moveResults = [
        "Move success", "Move pending", "Move refused - Controller ID not supported",
        "Move refused - new Controller ID is same as old", "Move refused - configuration not supported",
        "Move refused - move channel collision", "Move refused - channel not allowed to be moved",
    ]
    static let moveConfirmResults = ["Move success - both sides succeed", "Move failure - at least one side fails"]
    static let parameterUpdateResults = ["Connection Parameters accepted", "Connection Parameters rejected"]
    static let leCreditResults = [
        "Connection successful", "Reserved", "Connection refused - SPSM not supported", "Reserved",
        "Connection refused - no resources available", "Connection refused - insufficient authentication",
        "Connection refused - insufficient authorization", "Connection refused - encryption key size too short",
        "Connection refused - insufficient encryption", "Connection refused - invalid Source CID",
        "Connection refused - Source CID already allocated", "Connection refused - unacceptable parameters",
    ]
    static let creditResults = [
        "All connections successful", "Reserved", "All connections refused - SPSM not supported", "Reserved",
        "Some connections refused - insufficient resources available",
        "All connections refused - insufficient authentication",
        "All connections refused - insufficient authorization",
        "All connections refused - encryption key size too short",
        "All connections refused - insufficient encryption", "Some connections refused - invalid Source CID",
        "Some connections refused - Source CID already allocated",
        "All connections refused - unacceptable parameters", "All connections refused - invalid parameters",
        "All connections pending - no further information available",
        "All connections pending - authentication pending", "All connections pending - authorization pending",
    ]
    static let reconfigureResults = [
        "Reconfiguration successful", "Reconfiguration failed - reduction in size of MTU not allowed",
        "Reconfiguration failed - reduction in size of MPS not allowed for more than one channel at a time",
        "Reconfiguration failed - one or more Destination CIDs invalid",
        "Reconfiguration failed - other unacceptable parameters",
    ]
    /// Configuration option types (Vol 3 Part A 5); bit 7 marks a hint.
    static let optionTypes = [
        "Reserved", "MTU", "Flush Timeout", "QoS", "Retransmission and Flow Control", "FCS",
        "Extended Flow Specification", "Extended Window Size",
    ]
    static let extendedFeatures: BitNames = [
        "Flow control mode", "Retransmission mode", "Bi-directional QoS", "Enhanced Retransmission Mode",
        "Streaming Mode", "FCS Option", "Extended Flow Specification for BR/EDR", "Fixed Channels",
        "Extended Window Size", "Unicast Connectionless Data Reception", "Enhanced Credit Based Flow Control Mode",
    ]
    static let fixedChannels: BitNames = [
        "Null identifier", "L2CAP Signaling channel", "Connectionless reception", "AMP Manager Protocol",
        "Reserved", "Reserved", "Reserved", "BR/EDR Security Manager",
    ]
}

/// One decoded signaling command.
public enum SignalingCommand: Sendable, Equatable {
    /// Data: actual signaling MTU (reason 1) or local and remote CID (reason 2).
    case commandReject(reason: UInt16, data: Bytes)
    case connectionRequest(psm: UInt16, sourceCID: UInt16)
    case connectionResponse(destinationCID: UInt16, sourceCID: UInt16, result: UInt16, status: UInt16)
    /// Flags bit 0: continuation. Options left raw for the configuration decoder.
    case configurationRequest(destinationCID: UInt16, flags: UInt16, options: Bytes)
    case configurationResponse(sourceCID: UInt16, flags: UInt16, result: UInt16, options: Bytes)
    case disconnectionRequest(destinationCID: UInt16, sourceCID: UInt16)
    case disconnectionResponse(destinationCID: UInt16, sourceCID: UInt16)
    case echoRequest(data: Bytes)
    case echoResponse(data: Bytes)
    case informationRequest(infoType: UInt16)
    case informationResponse(infoType: UInt16, result: UInt16, data: Bytes)
    case createChannelRequest(psm: UInt16, sourceCID: UInt16, controllerID: UInt8)
    case createChannelResponse(destinationCID: UInt16, sourceCID: UInt16, result: UInt16, status: UInt16)
    case moveChannelRequest(initiatorCID: UInt16, destinationControllerID: UInt8)
    case moveChannelResponse(initiatorCID: UInt16, result: UInt16)
    case moveChannelConfirmationRequest(initiatorCID: UInt16, result: UInt16)
    case moveChannelConfirmationResponse(initiatorCID: UInt16)
    /// Interval in units of 1.25 ms, latency in connection events, timeout in units of 10 ms.
    case connectionParameterUpdateRequest(intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16)
    case connectionParameterUpdateResponse(result: UInt16)
    case leCreditBasedConnectionRequest(spsm: UInt16, sourceCID: UInt16, mtu: UInt16, mps: UInt16,
                                        initialCredits: UInt16)
    case leCreditBasedConnectionResponse(destinationCID: UInt16, mtu: UInt16, mps: UInt16, initialCredits: UInt16,
                                         result: UInt16)
    case flowControlCreditIndication(cid: UInt16, credits: UInt16)
    case creditBasedConnectionRequest(spsm: UInt16, mtu: UInt16, mps: UInt16, initialCredits: UInt16,
                                      sourceCIDs: [UInt16])
    /// A destination CID of 0x0000 means that channel was refused.
    case creditBasedConnectionResponse(mtu: UInt16, mps: UInt16, initialCredits: UInt16, result: UInt16,
                                       destinationCIDs: [UInt16])
    case creditBasedReconfigureRequest(mtu: UInt16, mps: UInt16, destinationCIDs: [UInt16])
    case creditBasedReconfigureResponse(result: UInt16)
}

/// One signaling command: header (code, identifier, length) and its decode.
public struct SignalingPDU: Dissectable, Sendable {
    public let code: UInt8
    public let identifier: UInt8
    /// Length of the data as the header states it.
    public let length: UInt16
    /// The data present (shorter than `length` when the frame was cut).
    public let data: Bytes
    public let channel: SignalingChannel
    /// nil when the code is unknown or the data too short for the command.
    public let command: SignalingCommand?
    public let malformed: String?

    public var name: String { SignalingCode.name(code) }

    /// Decodes one command from the start of `bytes`; `consumed` tells where the next starts.
    public static func decode(_ bytes: Bytes, channel: SignalingChannel) -> (pdu: SignalingPDU, consumed: Int)? {
        var r = ByteReader(bytes)
        guard let code = try? r.u8(), let identifier = try? r.u8(), let length = try? r.u16() else { return nil }
        let available = r.remaining
        let data = bytes.from(4).prefix(Int(length))
        var problems: [String] = []
        if available < Int(length) { problems.append("command length \(length), only \(available) bytes present") }
        if identifier == 0 { problems.append("identifier 0x00 is not allowed") }
        if code >= 1, Int(code) <= SignalingCode.table.count, !SignalingCode.isAllowed(code, on: channel) {
            problems.append(SignalingCode.name(code) + (channel == .le ? " on the LE" : " on the BR/EDR") +
                            " signaling channel")
        }
        var command: SignalingCommand? = nil
        do throws(DecodeError) {
            var d = ByteReader(data)
            command = try SignalingPDU.parse(code, &d)
            if command != nil, !d.isAtEnd { problems.append("\(d.remaining) bytes after the parameters") }
        } catch {
            switch error {
            case .invalid(let why): problems.append(why)
            // A frame cut before `length` was reported above already.
            case .truncated where available >= Int(length):
                problems.append("command data too short for " + SignalingCode.name(code))
            case .truncated: break
            }
        }
        if command == nil, code == 0 || Int(code) > SignalingCode.table.count {
            problems.append("unknown command code " + Hex.prefixed(code, width: 2))
        }
        let pdu = SignalingPDU(code: code, identifier: identifier, length: length, data: data, channel: channel,
                               command: command, malformed: problems.isEmpty ? nil : problems.joined(separator: "; "))
        return (pdu, 4 + data.count)
    }

    init(code: UInt8, identifier: UInt8, length: UInt16, data: Bytes, channel: SignalingChannel,
         command: SignalingCommand?, malformed: String?) {
        self.code = code
        self.identifier = identifier
        self.length = length
        self.data = data
        self.channel = channel
        self.command = command
        self.malformed = malformed
    }

    /// Parameters of each command; throws when the data is too short. Commands ending in a
    /// variable part (options, echo data, CID lists) take the rest.
    static func parse(_ code: UInt8, _ r: inout ByteReader) throws(DecodeError) -> SignalingCommand? {
        switch code {
        case SignalingCode.commandReject:
            return .commandReject(reason: try r.u16(), data: r.rest())
        case SignalingCode.connectionRequest:
            return .connectionRequest(psm: try r.u16(), sourceCID: try r.u16())
        case SignalingCode.connectionResponse:
            return .connectionResponse(destinationCID: try r.u16(), sourceCID: try r.u16(), result: try r.u16(),
                                       status: try r.u16())
        case SignalingCode.configurationRequest:
            return .configurationRequest(destinationCID: try r.u16(), flags: try r.u16(), options: r.rest())
        case SignalingCode.configurationResponse:
            return .configurationResponse(sourceCID: try r.u16(), flags: try r.u16(), result: try r.u16(),
                                          options: r.rest())
        case SignalingCode.disconnectionRequest:
            return .disconnectionRequest(destinationCID: try r.u16(), sourceCID: try r.u16())
        case SignalingCode.disconnectionResponse:
            return .disconnectionResponse(destinationCID: try r.u16(), sourceCID: try r.u16())
        case SignalingCode.echoRequest:
            return .echoRequest(data: r.rest())
        case SignalingCode.echoResponse:
            return .echoResponse(data: r.rest())
        case SignalingCode.informationRequest:
            return .informationRequest(infoType: try r.u16())
        case SignalingCode.informationResponse:
            return .informationResponse(infoType: try r.u16(), result: try r.u16(), data: r.rest())
        case SignalingCode.createChannelRequest:
            return .createChannelRequest(psm: try r.u16(), sourceCID: try r.u16(), controllerID: try r.u8())
        case SignalingCode.createChannelResponse:
            return .createChannelResponse(destinationCID: try r.u16(), sourceCID: try r.u16(), result: try r.u16(),
                                          status: try r.u16())
        case SignalingCode.moveChannelRequest:
            return .moveChannelRequest(initiatorCID: try r.u16(), destinationControllerID: try r.u8())
        case SignalingCode.moveChannelResponse:
            return .moveChannelResponse(initiatorCID: try r.u16(), result: try r.u16())
        case SignalingCode.moveChannelConfirmationRequest:
            return .moveChannelConfirmationRequest(initiatorCID: try r.u16(), result: try r.u16())
        case SignalingCode.moveChannelConfirmationResponse:
            return .moveChannelConfirmationResponse(initiatorCID: try r.u16())
        case SignalingCode.connectionParameterUpdateRequest:
            return .connectionParameterUpdateRequest(intervalMin: try r.u16(), intervalMax: try r.u16(),
                                                     latency: try r.u16(), timeout: try r.u16())
        case SignalingCode.connectionParameterUpdateResponse:
            return .connectionParameterUpdateResponse(result: try r.u16())
        case SignalingCode.leCreditBasedConnectionRequest:
            return .leCreditBasedConnectionRequest(spsm: try r.u16(), sourceCID: try r.u16(), mtu: try r.u16(),
                                                   mps: try r.u16(), initialCredits: try r.u16())
        case SignalingCode.leCreditBasedConnectionResponse:
            return .leCreditBasedConnectionResponse(destinationCID: try r.u16(), mtu: try r.u16(), mps: try r.u16(),
                                                    initialCredits: try r.u16(), result: try r.u16())
        case SignalingCode.flowControlCreditIndication:
            return .flowControlCreditIndication(cid: try r.u16(), credits: try r.u16())
        case SignalingCode.creditBasedConnectionRequest:
            return .creditBasedConnectionRequest(spsm: try r.u16(), mtu: try r.u16(), mps: try r.u16(),
                                                 initialCredits: try r.u16(), sourceCIDs: try cidList(&r))
        case SignalingCode.creditBasedConnectionResponse:
            return .creditBasedConnectionResponse(mtu: try r.u16(), mps: try r.u16(), initialCredits: try r.u16(),
                                                  result: try r.u16(), destinationCIDs: try cidList(&r))
        case SignalingCode.creditBasedReconfigureRequest:
            return .creditBasedReconfigureRequest(mtu: try r.u16(), mps: try r.u16(), destinationCIDs: try cidList(&r))
        case SignalingCode.creditBasedReconfigureResponse:
            return .creditBasedReconfigureResponse(result: try r.u16())
        default:
            return nil
        }
    }

    /// 1 to 5 CIDs filling the rest of the command (Vol 3 Part A 4.25–4.28).
    static func cidList(_ r: inout ByteReader) throws(DecodeError) -> [UInt16] {
        guard r.remaining >= 2, r.remaining % 2 == 0, r.remaining <= 10 else {
            throw .invalid("CID list of \(r.remaining) bytes")
        }
        var cids: [UInt16] = []
        while !r.isAtEnd { cids.append(try r.u16()) }
        return cids
    }

    public var summary: String {
        typealias N = SignalingNames
        func cid(_ label: String, _ v: UInt16) -> String { " " + label + " " + Hex.prefixed(v, width: 4) }
        func psm(_ label: String, _ v: UInt16, le: Bool) -> String {
            " " + label + " " + Hex.prefixed(v, width: 4) + " (" + PSM.name(v, le: le) + ")"
        }
        func sizes(_ mtu: UInt16, _ mps: UInt16, _ credits: UInt16) -> String {
            ", MTU \(mtu), MPS \(mps), credits \(credits)"
        }
        var s = name
        switch command {
        case .commandReject(let reason, _):
            s += ": " + N.lookup(N.rejectReasons, reason)
        case .connectionRequest(let p, let scid), .createChannelRequest(let p, let scid, _):
            s += psm("PSM", p, le: false) + "," + cid("SCID", scid)
        case .connectionResponse(let dcid, let scid, let result, _),
             .createChannelResponse(let dcid, let scid, let result, _):
            s += cid("DCID", dcid) + "," + cid("SCID", scid) + ": " + N.lookup(N.connectionResults, result)
        case .configurationRequest(let dcid, _, _):
            s += cid("DCID", dcid)
        case .configurationResponse(let scid, _, let result, _):
            s += cid("SCID", scid) + ": " + N.lookup(N.configurationResults, result)
        case .disconnectionRequest(let dcid, let scid), .disconnectionResponse(let dcid, let scid):
            s += cid("DCID", dcid) + "," + cid("SCID", scid)
        case .informationRequest(let type):
            s += ": " + N.lookup(N.infoTypes, type)
        case .informationResponse(let type, let result, _):
            s += ": " + N.lookup(N.infoTypes, type) + ", " + N.lookup(N.infoResults, result)
        case .connectionParameterUpdateRequest(let lo, let hi, let latency, let timeout):
            s += ": interval " + ms(Double(lo) * 1.25) + "-" + ms(Double(hi) * 1.25) + " ms, latency \(latency)"
                + ", timeout " + ms(Double(timeout) * 10) + " ms"
        case .connectionParameterUpdateResponse(let result):
            s += ": " + N.lookup(N.parameterUpdateResults, result)
        case .leCreditBasedConnectionRequest(let spsm, let scid, let mtu, let mps, let credits):
            s += psm("SPSM", spsm, le: true) + "," + cid("SCID", scid) + sizes(mtu, mps, credits)
        case .leCreditBasedConnectionResponse(let dcid, let mtu, let mps, let credits, let result):
            s += cid("DCID", dcid) + sizes(mtu, mps, credits) + ": " + N.lookup(N.leCreditResults, result)
        case .flowControlCreditIndication(let c, let credits):
            s += cid("CID", c) + ", credits \(credits)"
        case .creditBasedConnectionRequest(let spsm, let mtu, let mps, let credits, let cids):
            s += psm("SPSM", spsm, le: true) + sizes(mtu, mps, credits) + ", SCIDs " + cidString(cids)
        case .creditBasedConnectionResponse(let mtu, let mps, let credits, let result, let cids):
            s += " DCIDs " + cidString(cids) + sizes(mtu, mps, credits) + ": " + N.lookup(N.creditResults, result)
        case .creditBasedReconfigureRequest(let mtu, let mps, let cids):
            s += " DCIDs " + cidString(cids) + ", MTU \(mtu), MPS \(mps)"
        case .creditBasedReconfigureResponse(let result):
            s += ": " + N.lookup(N.reconfigureResults, result)
        case .moveChannelRequest(let icid, _), .moveChannelConfirmationResponse(let icid):
            s += cid("ICID", icid)
        case .moveChannelResponse(let icid, let result):
            s += cid("ICID", icid) + ": " + N.lookup(N.moveResults, result)
        case .moveChannelConfirmationRequest(let icid, let result):
            s += cid("ICID", icid) + ": " + N.lookup(N.moveConfirmResults, result)
        case .echoRequest, .echoResponse, nil:
            break
        }
        if malformed != nil { s += " [Malformed]" }
        return s
    }

    public var fields: [Field] {
        var out = [
            Field("Command Code", .named(UInt64(code), hex: 2, FieldLabel(name))),
            Field("Identifier", .uint(UInt64(identifier), hex: 2)),
            Field("Length", .uint(UInt64(length), hex: 0)),
        ]
        if let command {
            out += SignalingPDU.fields(command)
        } else if !data.isEmpty {
            out.append(Field("Data", .bytes(data)))
        }
        if let malformed { out.append(.malformed(malformed)) }
        return out
    }

    static func cid(_ label: FieldLabel, _ v: UInt16) -> Field { Field(label, .uint(UInt64(v), hex: 4)) }
    static func named(_ label: FieldLabel, _ v: UInt16, _ table: [String]) -> Field {
        Field(label, .named(UInt64(v), hex: 4, FieldLabel(SignalingNames.lookup(table, v))))
    }
    static func psm(_ label: FieldLabel, _ v: UInt16, le: Bool) -> Field {
        Field(label, .named(UInt64(v), hex: 4, FieldLabel(PSM.name(v, le: le))))
    }
    static func cids(_ label: FieldLabel, _ list: [UInt16]) -> [Field] { list.map { cid(label, $0) } }

    static func fields(_ command: SignalingCommand) -> [Field] {
        typealias N = SignalingNames
        switch command {
        case .commandReject(let reason, let data):
            var f = [named("Reason", reason, N.rejectReasons)]
            if reason == 1, let mtu = data.le16(0) {
                f.append(Field("Actual MTU", .uint(UInt64(mtu), hex: 0)))
            } else if reason == 2, let local = data.le16(0), let remote = data.le16(2) {
                f += [cid("Local CID", local), cid("Remote CID", remote)]
            } else if !data.isEmpty {
                f.append(Field("Data", .bytes(data)))
            }
            return f
        case .connectionRequest(let p, let scid):
            return [psm("PSM", p, le: false), cid("Source CID", scid)]
        case .connectionResponse(let dcid, let scid, let result, let status),
             .createChannelResponse(let dcid, let scid, let result, let status):
            return [cid("Destination CID", dcid), cid("Source CID", scid), named("Result", result, N.connectionResults),
                    named("Status", status, N.connectionStatus)]
        case .configurationRequest(let dcid, let flags, let options):
            return [cid("Destination CID", dcid), continuation(flags)] + configurationOptions(options)
        case .configurationResponse(let scid, let flags, let result, let options):
            return [cid("Source CID", scid), continuation(flags), named("Result", result, N.configurationResults)]
                + configurationOptions(options)
        case .disconnectionRequest(let dcid, let scid), .disconnectionResponse(let dcid, let scid):
            return [cid("Destination CID", dcid), cid("Source CID", scid)]
        case .echoRequest(let data), .echoResponse(let data):
            return data.isEmpty ? [] : [Field("Data", .bytes(data))]
        case .informationRequest(let type):
            return [named("Information Type", type, N.infoTypes)]
        case .informationResponse(let type, let result, let data):
            return [named("Information Type", type, N.infoTypes), named("Result", result, N.infoResults)]
                + informationData(type, data)
        case .createChannelRequest(let p, let scid, let controller):
            return [psm("PSM", p, le: false), cid("Source CID", scid), Field.u8("Controller ID", controller)]
        case .moveChannelRequest(let icid, let controller):
            return [cid("Initiator CID", icid), Field.u8("Destination Controller ID", controller)]
        case .moveChannelResponse(let icid, let result):
            return [cid("Initiator CID", icid), named("Result", result, N.moveResults)]
        case .moveChannelConfirmationRequest(let icid, let result):
            return [cid("Initiator CID", icid), named("Result", result, N.moveConfirmResults)]
        case .moveChannelConfirmationResponse(let icid):
            return [cid("Initiator CID", icid)]
        case .connectionParameterUpdateRequest(let lo, let hi, let latency, let timeout):
            return [
                Field("Interval Min", .quantity(UInt64(lo), hex: 4, Double(lo) * 1.25, unit: "ms")),
                Field("Interval Max", .quantity(UInt64(hi), hex: 4, Double(hi) * 1.25, unit: "ms")),
                Field("Latency", .uint(UInt64(latency), hex: 0)),
                Field("Timeout", .quantity(UInt64(timeout), hex: 4, Double(timeout) * 10, unit: "ms")),
            ]
        case .connectionParameterUpdateResponse(let result):
            return [named("Result", result, N.parameterUpdateResults)]
        case .leCreditBasedConnectionRequest(let spsm, let scid, let mtu, let mps, let credits):
            return [psm("SPSM", spsm, le: true), cid("Source CID", scid), .dec("MTU", mtu), .dec("MPS", mps),
                    .dec("Initial Credits", credits)]
        case .leCreditBasedConnectionResponse(let dcid, let mtu, let mps, let credits, let result):
            return [cid("Destination CID", dcid), .dec("MTU", mtu), .dec("MPS", mps), .dec("Initial Credits", credits),
                    named("Result", result, N.leCreditResults)]
        case .flowControlCreditIndication(let c, let credits):
            return [cid("CID", c), .dec("Credits", credits)]
        case .creditBasedConnectionRequest(let spsm, let mtu, let mps, let credits, let list):
            return [psm("SPSM", spsm, le: true), .dec("MTU", mtu), .dec("MPS", mps), .dec("Initial Credits", credits)]
                + cids("Source CID", list)
        case .creditBasedConnectionResponse(let mtu, let mps, let credits, let result, let list):
            return [.dec("MTU", mtu), .dec("MPS", mps), .dec("Initial Credits", credits),
                    named("Result", result, N.creditResults)] + cids("Destination CID", list)
        case .creditBasedReconfigureRequest(let mtu, let mps, let list):
            return [.dec("MTU", mtu), .dec("MPS", mps)] + cids("Destination CID", list)
        case .creditBasedReconfigureResponse(let result):
            return [named("Result", result, N.reconfigureResults)]
        }
    }

    static func continuation(_ flags: UInt16) -> Field {
        Field("Flags", .flags(UInt64(flags), hex: 4, flags & 1 != 0 ? ["Continuation"] : []))
    }

    /// Configuration options: type, length and raw value; MTU and flush timeout as numbers.
    static func configurationOptions(_ options: Bytes) -> [Field] {
        var out: [Field] = []
        var r = ByteReader(options)
        while !r.isAtEnd {
            guard let type = try? r.u8(), let len = try? r.u8() else {
                out.append(.malformed("configuration option header cut short"))
                break
            }
            guard let value = try? r.take(Int(len)) else {
                out.append(.malformed("configuration option length \(len), \(r.remaining) bytes left"))
                break
            }
            let kind = type & 0x7F
            let name = SignalingNames.lookup(SignalingNames.optionTypes, UInt16(kind))
            var children = [Field("Type", .named(UInt64(type), hex: 2, FieldLabel(name))), Field("Hint", .bool(type & 0x80 != 0))]
            if (kind == 1 || kind == 2), len == 2, let v = value.le16(0) {
                children.append(kind == 1 ? .dec("MTU", v) : Field("Flush Timeout", .quantity(UInt64(v), hex: 4,
                                                                                                Double(v), unit: "ms")))
            } else {
                children.append(Field("Value", .bytes(value)))
            }
            out.append(Field("Option", .text(name), children))
        }
        return out
    }

    static func informationData(_ type: UInt16, _ data: Bytes) -> [Field] {
        var r = ByteReader(data)
        switch (type, data.count) {
        case (1, 2):
            return [.dec("Connectionless MTU", (try? r.u16()) ?? 0)]
        case (2, 4):
            let mask = UInt64((try? r.u32()) ?? 0)
            return [Field("Extended Features", .flags(mask, hex: 8, SetBitNames(mask, in: SignalingNames.extendedFeatures)))]
        case (3, 8):
            let mask = (try? r.u64()) ?? 0
            return [Field("Fixed Channels", .flags(mask, hex: 16, SetBitNames(mask, in: SignalingNames.fixedChannels)))]
        default:
            return data.isEmpty ? [] : [Field("Data", .bytes(data))]
        }
    }
}

/// The commands of one C-frame on a signaling channel.
public struct SignalingFrame: Dissectable, Sendable {
    public let channel: SignalingChannel
    public let commands: [SignalingPDU]
    /// Bytes left that do not form a command, or a second command on the LE channel.
    public let malformed: String?

    public init(_ payload: Bytes, channel: SignalingChannel) {
        self.channel = channel
        var commands: [SignalingPDU] = []
        var problem: String? = nil
        var rest = payload
        while !rest.isEmpty {
            guard let (pdu, consumed) = SignalingPDU.decode(rest, channel: channel) else {
                problem = "\(rest.count) bytes too short for a command header"
                break
            }
            commands.append(pdu)
            rest = rest.from(consumed)
            // LE carries exactly one command per C-frame (Vol 3 Part A 4).
            if channel == .le, !rest.isEmpty {
                problem = "\(rest.count) bytes after the command on the LE signaling channel"
                break
            }
        }
        if commands.isEmpty && problem == nil { problem = "empty signaling frame" }
        self.commands = commands
        self.malformed = problem
    }

    public var summary: String {
        var s = commands.map(\.summary).joined(separator: "; ")
        if malformed != nil {
            if s.isEmpty { s = "Malformed signaling frame" } else if !s.hasSuffix("[Malformed]") { s += " [Malformed]" }
        }
        return s
    }

    public var fields: [Field] {
        var out = commands.map { Field("Command", .text($0.name), $0.fields) }
        if let malformed { out.append(.malformed(malformed)) }
        return out
    }
}

private func ms(_ v: Double) -> String {
    // Values are multiples of 1.25 or 10: at most two decimals.
    let hundredths = Int((v * 100).rounded())
    let whole = hundredths / 100, frac = hundredths % 100
    if frac == 0 { return String(whole) }
    return String(whole) + "." + (frac % 10 == 0 ? String(frac / 10) : (frac < 10 ? "0" : "") + String(frac))
}

private func cidString(_ cids: [UInt16]) -> String {
    cids.map { Hex.prefixed($0, width: 4) }.joined(separator: ", ")
}
