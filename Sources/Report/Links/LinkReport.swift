import Decoders
import Wire

/// `blesniff links`: per connection, the verdict first (what it achieved, what it could, what
/// limits it), then its parameters over time, what it carried, its latencies and its set-up.
public enum LinkReport {
    /// "1.40 Mbit/s", "305 kbit/s", "96 bit/s".
    static func rate(_ bps: Double) -> String {
        if bps >= 1e6 { return String(format2(bps / 1e6)) + " Mbit/s" }
        if bps >= 1e3 { return String(Int((bps / 1e3).rounded())) + " kbit/s" }
        return String(Int(bps.rounded())) + " bit/s"
    }

    static func format2(_ x: Double) -> String {
        let hundredths = Int((x * 100).rounded())
        let frac = hundredths % 100
        return String(hundredths / 100) + "." + (frac < 10 ? "0" : "") + String(frac)
    }

    /// Milliseconds with up to two decimals: "7.5", "30", "1.25".
    static func ms(_ ns: Int64) -> String {
        let hundredths = Int((Double(ns) / 10_000).rounded())
        var s = String(hundredths / 100)
        let frac = hundredths % 100
        if frac != 0 { s += "." + (frac % 10 == 0 ? String(frac / 10) : (frac < 10 ? "0" : "") + String(frac)) }
        return s
    }

    static let phyNames = [1: "LE 1M", 2: "LE 2M", 3: "LE Coded"]

    /// The verdict in one line: achieved, possible, and what limits it: the link's parameters when
    /// its busiest second came near what they allow, else the sender (the link had room).
    public static func verdict(_ s: LinkSummary) -> String {
        guard let kind = s.mainKind, let achieved = s.achievedBitsPerSecond else {
            return "no application data" + (s.firstData == nil ? "" : " rate (one value only)")
        }
        var line = kind.spaced + " at " + rate(achieved)
        guard let possible = s.possibleBitsPerSecond, let p = s.parameters, possible > 0 else { return line }
        let peak = max(s.peakBitsPerSecond ?? achieved, achieved)
        line += " (busiest second " + rate(peak) + ") of " + rate(possible) + " possible"
        let knobs = LinkCapacity.limits(p, acknowledged: s.acknowledged)
        if peak < possible * 0.5 {
            line += "; the link was not the limit (its busiest second used " + String(Int((peak / possible * 100).rounded()))
                + "%): the sender produced less than the link could carry"
            if let k = knobs.first { line += "; to carry more, " + k.name.spaced + " would allow up to " + rate(k.bitsPerSecond) }
        } else if let k = knobs.first {
            line += "; limited by " + k.name.spaced + ": " + k.advice + " (up to " + rate(k.bitsPerSecond) + ")"
        } else {
            line += "; at the most these parameters allow"
        }
        return line
    }

    /// The knob that limits the link when its busiest second came near what it allows.
    static func limit(_ s: LinkSummary) -> LinkCapacity.Knob? {
        guard s.mainKind != nil, let achieved = s.achievedBitsPerSecond, let possible = s.possibleBitsPerSecond,
              let p = s.parameters, max(s.peakBitsPerSecond ?? achieved, achieved) >= possible * 0.5 else { return nil }
        return LinkCapacity.limits(p, acknowledged: s.acknowledged).first
    }

    /// "peripheral 14.2 µA average (1.42 µC an event, 1,000 events; 0.34 mAh a day), central …".
    static func energy(_ e: LinkEnergy) -> String {
        func side(_ name: String, _ s: LinkEnergy.Side) -> String {
            name + " " + format2(e.averageMicroamps(s)) + " µA average (" + format2(s.microcoulombsPerEvent) + " µC an event, "
                + Say.plural(s.events, "event") + "; " + format2(e.milliampHoursPerDay(s)) + " mAh a day)"
        }
        return side("peripheral", e.peripheral) + ", " + side("central", e.central) + ", radio only, " + e.profile + " currents"
    }

