import Decoders

/// A rule on advertising data: it judges the data this host sets, and the data it receives unless
/// `include-received` is off. The facts come walked and per advertiser (`AdvertiserModel`).
protocol AdvertisingDataRule: AuditRule {
    /// The `include-received` option, read once.
    var includeReceived: Bool { get }
    /// Data the rule judges (this host's, or received when `include-received` is on).
    mutating func judge(_ o: AdvertisingDataObservation, at frame: FrameRef, emit: RuleContext)
}

extension AdvertisingDataRule {
    static var consumes: AuditEventKinds { [.advertisingData] }

    /// What these rules consume comes lent (`observeAdvertisingData`, `observeATT`).
    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: RuleContext) {}

    mutating func observeAdvertisingData(_ o: AdvertisingDataObservation, at frame: FrameRef, emit: RuleContext) {
        if o.key.host || includeReceived { judge(o, at: frame, emit: emit) }
    }

    /// A finding about the advertiser: this host's behaviour or the peer's.
    func finding(_ message: Message, _ key: AdvertiserKey, at frame: FrameRef, detail: String) -> Finding {
        finding(message, subject: key.subject, evidence: [frame], decisive: frame, detail: detail, actor: key.host ? .host : .peer)
    }
}

