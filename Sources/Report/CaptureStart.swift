import Wire

/// The time a capture's relative times and its duration count from: its first frame, unless the
/// capture opens with notes stamped long before its traffic.
///
/// iOS PacketLogger files open with notes (product, firmware, chipset) stamped when logging was
/// turned on, often days before the HCI traffic after them; counted from those notes a
/// twenty-minute capture lasted a hundred hours and every time was hundreds of thousands of
/// seconds. A frame that is not HCI traffic (a note, a monitor index record) sets the start only
/// until a frame more than `maxNoteLead` after it arrives; that frame sets it instead. Frames are
/// not held back to look ahead: a note printed before the traffic is seen shows time 0, one
/// compared or counted after it (a report's duration, a connection's start) is before the start.
public struct CaptureStart: Sendable {
    /// How far before the next frame a leading note may be and still start the capture. btmon's
    /// index records and notes come within milliseconds of the traffic; PacketLogger's header
    /// notes hours or days before it.
    public static let maxNoteLead: Int64 = 3_600 * 1_000_000_000

    public private(set) var time: Int64?
    /// Every frame so far was a note: a later frame can still move the start.
    private var notesOnly = false

    public init() {}

    /// A start already known (an audit's earliest evidence).
    public init(time: Int64) { self.time = time }

    /// Sees the next frame in capture order; true when this frame set or moved the start.
    public mutating func see(_ p: Packet) -> Bool {
        guard let t = time else {
            time = p.timestamp
            notesOnly = Self.isNote(p.kind)
            return true
        }
        guard notesOnly else { return false }
        notesOnly = Self.isNote(p.kind)
        let (lead, overflow) = p.timestamp.subtractingReportingOverflow(t)
        guard !overflow, lead > Self.maxNoteLead else { return false }
        time = p.timestamp
        return true
    }

    /// Relative time of `timestamp` (nanoseconds); 0 before any frame.
    public func relative(_ timestamp: Int64) -> Int64 { timestamp &- (time ?? timestamp) }

    /// Monitor records that are not HCI traffic: notes, user logging, index records.
    static func isNote(_ kind: PacketKind) -> Bool {
        if case .monitor = kind { return true }
        return false
    }
}