    public static func text(_ links: [LinkSummary], advertising: [AdvertisingSummary] = [], file: String, dropped: Int,
                            profile: RadioProfile = RadioProfile.builtIn[0], to out: Output) {
        out.write(display: file)
        out.write(": " + Say.plural(links.count, "connection") + "\n")
        for s in links {
            var w = "  connection #" + String(s.id) + " (handle " + Hex.prefixed(s.handle, width: 4)
            if let p = s.peer { w += ", " + p.description }
            w += s.air != nil ? ", sniffed over the air" : s.central == true ? ", this host central" : s.central == false ? ", this host peripheral" : ""
            if let e = s.end { w += ", " + ms(e.time &- s.start.time) + " ms" }
            w += ")\n    verdict: " + verdict(s) + "\n"
            w += "    parameters: " + parameters(s) + "\n"
            let carried = ["notifications", "indications", "writes", "writes_without_response", "reads"]
                .compactMap { k in (s.bytes[k] ?? 0) > 0 ? k.spaced + " " + String(s.bytes[k]!) + " B" : nil }
            w += "    carried: " + (carried.isEmpty ? "no values" : carried.joined(separator: ", "))
            if let p = s.perSecond { w += "; per second min " + String(p.min) + " / median " + String(p.median) + " / max " + String(p.max) + " B" }
            w += "\n"
            if let a = s.air { w += "    air: " + air(a, s) + "\n" }
            if let p = s.packetsPerEvent {
                w += "    packets per event, estimated from Number of Completed Packets: median " + String(p.median) + ", max "
                    + String(p.max) + " over " + Say.plural(p.events, "event")
                w += p.limit.map { "; at most " + String($0) + " while more waited" } ?? "; nothing was left waiting"
                w += "\n"
            }
            if !s.latencies.isEmpty {
                let interval = s.intervals.last.map { Int64($0.value) * 1_250_000 }
                w += "    latency: " + s.latencies.map { l in
                    var t = l.name.spaced + " p50 " + ms(l.p50) + " / p95 " + ms(l.p95) + " / max "
                        + ms(l.max) + " ms"
                    if let i = interval, i > 0 { t += " (" + format2(Double(l.p50) / Double(i)) + " intervals)" }
                    return t + " ×" + String(l.count)
                }.joined(separator: "; ") + "\n"
            }
            if let e = s.energy(profile) { w += "    energy, estimated: " + energy(e) + "\n" }
            if !s.setup.isEmpty {
                w += "    set-up: " + s.setup.map { $0.name.spaced + " " + ms($0.after) + " ms (frame "
                    + String($0.frame) + ")" }.joined(separator: " → ") + "\n"
            }
            out.write(w)
        }
        if dropped > 0 { out.write("  " + Say.plural(dropped, "more connection") + " not followed (limit reached)\n") }
        for a in advertising { out.write(text(a, profile: profile)) }
    }

    /// "advertising on hci0: legacy, connectable and scannable, 3 channels, interval 100 ms, ..."
    static func text(_ a: AdvertisingSummary, profile: RadioProfile) -> String {
        let p = a.effectiveParameters
        let e = a.energy(profile)
        var w = "  advertising on hci" + String(a.adapter) + " (this host): "
        w += (p.legacy ? "legacy" : "extended, " + (phyNames[Int(p.primaryPHY)] ?? "?") + " then " + (phyNames[Int(p.secondaryPHY)] ?? "?"))
        w += p.connectable ? (p.scannable ? ", connectable and scannable" : ", connectable") : (p.scannable ? ", scannable" : ", not connectable")
        w += ", " + Say.plural(p.channels, "channel") + ", interval " + intervals(p)
        if a.parameters == nil { w += " (the controller's default: no parameters seen)" }
        w += ", " + String(a.dataOctets) + " B of data"
        if a.scanResponseOctets > 0 { w += " + " + String(a.scanResponseOctets) + " B scan response" }
        w += "\n    on " + format2(Double(a.onTime) / 1e9) + " s in " + Say.plural(a.periods, "period") + " (about " + Say.plural(e.events(in: a.onTime), "event") + ")"
        w += "\n    energy, estimated: " + format2(e.microcoulombsPerEvent) + " µC an event, " + microamps(e) + " µA average while on ("
            + format2(e.averageMicroamps(period: e.shortestPeriod) * 24 / 1000) + " mAh a day if always on), radio only, "
            + e.profile + " currents\n"
        return w
    }

