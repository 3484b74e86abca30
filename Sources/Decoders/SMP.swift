import Wire

/// Security Manager Protocol (Core 5.4 Vol 3 Part H 3.5–3.6), carried on fixed CID 0x0006
/// (LE) and 0x0007 (BR/EDR). One command per frame.

/// SMP command codes (Vol 3 Part H Table 3.4).
public enum SMPOpcode: UInt8, Sendable, CaseIterable {
    case pairingRequest = 0x01
    case pairingResponse = 0x02
    case pairingConfirm = 0x03
    case pairingRandom = 0x04
    case pairingFailed = 0x05
    case encryptionInformation = 0x06
    case centralIdentification = 0x07
    case identityInformation = 0x08
    case identityAddressInformation = 0x09
    case signingInformation = 0x0A
    case securityRequest = 0x0B
    case pairingPublicKey = 0x0C
    case pairingDHKeyCheck = 0x0D
    case pairingKeypressNotification = 0x0E

    /// Names as the specification (and tshark) write them, indexed by opcode − 1.
    static let names = [
        "Pairing Request", "Pairing Response", "Pairing Confirm", "Pairing Random", "Pairing Failed",
        "Encryption Information", "Central Identification", "Identity Information",
        "Identity Address Information", "Signing Information", "Security Request", "Pairing Public Key",
        "Pairing DHKey Check", "Pairing Keypress Notification",
    ]

    public var name: String { SMPOpcode.names[Int(rawValue) - 1] }

    public static func name(_ code: UInt8) -> String {
        SMPOpcode(rawValue: code)?.name ?? "Unknown Opcode " + Hex.prefixed(code, width: 2)
    }

    /// `name` as a label.
    static func label(_ code: UInt8) -> FieldLabel {
        code >= 1 && Int(code) <= nameLabels.count ? nameLabels[Int(code) - 1] : FieldLabel(name(code))
    }
    private static let nameLabels = FieldLabel.table(names)
}

/// IO Capability (Vol 3 Part H 2.3.2, Table 3.5).
public enum IOCapability: UInt8, Sendable, CaseIterable {
    case displayOnly = 0, displayYesNo = 1, keyboardOnly = 2, noInputNoOutput = 3, keyboardDisplay = 4

    static let names = ["Display Only", "Display Yes/No", "Keyboard Only", "No Input, No Output", "Keyboard Display"]
    public var name: String { IOCapability.names[Int(rawValue)] }
    static let labels = FieldLabel.table(names)
}

/// AuthReq (Vol 3 Part H 3.5.1, Figure 3.3).
public struct AuthRequirements: Sendable, Equatable {
    public let raw: UInt8
    public init(_ raw: UInt8) { self.raw = raw }

    /// Bonding_Flags: 0b00 No Bonding, 0b01 Bonding; the others are reserved.
    public var bondingFlags: UInt8 { raw & 0x03 }
    public var bonding: Bool { bondingFlags == 0x01 }
    public var mitm: Bool { raw & 0x04 != 0 }
    public var secureConnections: Bool { raw & 0x08 != 0 }
    public var keypress: Bool { raw & 0x10 != 0 }
    public var ct2: Bool { raw & 0x20 != 0 }

    /// Short names of the set requirements, tshark's order: "Bonding, MITM, SC, Keypress, CT2".
    public var names: [String] { Array(setNames) }

    /// `names` joined by ", ", written without an array.
    func writeNames(to s: inout TextLine) {
        var first = true
        for name in setNames {
            if !first { s += ", " }
            first = false
            s.write(plain: name)
        }
    }

    /// The one list of the names, as set bits of `nameTable`: the bonding flags' value picks one
    /// of the first four, the other requirements follow in their bits' order.
    private static let nameTable: BitNames = ["No Bonding", "Bonding", "Bonding Flags Reserved (0x2)", "Bonding Flags Reserved (0x3)",
                                    "MITM", "SC", "Keypress", "CT2"]
    private var setNames: SetBitNames {
        SetBitNames(1 << UInt64(bondingFlags) | UInt64(raw & 0x3C) << 2, in: AuthRequirements.nameTable)
    }

