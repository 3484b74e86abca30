import Decoders
import Wire

/// Builds an HTML document as one string. Everything that came from a capture goes through
/// `text` or `attr`, which escape it; `raw` is for the page's own markup only.
struct HTMLWriter {
    private(set) var html = ""

    init(capacity: Int = 1 << 16) { html.reserveCapacity(capacity) }

    mutating func raw(_ s: String) { html += s }

    /// Text content, escaped.
    mutating func text(_ s: String) { HTMLWriter.escape(s, into: &html) }

    /// `<tag class="cls">text</tag>`, the text escaped.
    mutating func element(_ tag: String, _ s: String, cls: String? = nil) {
        html += "<" + tag
        if let cls { html += " class=\"" + cls + "\"" }
        html += ">"
        text(s)
        html += "</" + tag + ">"
    }

    /// A table row of escaped cells.
    mutating func row(_ cells: [String], header: Bool = false) {
        html += "<tr>"
        for c in cells { element(header ? "th" : "td", c) }
        html += "</tr>"
    }

    /// A key/value row: the key in a `th`, the value escaped.
    mutating func pair(_ key: String, _ value: String) {
        html += "<tr><th>"
        text(key)
        html += "</th><td>"
        text(value)
        html += "</td></tr>"
    }

    static func escape(_ s: String) -> String {
        var out = ""
        escape(s, into: &out)
        return out
    }

    /// Escapes for text and double- or single-quoted attributes alike. Control characters, which
    /// HTML and XML forbid, become U+FFFD.
    static func escape(_ s: String, into out: inout String) {
        var plain = true
        for u in s.utf8 where u < 0x20 || u == 0x26 || u == 0x3C || u == 0x3E || u == 0x22 || u == 0x27 || u == 0x7F {
            plain = false
            break
        }
        if plain {
            out += s
            return
        }
        for u in s.unicodeScalars {
            switch u {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\n", "\t": out.unicodeScalars.append(u)
            default:
                if u.value < 0x20 || u.value == 0x7F || (0x80...0x9F).contains(u.value) || u.value == 0xFFFE || u.value == 0xFFFF {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
    }

    /// An attribute value, escaped and quoted: ` name="value"`.
    static func attr(_ name: String, _ value: String) -> String { " " + name + "=\"" + escape(value) + "\"" }
}

/// Number formatting for the page.
enum Show {
    /// Seconds with up to three decimals: "12.345 s".
    static func seconds(_ ns: Int64) -> String { FieldRendering.decimal(Double(ns) / 1e9) + " s" }

    /// A duration in the unit that reads best: "850 µs", "12.5 ms", "3.2 s", "4 min 5 s".
    static func duration(_ ns: Int64) -> String {
        let a = ns.magnitude
        if a < 1_000_000 { return FieldRendering.decimal(Double(ns) / 1e3) + " µs" }
        if a < 1_000_000_000 { return FieldRendering.decimal((Double(ns) / 1e5).rounded() / 10) + " ms" }
        if a < 120_000_000_000 { return FieldRendering.decimal((Double(ns) / 1e8).rounded() / 10) + " s" }
        let s = Int64(a / 1_000_000_000)
        if s < 7200 { return String(s / 60) + " min " + String(s % 60) + " s" }
        return String(s / 3600) + " h " + String(s % 3600 / 60) + " min"
    }

    /// Bytes per second: "1.2 kB/s".
    static func rate(_ bytes: Int, over ns: Int64) -> String {
        guard ns > 0 else { return "—" }
        let r = Double(bytes) / (Double(ns) / 1e9)
        if r >= 1e6 { return FieldRendering.decimal((r / 1e5).rounded() / 10) + " MB/s" }
        if r >= 1e3 { return FieldRendering.decimal((r / 1e2).rounded() / 10) + " kB/s" }
        return FieldRendering.decimal(r.rounded()) + " B/s"
    }

    /// Thousands separated by a thin space: "12 345".
    static func count(_ n: Int) -> String {
        let s = String(n.magnitude)
        var out = n < 0 ? "-" : ""
        for (i, c) in s.enumerated() {
            if i > 0, (s.count - i) % 3 == 0 { out += "\u{2009}" }
            out.append(c)
        }
        return out
    }

    static func plural(_ n: Int, _ one: String, _ many: String? = nil) -> String {
        count(n) + " " + (n == 1 ? one : (many ?? one + "s"))
    }

    /// A coordinate with at most one decimal, for SVG.
    static func x(_ v: Double) -> String {
        guard v.isFinite else { return "0" }
        let t = (v * 10).rounded()
        guard abs(t) < 1e12 else { return "0" }
        let i = Int64(t)
        return i % 10 == 0 ? String(i / 10) : String(Double(i) / 10)
    }

    /// Seconds for a data attribute: plain decimal, microsecond precision.
    static func attrSeconds(_ ns: Int64) -> String {
        let neg = ns < 0
        let us = (ns.magnitude + 500) / 1000
        var frac = String(us % 1_000_000)
        frac = String(repeating: "0", count: 6 - frac.count) + frac
        return (neg ? "-" : "") + String(us / 1_000_000) + "." + frac
    }

    static func address(_ a: BDAddr, type: UInt8?) -> String {
        var s = a.description
        switch type {
        case 0?, 2?: s += " (public)"
        case 1?, 3?: s += " (" + (type == 3 ? "random identity" : a.randomKind.rawValue) + ")"
        default: break
        }
        return s
    }
}
