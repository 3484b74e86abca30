import Decoders

/// The inline SVG charts: the capture timeline, RSSI over time and the advertising interval
/// histogram. Every chart draws from bins, so its size does not grow with the frame count.
enum HTMLCharts {
    // MARK: Timeline

    static let width = 1100.0
    static let gutter = 150.0
    static let plot = width - gutter - 26

    /// At most this many connection lanes, connections and flags are drawn; the rest are counted.
    static let maxLanes = 16
    static let maxConnectionsDrawn = 400

    /// The capture timeline: frames, scanning, advertising, advertising reports, connections
    /// with their ATT marks, findings as flags, and a time axis.
    static func timeline(_ c: ReportCollector, id: String, into w: inout HTMLWriter) {
        let origin = c.firstTime ?? 0
        let span = Double(max(c.duration, 1_000_000))
        func x(_ t: Int64) -> Double {
            let off = t.subtractingReportingOverflow(origin)
            let o = off.overflow ? 0 : max(0, Double(off.partialValue))
            return gutter + plot * min(o, span) / span
        }
        func px(_ ns: Int64) -> Double { plot * Double(max(ns, 0)) / span }

        var body = ""
        var y = 8.0
        func label(_ s: String, _ yy: Double, cls: String = "lbl") {
            body += "<text class=\"" + cls + "\" x=\"" + Show.x(gutter - 8) + "\" y=\"" + Show.x(yy) + "\" text-anchor=\"end\">"
            body += HTMLWriter.escape(s) + "</text>"
        }

        // Density rows: one path of bars per row.
        func bars(_ bins: TimeBins<Int>?, title: String, cls: String, height: Double) {
            guard let b = bins else { return }
            let peak = b.usedBins.max() ?? 0
            let bw = max(px(b.width), 0.6)
            var d = ""
            for (i, n) in b.usedBins.enumerated() where n > 0 {
                let h = max(1.5, height * Double(n) / Double(max(peak, 1)))
                d += "M" + Show.x(x(origin &+ b.start(i))) + " " + Show.x(y + height) + "v-" + Show.x(h) + "h" + Show.x(bw) + "v" + Show.x(h) + "z"
            }
            body += "<g class=\"" + cls + "\"><title>" + HTMLWriter.escape(title) + "</title>"
            body += "<rect class=\"lane\" x=\"" + Show.x(gutter) + "\" y=\"" + Show.x(y) + "\" width=\"" + Show.x(plot)
                + "\" height=\"" + Show.x(height) + "\"/>"
            if !d.isEmpty { body += "<path d=\"" + d + "\"/>" }
            body += "</g>"
        }

        // Coverage rows: bins mostly covered are drawn solid, partly covered ones light.
        func coverage(_ bins: TimeBins<Int64>?, title: String, cls: String, height: Double) {
            guard let b = bins else { return }
            var solid = "", light = ""
            let bw = max(px(b.width), 0.6)
            for (i, v) in b.usedBins.enumerated() where v > 0 {
                let r = "M" + Show.x(x(origin &+ b.start(i))) + " " + Show.x(y) + "h" + Show.x(bw) + "v" + Show.x(height) + "h-" + Show.x(bw) + "z"
                if v * 2 >= b.width { solid += r } else { light += r }
            }
            body += "<g class=\"" + cls + "\"><title>" + HTMLWriter.escape(title) + "</title>"
            body += "<rect class=\"lane\" x=\"" + Show.x(gutter) + "\" y=\"" + Show.x(y) + "\" width=\"" + Show.x(plot)
                + "\" height=\"" + Show.x(height) + "\"/>"
            if !solid.isEmpty { body += "<path d=\"" + solid + "\"/>" }
            if !light.isEmpty { body += "<path class=\"part\" d=\"" + light + "\"/>" }
            body += "</g>"
        }

        if c.hasFrames {
            label("Frames", y + 15)
            bars(c.frameBins, title: "Frames: " + Show.count(c.frames), cls: "r-frames", height: 22)
            y += 30
            label("Scanning", y + 11)
            coverage(c.scanBins, title: "Scanning: " + Show.plural(c.scanPeriods, "period"), cls: "r-scan", height: 14)
            y += 22
            if c.advertisingPeriods > 0 {
                label("Advertising", y + 11)
                coverage(c.advertisingBins, title: "This host advertising: " + Show.plural(c.advertisingPeriods, "period"),
                         cls: "r-adv", height: 14)
                y += 22
            }
            if c.advertisingReports > 0 {
                label("Adv. reports", y + 15)
                bars(c.reportBins, title: "Advertising reports: " + Show.count(c.advertisingReports), cls: "r-reports", height: 22)
                y += 30
            }
        }

        // Connections in lanes: a connection goes in the first lane free at its start.
        let conns = c.trackedConnections.sorted { $0.start < $1.start }
        var laneEnds: [Int64] = []
        var notDrawn = 0
        var placed: [(ConnectionTrack, Int)] = []
        for t in conns {
            guard placed.count < maxConnectionsDrawn else { notDrawn += 1; continue }
            if let l = laneEnds.firstIndex(where: { $0 < t.start }) {
                laneEnds[l] = t.endOrLast
                placed.append((t, l))
            } else if laneEnds.count < maxLanes {
                laneEnds.append(t.endOrLast)
                placed.append((t, laneEnds.count - 1))
            } else {
                notDrawn += 1
            }
        }
        notDrawn += c.connectionsNotTracked
        let laneHeight = 24.0
        if !placed.isEmpty {
            label("Connections", y + 14)
            for (t, lane) in placed {
                let top = y + Double(lane) * laneHeight
                let x0 = x(t.start), x1 = max(x(t.endOrLast), x0 + 2)
                let cid = t.connection.id
                body += "<g class=\"conn\"><title>" + HTMLWriter.escape(connectionTitle(t, origin: origin)) + "</title>"
                body += "<a href=\"#" + id + "-conn-" + String(cid) + "\"><rect class=\"bar" + (t.end == nil ? " open" : "")
                    + "\" x=\"" + Show.x(x0) + "\" y=\"" + Show.x(top) + "\" width=\"" + Show.x(x1 - x0)
                    + "\" height=\"20\" rx=\"3\"/></a>"
                // Marks: one row of ticks per kind inside the bar.
                var paths = ["", "", "", ""]
                let bw = max(px(t.marks.width), 1)
                for (i, m) in t.marks.usedBins.enumerated() where m.total > 0 {
                    let mx = Show.x(x(t.marks.origin &+ t.marks.start(i)))
                    let counts = [m.discovery, m.reads, m.writes, m.notifications]
                    for k in 0..<4 where counts[k] > 0 {
                        paths[k] += "M" + mx + " " + Show.x(top + 2 + Double(k) * 4) + "h" + Show.x(bw) + "v4h-" + Show.x(bw) + "z"
                    }
                }
                for (k, cls) in ["m-disc", "m-read", "m-write", "m-notify"].enumerated() where !paths[k].isEmpty {
                    body += "<path class=\"" + cls + "\" d=\"" + paths[k] + "\"/>"
                }
                if let e = t.encryptedAt {
                    body += "<circle class=\"m-enc\" cx=\"" + Show.x(x(e.time)) + "\" cy=\"" + Show.x(top + 20)
                        + "\" r=\"3\"><title>Encrypted (frame " + String(e.frame) + ")</title></circle>"
                }
                if x1 - x0 > 70 {
                    body += "<text class=\"clbl\" x=\"" + Show.x(x0 + 4) + "\" y=\"" + Show.x(top + 14) + "\">#" + String(cid) + "</text>"
                }
                body += "</g>"
            }
            y += Double(laneEnds.count) * laneHeight + 4
        }
        if notDrawn > 0 {
            body += "<text class=\"lbl note\" x=\"" + Show.x(gutter) + "\" y=\"" + Show.x(y + 10) + "\">"
                + Show.count(notDrawn) + " more connections not drawn</text>"
            y += 16
        }

        // Findings: a flag at the deciding frame over a line under the evidence. Findings that
        // fall in the same narrow column share one flag, so any number of findings stays readable;
        // neighbouring flags are staggered over three rows.
        if !c.findings.isEmpty {
            label("Findings", y + 16)
            var lastX = [-100.0, -100.0, -100.0]
            for group in flagGroups(c) {
                guard let first = group.first else { continue }
                let members = group.map { c.findings[$0] }
                let fx = x(members[0].decisive.time)
                var row = 0
                while row < 2, fx - lastX[row] < 14 { row += 1 }
                lastX[row] = fx
                let top = y + Double(row) * 11
                let e0 = members.map { x($0.firstFrame.time) }.min() ?? fx
                let e1 = members.map { x($0.evidence.last?.time ?? $0.decisive.time) }.max() ?? fx
                let worst = members.map(\.severity).max() ?? .note
                let title = members.count == 1 ? flagTitle(members[0])
                    : Show.count(members.count) + " findings\n" + members.prefix(6).map { $0.rule + " " + $0.message }.joined(separator: "\n")
                        + (members.count > 6 ? "\n…" : "")
                body += "<a href=\"#" + id + "-find-" + String(first) + "\"><g class=\"flag sev-" + worst.name + "\" id=\"" + id
                    + "-fl-" + String(first) + "\"><title>" + HTMLWriter.escape(title) + "</title>"
                body += "<line class=\"ev\" x1=\"" + Show.x(e0) + "\" x2=\"" + Show.x(max(e1, e0 + 1)) + "\" y1=\"" + Show.x(y + 34)
                    + "\" y2=\"" + Show.x(y + 34) + "\"/>"
                body += "<line class=\"pole\" x1=\"" + Show.x(fx) + "\" x2=\"" + Show.x(fx) + "\" y1=\"" + Show.x(top) + "\" y2=\"" + Show.x(y + 34) + "\"/>"
                body += "<path d=\"M" + Show.x(fx) + " " + Show.x(top) + "h9l-3 4l3 4h-9z\"/>"
                if members.count > 1 {
                    body += "<text class=\"fcount\" x=\"" + Show.x(fx + 11) + "\" y=\"" + Show.x(top + 8) + "\">" + String(members.count) + "</text>"
                }
                body += "</g></a>"
            }
            y += 40
        }

        // Time axis.
        let axisY = y + 4
        body += "<line class=\"axis\" x1=\"" + Show.x(gutter) + "\" x2=\"" + Show.x(gutter + plot) + "\" y1=\"" + Show.x(axisY)
            + "\" y2=\"" + Show.x(axisY) + "\"/>"
        let step = niceStep(Int64(span) / 8)
        var t: Int64 = 0
        while Double(t) <= span, step > 0 {
            let tx = gutter + plot * Double(t) / span
            body += "<line class=\"tick\" x1=\"" + Show.x(tx) + "\" x2=\"" + Show.x(tx) + "\" y1=\"" + Show.x(axisY) + "\" y2=\""
                + Show.x(axisY + 4) + "\"/><line class=\"grid\" x1=\"" + Show.x(tx) + "\" x2=\"" + Show.x(tx) + "\" y1=\"4\" y2=\""
                + Show.x(axisY) + "\"/>"
            body += "<text class=\"tlbl\" x=\"" + Show.x(tx) + "\" y=\"" + Show.x(axisY + 16) + "\" text-anchor=\"middle\">"
                + HTMLWriter.escape(axisLabel(t, step: step)) + "</text>"
            let (next, o) = t.addingReportingOverflow(step)
            if o { break }
            t = next
        }
        let height = axisY + 24
        body += "<line class=\"cursor\" id=\"" + id + "-cursor\" x1=\"0\" x2=\"0\" y1=\"2\" y2=\"" + Show.x(axisY) + "\"/>"
        body += "<text class=\"cursor-label\" id=\"" + id + "-cursor-label\" x=\"0\" y=\"" + Show.x(axisY - 4) + "\"> </text>"

        w.raw("<svg class=\"timeline\" id=\"" + id + "-timeline\" viewBox=\"0 0 " + Show.x(width) + " " + Show.x(height)
              + "\" role=\"img\" aria-label=\"Capture timeline\" data-l=\"" + Show.x(gutter) + "\" data-p=\"" + Show.x(plot)
              + "\" data-span=\"" + Show.attrSeconds(Int64(span)) + "\">")
        w.raw(body)
        w.raw("</svg>")
    }

