import Decoders
import Wire

/// Runs every enabled rule over one capture's events in one pass. Memory stays flat: each rule keeps
/// only bounded per-connection or per-advertiser state.
public final class Auditor: AuditEventSink {
    public let capturePath: String?
    /// For each kind of event (by bit number), the rules that consume it, in catalogue order: an
    /// event visits only its rules rather than testing every rule's interests. The rules (each
    /// behind a `RuleRunner`) and the last frame seen live behind pointers, the rules unretained:
    /// the per-event path then goes without retains, run-time exclusivity checks and array
    /// uniqueness checks. The same auditor with arrays of runners and each rule in a class box took
    /// 4% longer on a mixed capture, 9% on notifications and 17% on an advertising flood (audit
    /// --format json of 400,000 frames, median CPU time of 5 alternating runs).
    private let byKind: [UnsafeMutableBufferPointer<Unmanaged<RuleRunner>>]
    /// The same for ATT PDUs, the most frequent event, by opcode: a PDU visits only the rules that
    /// act on its opcode. Entries 0-255 for links where the client has not discovered
    /// (`AuditRule.attOpcodesAfterDiscovery`), 256-511 for those where it has.
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
    /// `sink.accept` and the open connections, made once rather than per rule and event.
    private let emit: RuleContext
    private let open: OpenConnections
    /// The events the auditor itself reads (devices under test, identities, the platform), as bits.
    private let ownKinds: UInt16
    private let scope: AuditScope
    /// The advertising data any rule or the scope looks at.
    public let advertisingInterest: AdvertisingInterest
    /// Resolves the resolvable private addresses of connection peers with the IRKs the capture's
    /// dissector knows (its pairings, resolving lists, keys given): findings about one device
    /// group under its identity also across its address changes. Consulted when findings are
    /// made and again at the end, so IRKs learnt late still count.
    public func resolveAddresses(with resolver: AddressResolver) {
        scope.add(resolver)
    }

    /// Called with each finding as soon as a rule decided it (live capture prints these).
    public var onFinding: ((Finding) -> Void)? {
        get { sink.onFinding }
        set { sink.onFinding = newValue }
    }

    public init(configuration: AuditConfiguration = AuditConfiguration(), capturePath: String? = nil,
                baseline: Baseline? = nil, onFinding: ((Finding) -> Void)? = nil) {
        self.capturePath = capturePath
        let scope = AuditScope(configuration: configuration)
        self.scope = scope
        var own: AuditEventKinds = [.connected, .pairing, .platform, .scan, .connectionOwner]
        if scope.matchesAdvertisingData { own.insert(.advertisingData) }
        ownKinds = own.rawValue
        let settings = configuration.settings(for: capturePath)
        let sink = FindingSink(baseline: baseline, scope: scope, onFinding: onFinding)
        for e in AuditRules.entries {
            let info = e.type.info
            if let s = settings[info.id], s.severity != info.severity { sink.severities[info.id] = (info.severity, s.severity) }
        }
        self.sink = sink
        let open = OpenConnections()
        self.open = open
        emit = RuleContext(accept: { [unowned sink] f in sink.accept(f) }, open: open)
        let earliest = UnsafeMutablePointer<Int64>.allocate(capacity: 1)
        earliest.initialize(to: .max)
        earliestTick = earliest
        let enabled: [RuleRunner] = AuditRules.entries.compactMap { e in
            guard let s = settings[e.type.info.id], s.enabled else { return nil }
            return e.makeRunner(s, EarliestTick(cell: earliest))
        }
        runners = enabled
        func buffer(_ picked: [RuleRunner]) -> UnsafeMutableBufferPointer<Unmanaged<RuleRunner>> {
            let b = UnsafeMutableBufferPointer<Unmanaged<RuleRunner>>.allocate(capacity: picked.count)
            for (i, r) in picked.enumerated() { (b.baseAddress! + i).initialize(to: .passUnretained(r)) }
            return b
        }
        byKind = (0..<UInt16.bitWidth).map { bit in buffer(enabled.filter { $0.type.consumes.rawValue & (1 << bit) != 0 }) }
        // Each rule's opcode sets read once (through the rule's type, each read is a call). A
        // discovered link's list is the other's where no rule waits for a discovery.
        let att = enabled.filter { $0.type.consumes.contains(.att) }
        let opcodes = att.map { $0.type.attOpcodes }, afterDiscovery = att.map { $0.type.attOpcodesAfterDiscovery }
        var picked: [RuleRunner] = []
        func list(_ opcode: ATTOpcode, discovered: Bool) -> UnsafeMutableBufferPointer<Unmanaged<RuleRunner>> {
            picked.removeAll(keepingCapacity: true)
            for i in att.indices where opcodes[i].contains(opcode) && (discovered || !afterDiscovery[i].contains(opcode)) {
                picked.append(att[i])
            }
            return buffer(picked)
        }
        attRules = .allocate(capacity: 512)
        for op in 0..<256 {
            let opcode = ATTOpcode(UInt8(op))
            let waits = afterDiscovery.contains { $0.contains(opcode) }
            (attRules + op).initialize(to: list(opcode, discovered: false))
            (attRules + 256 + op).initialize(to: waits ? list(opcode, discovered: true) : attRules[op])
        }
        tickers = buffer(enabled.filter { $0.type.checksTime })
        advertisingInterest = enabled.filter { $0.type.consumes.contains(.advertisingData) }
            .reduce(own.contains(.advertisingData) ? .every : .none) { $0.union($1.advertisingInterest) }
        earliest.pointee = enabled.map(\.nextTick).min() ?? .max
        lastFrame = .allocate(capacity: 1)
        lastFrame.initialize(to: nil)
    }

