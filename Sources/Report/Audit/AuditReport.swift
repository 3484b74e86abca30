import Decoders
import Wire

/// The audit of one capture file: its findings, or why it could not be read.
@dynamicMemberLookup
public struct CaptureAudit: Sendable {
    public var path: String
    /// The findings, what the platform and other apps did, whose each scan and connection was,
    /// and the platform they were judged for: read through as `audit.findings`, `audit.platform`.
    public var outcome: AuditOutcome
    /// Set when the capture could not be read; its findings are then incomplete.
    public var error: String?
    /// Ids of the rules that ran on it.
    public var rules: [String]

    public init(path: String, findings: [Finding] = [], error: String? = nil,
                rules: [String] = AuditRules.all.map { $0.info.id }) {
        var outcome = AuditOutcome()
        outcome.findings = findings
        self.init(path: path, outcome: outcome, error: error, rules: rules)
    }

    public init(path: String, outcome: AuditOutcome, error: String? = nil,
                rules: [String] = AuditRules.all.map { $0.info.id }) {
        self.path = path
        self.outcome = outcome
        self.error = error
        self.rules = rules
    }

    public subscript<T>(dynamicMember member: WritableKeyPath<AuditOutcome, T>) -> T {
        get { outcome[keyPath: member] }
        set { outcome[keyPath: member] = newValue }
    }
}

public enum AuditFormat: String, CaseIterable, Sendable {
    case text, json, sarif, junit, markdown, html

    /// The format a report file's extension suggests.
    public init?(fileExtensionOf path: String) {
        let lower = path.lowercased()
        if lower.hasSuffix(".sarif") || lower.hasSuffix(".sarif.json") { self = .sarif }
        else if lower.hasSuffix(".json") { self = .json }
        else if lower.hasSuffix(".xml") || lower.hasSuffix(".junit") { self = .junit }
        else if lower.hasSuffix(".md") || lower.hasSuffix(".markdown") { self = .markdown }
        else if lower.hasSuffix(".txt") { self = .text }
        else if lower.hasSuffix(".html") || lower.hasSuffix(".htm") { self = .html }
        else { return nil }
    }
}

/// The level at and above which unsuppressed findings fail the run.
public enum FailOn: String, CaseIterable, Sendable {
    case error, warning, note, never

    public var threshold: Severity? {
        switch self {
        case .error: return .error
        case .warning: return .warning
        case .note: return .note
        case .never: return nil
        }
    }
}

/// Exit status of an audit run: 0 clean, 1 findings at or above `--fail-on`, 2 unreadable input.
public enum AuditExit {
    public static let clean: Int32 = 0
    public static let findings: Int32 = 1
    public static let inputError: Int32 = 2

    /// From each capture's counts and error, when the findings themselves are no longer kept.
    public static func code(_ summaries: [(counts: AuditReport.Counts, error: String?)], failOn: FailOn) -> Int32 {
        if summaries.contains(where: { $0.error != nil }) { return inputError }
        guard let t = failOn.threshold else { return clean }
        return summaries.contains { s in s.counts.worst.map { $0 >= t } ?? false } ? findings : clean
    }

    public static func code(_ audits: [CaptureAudit], failOn: FailOn) -> Int32 {
        if audits.contains(where: { $0.error != nil }) { return inputError }
        guard let t = failOn.threshold else { return clean }
        let failing = audits.contains { a in a.findings.contains { !$0.suppressed && $0.severity >= t } }
        return failing ? findings : clean
    }
}

/// Renders audits in the report formats. One pass over the captures feeds every format.
public struct AuditReport {
    public var audits: [CaptureAudit]
    public var toolName = "blesniff"
    public var toolVersion = "0.1.0"
    public var informationURI = "https://github.com/blesniff/blesniff"
    /// SARIF: a capture path as the repository root sees it: relative to the root (`%SRCROOT%`)
    /// when under it, else absolute; nil leaves paths as given.
    public var sarifSourcePath: (@Sendable (String) -> (path: String, underRoot: Bool))?
    /// Findings at or above it are failures in JUnit (the run's `--fail-on`).
    public var failOn: FailOn = .error
    /// ANSI colour in the text format (a terminal only).
    public var colour = false

    public init(audits: [CaptureAudit]) { self.audits = audits }

    /// Written as the report's bytes, never made a String (a report can hold thousands of findings).
    public func write(_ format: AuditFormat, to out: Output) {
        out.write(rendered(format).line)
        out.flush()
    }

