import Decoders

/// Runs every enabled rule over one capture's events in one pass. Memory stays flat: each rule keeps
/// only bounded per-connection or per-advertiser state.
public final class Auditor: AuditEventSink {
    public let capturePath: String?
    /// For each kind of event (by bit number), the rules that consume it, in catalogue order: an
    /// event visits only its rules rather than testing every rule's interests. The rules (each
    /// behind a `RuleRunner`) and the last frame seen live behind pointers, the rules unretained:
    /// the per-event path then goes without retains, run-time exclusivity checks and array
    /// uniqueness checks.
    private let byKind: [UnsafeMutableBufferPointer<Unmanaged<RuleRunner>>]
    /// The same for ATT PDUs, the most frequent event, by opcode: a PDU visits only the rules that
    /// act on its opcode.
    private let attRules: UnsafeMutablePointer<UnsafeMutableBufferPointer<Unmanaged<RuleRunner>>>
    /// The rules that check time, ticked before every event.
    private let tickers: UnsafeMutableBufferPointer<Unmanaged<RuleRunner>>
    /// Owns the runners the buffers point at.
    private let runners: [RuleRunner]
    private let lastFrame: UnsafeMutablePointer<FrameRef?>
    private let sink: FindingSink
    /// `sink.accept`, made once rather than per rule and event.
    private let emit: (Finding) -> Void
    /// Called with each finding as soon as a rule decided it (live capture prints these).
    public var onFinding: ((Finding) -> Void)? {
        get { sink.onFinding }
        set { sink.onFinding = newValue }
    }

    public init(configuration: AuditConfiguration = AuditConfiguration(), capturePath: String? = nil,
                baseline: Baseline? = nil, onFinding: ((Finding) -> Void)? = nil) {
        self.capturePath = capturePath
        let sink = FindingSink(baseline: baseline, onFinding: onFinding)
        self.sink = sink
        emit = { [unowned sink] f in sink.accept(f) }
        let settings = configuration.settings(for: capturePath)
        let enabled: [RuleRunner] = AuditRules.all.compactMap { t in
            guard let s = settings[t.info.id], s.enabled else { return nil }
            return Self.runner(t, s)
        }
        runners = enabled
        func buffer(_ picked: [RuleRunner]) -> UnsafeMutableBufferPointer<Unmanaged<RuleRunner>> {
            let b = UnsafeMutableBufferPointer<Unmanaged<RuleRunner>>.allocate(capacity: picked.count)
            _ = b.initialize(from: picked.map { Unmanaged.passUnretained($0) })
            return b
        }
        byKind = (0..<UInt16.bitWidth).map { bit in buffer(enabled.filter { $0.consumes.rawValue & (1 << bit) != 0 }) }
        let att = enabled.filter { $0.consumes.contains(.att) }
        attRules = .allocate(capacity: 256)
        attRules.initialize(from: (0...255).map { op in buffer(att.filter { $0.attOpcodes.contains(UInt8(op)) }) }, count: 256)
        tickers = buffer(enabled.filter { $0.checksTime })
        lastFrame = .allocate(capacity: 1)
        lastFrame.initialize(to: nil)
    }

    deinit {
        for b in byKind { b.deinitialize().deallocate() }
        for op in 0..<256 { attRules[op].deinitialize().deallocate() }
        attRules.deinitialize(count: 256).deallocate()
        tickers.deinitialize().deallocate()
        lastFrame.deinitialize(count: 1).deallocate()
    }

    private static func runner<R: AuditRule>(_ type: R.Type, _ settings: RuleSettings) -> RuleRunner {
        Runner(R(settings: settings))
    }

    /// Ids of the rules that run, in catalogue order.
    public var enabledRules: [String] { runners.map { $0.id } }

    public func observe(_ event: AuditEvent, at frame: FrameRef) {
        let k = event.kind.rawValue.trailingZeroBitCount
        if k == Self.attKind, case .att(let c, let a) = event {
            observeATT(a, on: c, at: frame)
            return
        }
        advance(to: frame)
        for r in byKind[k] { r._withUnsafeGuaranteedRef { $0.observe(event, at: frame, emit: emit) } }
    }

    /// The time is now `frame`'s: the rules that check time and have something due are ticked.
    private func advance(to frame: FrameRef) {
        lastFrame.pointee = frame
        for r in tickers {
            r._withUnsafeGuaranteedRef { if frame.time > $0.nextTick { $0.tick(at: frame, emit: emit) } }
        }
    }

    private static let attKind = AuditEventKinds.att.rawValue.trailingZeroBitCount