    deinit {
        for b in byKind { b.deinitialize().deallocate() }
        for op in 0..<256 {
            if attRules[256 + op].baseAddress != attRules[op].baseAddress { attRules[256 + op].deinitialize().deallocate() }
            attRules[op].deinitialize().deallocate()
        }
        attRules.deinitialize(count: 512).deallocate()
        tickers.deinitialize().deallocate()
        earliestTick.deallocate()
        lastFrame.deinitialize(count: 1).deallocate()
    }

    /// Ids of the rules that run, in catalogue order.
    public var enabledRules: [String] { runners.map { $0.type.info.id } }

    /// What the capture file's format says of its platform (PacketLogger, bug report, monitor).
    public func assume(_ guess: PlatformGuess) { scope.offer(guess) }

    /// The platform the findings are judged for, as known so far.
    public var platform: PlatformGuess { scope.platform }

    public func observe(_ event: AuditEvent, at frame: FrameRef) {
        let bit = event.kind.rawValue
        if bit & ownKinds != 0 { scope.observe(event) }
        let k = bit.trailingZeroBitCount
        if k == Self.attKind, case .att(let c, let a) = event {
            observeATT(a, on: c, at: frame)
            return
        }
        if k == Self.linkDataKind, case .linkData(let c) = event {
            observeLinkData(c, at: frame)
            return
        }
        if k == Self.advertisingDataKind, case .advertisingData(let o) = event {
            rulesObserve(o, at: frame)
            return
        }
        if bit & Self.namingKinds != 0 { open.add(namedBy: event, at: frame) }
        advance(to: frame)
        for r in byKind[k] { r._withUnsafeGuaranteedRef { $0.observe(event, frame, emit) } }
        if k == Self.disconnectedKind, case .disconnected(let c, _) = event { open.remove(c.id) }
    }

    /// Advertising data or a report, lent to each rule.
    public func observeAdvertisingData(_ o: AdvertisingDataObservation, at frame: FrameRef) {
        if AuditEventKinds.advertisingData.rawValue & ownKinds != 0 { scope.observe(.advertisingData(o)) }
        rulesObserve(o, at: frame)
    }

    private func rulesObserve(_ o: AdvertisingDataObservation, at frame: FrameRef) {
        advance(to: frame)
        for r in byKind[Self.advertisingDataKind] {
            r._withUnsafeGuaranteedRef { if $0.advertisingInterest.wants(o) { $0.observeAdvertisingData(o, frame, emit) } }
        }
    }

    /// The time is now `frame`'s: the rules that check time and have something due are ticked.
    @inline(__always)
    public func advance(to frame: FrameRef) {
        lastFrame.pointee = frame
        if frame.time > earliestTick.pointee { tick(at: frame) }
    }