    /// The interval range in ms ("100 ms", "100–150 ms").
    static func intervals(_ p: HostAdvertisingParameters) -> String {
        let lo = ms(Int64(p.intervalMin) * 625_000), hi = ms(Int64(p.intervalMax) * 625_000)
        return (lo == hi ? lo : lo + "–" + hi) + " ms"
    }

    /// The average current at the shortest interval, and at the longest when they differ.
    static func microamps(_ e: AdvertisingEnergy) -> String {
        let hi = format2(e.averageMicroamps(period: e.shortestPeriod)), lo = format2(e.averageMicroamps(period: e.longestPeriod))
        return hi == lo ? hi : lo + "–" + hi
    }

    /// "1,204 packets in 600 events (2.01 an event), 598 empty, 3 retransmitted (0.25%), 1 bad CRC;
    /// on air 97.2 ms (central 48.6, peripheral 48.6), 0.38% of the connection".
    static func air(_ a: LinkSummary.Air, _ s: LinkSummary) -> String {
        var line = Say.plural(a.packets, "packet") + " in " + Say.plural(a.events, "event")
        if a.events > 0 { line += " (" + format2(Double(a.packets) / Double(a.events)) + " an event)" }
        line += ", " + String(a.emptyPDUs) + " empty, " + String(a.retransmissions) + " retransmitted"
        if a.packets > 0 { line += " (" + format2(Double(a.retransmissions) * 100 / Double(a.packets)) + "%)" }
        line += ", " + String(a.badCRC) + " bad CRC"
        let total = a.centralMicroseconds &+ a.peripheralMicroseconds
        line += "; on air " + ms(total &* 1000) + " ms (central " + ms(a.centralMicroseconds &* 1000) + ", peripheral "
            + ms(a.peripheralMicroseconds &* 1000) + ")"
        if let e = s.end, e.time > s.start.time {
            line += ", " + format2(Double(total) * 1000 * 100 / Double(e.time &- s.start.time)) + "% of the connection"
        }
        let worst = a.worstChannels()
        if !worst.isEmpty {
            line += "; worst channels " + worst.map { c in
                String(c.channel) + " (" + String(c.badCRC) + " bad CRC, " + String(c.retransmissions) + " retransmitted of " + String(c.packets) + ")"
            }.joined(separator: ", ")
        }
        return line
    }

    /// "23 → 247 (frame 20)": the value a link starts with, then each change and its frame.
    static func changes(_ list: [LinkSummary.Change], from initial: Int, _ name: (Int) -> String) -> String {
        var parts = list.first?.value == initial ? [] : [name(initial)]
        parts += list.map { name($0.value) + " (frame " + String($0.frame) + ")" }
        return parts.joined(separator: " → ")
    }

    static func parameters(_ s: LinkSummary) -> String {
        var parts: [String] = []
        if s.intervals.isEmpty {
            parts.append("interval unknown")
        } else {
            parts.append("interval " + s.intervals.map { ms(Int64($0.value) * 1_250_000) + " ms (frame " + String($0.frame) + ")" }
                .joined(separator: " → "))
        }
        if let l = s.latency { parts.append("peripheral latency " + String(l)) }
        if let t = s.supervisionTimeout { parts.append("timeout " + ms(Int64(t) * 10_000_000) + " ms") }
        parts.append("PHY " + (s.phys.isEmpty ? "LE 1M (no update seen)" : changes(s.phys, from: 1) { phyNames[$0] ?? "?" }))
        parts.append("data length " + (s.dataLengths.isEmpty ? "27 (no change seen)" : changes(s.dataLengths, from: 27) { String($0) }))
        parts.append("ATT MTU " + (s.mtus.isEmpty ? "23" : changes(s.mtus, from: 23) { String($0) }))
        parts.append(s.encryptedFrame.map { "encrypted from frame " + String($0) } ?? "not encrypted")
        return parts.joined(separator: "; ")
    }

