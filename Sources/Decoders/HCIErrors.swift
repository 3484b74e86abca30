import Wire

/// HCI error codes (Core Vol 1 Part F §1.3), used as Status and Reason parameters.
public enum HCIErrors {
    /// "Success", "Remote User Terminated Connection", ...; "Unknown Error (0x..)" past the table.
    public static func name(_ code: UInt8) -> String {
        Int(code) < names.count ? names[Int(code)] : "Unknown Error (" + Hex.prefixed(code, width: 2) + ")"
    }

    /// `name(code)` as a label: a known code's literal, another's text interned.
    static func label(_ code: UInt8) -> FieldLabel { Int(code) < labels.count ? labels[Int(code)] : FieldLabel(name(code)) }
    private static let labels = literals.map { FieldLabel(stringLiteral: $0) }

    /// Writes `name(code)`: a known code's name copied as the literal it is.
    public static func writeName(_ code: UInt8, to line: inout TextLine) {
        if Int(code) < literals.count { line += literals[Int(code)] } else { line.write(name(code)) }
    }

    /// Connection Timeout: the reason a link ends when its supervision timeout passes.
    public static let connectionTimeout: UInt8 = 0x08

    /// Whether the specification assigns the code.
    public static func isKnown(_ code: UInt8) -> Bool {
        Int(code) < names.count && !names[Int(code)].hasPrefix("Reserved")
    }

    /// Index = error code. LE-specific wording where the specification gives two names (LMP/LL).
    static let names = literals.map(\.description)
    static let literals: [StaticString] = [
        "Success",                                                              // 0x00
        "Unknown HCI Command",
        "Unknown Connection Identifier",
        "Hardware Failure",
        "Page Timeout",
        "Authentication Failure",
        "PIN or Key Missing",
        "Memory Capacity Exceeded",
        "Connection Timeout",                                                   // 0x08
        "Connection Limit Exceeded",
        "Synchronous Connection Limit To A Device Exceeded",
        "Connection Already Exists",
        "Command Disallowed",
        "Connection Rejected due to Limited Resources",
        "Connection Rejected Due To Security Reasons",
        "Connection Rejected due to Unacceptable BD_ADDR",
        "Connection Accept Timeout Exceeded",                                   // 0x10
        "Unsupported Feature or Parameter Value",
        "Invalid HCI Command Parameters",
        "Remote User Terminated Connection",
        "Remote Device Terminated Connection due to Low Resources",
        "Remote Device Terminated Connection due to Power Off",
        "Connection Terminated By Local Host",
        "Repeated Attempts",
        "Pairing Not Allowed",                                                  // 0x18
        "Unknown LMP PDU",
        "Unsupported Remote Feature",
        "SCO Offset Rejected",
        "SCO Interval Rejected",
        "SCO Air Mode Rejected",
        "Invalid LMP Parameters / Invalid LL Parameters",
        "Unspecified Error",
        "Unsupported LMP Parameter Value / Unsupported LL Parameter Value",     // 0x20
        "Role Change Not Allowed",
        "LMP Response Timeout / LL Response Timeout",
        "LMP Error Transaction Collision / LL Procedure Collision",
        "LMP PDU Not Allowed",
        "Encryption Mode Not Acceptable",
        "Link Key cannot be Changed",
        "Requested QoS Not Supported",
        "Instant Passed",                                                       // 0x28
        "Pairing With Unit Key Not Supported",
        "Different Transaction Collision",
        "Reserved (0x2B)",
        "QoS Unacceptable Parameter",
        "QoS Rejected",
        "Channel Classification Not Supported",
        "Insufficient Security",
        "Parameter Out Of Mandatory Range",                                     // 0x30
        "Reserved (0x31)",
        "Role Switch Pending",
        "Reserved (0x33)",
        "Reserved Slot Violation",
        "Role Switch Failed",
        "Extended Inquiry Response Too Large",
        "Secure Simple Pairing Not Supported By Host",
        "Host Busy - Pairing",                                                  // 0x38
        "Connection Rejected due to No Suitable Channel Found",
        "Controller Busy",
        "Unacceptable Connection Parameters",
        "Advertising Timeout",
        "Connection Terminated due to MIC Failure",
        "Connection Failed to be Established / Synchronization Timeout",
        "Reserved (0x3F)",
        "Coarse Clock Adjustment Rejected but Will Try to Adjust Using Clock Dragging", // 0x40
        "Type0 Submap Not Defined",
        "Unknown Advertising Identifier",
        "Limit Reached",
        "Operation Cancelled by Host",
        "Packet Too Long",
        "Too Late",
        "Too Early",
        "Insufficient Channels",                                                // 0x48
    ]
}
