import Decoders
import Wire

/// How bad a finding is. Ordered: note < warning < error.
public enum Severity: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    case note = 1, warning = 2, error = 3

    public var name: String {
        switch self {
        case .note: return "note"
        case .warning: return "warning"
        case .error: return "error"
        }
    }
    public var description: String { name }

    public init?(name: String) {
        switch name.lowercased() {
        case "note", "info": self = .note
        case "warning", "warn": self = .warning
        case "error": self = .error
        default: return nil
        }
    }

    public static func < (a: Severity, b: Severity) -> Bool { a.rawValue < b.rawValue }
}

/// What a finding is about: one connection, one advertiser, or this host's own controller.
public struct FindingSubject: Sendable, Hashable {
    public enum Kind: String, Sendable { case connection, advertiser, host }
    public var kind: Kind
    public var adapter: UInt16
    /// Sequential connection number in the capture (1-based), for connections.
    public var connectionID: Int?
    /// HCI connection handle, for connections.
    public var handle: UInt16?
    /// The peer's or advertiser's address, when known.
    public var address: BDAddr?
    public var addressType: UInt8?
    /// The peer's identity address, when pairing distributed one (its `address` may be a
    /// resolvable private address that changes): findings about one device group by it.
    public var identity: BDAddr?

    public static func connection(_ c: Connection) -> FindingSubject {
        FindingSubject(kind: .connection, adapter: c.adapter, connectionID: c.id, handle: c.handle,
                       address: c.peer, addressType: c.peerAddressType)
    }

    public static func advertiser(adapter: UInt16, address: BDAddr?) -> FindingSubject {
        address == nil ? .host(adapter: adapter)
            : FindingSubject(kind: .advertiser, adapter: adapter, address: address)
    }

    public static func host(adapter: UInt16) -> FindingSubject {
        FindingSubject(kind: .host, adapter: adapter)
    }

    /// Two words of what tells subjects apart (equal subjects hash alike; the address type goes with
    /// the address): one combine rather than one per optional field.
    public func hash(into hasher: inout Hasher) {
        let kindBits: UInt64 = kind == .connection ? 1 : kind == .advertiser ? 2 : 3
        hasher.combine(UInt64(UInt(bitPattern: connectionID ?? -1)) ^ kindBits << 62 ^ UInt64(adapter) << 44)
        hasher.combine((address?.raw ?? 1 << 63) ^ UInt64(handle ?? 0xFFFF) << 48)
    }

    /// "connection #2 (handle 0x0040, 00:1B:DC:07:32:A1)", "advertiser 5A:...", "this host (adapter 0)".
    public var label: String { TextLine.make { write(label: &$0) } }

    /// What a finding grouped over connections is about: "peer 00:1B:DC:07:32:A1" (its identity
    /// address when known), else `label`.
    public var deviceLabel: String {
        guard kind == .connection, let a = identity ?? address else { return label }
        return "peer " + a.description
    }

    func write(label out: inout TextLine) {
        switch kind {
        case .connection:
            out.write("connection #")
            out.write(connectionID ?? 0)
            out.write(" (handle ")
            out.write(hex: handle ?? 0, width: 4)
            if let a = address {
                out.write(", ")
                out.write(a)
            }
            out.write(byte: UInt8(ascii: ")"))
        case .advertiser:
            out.write("advertiser ")
            if let a = address { out.write(a) } else { out.write(byte: UInt8(ascii: "?")) }
        case .host:
            out.write("this host (adapter ")
            out.write(Int(adapter))
            out.write(byte: UInt8(ascii: ")"))
        }
    }

    /// The part of the fingerprint that names the subject: stable across captures of the same device,
    /// so it uses the address, never the connection number, unless the address is unknown.
    func write(fingerprintKey out: inout TextLine) {
        switch kind {
        case .connection:
            if let a = identity ?? address {
                out += "peer "
                out.write(a)
            } else {
                out += "connection "
                out.write(connectionID ?? 0)
            }
        case .advertiser:
            out += "advertiser "
            if let a = address { out.write(a) } else { out += "?" }
        case .host:
            out += "host "
            out.write(Int(adapter))
        }
    }