    public static func json(_ links: [LinkSummary], advertising: [AdvertisingSummary] = [], file: String,
                            profile: RadioProfile = RadioProfile.builtIn[0], to out: Output) {
        let js = JSONText.quoted
        var o = "{\"file\":" + js(file) + ",\"connections\":["
        for (i, s) in links.enumerated() {
            if i > 0 { o += "," }
            o += "{\"connection\":" + String(s.id) + ",\"handle\":" + String(s.handle)
            if let p = s.peer { o += ",\"address\":\"" + p.description + "\"" }
            if let c = s.central { o += ",\"central\":" + (c ? "true" : "false") }
            o += ",\"start_frame\":" + String(s.start.number)
            if let e = s.end { o += ",\"end_frame\":" + String(e.number) + ",\"duration_ms\":" + ms(e.time &- s.start.time) }
            o += ",\"interval_ms\":" + (s.intervals.first.map { ms(Int64($0.value) * 1_250_000) } ?? "null")
            o += ",\"intervals\":[" + s.intervals.map { "{\"frame\":" + String($0.frame) + ",\"ms\":" + ms(Int64($0.value) * 1_250_000) + "}" }
                .joined(separator: ",") + "]"
            if let l = s.latency { o += ",\"peripheral_latency\":" + String(l) }
            if let t = s.supervisionTimeout { o += ",\"supervision_timeout_ms\":" + String(Int(t) * 10) }
            o += ",\"phy\":" + js(phyNames[s.phys.last?.value ?? 1] ?? "?")
            o += ",\"data_length\":" + String(s.dataLengths.last?.value ?? 27)
            o += ",\"att_mtu\":" + String(s.mtus.last?.value ?? 23)
            // Each change with its frame (the values above are the last ones).
            o += ",\"phy_changes\":[" + s.phys.map { "{\"frame\":" + String($0.frame) + ",\"phy\":" + js(phyNames[$0.value] ?? "?") + "}" }
                .joined(separator: ",") + "]"
            for (key, list) in [("data_length_changes", s.dataLengths), ("att_mtu_changes", s.mtus)] {
                o += ",\"" + key + "\":[" + list.map { "{\"frame\":" + String($0.frame) + ",\"octets\":" + String($0.value) + "}" }
                    .joined(separator: ",") + "]"
            }
            o += ",\"encrypted_frame\":" + (s.encryptedFrame.map(String.init) ?? "null")
            o += ",\"bytes\":{" + ["notifications", "indications", "writes", "writes_without_response", "reads"]
                .map { "\"" + $0 + "\":" + String(s.bytes[$0] ?? 0) }.joined(separator: ",") + "}"
            o += ",\"throughput\":{\"achieved_bps\":" + (s.achievedBitsPerSecond.map { String(Int($0.rounded())) } ?? "null")
                + ",\"peak_bps\":" + (s.peakBitsPerSecond.map { String(Int($0.rounded())) } ?? "null")
                + ",\"possible_bps\":" + (s.possibleBitsPerSecond.map { String(Int($0.rounded())) } ?? "null")
            if let p = s.perSecond { o += ",\"per_second\":{\"min\":" + String(p.min) + ",\"median\":" + String(p.median) + ",\"max\":" + String(p.max) + "}" }
            if let t = s.throughput {
                o += ",\"series\":{\"seconds_per_bin\":" + String(t.secondsPerBin) + ",\"octets\":["
                    + t.octets.map(String.init).joined(separator: ",") + "]}"
            }
            o += "}"
            if let k = limit(s) {
                o += ",\"limit\":{\"knob\":" + js(k.name) + ",\"advice\":" + js(k.advice) + ",\"possible_bps\":"
                    + String(Int(k.bitsPerSecond.rounded())) + "}"
            } else {
                o += ",\"limit\":null"
            }
            o += ",\"latency\":[" + s.latencies.map {
                "{\"operation\":" + js($0.name) + ",\"count\":" + String($0.count) + ",\"p50_ms\":" + ms($0.p50) + ",\"p95_ms\":"
                    + ms($0.p95) + ",\"max_ms\":" + ms($0.max) + "}"
            }.joined(separator: ",") + "]"
            o += ",\"latency_histogram\":{\"edges_ms\":[" + LinkSummary.latencyEdges.map(ms).joined(separator: ",")
                + "],\"counts\":[" + s.latencyHistogram.map(String.init).joined(separator: ",") + "]}"
            o += ",\"setup\":[" + s.setup.map { "{\"step\":" + js($0.name) + ",\"frame\":" + String($0.frame) + ",\"after_ms\":" + ms($0.after) + "}" }
                .joined(separator: ",") + "]"
            if let p = s.packetsPerEvent {
                o += ",\"packets_per_event\":{\"estimated\":true,\"events\":" + String(p.events) + ",\"median\":" + String(p.median)
                    + ",\"max\":" + String(p.max) + ",\"limit\":" + (p.limit.map(String.init) ?? "null") + "}"
            }
            if let a = s.air {
                o += ",\"air\":{\"packets\":" + String(a.packets) + ",\"events\":" + String(a.events) + ",\"empty\":" + String(a.emptyPDUs)
                    + ",\"retransmissions\":" + String(a.retransmissions) + ",\"bad_crc\":" + String(a.badCRC)
                    + ",\"central_us\":" + String(a.centralMicroseconds) + ",\"peripheral_us\":" + String(a.peripheralMicroseconds)
                    + ",\"channels\":[" + a.channels.filter { $0.packets > 0 }.map {
                        "{\"channel\":" + String($0.channel) + ",\"packets\":" + String($0.packets) + ",\"retransmissions\":"
                            + String($0.retransmissions) + ",\"bad_crc\":" + String($0.badCRC) + "}"
                    }.joined(separator: ",") + "]}"
            }
            if let e = s.energy(profile) {
                func side(_ x: LinkEnergy.Side) -> String {
                    "{\"events\":" + String(x.events) + ",\"charge_uc\":" + format2(x.nanocoulombs / 1000) + ",\"uc_per_event\":"
                        + format2(x.microcoulombsPerEvent) + ",\"average_ua\":" + format2(e.averageMicroamps(x)) + ",\"mah_per_day\":"
                        + format2(e.milliampHoursPerDay(x)) + "}"
                }
                o += ",\"energy\":{\"profile\":" + js(e.profile) + ",\"source\":" + js(profile.source) + ",\"central\":" + side(e.central)
                    + ",\"peripheral\":" + side(e.peripheral) + "}}"
            } else {
                o += ",\"energy\":null}"
            }
        }
        o += "],\"advertising\":[" + advertising.map { json($0, profile: profile) }.joined(separator: ",")
        out.write(o + "]}\n")
    }