    /// Ticks the rules with something due by `frame`.
    private func tick(at frame: FrameRef) {
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
    private static let advertisingDataKind = AuditEventKinds.advertisingData.rawValue.trailingZeroBitCount
    private static let linkDataKind = AuditEventKinds.linkData.rawValue.trailingZeroBitCount
    private static let disconnectedKind = AuditEventKinds.disconnected.rawValue.trailingZeroBitCount
    /// The events whose connection the open table takes before the rules see them (ATT PDUs add
    /// theirs in `observeATT`): those a rule may start keeping a connection's number on. Not
    /// `.linkData`, sent with every frame of other L2CAP traffic, which only updates what a rule
    /// keeps already (checking it cost 1.6% of an audit of a data stream), nor `.disconnected`.
    private static let namingKinds = AuditEventKinds([.connected, .connectionOwner, .encryptionChanged, .pairing,
                                                      .discovery]).rawValue

    /// An ATT PDU, lent to each rule.
    public func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef) {
        let discovered = open.att(a, c, at: frame)
        advance(to: frame)
        for r in attRules[Int(a.opcode.rawValue) | (discovered ? 256 : 0)] {
            r._withUnsafeGuaranteedRef { $0.observeATT(a, c, frame, emit) }
        }
    }

    /// Other L2CAP traffic on a connection: data on it (`LinkActivity`), and lent to each rule. Its
    /// connection is not added to the open ones (`namingKinds`).
    public func observeLinkData(_ c: Connection, at frame: FrameRef) {
        open.data(c, at: frame)
        advance(to: frame)
        for r in byKind[Self.linkDataKind] { r._withUnsafeGuaranteedRef { $0.observeLinkData(c, frame, emit) } }
    }

    /// Closes what is still open and returns the findings, one per rule and subject, sorted by first
    /// frame. `frame` is the capture's last frame (rules measure what is still open up to it).
    public func finish(at frame: FrameRef? = nil) -> [Finding] { finishAudit(at: frame).findings }

    /// The same, with what was set aside: the platform's own behaviour and bystanders' findings.
    public func finishAudit(at frame: FrameRef? = nil) -> AuditOutcome {
        let end = frame ?? lastFrame.pointee
        for r in runners { r.finish(end, emit) }
        return sink.outcome()
    }
}

/// One rule, its state behind a pointer, reached through functions made where the rule's type is
/// known (`AuditRules.entries`): an event runs the rule's own specialised code, where the methods
/// of a generic class would run unspecialised, through the protocol's witnesses. The functions
/// capture nothing and are handed the state (`RuleSlot`): a closure holding it was called through
/// a forwarder that loaded what it held, a dozen instructions for each rule an event reached.
final class RuleRunner {
    /// What the rule acts on (`consumes`, `attOpcodes`...), read when the auditor sorts its rules.
    let type: any AuditRule.Type
    /// Read for every advertising report.
    let advertisingInterest: AdvertisingInterest
    /// The rule's `nextTick`, kept up to date after each call into it: testing it costs no call.
    var nextTick: Int64 { tickCell.pointee }
    private let tickCell: UnsafeMutablePointer<Int64>
    /// The rule's `RuleSlot`.
    private let slot: UnsafeMutableRawPointer
    private let tickEntry: (UnsafeMutableRawPointer, FrameRef, RuleContext) -> Void
    private let observeEntry: (UnsafeMutableRawPointer, AuditEvent, FrameRef, RuleContext) -> Void
    private let observeATTEntry: (UnsafeMutableRawPointer, ATTObservation, Connection, FrameRef, RuleContext) -> Void
    private let observeAdvertisingDataEntry: (UnsafeMutableRawPointer, AdvertisingDataObservation, FrameRef, RuleContext) -> Void
    private let observeLinkDataEntry: (UnsafeMutableRawPointer, Connection, FrameRef, RuleContext) -> Void
    private let finishEntry: (UnsafeMutableRawPointer, FrameRef?, RuleContext) -> Void
    private let release: (UnsafeMutableRawPointer) -> Void

