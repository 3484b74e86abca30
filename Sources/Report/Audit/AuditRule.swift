import Decoders

/// A threshold or switch of a rule, set in configuration under the rule's id.
public struct RuleOption: Sendable {
    public enum Kind: Sendable {
        /// A whole number (reads, bytes).
        case count
        /// A duration, stored in nanoseconds, written "10s", "500ms", "2m" (a bare number is seconds).
        case duration
        case bool
    }
    public var name: String
    public var kind: Kind
    /// Nanoseconds for durations, 0/1 for switches.
    public var defaultValue: Int64
    public var help: String

    public init(_ name: String, _ kind: Kind, _ defaultValue: Int64, _ help: String) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.help = help
    }

    /// The value as configuration writes it.
    public func format(_ v: Int64) -> String {
        switch kind {
        case .count: return String(v)
        case .duration: return Say.duration(v)
        case .bool: return v != 0 ? "true" : "false"
        }
    }
}

/// What a rule is: the catalogue entry, shown by `blesniff rules` and in SARIF.
public struct RuleInfo: Sendable {
    public var id: String
    public var name: String
    public var severity: Severity
    /// One line.
    public var summary: String
    /// The guidance and why it matters.
    public var help: String
    /// Where the guidance comes from.
    public var guidance: String
    /// What is deliberately not flagged.
    public var notAFinding: String
    public var options: [RuleOption]
    /// Per platform, whether the app chooses what the rule judges (and the call to change) or the
    /// stack does it regardless. Applies to what this host did, never to the peer's behaviour.
    public var platforms: PlatformTable

    public init(id: String, name: String, severity: Severity, options: [RuleOption] = [], summary: String, help: String,
                guidance: String, notAFinding: String = "", platforms: PlatformTable = PlatformTable()) {
        self.id = id
        self.name = name
        self.severity = severity
        self.summary = summary
        self.help = help
        self.guidance = guidance
        self.notAFinding = notAFinding
        self.options = options
        self.platforms = platforms
    }

    public func option(_ name: String) -> RuleOption? { options.first { $0.name == name } }

    /// "5 reads / 10s" style summary of the options' values.
    public func thresholds(_ values: [String: Int64]? = nil) -> String {
        options.map { o in o.name + "=" + o.format(values?[o.name] ?? o.defaultValue) }.joined(separator: ", ")
    }
}

/// The effective settings of one rule for one capture: catalogue defaults overlaid with configuration.
public struct RuleSettings: Sendable {
    public var enabled: Bool
    public var severity: Severity
    public var values: [String: Int64]
    /// Extra characteristic UUIDs that hold personal data (BLE601).
    public var sensitiveCharacteristics: [BluetoothUUID]

    public init(info: RuleInfo, enabled: Bool = true, severity: Severity? = nil, values: [String: Int64] = [:],
                sensitiveCharacteristics: [BluetoothUUID] = []) {
        self.enabled = enabled
        self.severity = severity ?? info.severity
        var v: [String: Int64] = [:]
        for o in info.options { v[o.name] = o.defaultValue }
        for (k, x) in values { v[k] = x }
        self.values = v
        self.sensitiveCharacteristics = sensitiveCharacteristics
    }

    public func count(_ name: String) -> Int { Int(clamping: values[name] ?? 0) }
    public func duration(_ name: String) -> Int64 { values[name] ?? 0 }
    public func flag(_ name: String) -> Bool { (values[name] ?? 0) != 0 }
}

/// What each call into a rule is given besides its event: where findings go (`emit(finding)`) and
/// the connections open now, by number (`emit.connection(id)`). A rule keeps a connection's number
/// in its state and looks the connection up when it judges, so no rule holds the dissector's
/// mutable `Connection` beyond the call that lent it. One reference, made once per audit: each call
/// into a rule passes a single word for both.
public final class RuleContext {
    let accept: (Finding) -> Void
    let open: OpenConnections

    init(accept: @escaping (Finding) -> Void, open: OpenConnections) {
        self.accept = accept
        self.open = open
    }

    /// Emits a finding.
    @inline(__always) public func callAsFunction(_ f: Finding) { accept(f) }

    /// The open connection with this number: every connection an event a rule may start keeping
    /// one on named (an ATT PDU, the connection, its owner, an encryption change, a pairing, a
    /// discovery), until its disconnection has been judged.
    func connection(_ id: Int) -> Connection? { open[id] }

    /// When data last went over the open connection with this number (`LinkActivity`).
    func lastData(_ id: Int) -> FrameRef? { open.activity(id)?.last }

