/// Groups one advertiser's reports into advertising events, so that its interval is measured
/// between events and not between copies of one event.
///
/// An advertising event (Core Vol 6 Part B 4.4.2.2) sends its PDU on up to three primary
/// channels, each at most 10 ms after the one before, and a scan response can follow each. A
/// scanner with several radios, or whose scan window changes channel during the event, reports
/// two or three copies; some controllers report the scan response as a second advertisement. Events
/// start at least advInterval (20 ms or more) plus advDelay apart. So a report less than `spread`
/// after the first report of the current event belongs to that event, and an interval is the time
/// between the first reports of two events. High duty cycle directed advertising (PDUs 3.75 ms
/// apart or less) is one long event by this measure, and has no interval, as the specification says.
public struct AdvertisingEventClock: Sendable {
    /// The longest a report may follow its event's first report and still be part of the event.
    public static let spread: Int64 = 10_000_000

    /// First report of the current event.
    public private(set) var eventStart: Int64?

    public init() {}

    /// Sees an advertising report (not a scan response) at `time`; returns the time since the
    /// previous event's start when the report starts a new event, nil when it belongs to the
    /// current one or is the first.
    public mutating func interval(at time: Int64) -> Int64? {
        guard let start = eventStart else {
            eventStart = time
            return nil
        }
        let (gap, overflow) = time.subtractingReportingOverflow(start)
        // A clock that steps back starts a new event without an interval.
        guard !overflow, gap >= 0 else {
            eventStart = time
            return nil
        }
        guard gap >= Self.spread else { return nil }
        eventStart = time
        return gap
    }
}

/// When an advertiser was heard and how much: its first and last report, its advertising reports
/// and scan responses, and the interval between its advertising events. The device list and the
/// HTML report keep one per advertiser.
public struct AdvertiserActivity: Sendable {
    public private(set) var firstFrame: Int
    public private(set) var firstSeen: Int64
    public private(set) var lastFrame: Int
    /// The latest time a report was heard (a clock that steps back does not move it back).
    public private(set) var lastSeen: Int64
    public private(set) var advertisingReports = 0
    public private(set) var scanResponses = 0
    private var events = AdvertisingEventClock()

    public init(frame: Int, time: Int64) {
        firstFrame = frame
        firstSeen = time
        lastFrame = frame
        lastSeen = time
    }

    /// Counts a report; returns the interval since the previous advertising event when this report
    /// starts one. A fragment that more data follows (`continued`) starts none.
    public mutating func report(frame: Int, time: Int64, scanResponse: Bool, continued: Bool = false) -> Int64? {
        lastFrame = frame
        if time > lastSeen { lastSeen = time }
        if scanResponse {
            scanResponses += 1
            return nil
        }
        advertisingReports += 1
        return continued ? nil : events.interval(at: time)
    }

    /// Adds the activity of the same device under another address: the earliest first report,
    /// the latest last one, the counts summed.
    public mutating func merge(_ o: AdvertiserActivity) {
        if o.firstFrame < firstFrame { (firstFrame, firstSeen) = (o.firstFrame, o.firstSeen) }
        if o.lastFrame >= lastFrame { (lastFrame, lastSeen) = (o.lastFrame, o.lastSeen) }
        advertisingReports += o.advertisingReports
        scanResponses += o.scanResponses
    }
}