    var bondingName: FieldLabel { bondingFlags == 0 ? "No Bonding" : bondingFlags == 1 ? "Bonding" : "Reserved" }

    /// The field and its bits, sent to `out` as they are read: no array is built for them.
    func write(to out: FieldSink) {
        out.begin("AuthReq", .flags(UInt64(raw), hex: 2, setNames))
        out.add("Bonding Flags", .named(UInt64(bondingFlags), hex: 1, bondingName))
        out.add("MITM", .bool(mitm))
        out.add("Secure Connections", .bool(secureConnections))
        out.add("Keypress", .bool(keypress))
        out.add("CT2", .bool(ct2))
        if raw & 0xC0 != 0 { out.add("Reserved", .uint(UInt64(raw >> 6), hex: 1)) }
        out.end()
    }
}

/// Initiator/Responder Key Distribution (Vol 3 Part H 3.6.1, Figure 3.11).
public struct KeyDistribution: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// LTK, EDIV and Rand (legacy pairing only; ignored by LE Secure Connections).
    public static let encKey = KeyDistribution(rawValue: 0x01)
    /// IRK and identity address.
    public static let idKey = KeyDistribution(rawValue: 0x02)
    /// CSRK.
    public static let signKey = KeyDistribution(rawValue: 0x04)
    /// Derive the BR/EDR link key (cross-transport).
    public static let linkKey = KeyDistribution(rawValue: 0x08)

    static let bitNames = ["LTK", "IRK", "CSRK", "LinkKey"]
    static let setBitNames = BitNames(bitNames)

    public var names: [String] {
        var n: [String] = []
        for (i, name) in KeyDistribution.bitNames.enumerated() where rawValue & (1 << i) != 0 { n.append(name) }
        return n
    }

    /// The keys' names joined by ", ", or "none": written without an array.
    func writeList(to s: inout TextLine) {
        guard rawValue & 0x0F != 0 else { return s += "none" }
        var first = true
        for (i, name) in KeyDistribution.bitNames.enumerated() where rawValue & (1 << i) != 0 {
            if !first { s += ", " }
            first = false
            s.write(plain: name)
        }
    }

    /// The field and its bits, sent to `out` as they are read.
    func write(_ label: FieldLabel, to out: FieldSink) {
        out.begin(label, .flags(UInt64(rawValue), hex: 2, SetBitNames(UInt64(rawValue), in: KeyDistribution.setBitNames)))
        out.add("EncKey (LTK)", .bool(contains(.encKey)))
        out.add("IdKey (IRK)", .bool(contains(.idKey)))
        out.add("SignKey (CSRK)", .bool(contains(.signKey)))
        out.add("LinkKey", .bool(contains(.linkKey)))
        if rawValue & 0xF0 != 0 { out.add("Reserved", .uint(UInt64(rawValue >> 4), hex: 1)) }
        out.end()
    }
}

/// Parameters of a Pairing Request or Pairing Response (Vol 3 Part H 3.5.1–3.5.2).
public struct PairingFeatures: Sendable, Equatable {
    /// Raw IO capability; `ioCapability` is nil for reserved values.
    public let ioCapabilityRaw: UInt8
    public let oobDataFlag: UInt8
    public let authReq: AuthRequirements
    public let maxEncryptionKeySize: UInt8
    public let initiatorKeys: KeyDistribution
    public let responderKeys: KeyDistribution

    public init(ioCapability: UInt8, oobDataFlag: UInt8, authReq: UInt8, maxEncryptionKeySize: UInt8,
                initiatorKeys: UInt8, responderKeys: UInt8) {
        self.ioCapabilityRaw = ioCapability
        self.oobDataFlag = oobDataFlag
        self.authReq = AuthRequirements(authReq)
        self.maxEncryptionKeySize = maxEncryptionKeySize
        self.initiatorKeys = KeyDistribution(rawValue: initiatorKeys)
        self.responderKeys = KeyDistribution(rawValue: responderKeys)
    }