    /// Width of the timeline column whose findings share one flag.
    static let flagColumn = 10.0

    /// Indexes of the findings (in report order) grouped by the column of their deciding frame,
    /// columns left to right. A finding's flag id is that of its group's first finding.
    static func flagGroups(_ c: ReportCollector) -> [[Int]] {
        let origin = c.firstTime ?? 0
        let span = Double(max(c.duration, 1_000_000))
        var columns: [Int: [Int]] = [:]
        for (i, f) in c.findings.enumerated() {
            let off = f.decisive.time.subtractingReportingOverflow(origin)
            let o = off.overflow ? 0 : min(max(0, Double(off.partialValue)), span)
            columns[Int(plot * o / span / flagColumn), default: []].append(i)
        }
        return columns.keys.sorted().compactMap { columns[$0] }
    }

    /// The flag id of each finding.
    static func flagOwners(_ c: ReportCollector) -> [Int] {
        var owner = Array(repeating: 0, count: c.findings.count)
        for g in flagGroups(c) { for i in g { owner[i] = g.first ?? i } }
        return owner
    }

    static func connectionTitle(_ t: ConnectionTrack, origin: Int64) -> String {
        let c = t.connection
        var s = "Connection " + c.label + "\n" + Show.seconds(t.start &- origin) + " – "
        s += t.end.map { Show.seconds($0 &- origin) } ?? "end of capture"
        s += " (" + Show.duration(t.endOrLast &- t.start) + ")"
        let m = t.totals
        s += "\nDiscovery " + String(m.discovery) + ", reads " + String(m.reads) + ", writes " + String(m.writes)
            + ", notifications/indications " + String(m.notifications)
        return s
    }