    public func render(_ format: AuditFormat) -> String { rendered(format).text }

    private func rendered(_ format: AuditFormat) -> TextSink {
        let out = TextSink()
        switch format {
        case .text: text(out)
        case .json: json(out)
        case .sarif: sarif(out)
        case .junit: junit(out)
        case .markdown: markdown(out)
        case .html: out.write(HTMLReport.render(audits: audits, generator: toolName + " " + toolVersion))
        }
        return out
    }

    /// Findings by severity (unsuppressed) and suppressed.
    public struct Counts: Sendable {
        public var error = 0, warning = 0, note = 0, suppressed = 0

        public init() {}

        init(_ findings: [Finding]) { add(findings) }

        public mutating func add(_ findings: [Finding]) {
            for f in findings {
                if f.suppressed { suppressed += 1; continue }
                switch f.severity {
                case .error: error += 1
                case .warning: warning += 1
                case .note: note += 1
                }
            }
        }

        public mutating func add(_ other: Counts) {
            error += other.error
            warning += other.warning
            note += other.note
            suppressed += other.suppressed
        }

        /// The most severe unsuppressed level present.
        public var worst: Severity? { error > 0 ? .error : warning > 0 ? .warning : note > 0 ? .note : nil }

        var summary: String {
            Say.plural(error, "error") + ", " + Say.plural(warning, "warning") + ", " + Say.plural(note, "note")
                + (suppressed > 0 ? ", " + String(suppressed) + " suppressed" : "")
        }
    }

    static func infos() -> [String: RuleInfo] {
        var m: [String: RuleInfo] = [:]
        for i in AuditRules.infos { m[i.id] = i }
        return m
    }

    /// The message with its subject, how often it occurred and what to change: one line for the
    /// formats that show a finding in one (SARIF, JUnit, markdown).
    static func summaryLine(_ f: Finding) -> String {
        var s = f.message + " (" + f.subject.deviceLabel + ")"
        if f.count > 1 { s += "; x" + String(f.count) + " in the capture" }
        if let a = f.advice { s += "; fix: " + a }
        return s
    }

    static func frames(_ f: Finding) -> String {
        f.evidence.map { String($0.number) }.joined(separator: ", ")
    }

    // MARK: text

    private func text(_ out: TextSink) {
        var total = Counts()
        for a in audits {
            out.write(Self.textSection(a, colour: colour))
            total.add(a.findings)
        }
        if audits.count > 1 { out.write(Self.textTotal(total)) }
    }

    /// One capture's part of the text report: its path and counts, then its findings grouped by
    /// subject in order of each subject's first finding. A directory audit writes each capture's as
    /// soon as it is audited, so the findings need not be kept.
    public static func textSection(_ a: CaptureAudit, colour: Bool) -> String {
        var text = ""
        textSection(a, colour: colour, chunk: .max) { text += $0 }
        return text
    }