    public var ioCapability: IOCapability? { IOCapability(rawValue: ioCapabilityRaw) }
    /// OOB authentication data from the remote device is present.
    public var oobPresent: Bool { oobDataFlag == 0x01 }
}

/// Pairing Failed reasons (Vol 3 Part H 3.5.5, Table 3.7).
public enum SMPFailureReason {
    static let names: [String] = [
        "Passkey Entry Failed", "OOB Not Available", "Authentication Requirements", "Confirm Value Failed",
        "Pairing Not Supported", "Encryption Key Size", "Command Not Supported", "Unspecified Reason",
        "Repeated Attempts", "Invalid Parameters", "DHKey Check Failed", "Numeric Comparison Failed",
        "BR/EDR Pairing In Progress", "Cross-transport Key Derivation/Generation Not Allowed",
        "Key Rejected", "Busy",
    ]

    public static func name(_ reason: UInt8) -> String {
        reason >= 1 && Int(reason) <= names.count ? names[Int(reason) - 1] : "Reserved"
    }

    static func label(_ reason: UInt8) -> FieldLabel {
        reason >= 1 && Int(reason) <= nameLabels.count ? nameLabels[Int(reason) - 1] : "Reserved"
    }
    private static let nameLabels = FieldLabel.table(names)
}

/// Keypress Notification types (Vol 3 Part H 3.5.8, Table 3.9).
public enum KeypressNotificationType {
    static let names = [
        "Passkey Entry Started", "Passkey Digit Entered", "Passkey Digit Erased", "Passkey Cleared",
        "Passkey Entry Completed",
    ]

    public static func name(_ type: UInt8) -> String {
        Int(type) < names.count ? names[Int(type)] : "Reserved"
    }

    static func label(_ type: UInt8) -> FieldLabel { Int(type) < nameLabels.count ? nameLabels[Int(type)] : "Reserved" }
    private static let nameLabels = FieldLabel.table(names)
}

/// A fully decoded SMP command.
public enum SMPCommand: Sendable, Equatable {
    case pairingRequest(PairingFeatures)
    case pairingResponse(PairingFeatures)
    case pairingConfirm(Bytes)
    case pairingRandom(Bytes)
    case pairingFailed(reason: UInt8)
    case encryptionInformation(ltk: Bytes)
    case centralIdentification(ediv: UInt16, rand: UInt64)
    case identityInformation(irk: Bytes)
    /// Address type 0x00 public, 0x01 random static.
    case identityAddressInformation(addressType: UInt8, address: BDAddr)
    case signingInformation(csrk: Bytes)
    case securityRequest(AuthRequirements)
    /// P-256 public key coordinates, little-endian as sent.
    case pairingPublicKey(x: Bytes, y: Bytes)
    case pairingDHKeyCheck(Bytes)
    case pairingKeypressNotification(type: UInt8)
}

/// One SMP PDU. Never fails: an unknown opcode, a short or a long PDU keeps what could be read
/// and says why in `malformed`.
public struct SMPPDU: Dissectable, Sendable {
    /// Kinds of parameter, in the order a command lays them out.
    enum Param {
        case ioCapability, oobFlag, authReq, keySize, initiatorKeys, responderKeys
        case value128(FieldLabel), ediv, rand, addressType, address, reason, keypress
        case coordinate(FieldLabel)

        var width: Int {
            switch self {
            case .ioCapability, .oobFlag, .authReq, .keySize, .initiatorKeys, .responderKeys,
                 .addressType, .reason, .keypress: return 1
            case .ediv: return 2
            case .address: return 6
            case .rand: return 8
            case .value128: return 16
            case .coordinate: return 32
            }
        }
    }

