import Decoders

public enum DiffFormat: String, CaseIterable, Sendable {
    case text, markdown, json

    /// "12", "1.5", "0.333": at most three decimals, no trailing zeros.
    public static func number(_ v: Double) -> String {
        if v == v.rounded(), abs(v) < 1e15 { return String(Int64(v)) }
        var s = String(Int64((abs(v) * 1000).rounded()))
        while s.count < 4 { s = "0" + s }
        var frac = String(s.suffix(3))
        while frac.hasSuffix("0") { frac.removeLast() }
        let whole = String(s.dropLast(3))
        return (v < 0 ? "-" : "") + whole + (frac.isEmpty ? "" : "." + frac)
    }

    /// A duration in nanoseconds: "850 µs", "12.5 ms", "3.21 s".
    static func duration(_ ns: Double) -> String {
        let a = abs(ns)
        if a >= 1e9 { return number((ns / 1e7).rounded() / 100) + " s" }
        if a >= 1e6 { return number((ns / 1e5).rounded() / 10) + " ms" }
        if a == 0 { return "0" }
        return number((ns / 1e3).rounded()) + " µs"
    }

    static func value(_ v: Double?, _ text: String?, _ unit: DiffRow.Unit) -> String {
        if unit == .text { return text ?? "-" }
        guard let v else { return "-" }
        switch unit {
        case .duration: return duration(v)
        case .bytes: return number(v) + " B"
        case .microcoulombs: return number((v * 10).rounded() / 10) + " µC"
        case .bitsPerSecond: return LinkReport.rate(v)
        case .percent: return number((v * 10).rounded() / 10) + "%"
        case .milliseconds: return number(v)
        default: return number(v)
        }
    }

    static func change(_ r: DiffRow) -> String {
        if r.verdict == .same { return "=" }
        guard r.unit != .text, let a = r.base, let b = r.new else { return "changed" }
        let delta = b - a
        var s = (delta >= 0 ? "+" : "-") + value(abs(delta), nil, r.unit == .percent ? .count : r.unit)
        if r.unit == .percent { s += " pt" }
        if a != 0, r.unit != .percent { s += " (" + (delta >= 0 ? "+" : "-") + number((abs(delta) / abs(a) * 100).rounded()) + "%)" }
        return s
    }

    static func verdictWord(_ v: DiffRow.Verdict) -> String {
        switch v {
        case .regression: return "REGRESSION"
        case .worse: return "worse"
        case .better: return "better"
        default: return ""
        }
    }
}

/// The diff report in each format. Values quoting the capture (finding messages, subjects) are
/// escaped for the output they go to.
public struct DiffReport: Sendable {
    public var diffs: [CaptureDiff]
    /// Captures of a directory pair with no counterpart, by side.
    public var onlyInBase: [String] = []
    public var onlyInNew: [String] = []
    /// Text: leave out the metrics that did not change (markdown folds them away, JSON keeps all).
    public var changesOnly = false
    public var colour = false

    public init(diffs: [CaptureDiff], onlyInBase: [String] = [], onlyInNew: [String] = []) {
        self.diffs = diffs
        self.onlyInBase = onlyInBase
        self.onlyInNew = onlyInNew
    }

    public var regressions: Int { diffs.reduce(0) { $0 + $1.regressions } }

    public func render(_ format: DiffFormat) -> String {
        switch format {
        case .text: return text()
        case .markdown: return markdown()
        case .json: return json()
        }
    }

    static let estimateNote = "Radio times are estimates: scanning as time x window / interval; connections as one empty "
        + "exchange per connection event plus each PDU's air time at the PHY's rate (see README, Diff)."

    // MARK: Text

    private func paint(_ s: String, _ v: DiffRow.Verdict) -> String {
        guard colour else { return s }
        switch v {
        case .regression: return "\u{1B}[1;31m" + s + "\u{1B}[0m"
        case .worse: return "\u{1B}[31m" + s + "\u{1B}[0m"
        case .better: return "\u{1B}[32m" + s + "\u{1B}[0m"
        default: return s
        }
    }