    static func flagTitle(_ f: Finding) -> String {
        var s = f.rule + " " + f.ruleName + " (" + f.severity.name + ")\n" + f.message + "\n" + f.subject.label + "\nframes "
        let frames = f.evidence.prefix(20).map { String($0.number) }
        s += frames.joined(separator: ", ") + (f.evidence.count > 20 ? ", …" : "")
        return s
    }

    /// Minute and hour steps that read well on a clock.
    static let clockSteps: [Int64] = [60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400].map { $0 * 1_000_000_000 }

    /// A step of at least `raw` ns: 1, 2 or 5 times a power of ten below a minute, clock steps above.
    static func niceStep(_ raw: Int64) -> Int64 {
        if raw > 50_000_000_000 {
            if let s = clockSteps.first(where: { $0 >= raw }) { return s }
            let day: Int64 = 86_400_000_000_000
            return (raw / day + 1).multipliedReportingOverflow(by: day).overflow ? Int64.max / 2 : (raw / day + 1) * day
        }
        var p: Int64 = 1
        while true {
            for m: Int64 in [1, 2, 5] where p * m >= raw { return p * m }
            p *= 10
        }
    }

    static func axisLabel(_ t: Int64, step: Int64) -> String {
        if step < 1_000_000_000 && t < 1_000_000_000 { return FieldRendering.decimal(Double(t) / 1e6) + " ms" }
        if step < 60_000_000_000 { return FieldRendering.decimal(Double(t) / 1e9) + " s" }
        let minutes = t / 60_000_000_000
        if step < 3_600_000_000_000 { return String(minutes) + " min" }
        let h = minutes / 60, m = minutes % 60
        return m == 0 ? String(h) + " h" : String(h) + " h " + String(m) + " min"
    }