    /// Parameter layout of each command (index opcode − 1), Vol 3 Part H 3.5–3.6.
    static let layouts: [[Param]] = [
        [.ioCapability, .oobFlag, .authReq, .keySize, .initiatorKeys, .responderKeys],
        [.ioCapability, .oobFlag, .authReq, .keySize, .initiatorKeys, .responderKeys],
        [.value128("Confirm Value")],
        [.value128("Random Value")],
        [.reason],
        [.value128("Long Term Key")],
        [.ediv, .rand],
        [.value128("Identity Resolving Key")],
        [.addressType, .address],
        [.value128("Signature Key")],
        [.authReq],
        [.coordinate("Public Key X"), .coordinate("Public Key Y")],
        [.value128("DHKey Check")],
        [.keypress],
    ]

    /// The whole PDU, opcode included: all it holds. The command and the fault are read from it when
    /// asked (a few times for each of the few SMP frames), where keeping them made a decode's upper
    /// layer, and so every frame's decode, 120 bytes: a public key's two coordinates.
    public let raw: Bytes

    public init(_ bytes: Bytes) { raw = bytes }

    /// The opcode byte; nil for an empty PDU.
    public var opcode: UInt8? { raw.byte(0) }
    /// The decoded command; nil when the opcode is unknown or the PDU is too short.
    public var command: SMPCommand? {
        guard let op = raw.byte(0).flatMap(SMPOpcode.init(rawValue:)) else { return nil }
        let params = raw.from(1)
        return params.count < SMPPDU.parameterLength(op) ? nil : SMPPDU.decode(op, params)
    }
    /// Why the PDU breaks the specification, or nil.
    public var malformed: String? {
        guard let code = raw.byte(0) else { return "empty SMP PDU" }
        guard let op = SMPOpcode(rawValue: code) else { return "unknown SMP opcode " + Hex.prefixed(code, width: 2) }
        let have = raw.count &- 1, need = SMPPDU.parameterLength(op)
        if have < need { return "\(op.name) needs \(need) parameter bytes, has \(have)" }
        return have > need ? "\(have - need) bytes after \(op.name)" : nil
    }

    /// Parameter bytes the command's layout takes.
    static func parameterLength(_ op: SMPOpcode) -> Int {
        SMPPDU.layouts[Int(op.rawValue) - 1].reduce(0) { $0 + $1.width }
    }

    /// Decodes parameters already known to be long enough.
    static func decode(_ op: SMPOpcode, _ p: Bytes) -> SMPCommand? {
        var r = ByteReader(p)
        func features() -> PairingFeatures {
            PairingFeatures(ioCapability: p.byte(0) ?? 0, oobDataFlag: p.byte(1) ?? 0, authReq: p.byte(2) ?? 0,
                            maxEncryptionKeySize: p.byte(3) ?? 0, initiatorKeys: p.byte(4) ?? 0,
                            responderKeys: p.byte(5) ?? 0)
        }
        do {
            switch op {
            case .pairingRequest: return .pairingRequest(features())
            case .pairingResponse: return .pairingResponse(features())
            case .pairingConfirm: return .pairingConfirm(try r.take(16))
            case .pairingRandom: return .pairingRandom(try r.take(16))
            case .pairingFailed: return .pairingFailed(reason: try r.u8())
            case .encryptionInformation: return .encryptionInformation(ltk: try r.take(16))
            case .centralIdentification: return .centralIdentification(ediv: try r.u16(), rand: try r.u64())
            case .identityInformation: return .identityInformation(irk: try r.take(16))
            case .identityAddressInformation:
                return .identityAddressInformation(addressType: try r.u8(), address: try r.address())
            case .signingInformation: return .signingInformation(csrk: try r.take(16))
            case .securityRequest: return .securityRequest(AuthRequirements(try r.u8()))
            case .pairingPublicKey: return .pairingPublicKey(x: try r.take(32), y: try r.take(32))
            case .pairingDHKeyCheck: return .pairingDHKeyCheck(try r.take(16))
            case .pairingKeypressNotification: return .pairingKeypressNotification(type: try r.u8())
            }
        } catch {
            return nil
        }
    }

    public var name: String {
        guard let opcode else { return "SMP" }
        return SMPOpcode.name(opcode)
    }

    public var summary: String { TextLine.make(writeSummary) }