    /// Its last ATT PDU and the services used on it (`ServiceUse`).
    func uses(_ id: Int) -> ServiceUse? { open.uses(id) }

    /// The longest pause in its data since the last call (`LinkActivity.takePause`).
    func takePause(_ id: Int) -> (from: FrameRef, to: FrameRef)? { open.takePause(id) }
}

/// One check over the event stream. A rule keeps small per-connection or per-advertiser state, sees
/// every event once in frame order, and emits findings as soon as it has decided them; `finish` is
/// called once at the end of the capture for what was still open.
public protocol AuditRule {
    static var info: RuleInfo { get }
    /// The kinds of event `observe` acts on; the auditor does not call it for others.
    static var consumes: AuditEventKinds { get }
    /// The ATT PDUs `observeATT` acts on, by opcode; the auditor does not call it for others.
    static var attOpcodes: ATTOpcodeSet { get }
    /// Of `attOpcodes`, those the rule acts on only on links where this host, as client, has
    /// started a discovery (`ATTObservation.startsDiscovery`): the auditor does not call it for
    /// their PDUs on other links, such as the notifications of a link that kept its handles.
    static var attOpcodesAfterDiscovery: ATTOpcodeSet { get }
    /// The advertising data `observeAdvertisingData` acts on; the auditor does not call it for the rest.
    static var advertisingInterest: AdvertisingInterest { get }
    /// True for rules that decide when time has passed (a grace period, a timeout): `tick` is then
    /// called before any event, of whatever kind, later than `nextTick`, with its frame as the time now.
    static var checksTime: Bool { get }
    /// For rules that check time: ticks before frames no later than this have nothing to do, so the
    /// auditor skips them (`.max`: nothing pending). Read after each call into the rule.
    var nextTick: Int64 { mutating get }
    mutating func tick(at frame: FrameRef, emit: RuleContext)
    /// Reads the rule's options, once: a lookup by name per event would cost a string hash. The
    /// severity configuration gives the rule is the auditor's to apply.
    init(settings: RuleSettings)
    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: RuleContext)
    /// An ATT PDU: `.att` events come here rather than to `observe`, the observation borrowed where
    /// binding it out of the event would copy it once per rule. The default hands it to `observe`.
    mutating func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef,
                             emit: RuleContext)
    /// Advertising data: `.advertisingData` events come here rather than to `observe`, lent as ATT
    /// PDUs are. The default hands it to `observe`.
    mutating func observeAdvertisingData(_ o: AdvertisingDataObservation, at frame: FrameRef, emit: RuleContext)
    /// `.linkData`: lent too, as the event it is (copying a whole event to read its one reference
    /// cost more than the rule's work). The default hands it to `observe`.
    mutating func observeLinkData(on c: Connection, at frame: FrameRef, emit: RuleContext)
    mutating func finish(at frame: FrameRef?, emit: RuleContext)
}

/// A rule without options: made with its properties' initial values.
protocol OptionlessRule: AuditRule { init() }

extension OptionlessRule {
    init(settings: RuleSettings) { self.init() }
}

/// Which advertising data a rule acts on, by the facts the advertiser model found in it: most
/// reports show nothing new, and a rule about faults then has nothing to do.
public struct AdvertisingInterest: Sendable {
    /// Data showing one of these facts for its advertiser's first time (`AdvertisingDataObservation.new`).
    let new: ADFacts.Kinds
    /// Data of an advertiser that has shown one of these facts (`Advertiser.seen`).
    let seen: ADFacts.Kinds
    let every: Bool

    /// Every report and all data this host sets.
    public static let every = AdvertisingInterest(new: [], seen: [], every: true)
    public static func new(_ k: ADFacts.Kinds) -> AdvertisingInterest { AdvertisingInterest(new: k, seen: [], every: false) }
    public static func seen(_ k: ADFacts.Kinds) -> AdvertisingInterest { AdvertisingInterest(new: [], seen: k, every: false) }

    /// None: no data at all.
    public static let none = AdvertisingInterest(new: [], seen: [], every: false)

    @inline(__always) func wants(_ o: AdvertisingDataObservation) -> Bool { wants(new: o.new, seen: o.advertiser.seen) }

    /// Data that shows `new` facts for its advertiser's first time, of an advertiser that has shown `seen`.
    @inline(__always) func wants(new: ADFacts.Kinds, seen: ADFacts.Kinds) -> Bool {
        every || !new.isDisjoint(with: self.new) || !seen.isDisjoint(with: self.seen)
    }