    // MARK: Device charts

    static let smallWidth = 380.0
    static let smallHeight = 150.0

    /// RSSI over time: the mean per bin as a line, the range per bin as a band.
    static func rssi(_ d: DeviceTrack, origin: Int64, into w: inout HTMLWriter) {
        let used = d.rssi.usedBins.enumerated().filter { $0.element.count > 0 }
        guard !used.isEmpty else {
            w.raw("<p class=\"muted\">No RSSI reported.</p>")
            return
        }
        // At least 12 dB tall, so a steady signal reads as steady.
        var lo = Int(used.map { $0.element.min }.min() ?? -100) - 3
        var hi = Int(used.map { $0.element.max }.max() ?? 0) + 3
        if hi - lo < 12 {
            let mid = (lo + hi) / 2
            lo = mid - 6
            hi = mid + 6
        }
        let left = 44.0, right = smallWidth - 10, top = 10.0, bottom = smallHeight - 26
        let spanNs = max(Double(d.rssi.start(d.rssi.used)), 1)
        func x(_ i: Int, _ half: Bool = true) -> Double {
            left + (right - left) * (Double(d.rssi.start(i)) + (half ? Double(d.rssi.width) / 2 : 0)) / spanNs
        }
        func y(_ v: Double) -> Double { bottom - (bottom - top) * (v - Double(lo)) / Double(max(hi - lo, 1)) }
        var line = "", upper: [String] = [], lower: [String] = []
        for (i, b) in used {
            let p = Show.x(x(i)) + "," + Show.x(y(b.mean))
            line += (line.isEmpty ? "" : " ") + p
            upper.append(Show.x(x(i)) + "," + Show.x(y(Double(b.max))))
            lower.append(Show.x(x(i)) + "," + Show.x(y(Double(b.min))))
        }
        w.raw("<svg class=\"chart\" viewBox=\"0 0 " + Show.x(smallWidth) + " " + Show.x(smallHeight) + "\" role=\"img\" aria-label=\"RSSI over time\">")
        w.raw("<title>RSSI (dBm) over time: mean and range per " + HTMLWriter.escape(Show.duration(d.rssi.width)) + "</title>")
        for v in [lo, (lo + hi) / 2, hi] {
            w.raw("<line class=\"grid\" x1=\"" + Show.x(left) + "\" x2=\"" + Show.x(right) + "\" y1=\"" + Show.x(y(Double(v)))
                  + "\" y2=\"" + Show.x(y(Double(v))) + "\"/>")
            w.raw("<text class=\"tlbl\" x=\"" + Show.x(left - 4) + "\" y=\"" + Show.x(y(Double(v)) + 4) + "\" text-anchor=\"end\">"
                  + String(v) + "</text>")
        }
        if used.count > 1 {
            w.raw("<polygon class=\"band\" points=\"" + (upper + lower.reversed()).joined(separator: " ") + "\"/>")
            w.raw("<polyline class=\"line\" points=\"" + line + "\"/>")
        }
        for (i, b) in used where used.count <= 40 {
            w.raw("<circle class=\"dot\" cx=\"" + Show.x(x(i)) + "\" cy=\"" + Show.x(y(b.mean)) + "\" r=\"2.5\"><title>"
                  + FieldRendering.decimal((b.mean * 10).rounded() / 10) + " dBm (" + String(b.count) + " reports)</title></circle>")
        }
        let t0 = d.activity.firstSeen &- origin
        w.raw("<text class=\"tlbl\" x=\"" + Show.x(left) + "\" y=\"" + Show.x(smallHeight - 8) + "\">"
              + HTMLWriter.escape(Show.seconds(t0)) + "</text>")
        w.raw("<text class=\"tlbl\" x=\"" + Show.x(right) + "\" y=\"" + Show.x(smallHeight - 8) + "\" text-anchor=\"end\">"
              + HTMLWriter.escape(Show.seconds(t0 &+ Int64(spanNs))) + "</text>")
        w.raw("<text class=\"tlbl\" x=\"" + Show.x((left + right) / 2) + "\" y=\"" + Show.x(smallHeight - 8)
              + "\" text-anchor=\"middle\">RSSI dBm</text>")
        w.raw("</svg>")
    }