    /// `earliest` is the auditor's bound on every rule's `nextTick`, lowered when this rule's is.
    init<R: AuditRule>(_ rule: R, earliest: EarliestTick) {
        let cell = UnsafeMutablePointer<Int64>.allocate(capacity: 1)
        cell.initialize(to: rule.nextTick)
        let p = UnsafeMutablePointer<RuleSlot<R>>.allocate(capacity: 1)
        p.initialize(to: RuleSlot(rule: rule, tickCell: cell, earliest: earliest.cell))
        type = R.self
        advertisingInterest = R.advertisingInterest
        tickCell = cell
        slot = UnsafeMutableRawPointer(p)
        tickEntry = { s, f, emit in
            let p = RuleSlot<R>.at(s)
            p.pointee.rule.tick(at: f, emit: emit)
            RuleSlot.update(p)
        }
        observeEntry = { s, event, f, emit in
            let p = RuleSlot<R>.at(s)
            p.pointee.rule.observe(event, at: f, emit: emit)
            RuleSlot.update(p)
        }
        observeATTEntry = { s, a, c, f, emit in
            let p = RuleSlot<R>.at(s)
            p.pointee.rule.observeATT(a, on: c, at: f, emit: emit)
            RuleSlot.update(p)
        }
        observeAdvertisingDataEntry = { s, o, f, emit in
            let p = RuleSlot<R>.at(s)
            p.pointee.rule.observeAdvertisingData(o, at: f, emit: emit)
            RuleSlot.update(p)
        }
        observeLinkDataEntry = { s, c, f, emit in
            let p = RuleSlot<R>.at(s)
            p.pointee.rule.observeLinkData(on: c, at: f, emit: emit)
            RuleSlot.update(p)
        }
        finishEntry = { s, f, emit in RuleSlot<R>.at(s).pointee.rule.finish(at: f, emit: emit) }
        release = { s in
            let p = RuleSlot<R>.at(s)
            p.pointee.tickCell.deallocate()
            p.deinitialize(count: 1).deallocate()
        }
    }

    deinit { release(slot) }

    @inline(__always) func tick(_ f: FrameRef, _ emit: RuleContext) { tickEntry(slot, f, emit) }
    @inline(__always) func observe(_ e: AuditEvent, _ f: FrameRef, _ emit: RuleContext) { observeEntry(slot, e, f, emit) }
    @inline(__always) func observeATT(_ a: ATTObservation, _ c: Connection, _ f: FrameRef, _ emit: RuleContext) {
        observeATTEntry(slot, a, c, f, emit)
    }
    @inline(__always) func observeAdvertisingData(_ o: AdvertisingDataObservation, _ f: FrameRef, _ emit: RuleContext) {
        observeAdvertisingDataEntry(slot, o, f, emit)
    }
    @inline(__always) func observeLinkData(_ c: Connection, _ f: FrameRef, _ emit: RuleContext) { observeLinkDataEntry(slot, c, f, emit) }
    @inline(__always) func finish(_ f: FrameRef?, _ emit: RuleContext) { finishEntry(slot, f, emit) }
}

/// The auditor's bound on every rule's `nextTick`, handed to each rule's runner: one word the
/// auditor reads before every frame and a runner lowers after a call into its rule. Opaque outside
/// this file, where the pointer is kept.
struct EarliestTick {
    fileprivate let cell: UnsafeMutablePointer<Int64>
}

/// A rule's state and where its runner keeps its `nextTick`, behind the runner's one pointer.
private struct RuleSlot<R: AuditRule> {
    var rule: R
    let tickCell: UnsafeMutablePointer<Int64>
    /// The auditor's bound on every rule's `nextTick`.
    let earliest: UnsafeMutablePointer<Int64>

    @inline(__always) static func at(_ s: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Self> {
        s.assumingMemoryBound(to: Self.self)
    }

    /// After each call into the rule: its `nextTick` copied out, and the bound lowered to it. Read
    /// through the pointer: a method of the slot would be handed a copy of the rule's state.
    @inline(__always) static func update(_ p: UnsafeMutablePointer<Self>) {
        guard R.checksTime else { return }
        let t = p.pointee.rule.nextTick
        p.pointee.tickCell.pointee = t
        if t < p.pointee.earliest.pointee { p.pointee.earliest.pointee = t }
    }
}

/// Where the rules' findings go: one per rule and subject (later ones become occurrences of the
/// first), marked when the baseline accepts them, and passed on as they come.
private final class FindingSink {
    private var findings: [Finding] = []
    /// Index in `findings` by `key`.
    private var index: [Key: Int] = [:]
    let baseline: Baseline?
    let scope: AuditScope
    var onFinding: ((Finding) -> Void)?
    /// Rules whose configured severity is not their catalogue's: a finding at the catalogue's
    /// takes the configured one (a lesser variant keeps its own).
    var severities: [String: (catalogue: Severity, configured: Severity)] = [:]