    /// The same, handed to `write` in pieces of about `chunk` bytes, so a large report is never
    /// held whole. Written as bytes: a report can hold thousands of findings.
    public static func textSection(_ a: CaptureAudit, colour: Bool, chunk: Int, _ write: (String) -> Void) {
        var out = TextLine(capacity: min(chunk, 1 << 16) + 1024)
        func paint(_ s: String, _ code: String) { Self.paint(s, code, colour: colour, to: &out) }
        // The path, the error and the messages can quote input: escaped, our colour codes not.
        paint(DisplayText.escaped(a.path), "1")
        if let e = a.error {
            out.write(": ")
            paint("cannot audit: " + DisplayText.escaped(e), "31")
            out.write(byte: 0x0A)
            return write(out.string)
        }
        var counts = Counts()
        counts.add(a.findings)
        out.write(": " + counts.summary + "\n")
        out.write("  platform: ")
        writePlatform(a.platform, to: &out)
        out.write(byte: 0x0A)
        // Indices by device (rule findings about one peer over several connections go together),
        // in order of each device's first finding.
        var order: [String] = []
        var groups: [String: [Int]] = [:]
        for (i, f) in a.findings.enumerated() {
            let key = f.subject.fingerprintKey
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(i)
        }
        // The connections of a group or a finding, gathered into one list for every line.
        var ids: [Int] = []
        for key in order {
            let members = groups[key] ?? []
            out.write("  ")
            writeGroupLabel(members, of: a.findings, ids: &ids, to: &out)
            out.write(byte: 0x0A)
            for i in members {
                writeLine(a.findings[i], colour: colour, platform: a.platform.platform, ids: &ids, to: &out)
                if out.count >= chunk {
                    write(out.string)
                    out.clear()
                }
            }
        }
        func apart(_ list: [Finding], _ title: String, _ note: String) {
            guard !list.isEmpty else { return }
            out.write("  ")
            paint(title, "2")
            out.write(note)
            for f in list {
                out.write("    ")
                out.write(f.rule)
                out.write(byte: 0x20)
                out.write(f.ruleName)
                out.write(": ")
                out.write(f.message)
                writeCount(f, ids: &ids, to: &out)
                writeFrames(f, to: &out)
                out.write(byte: 0x0A)
                if let why = f.advice {
                    out.write("      ")
                    out.write(why)
                    out.write(byte: 0x0A)
                }
            }
        }
        apart(a.platformBehaviour, "platform behaviour",
              " (what " + a.platform.platform.title + " does whatever the app asks; not counted):\n")
        apart(a.otherApps, "other apps", " (scans and connections of other apps on the device; not counted):\n")
        writeAttributions(a.attributions, colour: colour, to: &out)
        if !a.nearby.isEmpty {
            var byAdvertiser: [String] = []
            var rules: [String: [String]] = [:]
            for f in a.nearby {
                let label = f.subject.label
                if rules[label] == nil { byAdvertiser.append(label) }
                if !(rules[label]?.contains(f.rule) ?? false) { rules[label, default: []].append(f.rule) }
            }
            out.write("  ")
            paint("nearby devices", "2")
            out.write(" (not under test: never connected to nor named by --device; --all-advertisers audits them):\n")
            for label in byAdvertiser.prefix(20) {
                out.write("    ")
                out.write(label)
                out.write(": ")
                out.write((rules[label] ?? []).joined(separator: ", "))
                out.write(byte: 0x0A)
            }
            if byAdvertiser.count > 20 { out.write("    ... and " + String(byAdvertiser.count - 20) + " more\n") }
        }
        if !out.isEmpty { write(out.string) }
    }

    /// "Android (Android vendor command ... at frame 12)", "unknown (every rule applies)".
    static func writePlatform(_ g: PlatformGuess, to out: inout TextLine) {
        if g.platform == .unknown {
            out.write("unknown (no evidence of a phone or computer stack: every rule applies; --platform sets it)")
            return
        }
        out.write(g.platform.rawValue)
        out.write(" (")
        out.write(g.evidence)
        if let f = g.frame {
            out.write(", frame ")
            out.write(f)
        }
        out.write(byte: 0x29)
    }

    /// A device's heading: "peer 83:40:09:7b:f0:68 (connections #1, #2)", "this host (adapter 0)".
    private static func writeGroupLabel(_ members: [Int], of findings: [Finding], ids: inout [Int], to out: inout TextLine) {
        guard let first = members.first else { return }
        let s = findings[first].subject
        guard s.kind == .connection, let address = s.identity ?? s.address else { return s.write(label: &out) }
        ids.removeAll(keepingCapacity: true)
        for i in members { findings[i].addConnections(to: &ids) }
        ids.sort()
        out.write("peer ")
        out.write(address)
        if s.identity != nil, let a = s.address, a != address {
            out.write(" (identity of ")
            out.write(a)
            out.write(byte: 0x29)
        }
        out.write(ids.count == 1 ? " (connection " : " (connections ")
        writeConnections(ids, to: &out)
        out.write(byte: 0x29)
    }

    /// "#1, #2, #5", shortened to the first and last few when long.
    private static func writeConnections(_ ids: [Int], to out: inout TextLine) {
        func connection(_ id: Int) {
            out.write(byte: UInt8(ascii: "#"))
            out.write(id)
        }
        guard ids.count > 8 else {
            for k in ids.indices {
                if k > 0 { out.write(", ") }
                connection(ids[k])
            }
            return
        }
        for k in 0..<5 {
            connection(ids[k])
            out.write(", ")
        }
        out.write("...")
        for k in ids.count - 2..<ids.count {
            out.write(", ")
            connection(ids[k])
        }
    }

    /// " (x12: connections #1, ..., #16)" when the capture shows a finding more than once.
    /// Whose each scan and connection was judged to be, where any evidence told: the app's are
    /// judged, the others' reported apart. Configuration's `devices:` corrects it.
    static let attributionsShown = 30