    /// Written piece by piece: a pairing's summary lists its requirements and keys by name.
    public func writeSummary(to s: inout TextLine) {
        s.write(name)
        switch command {
        case .pairingRequest(let f), .pairingResponse(let f):
            s += ": "
            if let io = f.ioCapability { s.write(io.name) } else { s += "IO Capability "; s.write(hex: f.ioCapabilityRaw, width: 2) }
            if f.oobPresent { s += ", OOB" }
            s += " | AuthReq: "
            f.authReq.writeNames(to: &s)
            s += " | Initiator Key(s): "
            f.initiatorKeys.writeList(to: &s)
            s += " | Responder Key(s): "
            f.responderKeys.writeList(to: &s)
        case .pairingFailed(let reason):
            s += ": "
            s.write(SMPFailureReason.name(reason))
        case .securityRequest(let a):
            s += ": AuthReq: "
            a.writeNames(to: &s)
        case .centralIdentification(let ediv, _):
            s += ": EDIV "
            s.write(hex: ediv, width: 4)
        case .identityAddressInformation(let type, let address):
            s += ": "
            s.write(label: addressTypeName(type))
            s += " "
            s.write(address)
        case .pairingKeypressNotification(let type):
            s += ": "
            s.write(KeypressNotificationType.name(type))
        default:
            break
        }
        if malformed != nil { s += " [Malformed]" }
    }

    public var fields: [Field] { FieldList.build(writeFields) }

    public func writeFields(to out: FieldSink) {
        guard let opcode else { return out.malformed(malformed ?? "empty SMP PDU") }
        out.add("Opcode", .named(UInt64(opcode), hex: 2, SMPOpcode.label(opcode)))
        guard opcode >= 1, Int(opcode) <= SMPPDU.layouts.count else {
            out.add("Data", .bytes(raw.from(1)))
            if let malformed { out.malformed(malformed) }
            return
        }
        // Walk the layout over whatever is present, so a short PDU still shows what it has.
        var r = ByteReader(raw.from(1))
        for param in SMPPDU.layouts[Int(opcode) - 1] {
            guard let v = try? r.take(param.width) else { break }
            SMPPDU.write(param, v, to: out)
        }
        if !r.isAtEnd { out.add("Extra Data", .bytes(r.rest())) }
        if let malformed { out.malformed(malformed) }
    }

    /// One parameter's field, sent to `out`.
    static func write(_ param: Param, _ v: Bytes, to out: FieldSink) {
        let b = v.byte(0) ?? 0
        switch param {
        case .ioCapability:
            out.add("IO Capability", .named(UInt64(b), hex: 2, Int(b) < IOCapability.labels.count ? IOCapability.labels[Int(b)] : "Reserved"))
        case .oobFlag:
            let name: FieldLabel = b == 0 ? "OOB Auth. Data Not Present"
                : b == 1 ? "OOB Auth. Data From Remote Device Present" : "Reserved"
            out.add("OOB Data Flag", .named(UInt64(b), hex: 2, name))
        case .authReq:
            AuthRequirements(b).write(to: out)
        case .keySize:
            out.add("Max Encryption Key Size", .uint(UInt64(b), hex: 0))
        case .initiatorKeys:
            KeyDistribution(rawValue: b).write("Initiator Key Distribution", to: out)
        case .responderKeys:
            KeyDistribution(rawValue: b).write("Responder Key Distribution", to: out)
        case .value128(let label), .coordinate(let label):
            out.add(label, .bytes(v))
        case .ediv:
            out.add("EDIV", .uint(UInt64(v.le16(0) ?? 0), hex: 4))
        case .rand:
            var r = ByteReader(v)
            out.add("Rand", .uint((try? r.u64()) ?? 0, hex: 16))
        case .addressType:
            out.add("Address Type", .named(UInt64(b), hex: 2, addressTypeName(b)))
        case .address:
            var r = ByteReader(v)
            out.add("BD_ADDR", .address((try? r.address()) ?? BDAddr(0)))
        case .reason:
            out.add("Reason", .named(UInt64(b), hex: 2, SMPFailureReason.label(b)))
        case .keypress:
            out.add("Notification Type", .named(UInt64(b), hex: 2, KeypressNotificationType.label(b)))
        }
    }
}