    init(baseline: Baseline?, scope: AuditScope, onFinding: ((Finding) -> Void)?) {
        self.baseline = baseline
        self.scope = scope
        self.onFinding = onFinding
    }

    func accept(_ f: Finding) {
        var f = f
        if !severities.isEmpty, let s = severities[f.rule], f.severity == s.catalogue { f.severity = s.configured }
        scope.resolve(&f.subject)
        scope.settleOwner(&f)
        if let on = onFinding, scope.place(f) == .finding { on(f) }
        let key = Self.key(f)
        if let i = index[key] {
            findings[i].absorb(f)
            return
        }
        index[key] = findings.count
        findings.append(f)
    }

    /// One finding per rule, subject and owner: what the app did and what the OS or another app
    /// did to the same peer stay apart.
    private static func key(_ f: Finding) -> Key {
        guard let o = f.owner, !o.isJudged else { return Key(fingerprint: f.fingerprintHash, owner: nil) }
        return Key(fingerprint: f.fingerprintHash, owner: o.kind)
    }

    /// The fingerprint, and the owner when it is not the judged app.
    private struct Key: Hashable {
        let fingerprint: UInt64
        let owner: ActivityOwner.Kind?
    }

    /// The findings by where they belong, each group in report order. Identities learnt after a
    /// finding was made merge what they join; owners learnt after it (the OS's services seen later
    /// in a connection) move it.
    func outcome() -> AuditOutcome {
        scope.settleScans()
        var merged: [Finding] = []
        var at: [Key: Int] = [:]
        for var f in findings {
            scope.resolve(&f.subject)
            if f.ownerFromConnection { f.owner = nil }
            scope.settleOwner(&f)
            let key = Self.key(f)
            if let i = at[key] { merged[i].absorb(f) } else { at[key] = merged.count; merged.append(f) }
        }
        var out = AuditOutcome(platform: scope.platform)
        for var f in merged {
            if let b = baseline, b.contains(f) { f.suppressed = true }
            switch scope.place(f) {
            case .finding:
                if scope.platform.platform != .unknown, f.actor == .host,
                   let c = AuditScope.tables[f.rule]?[scope.platform.platform], c.who == .app { f.advice = c.text }
                out.findings.append(f)
            case .platform(let why):
                f.advice = why
                out.platformBehaviour.append(f)
            case .otherApp(let why):
                f.advice = why
                out.otherApps.append(f)
            case .nearby:
                out.nearby.append(f)
            }
        }
        out.attributions = scope.attributions
        out.findings = Finding.inReportOrder(out.findings)
        out.otherApps = Finding.inReportOrder(out.otherApps)
        out.platformBehaviour = Finding.inReportOrder(out.platformBehaviour)
        out.nearby = Finding.inReportOrder(out.nearby)
        return out
    }
}

/// One capture's audit: the findings, and what was set aside.
public struct AuditOutcome: Sendable {
    public var findings: [Finding] = []
    /// What the platform's stack or the OS itself did, whatever the app asked: reported apart,
    /// never failed.
    public var platformBehaviour: [Finding] = []
    /// What other apps on the same device did (their scans and connections): reported apart, never failed.
    public var otherApps: [Finding] = []
    /// Whose each scan and connection was judged to be, and why.
    public var attributions: [Attribution] = []
    /// Findings about advertisers that are not devices under test (bystanders in radio range).
    public var nearby: [Finding] = []
    public var platform: PlatformGuess

    public init(platform: PlatformGuess = .unknown) { self.platform = platform }
}

/// What the audit is about: the platform the capture came from, and the devices under test (those
/// this host connected to, and those configuration names). Fed by the events the auditor reads
/// itself.
final class AuditScope {
    enum Place: Equatable { case finding, platform(String), otherApp(String), nearby }