    private static func writeAttributions(_ list: [Attribution], colour: Bool, to out: inout TextLine) {
        guard list.contains(where: { $0.owner.kind != .unknown }) else { return }
        out.write("  ")
        paint("who did what", "2", colour: colour, to: &out)
        out.write(" (judged only when the app's or unknown; `devices:` in .blesniff.yml names the app's devices):\n")
        for x in list.prefix(attributionsShown) {
            out.write("    ")
            out.write(x.label)
            out.write(" (frame ")
            out.write(x.frame.number)
            out.write("): ")
            out.write(x.owner.title)
            out.write(" - ")
            out.write(x.owner.reason)
            out.write(byte: 0x0A)
        }
        if list.count > attributionsShown { out.write("    ... and " + String(list.count - attributionsShown) + " more\n") }
    }

    private static func writeCount(_ f: borrowing Finding, ids: inout [Int], to out: inout TextLine) {
        guard f.count > 1 else { return }
        out.write(" (x")
        out.write(f.count)
        ids.removeAll(keepingCapacity: true)
        f.addConnections(to: &ids)
        ids.sort()
        if ids.count > 1 {
            out.write(": connections ")
            writeConnections(ids, to: &out)
        }
        out.write(byte: 0x29)
    }

    /// " [frames 233, 239]", with the last occurrence's after "last:" when there are several.
    private static func writeFrames(_ f: borrowing Finding, to out: inout TextLine) {
        out.write(f.evidence.count == 1 ? " [frame " : " [frames ")
        for j in f.evidence.indices {
            if j > 0 { out.write(", ") }
            out.write(f.evidence[j].number)
        }
        if let last = f.later.last {
            out.write(last.evidence.count == 1 ? "; last: frame " : "; last: frames ")
            for j in last.evidence.indices {
                if j > 0 { out.write(", ") }
                out.write(last.evidence[j].number)
            }
        }
        out.write(byte: 0x5D)
    }

    /// One finding's line, written from the finding in place (a copy costs a retain per string),
    /// and under it what to change on the platform.
    private static func writeLine(_ f: borrowing Finding, colour: Bool, platform: Platform, ids: inout [Int],
                                  to out: inout TextLine) {
        func paint(_ s: String, _ code: String) { Self.paint(s, code, colour: colour, to: &out) }
        out.write("    ")
        paint(paddedSeverity[f.severity.rawValue], f.suppressed ? "2" : f.severity == .error ? "31" : f.severity == .warning ? "33" : "36")
        out.write(byte: 0x20)
        out.write(f.rule)
        out.write(byte: 0x20)
        out.write(f.ruleName)
        out.write(": ")
        out.write(display: f.message)
        writeCount(f, ids: &ids, to: &out)
        writeFrames(f, to: &out)
        if f.suppressed { paint(" (baseline)", "2") }
        out.write(byte: 0x0A)
        if let advice = f.advice {
            out.write("            fix on " + platform.title + ": ")
            out.write(advice)
            out.write(byte: 0x0A)
        }
    }

    /// `s` in the colour of the SGR `code` when `colour` is on.
    private static func paint(_ s: String, _ code: String, colour: Bool, to out: inout TextLine) {
        guard colour else { return out.write(s) }
        out.write("\u{1B}[" + code + "m")
        out.write(s)
        out.write("\u{1B}[0m")
    }

    /// Severity names padded to one width, by raw value.
    private static let paddedSeverity = ["", "note   ", "warning", "error  "]

    /// The last line of a text report over several captures.
    public static func textTotal(_ counts: Counts) -> String { "total: " + counts.summary + "\n" }

    // MARK: json