    /// `fingerprintKey`'s bytes added to `h`, written on the stack: no String is made.
    func addFingerprintKey(to h: inout FNV1a) {
        TextLine.onStack { line in
            write(fingerprintKey: &line)
            line.hash(into: &h)
        }
    }

    var fingerprintKey: String { TextLine.make { write(fingerprintKey: &$0) } }
}

/// One time a rule found its breach on a subject: a finding lists them all (the first is the
/// finding's own message, subject and evidence).
public struct Occurrence: Sendable {
    /// Later occurrences a finding keeps (the last always among them): memory stays flat however
    /// often a capture repeats one habit.
    static let kept = 50

    public var message: String
    public var subject: FindingSubject
    public var evidence: [FrameRef]
    public var decisive: FrameRef
}

/// One breach of a rule on one subject (a peer device, the host adapter, an advertiser), with the
/// evidence that proves it and, when the capture shows it again, each later occurrence.
public struct Finding: Sendable {
    /// Whose behaviour it is: this host's (what the app, or the stack under it, sent) or the peer's.
    /// Only the host's is judged against the platform.
    public enum Actor: Sendable { case host, peer }
    public var rule: String
    public var ruleName: String
    public var severity: Severity
    /// One line with the measured figure.
    public var message: String
    public var subject: FindingSubject
    /// The frames that prove it, in frame order: the first evidence first.
    public var evidence: [FrameRef]
    /// The frame that decided it (the report's location).
    public var decisive: FrameRef
    /// What, besides rule and subject, tells this finding from the rule's others (the attribute).
    public var detail: String
    /// Stable across runs and captures: rule, subject and attribute, never frame numbers. Computed
    /// when asked for (JSON, SARIF, baselines): the text report does not show it.
    public var fingerprint: String { Hex.lower(fingerprintHash, width: 16) }
    /// `fingerprint` as its number: `Fingerprint.make` over the rule, the subject's key and the
    /// detail, their bytes hashed where they lie (the auditor keys each finding it takes by it).
    var fingerprintHash: UInt64 {
        var h = FNV1a()
        h.add(rule.utf8)
        h.add(UInt8(ascii: "|"))
        subject.addFingerprintKey(to: &h)
        h.add(UInt8(ascii: "|"))
        h.add(detail.utf8)
        return h.value
    }
    /// True when a baseline accepted it: reported, but not failed.
    public var suppressed: Bool = false
    public var actor: Actor
    /// What to change on the platform the capture came from, when the rule's table names it.
    public var advice: String?
    /// Whose doing it is: the app's, the OS's or another app's (`ActivityOwner`); nil until the
    /// auditor settles it from the subject's connection.
    public var owner: ActivityOwner?
    /// The owner came from the subject's connection (settled again at the end: evidence such as
    /// the OS's own services may come later in the connection), not from the rule.
    var ownerFromConnection = false
    /// The scan it is about (`Scan.number`), when a scan rule made it: its owner is settled again
    /// at the end, once the capture has shown which scans were the app's.
    var scan: Int?
    /// How many times the capture shows it (this finding is the first).
    public internal(set) var count = 1
    /// The occurrences after the first, in frame order: the first `Occurrence.kept` and always the last.
    public internal(set) var later: [Occurrence] = []

    /// The first occurrence, then the later ones kept.
    public var occurrences: [Occurrence] {
        [Occurrence(message: message, subject: subject, evidence: evidence, decisive: decisive)] + later
    }

    /// Adds the connections its occurrences are about to `ids`, each once (without building
    /// `occurrences`).
    func addConnections(to ids: inout [Int]) {
        func add(_ s: FindingSubject) { if let c = s.connectionID, !ids.contains(c) { ids.append(c) } }
        add(subject)
        for o in later { add(o.subject) }
    }

    /// The last occurrence's frame that decided it.
    public var lastDecisive: FrameRef { later.last?.decisive ?? decisive }