private func addressTypeName(_ t: UInt8) -> FieldLabel {
    t == 0 ? "Public" : t == 1 ? "Random Static" : "Reserved"
}

// MARK: - Pairing method resolution

/// Who enters the passkey in Passkey Entry (Vol 3 Part H Table 2.8).
public enum PasskeyRoles: String, Sendable {
    case initiatorDisplaysResponderInputs = "initiator displays, responder inputs"
    case responderDisplaysInitiatorInputs = "responder displays, initiator inputs"
    case bothInput = "initiator and responder input"
}

/// The association model pairing uses (Vol 3 Part H 2.3.5.1).
public enum PairingMethod: Sendable, Equatable {
    case justWorks
    case passkeyEntry(PasskeyRoles)
    /// LE Secure Connections only.
    case numericComparison
    case outOfBand

    public var name: String {
        switch self {
        case .justWorks: return "Just Works"
        case .passkeyEntry(let roles): return "Passkey Entry (" + roles.rawValue + ")"
        case .numericComparison: return "Numeric Comparison"
        case .outOfBand: return "Out of Band"
        }
    }

    /// Whether the method protects against a man in the middle.
    public var isAuthenticated: Bool { self != .justWorks }

    /// IO capability mapping, Table 2.8: `[responder][initiator]`. `nc` marks the cells that
    /// become Numeric Comparison under LE Secure Connections, with their legacy method
    /// (nil: Just Works).
    private enum Cell { case jw, rd, id, both, nc(PasskeyRoles?) }
    private static let matrix: [[Cell]] = [
        // initiator:      DisplayOnly, DisplayYesNo, KeyboardOnly, NoInputNoOutput, KeyboardDisplay
        /* DisplayOnly */     [.jw, .jw, .rd, .jw, .rd],
        /* DisplayYesNo */    [.jw, .nc(nil), .rd, .jw, .nc(.responderDisplaysInitiatorInputs)],
        /* KeyboardOnly */    [.id, .id, .both, .jw, .id],
        /* NoInputNoOutput */ [.jw, .jw, .jw, .jw, .jw],
        /* KeyboardDisplay */ [.id, .nc(.initiatorDisplaysResponderInputs), .rd, .jw,
                               .nc(.initiatorDisplaysResponderInputs)],
    ]

    /// The method that results from a Pairing Request and Response (Vol 3 Part H 2.3.5.1).
    /// `secureConnections` is true when both set the SC flag.
    public static func resolve(request: PairingFeatures, response: PairingFeatures) -> PairingMethod {
        let sc = request.authReq.secureConnections && response.authReq.secureConnections
        // Legacy: OOB when both have OOB data; LE SC: when at least one has.
        if sc ? (request.oobPresent || response.oobPresent) : (request.oobPresent && response.oobPresent) {
            return .outOfBand
        }
        if !request.authReq.mitm && !response.authReq.mitm { return .justWorks }
        // Reserved IO capabilities are treated as NoInputNoOutput: nothing else can be assumed.
        let i = Int(request.ioCapability?.rawValue ?? IOCapability.noInputNoOutput.rawValue)
        let r = Int(response.ioCapability?.rawValue ?? IOCapability.noInputNoOutput.rawValue)
        switch matrix[r][i] {
        case .jw: return .justWorks
        case .rd: return .passkeyEntry(.responderDisplaysInitiatorInputs)
        case .id: return .passkeyEntry(.initiatorDisplaysResponderInputs)
        case .both: return .passkeyEntry(.bothInput)
        case .nc(let legacy):
            if sc { return .numericComparison }
            return legacy.map { .passkeyEntry($0) } ?? .justWorks
        }
    }
}