    private func json(_ out: TextSink) {
        let js = JSONText.quoted
        let infos = Self.infos()
        var total: [Finding] = []
        out.write("{\"tool\":{\"name\":" + js(toolName) + ",\"version\":" + js(toolVersion) + "},\"captures\":[")
        for (i, a) in audits.enumerated() {
            total += a.findings
            if i > 0 { out.write(",") }
            out.write("{\"path\":" + js(a.path))
            if let e = a.error { out.write(",\"error\":" + js(e)) }
            let g = a.platform
            out.write(",\"platform\":{\"name\":" + js(g.platform.rawValue) + ",\"evidence\":" + js(g.evidence)
                      + (g.frame.map { ",\"frame\":" + String($0) } ?? "") + "}")
            for (key, list) in [("findings", a.findings), ("platform_behaviour", a.platformBehaviour),
                                ("other_apps", a.otherApps), ("nearby", a.nearby)] {
                out.write(",\"" + key + "\":[")
                for (j, f) in list.enumerated() {
                    if j > 0 { out.write(",") }
                    Self.writeJSON(f, guidance: infos[f.rule]?.guidance ?? "", to: &out.line)
                }
                out.write("]")
            }
            // Listed when some owner is known: on a capture with no evidence every entry says so.
            let attributions = a.attributions.contains { $0.owner.kind != .unknown } ? a.attributions : []
            out.write(",\"attribution\":[")
            for (j, x) in attributions.enumerated() {
                if j > 0 { out.write(",") }
                out.write(attributionJSON(x))
            }
            out.write("]}")
        }
        let c = Counts(total)
        out.write("],\"summary\":{\"errors\":" + String(c.error) + ",\"warnings\":" + String(c.warning) + ",\"notes\":"
                  + String(c.note) + ",\"suppressed\":" + String(c.suppressed) + "}}\n")
    }

    private func attributionJSON(_ x: Attribution) -> String {
        let js = JSONText.quoted
        var o = "{"
        switch x.subject {
        case .scan(let n, let adapter): o += "\"kind\":\"scan\",\"scan\":" + String(n) + ",\"adapter\":" + String(adapter)
        case .connection(let id, let peer):
            o += "\"kind\":\"connection\",\"connection\":" + String(id)
            if let p = peer { o += ",\"address\":\"" + p.description + "\"" }
        }
        return o + ",\"frame\":" + String(x.frame.number) + ",\"owner\":" + js(x.owner.kind.rawValue)
            + ",\"reason\":" + js(x.owner.reason) + "}"
    }

    private static func writeJSON(_ f: borrowing Finding, guidance: String, to o: inout TextLine) {
        o.write(plain: "{\"rule\":")
        o.write(jsonQuoted: f.rule)
        o.write(plain: ",\"name\":")
        o.write(jsonQuoted: f.ruleName)
        o.write(plain: ",\"severity\":")
        o.write(jsonQuoted: f.severity.name)
        writeJSON(f.message, f.subject, f.evidence, f.decisive, to: &o)
        o.write(plain: ",\"fingerprint\":")
        o.write(jsonQuoted: f.fingerprint)
        o.write(plain: f.suppressed ? ",\"suppressed\":true" : ",\"suppressed\":false")
        o.write(plain: f.actor == .host ? ",\"actor\":\"host\"" : ",\"actor\":\"peer\"")
        o.write(plain: ",\"count\":")
        o.write(f.count)
        if let a = f.advice {
            o.write(plain: ",\"advice\":")
            o.write(jsonQuoted: a)
        }
        if let w = f.owner {
            o.write(plain: ",\"owner\":")
            o.write(jsonQuoted: w.kind.rawValue)
        }
        // The first occurrence is the finding's own, then the later ones kept.
        o.write(plain: ",\"occurrences\":[{")
        writeJSON(f.message, f.subject, f.evidence, f.decisive, to: &o, first: true)
        o.write(byte: 0x7D)
        for x in f.later {
            o.write(plain: ",{")
            writeJSON(x.message, x.subject, x.evidence, x.decisive, to: &o, first: true)
            o.write(byte: 0x7D)
        }
        o.write(plain: "],\"guidance\":")
        o.write(jsonQuoted: guidance)
        o.write(byte: 0x7D)
    }

    /// `"message":...,"subject":{...},"frames":[...],"decisive":{...}`, after a comma unless `first`.
    private static func writeJSON(_ message: String, _ subject: FindingSubject, _ evidence: [FrameRef], _ decisive: FrameRef,
                                  to o: inout TextLine, first: Bool = false) {
        o.write(plain: first ? "\"message\":" : ",\"message\":")
        o.write(jsonQuoted: message)
        o.write(plain: ",\"subject\":")
        writeJSON(subject, to: &o)
        o.write(plain: ",\"frames\":[")
        for (k, e) in evidence.enumerated() {
            if k > 0 { o.write(byte: 0x2C) }
            writeJSON(e, to: &o)
        }
        o.write(plain: "],\"decisive\":")
        writeJSON(decisive, to: &o)
    }