    private func pad(_ s: String, _ w: Int) -> String { s + String(repeating: " ", count: max(0, w - s.count)) }

    func text() -> String {
        var out = ""
        for d in diffs {
            out += "blesniff diff " + DisplayText.escaped(d.base) + " -> " + DisplayText.escaped(d.new) + "\n"
            let rows = d.rows.filter { !changesOnly || $0.changed }
            let header = ["SECTION", "SUBJECT", "METRIC", "BASE", "NEW", "CHANGE"]
            var cells: [[String]] = []
            var lastSubject = ""
            for r in rows {
                let subject = r.subject == lastSubject ? "" : r.subject
                lastSubject = r.subject
                cells.append([r.section, subject, r.metric, DiffFormat.value(r.base, r.baseText, r.unit),
                              DiffFormat.value(r.new, r.newText, r.unit), DiffFormat.change(r)])
            }
            var widths = header.map(\.count)
            for c in cells { for (i, s) in c.enumerated() { widths[i] = max(widths[i], s.count) } }
            var head = header.enumerated().map { pad($0.element, widths[$0.offset]) }.joined(separator: "  ")
            while head.hasSuffix(" ") { head.removeLast() }
            out += head + "\n"
            for (c, r) in zip(cells, rows) {
                var line = (0..<5).map { pad(c[$0], widths[$0]) }.joined(separator: "  ") + "  "
                let word = DiffFormat.verdictWord(r.verdict)
                line += paint(word.isEmpty ? c[5] : pad(c[5], widths[5]) + "  " + word, r.verdict)
                while line.hasSuffix(" ") { line.removeLast() }
                out += line + "\n"
            }
            out += findingsText(d)
            out += "\(d.regressions) regression(s), \(d.worse) worse, \(d.better) better\n\n"
        }
        for p in onlyInBase { out += "only in base: " + DisplayText.escaped(p) + "\n" }
        for p in onlyInNew { out += "only in new: " + DisplayText.escaped(p) + "\n" }
        out += Self.estimateNote + "\n"
        return out
    }

    private func findingsText(_ d: CaptureDiff) -> String {
        var out = ""
        for f in d.added {
            out += paint("+ finding " + f.rule + " " + f.severity + ": " + DisplayText.escaped(f.message.replacingNewlines()),
                         d.findingsRegression ? .regression : .worse) + "\n"
        }
        for f in d.resolved {
            out += paint("- finding " + f.rule + " " + f.severity + ": " + DisplayText.escaped(f.message.replacingNewlines()), .better) + "\n"
        }
        if d.added.isEmpty && d.resolved.isEmpty { out += "findings: no change\n" }
        return out
    }

    // MARK: Markdown

    private static func md(_ s: String) -> String {
        var out = ""
        for ch in DisplayText.escaped(s.replacingNewlines()) {
            switch ch {
            case "|", "\\", "`", "*", "_", "<", ">", "[", "]": out += "\\" + String(ch)
            default: out.append(ch)
            }
        }
        return out
    }

    private static func mark(_ v: DiffRow.Verdict) -> String {
        switch v {
        case .regression: return "🔴 regression"
        case .worse: return "🟠 worse"
        case .better: return "🟢 better"
        case .changed: return "changed"
        case .same: return ""
        }
    }