    /// What either wants.
    func union(_ other: AdvertisingInterest) -> AdvertisingInterest {
        AdvertisingInterest(new: new.union(other.new), seen: seen.union(other.seen), every: every || other.every)
    }
}

/// A set of ATT opcodes (all 256 values, so the command and signature flags count).
public struct ATTOpcodeSet: Sendable {
    /// Opcodes 0-127 and 128-255, a bit each.
    private var low: UInt128 = 0, high: UInt128 = 0

    public init(_ opcodes: [ATTOpcode]) {
        for op in opcodes.map(\.rawValue) {
            if op < 128 { low |= 1 << op } else { high |= 1 << (op - 128) }
        }
    }

    /// The opcodes whose PDUs play one of these roles (Core Vol 3 Part F 3.3).
    public init(kinds: Set<ATTKind>) {
        self.init(Self.every.filter { kinds.contains($0.kind) })
    }

    private static let every = (0...255).map { ATTOpcode(UInt8($0)) }
    public static let all = ATTOpcodeSet(every)

    @inline(__always)
    public func contains(_ opcode: ATTOpcode) -> Bool {
        let op = opcode.rawValue
        return (op < 128 ? low >> op : high >> (op - 128)) & 1 != 0
    }

    public func union(_ other: ATTOpcodeSet) -> ATTOpcodeSet {
        var u = self
        u.low |= other.low
        u.high |= other.high
        return u
    }
}

/// Kinds of `AuditEvent` as bits, so the auditor picks the rules for an event with a mask test.
public struct AuditEventKinds: OptionSet, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// `scanStarted`, `scanStopped` and `scanAtEnd`.
    public static let scan = Self(rawValue: 1 << 0)
    public static let createConnection = Self(rawValue: 1 << 1)
    public static let connected = Self(rawValue: 1 << 2)
    public static let disconnectCommand = Self(rawValue: 1 << 3)
    public static let disconnected = Self(rawValue: 1 << 4)
    public static let encryptionChanged = Self(rawValue: 1 << 5)
    public static let att = Self(rawValue: 1 << 6)
    public static let pairing = Self(rawValue: 1 << 7)
    public static let advertisingData = Self(rawValue: 1 << 8)
    /// `advertisingStarted` and `advertisingStopped`.
    public static let advertising = Self(rawValue: 1 << 9)
    public static let advertisingParameters = Self(rawValue: 1 << 10)
    public static let linkData = Self(rawValue: 1 << 11)
    public static let platform = Self(rawValue: 1 << 12)
    public static let connectionOwner = Self(rawValue: 1 << 13)
    public static let discovery = Self(rawValue: 1 << 14)
    public static let all = Self(rawValue: 0xFFFF)
}

extension AuditEvent {
    public var kind: AuditEventKinds {
        switch self {
        case .scanStarted, .scanStopped, .scanAtEnd: return .scan
        case .createConnection: return .createConnection
        case .connected: return .connected
        case .disconnectCommand: return .disconnectCommand
        case .disconnected: return .disconnected
        case .encryptionChanged: return .encryptionChanged
        case .att: return .att
        case .discovery: return .discovery
        case .pairing, .pairingDebugKey: return .pairing
        case .advertisingData: return .advertisingData
        case .advertisingStarted, .advertisingStopped: return .advertising
        case .advertisingParameters: return .advertisingParameters
        case .linkData: return .linkData
        case .platform: return .platform
        case .connectionOwner: return .connectionOwner
        }
    }
}

extension AuditRule {
    public static var consumes: AuditEventKinds { .all }
    public static var attOpcodes: ATTOpcodeSet { .all }
    public static var attOpcodesAfterDiscovery: ATTOpcodeSet { ATTOpcodeSet([]) }
    public static var advertisingInterest: AdvertisingInterest { .every }
    public static var checksTime: Bool { false }
    public var nextTick: Int64 { Self.checksTime ? .min : .max }
    public mutating func tick(at frame: FrameRef, emit: RuleContext) {}
    public mutating func finish(at frame: FrameRef?, emit: RuleContext) {}