    private static func writeJSON(_ s: FindingSubject, to o: inout TextLine) {
        o.write(plain: "{\"kind\":\"")
        o.write(plain: s.kind.rawValue)
        o.write(plain: "\",\"label\":")
        o.write(jsonQuotedBy: { s.write(label: &$0) })
        o.write(plain: ",\"adapter\":")
        o.write(s.adapter)
        // The members a subject has: numbers, and addresses as strings.
        func member(_ key: String, _ n: Int?) {
            guard let n else { return }
            o.write(plain: key)
            o.write(n)
        }
        func member(_ key: String, _ a: BDAddr?) {
            guard let a else { return }
            o.write(plain: key)
            o.write(a)
            o.write(byte: 0x22)
        }
        member(",\"connection\":", s.connectionID)
        member(",\"handle\":", s.handle.map(Int.init))
        member(",\"address\":\"", s.address)
        member(",\"address_type\":", s.addressType.map(Int.init))
        member(",\"identity\":\"", s.identity)
        o.write(byte: 0x7D)
    }

    private static func writeJSON(_ f: FrameRef, to o: inout TextLine) {
        o.write(plain: "{\"number\":")
        o.write(f.number)
        o.write(plain: ",\"time\":")
        o.write(f.time)
        o.write(plain: ",\"offset\":")
        o.write(f.fileOffset)
        o.write(plain: ",\"length\":")
        o.write(f.fileLength)
        o.write(byte: 0x7D)
    }

    // MARK: SARIF 2.1.0

    private func sarif(_ out: TextSink) {
        let js = JSONText.quoted
        let infos = AuditRules.infos
        var index: [String: Int] = [:]
        for (i, r) in infos.enumerated() { index[r.id] = i }
        out.write("{\"$schema\":\"https://json.schemastore.org/sarif-2.1.0.json\",\"version\":\"2.1.0\",\"runs\":[{")
        out.write("\"tool\":{\"driver\":{\"name\":" + js(toolName) + ",\"version\":" + js(toolVersion)
                  + ",\"informationUri\":" + js(informationURI) + ",\"rules\":[")
        for (i, r) in infos.enumerated() {
            if i > 0 { out.write(",") }
            var help = r.help + "\n\nGuidance: " + r.guidance
            if !r.notAFinding.isEmpty { help += "\nNot a finding: " + r.notAFinding }
            if !r.options.isEmpty { help += "\nDefaults: " + r.thresholds() }
            out.write("{\"id\":" + js(r.id) + ",\"name\":" + js(r.name) + ",\"shortDescription\":{\"text\":" + js(r.summary)
                      + "},\"fullDescription\":{\"text\":" + js(r.help) + "},\"help\":{\"text\":" + js(help)
                      + "},\"defaultConfiguration\":{\"level\":" + js(r.severity.name) + "},\"properties\":{\"guidance\":"
                      + js(r.guidance) + "}}")
        }
        // Code scanning places a result by a URI relative to the repository (`%SRCROOT%`), not the
        // auditing machine's absolute path, and by a line: a capture has none, so line 1 with the
        // frame's bytes. Paths outside the root keep their file URI.
        let locations = audits.map { a -> String in
            guard let (path, underRoot) = sarifSourcePath?(a.path) else { return "\"uri\":" + js(Self.uri(a.path)) }
            return "\"uri\":" + js(Self.uri(path)) + (underRoot ? ",\"uriBaseId\":\"%SRCROOT%\"" : "")
        }
        out.write("]}},\"artifacts\":[")
        for (i, _) in audits.enumerated() {
            if i > 0 { out.write(",") }
            out.write("{\"location\":{" + locations[i] + "}}")
        }
        out.write("],\"results\":[")
        var first = true
        for (ai, a) in audits.enumerated() {
            for f in a.findings {
                if !first { out.write(",") }
                first = false
                out.write("{\"ruleId\":" + js(f.rule))
                if let i = index[f.rule] { out.write(",\"ruleIndex\":" + String(i)) }
                out.write(",\"level\":" + js(f.severity.name) + ",\"message\":{\"text\":" + js(Self.summaryLine(f)) + "}")
                let d = f.decisive
                out.write(",\"locations\":[{\"physicalLocation\":{\"artifactLocation\":{" + locations[ai]
                          + ",\"index\":" + String(ai) + "},\"region\":{\"startLine\":1,\"byteOffset\":" + String(max(0, d.fileOffset))
                          + ",\"byteLength\":" + String(max(0, d.fileLength)) + "}},\"logicalLocations\":[{\"name\":"
                          + js("frame " + String(d.number)) + ",\"kind\":\"element\"},{\"name\":" + js(f.subject.label)
                          + ",\"kind\":\"object\"}]}]")
                // The first occurrence's evidence, then each later occurrence's deciding frame.
                let related = f.evidence.filter { $0.number != d.number } + f.later.map(\.decisive)
                if !related.isEmpty {
                    out.write(",\"relatedLocations\":[")
                    for (k, r) in related.enumerated() {
                        if k > 0 { out.write(",") }
                        out.write("{\"id\":" + String(k + 1) + ",\"physicalLocation\":{\"artifactLocation\":{"
                                  + locations[ai] + ",\"index\":" + String(ai) + "},\"region\":{\"startLine\":1,\"byteOffset\":"
                                  + String(max(0, r.fileOffset)) + ",\"byteLength\":" + String(max(0, r.fileLength))
                                  + "}},\"message\":{\"text\":" + js("frame " + String(r.number)) + "}}")
                    }
                    out.write("]")
                }
                out.write(",\"partialFingerprints\":{\"blesniff/v1\":" + js(f.fingerprint) + "}")
                if f.suppressed {
                    out.write(",\"suppressions\":[{\"kind\":\"external\",\"status\":\"accepted\",\"justification\":\"in baseline\"}]")
                }
                out.write(",\"properties\":{\"frames\":[" + f.evidence.map { String($0.number) }.joined(separator: ",") + "]}}")
            }
        }
        out.write("]")
        // The platform each capture's findings were judged for, and why.
        out.write(",\"properties\":{\"platforms\":[")
        for (i, a) in audits.enumerated() {
            if i > 0 { out.write(",") }
            out.write("{\"capture\":" + js(a.path) + ",\"platform\":" + js(a.platform.platform.rawValue)
                      + ",\"evidence\":" + js(a.platform.evidence) + "}")
        }
        out.write("]}")
        let failed = audits.filter { $0.error != nil }
        if !failed.isEmpty {
            out.write(",\"invocations\":[{\"executionSuccessful\":false,\"toolExecutionNotifications\":[")
            for (i, a) in failed.enumerated() {
                if i > 0 { out.write(",") }
                out.write("{\"level\":\"error\",\"message\":{\"text\":" + js(a.path + ": " + (a.error ?? "")) + "}}")
            }
            out.write("]}]")
        }
        out.write("}]}\n")
    }