/// How a pairing ended.
public struct PairingFailure: Sendable, Equatable {
    public let reason: UInt8
    /// The side that sent Pairing Failed.
    public let side: Side
    public let frame: Int
    public var reasonName: String { SMPFailureReason.name(reason) }
}

/// Everything one pairing procedure showed, for the auditor.
public struct PairingOutcome: Sendable, Equatable {
    /// The side that sent the Pairing Request.
    public var initiator: Side
    public var request: PairingFeatures
    public var requestFrame: Int
    public var response: PairingFeatures?
    public var responseFrame: Int?
    /// Known once the response is seen.
    public var method: PairingMethod?
    /// LE Secure Connections (both set the SC flag); false means LE legacy pairing.
    public var secureConnections: Bool
    /// Each side advertised SC (in a Security Request, Pairing Request or Response).
    public var initiatorSupportsSC: Bool
    public var responderSupportsSC: Bool
    /// Both advertised SC, yet the pairing ran as LE legacy: a response without the SC flag,
    /// or a legacy exchange (Pairing Confirm before any public key, EDIV/Rand distributed).
    public var legacyDespiteSC: Bool
    /// Both set the Keypress flag in Passkey Entry: keypress notifications are in use.
    public var keypressNotifications: Bool
    public var keypressNotificationsSeen: Int
    /// Keys each side will distribute: the response's choice within the request's offer;
    /// EncKey dropped under LE Secure Connections.
    public var negotiatedInitiatorKeys: KeyDistribution
    public var negotiatedResponderKeys: KeyDistribution
    /// Keys actually seen from each side (Encryption Information/Central Identification → encKey,
    /// Identity (Address) Information → idKey, Signing Information → signKey).
    public var keysFromInitiator: KeyDistribution
    public var keysFromResponder: KeyDistribution
    /// Identity addresses distributed (type 0 public, 1 random static).
    public var initiatorIdentityAddress: BDAddr?
    public var responderIdentityAddress: BDAddr?
    public var failure: PairingFailure?
    /// Pairing Public Keys seen, to tell SC exchanges from legacy ones.
    public var publicKeysSeen: Int
    /// The side whose Pairing Public Key is the debug key (Vol 3 Part H 2.3.5.6.1), and its frame:
    /// anyone who captured the pairing can work out its LTK.
    public var debugKeyFrom: Side?
    public var debugKeyFrame: Int?

    /// A pairing that has just started: only its request is known.
    public init(initiator: Side, request: PairingFeatures, requestFrame: Int) {
        self.initiator = initiator
        self.request = request
        self.requestFrame = requestFrame
        secureConnections = false
        initiatorSupportsSC = request.authReq.secureConnections
        responderSupportsSC = false
        legacyDespiteSC = false
        keypressNotifications = false
        keypressNotificationsSeen = 0
        negotiatedInitiatorKeys = []
        negotiatedResponderKeys = []
        keysFromInitiator = []
        keysFromResponder = []
        publicKeysSeen = 0
    }

    /// Both advertised SC support.
    public var bothSupportSC: Bool { initiatorSupportsSC && responderSupportsSC }

    /// The "just-works-pairing" audit rule: an unauthenticated method, or legacy pairing where
    /// both devices could have used Secure Connections.
    public var isWeak: Bool { method == .justWorks || legacyDespiteSC }
}

/// Follows the SMP exchange of one connection and records each pairing's outcome.
public final class PairingTracker {
    /// Pairings in the order they started, the latest `maxOutcomes` of them; the last one may
    /// still be running.
    public private(set) var outcomes: [PairingOutcome] = []
    /// How many pairings started in all (a peer repeating Pairing Requests cannot grow memory).
    public private(set) var started = 0
    public static let maxOutcomes = 32
    /// SC flag from a Security Request, remembered until the Pairing Request.
    private var securityRequestSC: [Side: Bool] = [:]

    public init() {}

    /// Empty again for a new connection (`Connection.reuse`), keeping the list's storage.
    func reuse() {
        outcomes.removeAll(keepingCapacity: true)
        started = 0
        securityRequestSC.removeAll(keepingCapacity: true)
    }

