import Decoders
import Wire

/// One streaming pass over a capture for the HTML report: each frame is decoded once, and the
/// decode feeds both the collector and the auditor (through the same events `audit` uses).
public final class ReportPass: AuditEventSink {
    public let dissector: Dissector
    public let collector: ReportCollector
    private let feed: AuditFeed
    private let auditor: Auditor
    /// Each connection's throughput against its limits, and its set-up (`blesniff links`).
    private let links = LinkCollector()
    private var last: FrameRef?

    /// - Parameter keys: long-term keys to decrypt link-layer connections in sniffer captures.
    public init(path: String, configuration: AuditConfiguration = AuditConfiguration(), baseline: Baseline? = nil,
                keys: [LTK] = [], temporaryKeys: [LTK] = [], givenKeys: [LinkKey] = [], privateKeys: [[UInt8]] = [], limits: ReportLimits = ReportLimits()) {
        dissector = Dissector(trackAdvertisers: true, keys: keys, temporaryKeys: temporaryKeys, givenKeys: givenKeys, privateKeys: privateKeys,
                              maxAdvertisers: limits.maxAdvertisers)
        feed = AuditFeed(dissector: dissector, configuration: configuration)
        auditor = Auditor(configuration: configuration, capturePath: path, baseline: baseline)
        auditor.resolveAddresses(with: dissector.resolver)
        collector = ReportCollector(path: path, limits: limits)
    }

    /// What the capture's format says of its platform.
    public func assume(_ guess: PlatformGuess) { auditor.assume(guess) }

    /// - Parameter filter: when given, every frame is dissected (connection state needs them all)
    ///   but only the matching ones are counted, audited and shown.
    public func add(_ packet: Packet, filter: DisplayFilter? = nil) {
        let d = dissector.dissect(packet)
        if let filter, !filter.matches(d) { return }
        last = FrameRef(number: packet.number, time: packet.timestamp, fileOffset: packet.fileOffset,
                        fileLength: packet.fileLength)
        collector.add(d)
        links.frame(d)
        feed.events(d, into: self)
    }

    /// Each event goes to both the auditor and the collector.
    public func observe(_ event: AuditEvent, at frame: FrameRef) {
        auditor.observe(event, at: frame)
        collector.observe(event, at: frame)
        links.observe(event, at: frame)
    }

    /// Ends the pass; `error` says why the capture could not be read to its end.
    @discardableResult
    public func finish(error: String? = nil) -> ReportCollector {
        feed.finish(into: self, at: last)
        dissector.finish()
        for l in links.finish(at: last) { collector.links[l.id] = l }
        collector.finish(dissector: dissector, outcome: auditor.finishAudit(at: last), error: error)
        return collector
    }
}