    public init(rule: String, ruleName: String, severity: Severity, message: String, subject: FindingSubject,
                evidence: consuming [FrameRef], decisive: FrameRef, detail: String = "", actor: Actor = .host) {
        self.actor = actor
        self.rule = rule
        self.ruleName = ruleName
        self.severity = severity
        self.message = message
        self.subject = subject
        // In frame order (stable), one per frame: sorted and thinned in the array given, which
        // the finding takes over (a capture's findings are kept until its report).
        var ev = consume evidence
        if !ev.contains(where: { $0.number == decisive.number }) { ev.append(decisive) }
        ev.sort { $0.number < $1.number }
        var kept = 0
        for i in ev.indices where kept == 0 || ev[kept - 1].number != ev[i].number {
            ev[kept] = ev[i]
            kept += 1
        }
        ev.removeLast(ev.count - kept)
        self.evidence = ev
        self.decisive = decisive
        self.detail = detail
    }

    public var firstFrame: FrameRef { evidence.first ?? decisive }

    /// Takes `o`, a later finding of the same rule on the same subject, as one more occurrence.
    mutating func absorb(_ o: Finding) {
        count += o.count
        if o.severity > severity { severity = o.severity }
        keep(Occurrence(message: o.message, subject: o.subject, evidence: o.evidence, decisive: o.decisive))
        for occurrence in o.later { keep(occurrence) }
    }

    /// One more later occurrence: the first `Occurrence.kept`, then each one in the last place.
    /// Room is made for 8, then for all: a list grown by doubling was made again up to seven times.
    private mutating func keep(_ occurrence: Occurrence) {
        if later.count < Occurrence.kept {
            if later.count == later.capacity { later.reserveCapacity(later.isEmpty ? 8 : Occurrence.kept) }
            later.append(occurrence)
        } else {
            later[later.count - 1] = occurrence
        }
    }

    /// `findings` in report order: by first frame, then decisive frame, then rule id (stable). The
    /// frame numbers are sorted as small keys and each finding moved once: sorting the findings
    /// themselves moves them at every step.
    static func inReportOrder(_ findings: [Finding]) -> [Finding] {
        var keys = findings.indices.map { i in (findings[i].firstFrame.number, findings[i].decisive.number, i) }
        keys.sort { a, b in
            if a.0 != b.0 { return a.0 < b.0 }
            if a.1 != b.1 { return a.1 < b.1 }
            let ra = findings[a.2].rule, rb = findings[b.2].rule
            return ra != rb ? ra < rb : a.2 < b.2
        }
        return keys.map { findings[$0.2] }
    }
}

/// FNV-1a 64-bit over the parts joined by "|", as 16 hex digits: cheap, stable and dependency free.
public enum Fingerprint {
    public static func make(_ parts: [String]) -> String {
        var h = FNV1a()
        var first = true
        for p in parts {
            if !first { h.add(UInt8(ascii: "|")) }
            first = false
            h.add(p.utf8)
        }
        return Hex.lower(h.value, width: 16)
    }
}

/// Words for report text outside finding messages (`Message` writes those).
enum Say {
    static func plural(_ n: Int, _ one: String, _ many: String? = nil) -> String {
        String(n) + " " + (n == 1 ? one : (many ?? one + "s"))
    }

    /// A duration option as written in configuration: "10s", "500ms".
    static func duration(_ ns: Int64) -> String {
        if ns % 1_000_000_000 == 0 { return String(ns / 1_000_000_000) + "s" }
        if ns % 1_000_000 == 0 { return String(ns / 1_000_000) + "ms" }
        return String(ns / 1000) + "us"
    }

    /// A time in units of 0.625 ms (scan and advertising intervals) as milliseconds: "11.25".
    static func milliseconds(_ units: UInt16) -> String {
        let us = Int(units) * 625
        var s = String(us / 1000)
        var frac = us % 1000
        guard frac != 0 else { return s }
        s += "."
        while frac != 0 {
            s += String(frac / 100)
            frac = frac % 100 * 10
        }
        return s
    }
}