    /// An ATT PDU, lent to each rule.
    public func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef) {
        advance(to: frame)
        for r in attRules[Int(a.opcode)] { r._withUnsafeGuaranteedRef { $0.observeATT(a, on: c, at: frame, emit: emit) } }
    }

    /// Closes what is still open and returns every finding, sorted by first frame.
    public func finish(at frame: FrameRef? = nil) -> [Finding] {
        let end = frame ?? lastFrame.pointee
        for r in runners { r.finish(at: end, emit: emit) }
        sink.findings = Finding.inReportOrder(sink.findings)
        return sink.findings
    }
}

/// One rule, its state behind a pointer: an event reaches it through a class method rather than by
/// projecting an existential's box (a uniqueness check per rule and event).
private class RuleRunner {
    /// The rule's `nextTick`, kept here so that testing it costs no call, and whether it checks time
    /// (a generic `R.checksTime` is a call).
    final var nextTick: Int64 = .max
    final var ticks = false
    var id: String { "" }
    var consumes: AuditEventKinds { [] }
    var attOpcodes: ATTOpcodeSet { .all }
    var checksTime: Bool { false }
    func tick(at frame: FrameRef, emit: (Finding) -> Void) {}
    func observe(_ event: AuditEvent, at frame: FrameRef, emit: (Finding) -> Void) {}
    func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef, emit: (Finding) -> Void) {}
    func finish(at frame: FrameRef?, emit: (Finding) -> Void) {}
}

private final class Runner<R: AuditRule>: RuleRunner {
    private let rule: UnsafeMutablePointer<R>

    init(_ r: R) {
        rule = .allocate(capacity: 1)
        rule.initialize(to: r)
        super.init()
        ticks = R.checksTime
        nextTick = rule.pointee.nextTick
    }

    deinit { rule.deinitialize(count: 1).deallocate() }

    override var id: String { R.info.id }
    override var consumes: AuditEventKinds { R.consumes }
    override var attOpcodes: ATTOpcodeSet { R.attOpcodes }
    override var checksTime: Bool { R.checksTime }

    override func tick(at frame: FrameRef, emit: (Finding) -> Void) {
        rule.pointee.tick(at: frame, emit: emit)
        if ticks { nextTick = rule.pointee.nextTick }
    }

    override func observe(_ event: AuditEvent, at frame: FrameRef, emit: (Finding) -> Void) {
        rule.pointee.observe(event, at: frame, emit: emit)
        if ticks { nextTick = rule.pointee.nextTick }
    }

    override func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef,
                             emit: (Finding) -> Void) {
        rule.pointee.observeATT(a, on: c, at: frame, emit: emit)
        if ticks { nextTick = rule.pointee.nextTick }
    }

    override func finish(at frame: FrameRef?, emit: (Finding) -> Void) {
        rule.pointee.finish(at: frame, emit: emit)
    }
}

/// Where the rules' findings go: marked when the baseline accepts them, kept, and passed on.
private final class FindingSink {
    var findings: [Finding] = []
    let baseline: Baseline?
    var onFinding: ((Finding) -> Void)?

    init(baseline: Baseline?, onFinding: ((Finding) -> Void)?) {
        self.baseline = baseline
        self.onFinding = onFinding
    }

    func accept(_ f: Finding) {
        // Marked in place: a copy of the finding costs a retain per string.
        findings.append(f)
        let i = findings.count - 1
        if let b = baseline, b.contains(findings[i]) { findings[i].suppressed = true }
        onFinding?(findings[i])
    }
}

/// Accepted findings, by fingerprint: they are reported as suppressed and do not fail a run.
///
/// One finding per line: `<rule> <fingerprint>  <capture>: <message>`; `#` starts a comment.
public struct Baseline: Sendable {
    public var fingerprints: Set<String>

    public init(fingerprints: Set<String> = []) { self.fingerprints = fingerprints }

    public func contains(_ f: Finding) -> Bool { fingerprints.contains(f.fingerprint) }

    public static func parse(_ text: String) -> Baseline {
        var set = Set<String>()
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let t = String(line).trimmingWhitespace()
            guard !t.isEmpty, !t.hasPrefix("#") else { continue }
            let parts = t.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            if parts.count >= 2 { set.insert(String(parts[1])) } else { set.insert(String(parts[0])) }
        }
        return Baseline(fingerprints: set)
    }

    public static func render(_ audits: [CaptureAudit]) -> String {
        var s = "# blesniff audit baseline: findings accepted as known. One per line: rule fingerprint  capture: message\n"
        var seen = Set<String>()
        for a in audits {
            for f in a.findings where seen.insert(f.fingerprint).inserted {
                s += f.rule + " " + f.fingerprint + "  " + a.path + ": " + f.message.replacingNewlines() + "\n"
            }
        }
        return s
    }
}

extension String {
    func replacingNewlines() -> String { String(map { $0 == "\n" || $0 == "\r" ? " " : $0 }) }
}