    /// The latest pairing, finished or not.
    public var current: PairingOutcome? { outcomes.last }

    /// Feeds one SMP PDU sent by `side` in capture frame `frame`.
    public func feed(_ pdu: SMPPDU, from side: Side, frame: Int) {
        guard let command = pdu.command else { return }
        switch command {
        case .securityRequest(let auth):
            securityRequestSC[side] = auth.secureConnections
        case .pairingRequest(let f):
            var outcome = PairingOutcome(initiator: side, request: f, requestFrame: frame)
            outcome.initiatorSupportsSC = outcome.initiatorSupportsSC || securityRequestSC[side] == true
            outcome.responderSupportsSC = securityRequestSC[side.other] == true
            if outcomes.count >= PairingTracker.maxOutcomes { outcomes.removeFirst(outcomes.count / 2) }
            outcomes.append(outcome)
            started += 1
            securityRequestSC = [:]
        case .pairingResponse(let f):
            update { o in
                guard side != o.initiator, o.response == nil else { return }
                o.response = f
                o.responseFrame = frame
                o.secureConnections = o.request.authReq.secureConnections && f.authReq.secureConnections
                o.responderSupportsSC = o.responderSupportsSC || f.authReq.secureConnections
                let method = PairingMethod.resolve(request: o.request, response: f)
                o.method = method
                if case .passkeyEntry = method {
                    o.keypressNotifications = o.request.authReq.keypress && f.authReq.keypress
                }
                // The response's distribution fields are what will be distributed (3.5.2).
                o.negotiatedInitiatorKeys = f.initiatorKeys.intersection(o.request.initiatorKeys)
                o.negotiatedResponderKeys = f.responderKeys.intersection(o.request.responderKeys)
                if o.secureConnections {
                    // LE Secure Connections derives the LTK; EncKey is ignored (3.6.1).
                    o.negotiatedInitiatorKeys.remove(.encKey)
                    o.negotiatedResponderKeys.remove(.encKey)
                }
                o.legacyDespiteSC = o.bothSupportSC && !o.secureConnections
            }
        case .pairingPublicKey(let x, _):
            let debug = x.count == 32 && x.reversed().elementsEqual(SecureConnectionsFunctions.debugPublicKeyX)
            update { o in
                o.publicKeysSeen += 1
                if debug, o.debugKeyFrom == nil {
                    o.debugKeyFrom = side
                    o.debugKeyFrame = frame
                }
            }
        case .pairingConfirm:
            update { o in
                // SC sends public keys first; a confirm before them is the legacy exchange.
                if o.secureConnections && o.publicKeysSeen == 0 { o.legacyDespiteSC = true }
            }
        case .pairingFailed(let reason):
            update { o in
                if o.failure == nil { o.failure = PairingFailure(reason: reason, side: side, frame: frame) }
            }
        case .pairingKeypressNotification:
            update { $0.keypressNotificationsSeen += 1 }
        case .encryptionInformation:
            addKey(.encKey, from: side)
        case .centralIdentification:
            addKey(.encKey, from: side)
            // EDIV and Rand exist only in legacy pairing.
            update { o in if o.secureConnections { o.legacyDespiteSC = true } }
        case .identityInformation:
            addKey(.idKey, from: side)
        case .identityAddressInformation(_, let address):
            addKey(.idKey, from: side)
            update { o in
                if side == o.initiator {
                    o.initiatorIdentityAddress = address
                } else {
                    o.responderIdentityAddress = address
                }
            }
        case .signingInformation:
            addKey(.signKey, from: side)
        case .pairingRandom, .pairingDHKeyCheck:
            break
        }
    }

    private func addKey(_ key: KeyDistribution, from side: Side) {
        update { o in
            if side == o.initiator { o.keysFromInitiator.insert(key) } else { o.keysFromResponder.insert(key) }
        }
    }

    private func update(_ body: (inout PairingOutcome) -> Void) {
        guard !outcomes.isEmpty else { return }
        body(&outcomes[outcomes.count - 1])
    }
}
