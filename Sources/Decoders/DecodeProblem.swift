/// How a frame breaks the specification, as found while dissecting it: a stable code that scripts
/// and tests can match on, and the reason in words (which may change between versions).
public struct DecodeProblem: Sendable, Equatable, CustomStringConvertible {
    /// Where the problem is. The raw values are stable names.
    public enum Code: String, Sendable, CaseIterable {
        /// The record is shorter than its link-layer header (H4 indicator, direction, monitor header).
        case linkHeader = "link_header"
        /// A limit that keeps memory bounded was reached (connections, advertisers); not the frame's fault.
        case captureLimit = "capture_limit"
        case hciHeader = "hci_header"
        /// An HCI command or event whose parameter length disagrees with the bytes that follow.
        case hciLength = "hci_length"
        case aclHeader = "acl_header"
        case aclLength = "acl_length"
        case isochronousHeader = "iso_header"
        /// L2CAP fragments that do not add up: a continuation without a start, a length overrun.
        case l2capReassembly = "l2cap_reassembly"
        case l2capSignaling = "l2cap_signaling"
        /// An SDU of an L2CAP credit-based channel (K-frame).
        case creditBasedChannel = "credit_based_channel"
        case att
        case smp
        /// An over-the-air link-layer packet (sniffer captures).
        case linkLayer = "link_layer"
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }
}