    public mutating func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef,
                                    emit: RuleContext) {
        observe(.att(c, a), at: frame, emit: emit)
    }

    public mutating func observeAdvertisingData(_ o: AdvertisingDataObservation, at frame: FrameRef, emit: RuleContext) {
        observe(.advertisingData(o), at: frame, emit: emit)
    }

    public mutating func observeLinkData(on c: Connection, at frame: FrameRef, emit: RuleContext) {
        observe(.linkData(c), at: frame, emit: emit)
    }

    /// A finding of this rule at its catalogue severity, which the auditor replaces with the
    /// configured one (or at `severity`, a lesser variant the configuration leaves alone).
    /// `actor` says whose behaviour it is: this host's (judged against the platform) or the peer's.
    /// `scan`: the scan it is about, whose owner is then the finding's; otherwise the auditor
    /// takes the owner of the subject's connection.
    func finding(_ message: Message, subject: FindingSubject, evidence: consuming [FrameRef], decisive: FrameRef,
                 detail: String = "", severity: Severity? = nil, actor: Finding.Actor = .host,
                 scan: Scan? = nil) -> Finding {
        var f = Finding(rule: Self.info.id, ruleName: Self.info.name, severity: severity ?? Self.info.severity,
                        message: message.string, subject: subject, evidence: consume evidence, decisive: decisive,
                        detail: detail, actor: actor)
        f.owner = scan?.owner
        f.scan = scan?.number
        return f
    }
}

/// How a connection's state came to be judged.
enum ConnectionEnd {
    /// The connection ended at this frame (its Disconnection Complete, or for a rule that takes it
    /// as the end, this host's Disconnect).
    case disconnected(FrameRef)
    /// Still open when the capture ended: the capture's last frame, when known.
    case captureEnded(FrameRef?)

    var frame: FrameRef? {
        switch self {
        case .disconnected(let f): return f
        case .captureEnded(let f): return f
        }
    }
}

/// A rule that keeps state per connection, in `states` by connection number: the state is judged
/// (`close`) when the connection ends, and at the end of the capture for those still open. The
/// skeleton is here once: `.disconnected` closes the connection's state (rules that act on more
/// events call `disconnected` from their own `observe`), `finish` closes every state left.
protocol PerConnectionRule: AuditRule {
    associatedtype ConnectionState
    var states: ConnectionTable<ConnectionState> { get set }
    /// Judges a connection's state, taken out of `states`, and emits what it decides; `c` is the
    /// connection as it is now.
    mutating func close(_ state: ConnectionState, of c: Connection, _ end: ConnectionEnd, emit: RuleContext)
    /// The order states still open at the end of the capture are closed in (default: connection
    /// order). Findings that share a subject keep the first one's message.
    func closingOrder(_ open: [(id: Int, state: ConnectionState)]) -> [(id: Int, state: ConnectionState)]
    /// Takes a state back once judged: a `ReusableState` goes to `states` for a new connection's.
    mutating func recycle(_ state: consuming ConnectionState)
}

extension PerConnectionRule where ConnectionState: ReusableState {
    mutating func recycle(_ state: consuming ConnectionState) { states.keep(state) }
}

extension PerConnectionRule {
    func closingOrder(_ open: [(id: Int, state: ConnectionState)]) -> [(id: Int, state: ConnectionState)] { open }

    mutating func recycle(_ state: consuming ConnectionState) {}

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: RuleContext) {
        if case .disconnected(let c, _) = event { disconnected(c, at: frame, emit: emit) }
    }

    /// The connection ended: its state, if any, is closed, then handed back (`recycle`).
    mutating func disconnected(_ c: Connection, at frame: FrameRef, emit: RuleContext) {
        guard let s = states.removeValue(forKey: c.id) else { return }
        close(s, of: c, .disconnected(frame), emit: emit)
        recycle(consume s)
    }

    mutating func finish(at frame: FrameRef?, emit: RuleContext) { closeAll(at: frame, emit: emit) }

    /// Closes every state still open at the end of the capture.
    mutating func closeAll(at frame: FrameRef?, emit: RuleContext) {
        for (id, s) in closingOrder(states.ids.map { ($0, states[$0]!) }) {
            // A state starts on an event whose connection the open table took, and its
            // connection stays there until its disconnection has been judged.
            guard let c = emit.connection(id) else { continue }
            close(s, of: c, .captureEnded(frame), emit: emit)
        }
        states.removeAll()
    }
}

/// How a scan's state came to be judged.
enum ScanEnd {
    /// The scan stopped at this frame (`scanStopped`).
    case stopped(FrameRef)
    /// Still on when the capture ended: the capture's last frame, when known.
    case captureEnded(FrameRef?)
}