    /// Each rule's platform table, by id.
    static let tables: [String: PlatformTable] = {
        var m: [String: PlatformTable] = [:]
        for i in AuditRules.infos { m[i.id] = i.platforms }
        return m
    }()

    private(set) var platform: PlatformGuess = .unknown
    private var detector = PlatformDetector()
    private let matchers: [DeviceMatcher]
    private let allAdvertisers: Bool
    /// Peers this host connected to, and advertisers configuration picked: devices under test.
    private var underTest = BoundedMap<BDAddr, Bool>(capacity: 4096)
    /// Peer address (possibly resolvable private) to the identity address pairing distributed.
    private var identities = BoundedMap<BDAddr, BDAddr>(capacity: 4096)
    /// IRKs to resolve peers' private addresses with, one resolver per capture audited (bounded).
    private var resolvers: [AddressResolver] = []

    func add(_ r: AddressResolver) {
        guard resolvers.count < 64, !resolvers.contains(where: { $0 === r }) else { return }
        resolvers.append(r)
    }
    /// Each connection's owner, by connection number.
    private var connectionOwners = BoundedMap<Int, ActivityOwner>(capacity: 4096)
    /// Whose each scan and connection was judged to be (the first `maxAttributions`), and where
    /// each connection's entry is.
    private(set) var attributions: [Attribution] = []
    private var attributionIndex: [Int: Int] = [:]
    static let maxAttributions = 500
    /// Filtered scans of unknown owner, with the addresses their filters name.
    private var filteredScans: [Int: [BDAddr]] = [:]
    /// Owners settled at the end for scans whose owner was unknown when they ran.
    private var settledScans: [Int: ActivityOwner] = [:]

    /// Once the capture showed the app (its own scans found what it connected to), the filtered
    /// scans of unknown owner that name none of those devices are other apps' (companion apps,
    /// services scanning in the background).
    func settleScans() {
        settledScans = [:]
        var peers: [BDAddr] = []
        var shown = false
        for a in attributions {
            guard case .connection(_, let p) = a.subject, a.owner.kind == .app else { continue }
            shown = true
            if let p { peers.append(p) }
        }
        guard shown else { return }
        for (n, addresses) in filteredScans {
            settledScans[n] = addresses.contains(where: peers.contains)
                ? ActivityOwner(.app, "scan filters name a device the app connected to")
                : ActivityOwner(.otherApp, "a filtered scan naming none of the devices the app connected to after its own scans")
        }
        for i in attributions.indices {
            if case .scan(let n, _) = attributions[i].subject, let o = settledScans[n] { attributions[i].owner = o }
        }
    }

    init(configuration: AuditConfiguration) {
        matchers = configuration.devices
        allAdvertisers = configuration.allAdvertisers
        for case .address(let a) in configuration.devices { underTest[a] = true }
        if let p = configuration.platform { offer(.configured(p, by: "configuration or --platform")) }
    }

    /// Names or services to match in advertising data.
    var matchesAdvertisingData: Bool {
        matchers.contains { if case .address = $0 { return false } else { return true } }
    }

    func offer(_ g: PlatformGuess) {
        if detector.offer(g) { platform = detector.best ?? .unknown }
    }

    func observe(_ event: AuditEvent) {
        switch event {
        case .platform(let g): offer(g)
        case .connected(let c):
            if let p = c.peer { underTest[p] = true }
        case .connectionOwner(let c, let origin):
            connectionOwners[c.id] = origin.owner
            if let i = attributionIndex[c.id] {
                attributions[i].owner = origin.owner
            } else if attributions.count < Self.maxAttributions {
                attributionIndex[c.id] = attributions.count
                attributions.append(Attribution(subject: .connection(id: c.id, peer: c.peer), owner: origin.owner,
                                                frame: FrameRef(number: c.createdFrame ?? 0, time: c.createdTime ?? 0)))
            }
        case .scanStarted(let s):
            if s.filtered && s.owner.kind == .unknown && filteredScans.count < Self.maxAttributions {
                filteredScans[s.number] = s.addressFilters
            }
            if attributions.count < Self.maxAttributions {
                attributions.append(Attribution(subject: .scan(number: s.number, adapter: s.adapter), owner: s.owner, frame: s.start))
            }
        case .pairing(let c, _):
            guard let p = c.peer, let o = c.pairing.outcomes.last else { return }
            // The peer's identity: the responder's when this host initiated, else the initiator's.
            let id = c.isCentral == false ? o.initiatorIdentityAddress : o.responderIdentityAddress
            if let id, id != p {
                identities[p] = id
                underTest[id] = true
            }
        case .advertisingData(let o):
            guard let address = o.key.address, !underTest.contains(address), picked(o.data) else { return }
            underTest[address] = true
        default: break
        }
    }