    /// Gaps between advertising reports, in fixed buckets.
    static func intervals(_ d: DeviceTrack, into w: inout HTMLWriter) {
        let total = d.gaps.reduce(0, &+)
        guard total > 0 else {
            w.raw("<p class=\"muted\">Fewer than two advertising reports: no interval.</p>")
            return
        }
        let peak = d.gaps.max() ?? 1
        let left = 10.0, right = smallWidth - 10, top = 14.0, bottom = smallHeight - 30
        let n = d.gaps.count
        let bw = (right - left) / Double(n)
        w.raw("<svg class=\"chart\" viewBox=\"0 0 " + Show.x(smallWidth) + " " + Show.x(smallHeight)
              + "\" role=\"img\" aria-label=\"Advertising interval histogram\">")
        w.raw("<title>Gaps between advertising reports (ms)</title>")
        for (i, v) in d.gaps.enumerated() {
            let bx = left + Double(i) * bw
            let lowEdge = i == 0 ? "0" : String(DeviceTrack.gapEdges[i - 1])
            let range = i < DeviceTrack.gapEdges.count ? lowEdge + "–" + String(DeviceTrack.gapEdges[i]) + " ms" : "≥ " + lowEdge + " ms"
            if v > 0 {
                let h = max(1, (bottom - top) * Double(v) / Double(peak))
                w.raw("<rect class=\"hbar\" x=\"" + Show.x(bx + 1) + "\" y=\"" + Show.x(bottom - h) + "\" width=\"" + Show.x(bw - 2)
                      + "\" height=\"" + Show.x(h) + "\"><title>" + range + ": " + String(v) + "</title></rect>")
                w.raw("<text class=\"vlbl\" x=\"" + Show.x(bx + bw / 2) + "\" y=\"" + Show.x(bottom - h - 3)
                      + "\" text-anchor=\"middle\">" + String(v) + "</text>")
            }
            let edge = i < DeviceTrack.gapEdges.count ? shortMs(DeviceTrack.gapEdges[i]) : "+"
            w.raw("<text class=\"tlbl\" x=\"" + Show.x(bx + bw / 2) + "\" y=\"" + Show.x(bottom + 12) + "\" text-anchor=\"middle\">"
                  + edge + "</text>")
        }
        w.raw("<line class=\"axis\" x1=\"" + Show.x(left) + "\" x2=\"" + Show.x(right) + "\" y1=\"" + Show.x(bottom) + "\" y2=\""
              + Show.x(bottom) + "\"/>")
        w.raw("<text class=\"tlbl\" x=\"" + Show.x((left + right) / 2) + "\" y=\"" + Show.x(smallHeight - 4)
              + "\" text-anchor=\"middle\">gap between advertising reports, up to (ms)</text>")
        w.raw("</svg>")
    }

