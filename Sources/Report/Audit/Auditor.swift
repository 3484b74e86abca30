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
    /// The rules that check time, ticked before an event when theirs is due.
    private let tickers: UnsafeMutableBufferPointer<Unmanaged<RuleRunner>>
    /// Owns the runners the buffers point at.
    private let runners: [RuleRunner]
    private let lastFrame: UnsafeMutablePointer<FrameRef?>
    /// No time-checking rule has anything due until after this time (at most the earliest of their
    /// `nextTick`s): until then an event ticks none of them.
    private let earliestTick: UnsafeMutablePointer<Int64>
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
        let earliest = UnsafeMutablePointer<Int64>.allocate(capacity: 1)
        earliest.initialize(to: .max)
        earliestTick = earliest
        let enabled: [RuleRunner] = AuditRules.entries.compactMap { e in
            guard let s = settings[e.type.info.id], s.enabled else { return nil }
            return e.makeRunner(s, earliest)
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
        earliest.pointee = enabled.map(\.nextTick).min() ?? .max
        lastFrame = .allocate(capacity: 1)
        lastFrame.initialize(to: nil)
    }

    deinit {
        for b in byKind { b.deinitialize().deallocate() }
        for op in 0..<256 { attRules[op].deinitialize().deallocate() }
        attRules.deinitialize(count: 256).deallocate()
        tickers.deinitialize().deallocate()
        earliestTick.deallocate()
        lastFrame.deinitialize(count: 1).deallocate()
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
        for r in byKind[k] { r._withUnsafeGuaranteedRef { $0.observe(event, frame, emit) } }
    }

    /// The time is now `frame`'s: the rules that check time and have something due are ticked.
    private func advance(to frame: FrameRef) {
        lastFrame.pointee = frame
        guard frame.time > earliestTick.pointee else { return }
        var next = Int64.max
        for r in tickers {
            r._withUnsafeGuaranteedRef {
                if frame.time > $0.nextTick { $0.tick(frame, emit) }
                next = min(next, $0.nextTick)
            }
        }
        earliestTick.pointee = next
    }

    private static let attKind = AuditEventKinds.att.rawValue.trailingZeroBitCount

    /// An ATT PDU, lent to each rule.
    public func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef) {
        advance(to: frame)
        for r in attRules[Int(a.opcode)] { r._withUnsafeGuaranteedRef { $0.observeATT(a, c, frame, emit) } }
    }

    /// Closes what is still open and returns every finding, sorted by first frame.
    public func finish(at frame: FrameRef? = nil) -> [Finding] {
        let end = frame ?? lastFrame.pointee
        for r in runners { r.finish(end, emit) }
        sink.findings = Finding.inReportOrder(sink.findings)
        return sink.findings
    }
}

/// One rule, its state behind a pointer, reached through closures made where the rule's type is
/// known (`AuditRules.entries`): an event runs the rule's own specialised code, where the methods
/// of a generic class would run unspecialised, through the protocol's witnesses.
final class RuleRunner {
    let id: String
    let consumes: AuditEventKinds
    let attOpcodes: ATTOpcodeSet
    let checksTime: Bool
    /// The rule's `nextTick`, kept up to date after each call into it: testing it costs no call.
    var nextTick: Int64 { tickCell.pointee }
    private let tickCell: UnsafeMutablePointer<Int64>
    let tick: (FrameRef, (Finding) -> Void) -> Void
    let observe: (AuditEvent, FrameRef, (Finding) -> Void) -> Void
    let observeATT: (ATTObservation, Connection, FrameRef, (Finding) -> Void) -> Void
    let finish: (FrameRef?, (Finding) -> Void) -> Void
    private let release: () -> Void

    /// `earliest` is the auditor's bound on every rule's `nextTick`, lowered when this rule's is.
    init<R: AuditRule>(_ rule: R, earliest: UnsafeMutablePointer<Int64>) {
        let p = UnsafeMutablePointer<R>.allocate(capacity: 1)
        p.initialize(to: rule)
        let cell = UnsafeMutablePointer<Int64>.allocate(capacity: 1)
        cell.initialize(to: p.pointee.nextTick)
        id = R.info.id
        consumes = R.consumes
        attOpcodes = R.attOpcodes
        checksTime = R.checksTime
        tickCell = cell
        @inline(__always) func update() {
            guard R.checksTime else { return }
            let t = p.pointee.nextTick
            cell.pointee = t
            if t < earliest.pointee { earliest.pointee = t }
        }
        tick = { f, emit in
            p.pointee.tick(at: f, emit: emit)
            update()
        }
        observe = { event, f, emit in
            p.pointee.observe(event, at: f, emit: emit)
            update()
        }
        observeATT = { a, c, f, emit in
            p.pointee.observeATT(a, on: c, at: f, emit: emit)
            update()
        }
        finish = { f, emit in p.pointee.finish(at: f, emit: emit) }
        release = {
            p.deinitialize(count: 1).deallocate()
            cell.deallocate()
        }
    }

    deinit { release() }
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