    func markdown() -> String {
        var out = "## blesniff diff\n\n"
        let r = regressions
        out += r == 0 ? "No regression.\n\n" : "**\(r) regression(s).**\n\n"
        for d in diffs {
            out += "### `" + Self.md(d.base) + "` → `" + Self.md(d.new) + "`\n\n"
            out += "\(d.regressions) regression(s), \(d.worse) worse, \(d.better) better.\n\n"
            let changed = d.rows.filter { $0.changed }
            let same = d.rows.filter { !$0.changed }
            if changed.isEmpty { out += "No metric changed.\n\n" } else { out += table(changed) }
            if !d.added.isEmpty || !d.resolved.isEmpty {
                out += "**Findings**\n\n"
                for f in d.added { out += "- " + (d.findingsRegression ? "🔴" : "🟠") + " new " + f.rule + " (" + f.severity + "): " + Self.md(f.message) + "\n" }
                for f in d.resolved { out += "- 🟢 resolved " + f.rule + " (" + f.severity + "): " + Self.md(f.message) + "\n" }
                out += "\n"
            } else {
                out += "No finding added or resolved.\n\n"
            }
            if !same.isEmpty {
                out += "<details><summary>\(same.count) unchanged metric(s)</summary>\n\n" + table(same) + "</details>\n\n"
            }
        }
        for p in onlyInBase { out += "- only in base: `" + Self.md(p) + "`\n" }
        for p in onlyInNew { out += "- only in new: `" + Self.md(p) + "`\n" }
        if !onlyInBase.isEmpty || !onlyInNew.isEmpty { out += "\n" }
        out += "_" + Self.estimateNote + "_\n"
        return out
    }

    private func table(_ rows: [DiffRow]) -> String {
        var out = "| Subject | Metric | Base | New | Change | |\n|---|---|---:|---:|---:|---|\n"
        for r in rows {
            out += "| " + Self.md(r.subject) + " | " + Self.md(r.metric) + " | " + Self.md(DiffFormat.value(r.base, r.baseText, r.unit))
                + " | " + Self.md(DiffFormat.value(r.new, r.newText, r.unit)) + " | " + Self.md(DiffFormat.change(r)) + " | "
                + Self.mark(r.verdict) + " |\n"
        }
        return out + "\n"
    }

    // MARK: JSON

    private static func j(_ s: String) -> String { JSONText.quoted(s) }

    private static func j(_ v: Double?) -> String { v.map { DiffFormat.number($0) } ?? "null" }

    private static func j(_ f: FindingSummary) -> String {
        "{\"rule\":" + j(f.rule) + ",\"severity\":" + j(f.severity) + ",\"fingerprint\":" + j(f.fingerprint)
            + ",\"subject\":" + j(f.subject) + ",\"message\":" + j(f.message) + "}"
    }

    func json() -> String {
        var out = "{\"regressions\":\(regressions),\"pairs\":["
        for (i, d) in diffs.enumerated() {
            if i > 0 { out += "," }
            out += "{\"base\":" + Self.j(d.base) + ",\"new\":" + Self.j(d.new) + ",\"regressions\":\(d.regressions),\"rows\":["
            for (k, r) in d.rows.enumerated() {
                if k > 0 { out += "," }
                out += "{\"section\":" + Self.j(r.section) + ",\"subject\":" + Self.j(r.subject) + ",\"metric\":" + Self.j(r.metric)
                out += ",\"key\":" + (r.key.map { Self.j($0) } ?? "null") + ",\"unit\":" + Self.j(r.unit.rawValue)
                if r.unit == .text {
                    out += ",\"base\":" + (r.baseText.map { Self.j($0) } ?? "null") + ",\"new\":" + (r.newText.map { Self.j($0) } ?? "null")
                } else {
                    out += ",\"base\":" + Self.j(r.base) + ",\"new\":" + Self.j(r.new)
                }
                out += ",\"verdict\":" + Self.j(r.verdict.rawValue) + ",\"estimate\":" + (r.estimate ? "true" : "false") + "}"
            }
            out += "],\"findings\":{\"added\":[" + d.added.map(Self.j).joined(separator: ",") + "],\"resolved\":["
                + d.resolved.map(Self.j).joined(separator: ",") + "],\"regression\":" + (d.findingsRegression ? "true" : "false") + "}}"
        }
        out += "],\"only_in_base\":[" + onlyInBase.map { Self.j($0) }.joined(separator: ",") + "],\"only_in_new\":["
            + onlyInNew.map { Self.j($0) }.joined(separator: ",") + "]}\n"
        return out
    }
}