    // MARK: Links

    /// Value octets per second over the connection, from its first value on.
    static func throughput(_ l: LinkSummary, into w: inout HTMLWriter) {
        guard let (width, bins) = l.throughput, let peak = bins.max(), peak > 0 else { return }
        let perSecond = bins.map { Double($0) / Double(width) }
        let top = perSecond.max() ?? 1
        let left = 10.0, right = smallWidth - 10, upper = 18.0, bottom = smallHeight - 30
        let bw = (right - left) / Double(bins.count)
        let per = width == 1 ? "per second" : "per " + String(width) + " s, averaged"
        w.raw("<svg class=\"chart\" viewBox=\"0 0 " + Show.x(smallWidth) + " " + Show.x(smallHeight)
              + "\" role=\"img\" aria-label=\"Throughput over time\">")
        w.raw("<title>Value bytes per second over the connection (" + per + ")</title>")
        for (i, v) in perSecond.enumerated() where v > 0 {
            let h = max(1, (bottom - upper) * v / top)
            let from = i * width
            w.raw("<rect class=\"hbar\" x=\"" + Show.x(left + Double(i) * bw) + "\" y=\"" + Show.x(bottom - h) + "\" width=\""
                  + Show.x(max(bw - (bins.count > 60 ? 0 : 1), 0.6)) + "\" height=\"" + Show.x(h) + "\"><title>"
                  + HTMLWriter.escape(String(from) + "–" + String(from + width) + " s: " + Show.plural(bins[i], "value byte") + ", "
                                    + LinkReport.rate(v * 8)) + "</title></rect>")
        }
        w.raw("<line class=\"axis\" x1=\"" + Show.x(left) + "\" x2=\"" + Show.x(right) + "\" y1=\"" + Show.x(bottom) + "\" y2=\""
              + Show.x(bottom) + "\"/>")
        w.raw("<text class=\"tlbl\" x=\"" + Show.x(left) + "\" y=\"" + Show.x(upper - 6) + "\">"
              + HTMLWriter.escape("peak " + LinkReport.rate(top * 8)) + "</text>")
        w.raw("<text class=\"tlbl\" x=\"" + Show.x(left) + "\" y=\"" + Show.x(bottom + 12) + "\">0 s</text>")
        w.raw("<text class=\"tlbl\" x=\"" + Show.x(right) + "\" y=\"" + Show.x(bottom + 12) + "\" text-anchor=\"end\">"
              + String(bins.count * width) + " s</text>")
        w.raw("<text class=\"tlbl\" x=\"" + Show.x((left + right) / 2) + "\" y=\"" + Show.x(smallHeight - 4)
              + "\" text-anchor=\"middle\">value throughput after the first value</text>")
        w.raw("</svg>")
    }