/// A rule that keeps state per scan, in `scans` by adapter (one scan runs on an adapter at a
/// time, as `ScanModel` defines it): the state starts with the scan (`start`) and is judged when
/// the scan stops and at the end of the capture for scans still on (`close`). The skeleton is here
/// once: a rule's `observe` hands each event to `scan(_:at:emit:)` first.
protocol PerScanRule: AuditRule {
    associatedtype ScanState
    var scans: AdapterTable<ScanState> { get set }
    /// The state a scan starts with; nil when the rule judges nothing of it.
    mutating func start(_ s: Scan, at frame: FrameRef) -> ScanState?
    /// The scan as it stands when it stops or the capture ends (what it brought in, `Scan.yield`),
    /// just before its state is judged. Nothing by default.
    func update(_ state: inout ScanState, to s: Scan)
    /// Judges a scan's state, taken out of `scans`, and emits what it decides.
    mutating func close(_ state: ScanState, adapter: UInt16, _ end: ScanEnd, emit: RuleContext)
    /// Takes a scan's state back once judged, for its storage to serve again. Nothing by default.
    mutating func recycle(_ state: consuming ScanState)
}

extension PerScanRule {
    /// Starts or closes the state of a scan that started or stopped; false for any other event.
    mutating func scan(_ event: AuditEvent, at frame: FrameRef, emit: RuleContext) -> Bool {
        switch event {
        case .scanStarted(let s):
            scans[s.adapter] = start(s, at: frame)
        case .scanStopped(let s):
            if var state = scans.removeValue(forKey: s.adapter) {
                update(&state, to: s)
                close(state, adapter: s.adapter, .stopped(frame), emit: emit)
                recycle(consume state)
            }
        case .scanAtEnd(let s):
            if var state = scans[s.adapter] {
                update(&state, to: s)
                scans[s.adapter] = state
            }
        default:
            return false
        }
        return true
    }

    func update(_ state: inout ScanState, to s: Scan) {}

    mutating func recycle(_ state: consuming ScanState) {}

    mutating func finish(at frame: FrameRef?, emit: RuleContext) { closeAll(at: frame, emit: emit) }

    /// Closes every scan still on at the end of the capture, in adapter order.
    mutating func closeAll(at frame: FrameRef?, emit: RuleContext) {
        for (adapter, state) in scans.entries { close(state, adapter: adapter, .captureEnded(frame), emit: emit) }
        scans.removeAll()
    }
}

/// The registry: adding a rule is one file and one line here.
public enum AuditRules {
    static var entries: [RuleEntry] { [
        RuleEntry(BLE101ScanDuplicatesAllowed.self),
        RuleEntry(BLE102ScanNotStopped.self),
        RuleEntry(BLE103ScanLongRunning.self),
        RuleEntry(BLE201FullServiceDiscovery.self),
        RuleEntry(BLE202FullCharacteristicDiscovery.self),
        RuleEntry(BLE203RediscoveryOnReconnect.self),
        RuleEntry(BLE301PollingRead.self),
        RuleEntry(BLE302RedundantRead.self),
        RuleEntry(BLE303TruncatedNotification.self),
        RuleEntry(BLE304SmallMTULongValues.self),
        RuleEntry(BLE401IdleConnection.self),
        RuleEntry(BLE402ReconnectBeforeDisconnected.self),
        RuleEntry(BLE403ATTRequestPipelining.self),
        RuleEntry(BLE404WriteRequestStream.self),
        RuleEntry(BLE501AdvDataInvalid.self),
        RuleEntry(BLE502AdvServicesOverflow.self),
        RuleEntry(BLE503LocalNameTruncated.self),
        RuleEntry(BLE504AdvWhileConnected.self),
        RuleEntry(BLE505AdvIntervalAggressive.self),
        RuleEntry(BLE601SensitiveDataUnencrypted.self),
        RuleEntry(BLE602JustWorksPairing.self),
        RuleEntry(BLE603PairingKeysRecoverable.self),
    ] }

    public static var all: [any AuditRule.Type] { entries.map { $0.type } }

    public static var infos: [RuleInfo] { all.map { $0.info } }

    /// By id ("BLE301") or name ("polling-read"), case-insensitive.
    public static func type(named key: String) -> (any AuditRule.Type)? {
        let k = key.lowercased()
        return all.first { $0.info.id.lowercased() == k || $0.info.name == k }
    }
}

/// A rule type and how to run it, made where the type is known so its runner is specialised.
struct RuleEntry {
    let type: any AuditRule.Type
    let makeRunner: (RuleSettings, EarliestTick) -> RuleRunner

    init<R: AuditRule>(_ type: R.Type) {
        self.type = type
        makeRunner = { RuleRunner(R(settings: $0), earliest: $1) }
    }
}