    /// A relative URI for relative paths (so reports are portable), a file URI for absolute ones.
    static func uri(_ path: String) -> String {
        var s = ""
        for b in path.utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                s.unicodeScalars.append(Unicode.Scalar(b))
            default:
                s += "%" + Hex.padded(b, width: 2)
            }
        }
        if s.hasPrefix("./") { s.removeFirst(2) }
        return path.hasPrefix("/") ? "file://" + s : s
    }

    // MARK: JUnit

    private func junit(_ out: TextSink) {
        let infos = Self.infos()
        let threshold = failOn.threshold
        var tests = 0, failures = 0, errors = 0
        var body = ""
        for a in audits {
            var suite = ""
            var sTests = 0, sFailures = 0, sErrors = 0
            if let e = a.error {
                sTests += 1
                sErrors += 1
                suite += "    <testcase classname=\"" + xml(a.path) + "\" name=\"read capture\">\n      <error message=\""
                    + xml(e) + "\" type=\"input\"/>\n    </testcase>\n"
            }
            for id in a.rules {
                let info = infos[id]
                let name = id + " " + (info?.name ?? "")
                let mine = a.findings.filter { $0.rule == id }
                let failing = mine.filter { f in !f.suppressed && threshold.map { f.severity >= $0 } == true }
                sTests += 1
                suite += "    <testcase classname=\"" + xml(a.path) + "\" name=\"" + xml(name) + "\""
                if mine.isEmpty {
                    suite += "/>\n"
                    continue
                }
                suite += ">\n"
                let lines = mine.map { f in
                    f.severity.name + " " + f.rule + ": " + Self.summaryLine(f) + " (frames "
                        + Self.frames(f) + "; fingerprint " + f.fingerprint + (f.suppressed ? "; baseline" : "") + ")"
                }.joined(separator: "\n")
                if let worst = failing.max(by: { $0.severity < $1.severity }) {
                    sFailures += 1
                    suite += "      <failure message=\"" + xml(Say.plural(failing.count, "finding") + ": " + (failing.first?.message ?? ""))
                        + "\" type=\"" + worst.severity.name + "\">" + xml(lines) + "</failure>\n"
                } else {
                    suite += "      <system-out>" + xml(lines) + "</system-out>\n"
                }
                suite += "    </testcase>\n"
            }
            tests += sTests
            failures += sFailures
            errors += sErrors
            body += "  <testsuite name=\"" + xml(a.path) + "\" tests=\"" + String(sTests) + "\" failures=\"" + String(sFailures)
                + "\" errors=\"" + String(sErrors) + "\" skipped=\"0\">\n" + suite + "  </testsuite>\n"
        }
        out.write("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"blesniff audit\" tests=\"" + String(tests)
                  + "\" failures=\"" + String(failures) + "\" errors=\"" + String(errors) + "\">\n")
        out.write(body)
        out.write("</testsuites>\n")
    }

    /// Markup escaping is HTML's and XML's alike (`HTMLWriter.escape`).
    private func xml(_ s: String) -> String { HTMLWriter.escape(s) }

    // MARK: Markdown

    private func markdown(_ out: TextSink) {
        var all: [Finding] = []
        out.write("## blesniff audit\n\n| Capture | Errors | Warnings | Notes | Suppressed |\n|---|---:|---:|---:|---:|\n")
        for a in audits {
            all += a.findings
            if let e = a.error {
                out.write("| `" + md(a.path) + "` | unreadable: " + md(e) + " | | | |\n")
                continue
            }
            let c = Counts(a.findings)
            out.write("| `" + md(a.path) + "` | " + String(c.error) + " | " + String(c.warning) + " | " + String(c.note)
                      + " | " + String(c.suppressed) + " |\n")
        }
        let c = Counts(all)
        if audits.count > 1 {
            out.write("| **total** | **" + String(c.error) + "** | **" + String(c.warning) + "** | **" + String(c.note)
                      + "** | **" + String(c.suppressed) + "** |\n")
        }
        out.write("\n")
        for a in audits where a.error == nil {
            var line = TextLine(capacity: 128)
            Self.writePlatform(a.platform, to: &line)
            var extra = ""
            if !a.platformBehaviour.isEmpty {
                extra += "; " + Say.plural(a.platformBehaviour.count, "platform behaviour") + " not counted ("
                    + Set(a.platformBehaviour.map(\.rule)).sorted().joined(separator: ", ") + ")"
            }
            if !a.otherApps.isEmpty {
                extra += "; " + Say.plural(a.otherApps.count, "other app's doing", "other apps' doings") + " not counted ("
                    + Set(a.otherApps.map(\.rule)).sorted().joined(separator: ", ") + ")"
            }
            if !a.nearby.isEmpty {
                extra += "; " + Say.plural(Set(a.nearby.map { $0.subject.fingerprintKey }).count, "nearby advertiser")
                    + " not under test"
            }
            out.write("- `" + md(a.path) + "`: platform " + md(line.string) + md(extra) + "\n")
        }
        guard !all.isEmpty else {
            out.write(audits.contains { $0.error != nil } ? "\nNo findings in the captures that could be read.\n" : "\nNo findings.\n")
            return
        }
        out.write("\n| Severity | Rule | Capture | Where | Frames | Finding |\n|---|---|---|---|---|---|\n")
        for a in audits {
            for f in a.findings {
                let icon = f.suppressed ? "suppressed" : f.severity == .error ? ":x: error" : f.severity == .warning ? ":warning: warning" : ":information_source: note"
                out.write("| " + icon + " | " + f.rule + " " + f.ruleName + " | `" + md(a.path) + "` | " + md(f.subject.deviceLabel)
                          + " | " + Self.frames(f) + " | " + md(f.message + (f.count > 1 ? " (x" + String(f.count) + ")" : "")
                                                                   + (f.advice.map { "; fix: " + $0 } ?? "")) + " |\n")
            }
        }
    }

    /// A markdown table cell: `DisplayText`'s rule plus `|` and backticks (cells sit in code spans).
    private func md(_ s: String) -> String { DisplayText.escaped(s, .markdown) }
}

/// Collects a report's text as bytes, handed to the output as they are (or made one String for
/// `render`): JSON's findings are written into it piece by piece, where Strings joined for each
/// occurrence made several allocations each.
final class TextSink {
    var line = TextLine(capacity: 1 << 16)
    func write(_ s: String) { line.write(plain: s) }
    var text: String { line.string }
}