    /// Request → response times of every ATT operation, in doubling bins.
    static func latencies(_ l: LinkSummary, into w: inout HTMLWriter) {
        let counts = l.latencyHistogram
        guard let peak = counts.max(), peak > 0 else { return }
        let edges = LinkSummary.latencyEdges
        let left = 10.0, right = smallWidth - 10, top = 14.0, bottom = smallHeight - 30
        let bw = (right - left) / Double(counts.count)
        func ms(_ ns: Int64) -> String { FieldRendering.decimal(Double(ns) / 1e6) }
        w.raw("<svg class=\"chart\" viewBox=\"0 0 " + Show.x(smallWidth) + " " + Show.x(smallHeight)
              + "\" role=\"img\" aria-label=\"ATT latency histogram\">")
        w.raw("<title>Request to response time of ATT operations (ms)</title>")
        for (i, v) in counts.enumerated() {
            let bx = left + Double(i) * bw
            if v > 0 {
                let range = i == edges.count ? "> " + ms(edges[i - 1]) + " ms" : (i == 0 ? "0" : ms(edges[i - 1])) + "–" + ms(edges[i]) + " ms"
                let h = max(1, (bottom - top) * Double(v) / Double(peak))
                w.raw("<rect class=\"hbar\" x=\"" + Show.x(bx + 1) + "\" y=\"" + Show.x(bottom - h) + "\" width=\"" + Show.x(bw - 2)
                      + "\" height=\"" + Show.x(h) + "\"><title>" + range + ": " + String(v) + "</title></rect>")
                w.raw("<text class=\"vlbl\" x=\"" + Show.x(bx + bw / 2) + "\" y=\"" + Show.x(bottom - h - 3)
                      + "\" text-anchor=\"middle\">" + String(v) + "</text>")
            }
            w.raw("<text class=\"tlbl\" x=\"" + Show.x(bx + bw / 2) + "\" y=\"" + Show.x(bottom + 12) + "\" text-anchor=\"middle\">"
                  + (i < edges.count ? (edges[i] >= 1_000_000_000 ? shortMs(edges[i] / 1_000_000) : ms(edges[i])) : "+") + "</text>")
        }
        w.raw("<line class=\"axis\" x1=\"" + Show.x(left) + "\" x2=\"" + Show.x(right) + "\" y1=\"" + Show.x(bottom) + "\" y2=\""
              + Show.x(bottom) + "\"/>")
        w.raw("<text class=\"tlbl\" x=\"" + Show.x((left + right) / 2) + "\" y=\"" + Show.x(smallHeight - 4)
              + "\" text-anchor=\"middle\">ATT request to response, up to (ms)</text>")
        w.raw("</svg>")
    }

    static func shortMs(_ ms: Int64) -> String {
        ms >= 1000 ? FieldRendering.decimal(Double(ms) / 1000) + "k" : String(ms)
    }
}