    /// Advertising data with a name or service UUID configuration names.
    private func picked(_ data: Bytes) -> Bool {
        var hit = false
        ADWalk.walk(data) { type, span in
            guard !hit else { return }
            let value = data[span]
            switch type {
            case ADType.shortenedLocalName, ADType.completeLocalName:
                let name = String(decoding: value, as: UTF8.self)
                hit = matchers.contains { if case .name(let p) = $0 { return Glob.match(p, name) } else { return false } }
            default:
                guard let w = Self.serviceListWidth(type) ?? Self.serviceDataWidth(type) else { return }
                var r = ByteReader(value)
                while r.remaining >= w, let u = try? r.uuid(width: w) {
                    if matchers.contains(.service(u)) { hit = true }
                    if Self.serviceDataWidth(type) != nil { break }
                }
            }
        }
        return hit
    }

    /// Service UUID lists, incomplete and complete (AD 0x02-0x07).
    private static func serviceListWidth(_ type: UInt8) -> Int? {
        switch type {
        case 0x02, 0x03: return 2
        case 0x04, 0x05: return 4
        case 0x06, 0x07: return 16
        default: return nil
        }
    }

    /// Service Data AD types (0x16, 0x20, 0x21) start with their service's UUID.
    private static func serviceDataWidth(_ type: UInt8) -> Int? {
        switch type {
        case 0x16: return 2
        case 0x20: return 4
        case 0x21: return 16
        default: return nil
        }
    }

    /// Puts the identity address on a connection subject whose peer pairing identified.
    /// A random peer address pairing did not identify is resolved with the known IRKs.
    func resolve(_ s: inout FindingSubject) {
        guard s.kind == .connection, s.identity == nil, let a = s.address else { return }
        if let id = identities[a] {
            s.identity = id
            return
        }
        guard s.addressType == 1 else { return }
        for r in resolvers {
            if let k = r.identity(of: a, type: 1) {
                s.identity = k.identity.address
                return
            }
        }
    }

    /// Sets whose doing a finding is, when the rule did not: the owner of its connection. A peer
    /// configuration names is the app's.
    func settleOwner(_ f: inout Finding) {
        if f.subject.kind == .connection, let a = f.subject.address,
           matchers.contains(.address(a)) || f.subject.identity.map({ matchers.contains(.address($0)) }) == true {
            f.owner = ActivityOwner(.app, "a configured device of the app")
            return
        }
        if let n = f.scan, let o = settledScans[n] {
            f.owner = o
            return
        }
        guard f.owner == nil, f.actor == .host, let id = f.subject.connectionID else { return }
        f.owner = connectionOwners[id]
        f.ownerFromConnection = true
    }

    /// Where a finding belongs: a bystander's goes to nearby devices, what the OS or another app did
    /// to their sections, what the platform's stack does regardless to platform behaviour, the rest
    /// is a finding.
    func place(_ f: Finding) -> Place {
        if f.subject.kind == .advertiser, f.actor == .peer, !allAdvertisers,
           !(f.subject.address.map { underTest.contains($0) } ?? false) {
            return .nearby
        }
        if f.actor == .host, let o = f.owner {
            switch o.kind {
            case .os: return .platform("the OS's own: " + o.reason)
            case .otherApp: return .otherApp("another app's: " + o.reason)
            case .app, .unknown: break
            }
        }
        if f.actor == .host, platform.platform != .unknown,
           let c = Self.tables[f.rule]?[platform.platform], c.who == .stack {
            return .platform(c.text)
        }
        return .finding
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