    static func json(_ a: AdvertisingSummary, profile: RadioProfile) -> String {
        let p = a.effectiveParameters
        let e = a.energy(profile)
        var o = "{\"adapter\":" + String(a.adapter) + ",\"parameters_seen\":" + (a.parameters != nil ? "true" : "false")
        o += ",\"legacy\":" + (p.legacy ? "true" : "false") + ",\"connectable\":" + (p.connectable ? "true" : "false")
        o += ",\"scannable\":" + (p.scannable ? "true" : "false") + ",\"channels\":" + String(p.channels)
        o += ",\"primary_phy\":" + JSONText.quoted(phyNames[Int(p.primaryPHY)] ?? "?")
        if !p.legacy { o += ",\"secondary_phy\":" + JSONText.quoted(phyNames[Int(p.secondaryPHY)] ?? "?") }
        o += ",\"interval_min_ms\":" + ms(Int64(p.intervalMin) * 625_000) + ",\"interval_max_ms\":" + ms(Int64(p.intervalMax) * 625_000)
        o += ",\"data_octets\":" + String(a.dataOctets) + ",\"scan_response_octets\":" + String(a.scanResponseOctets)
        o += ",\"first_frame\":" + String(a.firstFrame) + ",\"periods\":" + String(a.periods) + ",\"on_ms\":" + ms(a.onTime)
        o += ",\"events\":" + String(e.events(in: a.onTime))
        o += ",\"energy\":{\"profile\":" + JSONText.quoted(e.profile) + ",\"uc_per_event\":" + format2(e.microcoulombsPerEvent)
            + ",\"average_ua\":" + format2(e.averageMicroamps(period: e.shortestPeriod))
            + ",\"average_ua_longest_interval\":" + format2(e.averageMicroamps(period: e.longestPeriod))
            + ",\"mah_per_day\":" + format2(e.averageMicroamps(period: e.shortestPeriod) * 24 / 1000) + "}}"
        return o
    }
}

extension String {
    /// "writes_without_response" as words.
    fileprivate var spaced: String { String(map { $0 == "_" ? " " : $0 }) }
}
