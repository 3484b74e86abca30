#if canImport(Glibc)
import Glibc
#endif
import Decoders
import Wire

/// Prints decoded frames for `blesniff read`: a summary line, the full tree, or JSON Lines.
public final class FramePrinter {
    public enum Format: String, CaseIterable, Sendable {
        case text, json
    }

    /// How the text line shows a frame's time (tshark's `-t`): relative to the first frame,
    /// absolute time of day (local), with the date, since the epoch, since the previous captured
    /// or printed frame, or absolute in UTC.
    public enum TimeFormat: String, CaseIterable, Sendable {
        case r, a, ad, e, d, dd, u, ud
    }

    public let format: Format
    public let verbose: Bool
    public var timeFormat = TimeFormat.r
    /// Each frame's bytes after it, as tshark's `-x` prints them.
    public var hexDump = false
    let out: Output
    private var start = CaptureStart()
    /// Timestamps of the frame before the current one and of the last frame printed (`-t d`, `dd`).
    private var previousCaptured: Int64?, currentCaptured: Int64?, lastPrinted: Int64?
    /// JSON's summary is written here, then escaped into the output: one buffer for the whole capture.
    @exclusivity(unchecked) private var line = TextLine(capacity: 512)
    /// `read -v` writes each layer's fields as the decoders send them.
    private let fieldWriter: FieldRendering.TextWriter
    /// JSON gathers each layer's fields here; the storage serves every frame.
    private let fields = FieldList()

    public init(format: Format, verbose: Bool, output: Output) {
        self.format = format
        self.verbose = verbose
        out = output
        fieldWriter = FieldRendering.TextWriter(output, indent: 6)
        // `read -v` writes an advertising report's summary line, then the same summary as a field.
        output.keepsAdvertisingSummary = verbose && format == .text
    }

    /// Times are printed relative to the capture's start (`CaptureStart`), also when the first
    /// frames are skipped: called for every frame, printed or not.
    public func noteFrame(_ p: Packet) {
        _ = start.see(p)
        previousCaptured = currentCaptured
        currentCaptured = p.timestamp
    }

    /// Prints a frame (seeing it again is harmless: a frame moves the start only once).
    public func print(_ d: Decoded) {
        _ = start.see(d.packet)
        let relative = start.relative(d.packet.timestamp)
        switch format {
        case .text: text(d, relative: relative)
        case .json: json(d, relative: relative)
        }
    }

    private func text(_ d: Decoded, relative: Int64) {
        if timeFormat == .r, writeColumns(d.packet, seconds: relative) {
            lastPrinted = d.packet.timestamp
        } else {
            writeColumnsSpelledOut(d.packet, relative: relative)
        }
        // The line can quote a device (its name, a GATT string): escaped for the terminal.
        out.write(displayLine: { d.writeSummary(to: &$0) })
        if d.isMalformed { out.write(" [malformed]") }
        out.write(byte: 10)
        if verbose {
            d.writeLayers(to: fieldWriter) { name in
                out.write("    ")
                out.write(label: name)
                out.write(byte: 10)
            }
            out.forgetAdvertisingSummary()
        }
        if hexDump { Self.writeHexDump(Self.frameBytes(d.packet), to: out) }
    }

    /// The columns before the summary, "     7     0.012500 < hci0 ", for the common frame (number
    /// and time that fit their widths, an adapter index under 100), in one piece
    /// (`Output.write(frameColumns:...)`). False, with nothing written, for any other frame.
    @inline(__always)
    func writeColumns(_ p: Packet, seconds ns: Int64) -> Bool {
        let arrow = p.direction == .sent ? UInt8(ascii: "<") : p.direction == .received ? UInt8(ascii: ">") : UInt8(ascii: "*")
        return out.write(frameColumns: p.number, seconds: ns, arrow: arrow, adapter: p.adapter)
    }

    /// The columns before the summary in any time format, for any frame.
    func writeColumnsSpelledOut(_ p: Packet, relative: Int64) {
        out.write(int: Int64(p.number), width: 6)
        out.write(byte: 32)
        let t = p.timestamp
        switch timeFormat {
        case .r: out.write(seconds: relative, width: 12)
        case .d: out.write(seconds: previousCaptured.map { t &- $0 } ?? 0, width: 12)
        case .dd: out.write(seconds: lastPrinted.map { t &- $0 } ?? 0, width: 12)
        case .e: out.write(seconds: t, width: 17)
        case .a, .ad, .u, .ud: out.write(Self.clockTime(t, date: timeFormat == .ad || timeFormat == .ud, utc: timeFormat == .u || timeFormat == .ud))
        }
        lastPrinted = t
        out.write(byte: 32)
        out.write(p.direction.arrow)
        // The monitor's records about no controller (a management client opening) carry index 0xFFFF.
        if p.adapter == 0xFFFF { out.write(" -") } else {
            out.write(" hci")
            out.write(int: Int64(p.adapter))
        }
        out.write(byte: 32)
    }

    /// Time of day with microseconds (`12:00:00.000500`), after the date with `date`; local time
    /// unless `utc`.
    static func clockTime(_ ns: Int64, date: Bool, utc: Bool) -> String {
        var seconds = time_t(ns / 1_000_000_000)
        var micros = Int((ns % 1_000_000_000) / 1000)
        if micros < 0 { micros += 1_000_000; seconds -= 1 }
        var tm = tm()
        if utc { gmtime_r(&seconds, &tm) } else { localtime_r(&seconds, &tm) }
        func two(_ v: Int32) -> String { v < 10 ? "0" + String(v) : String(v) }
        let frac = String(micros)
        var s = two(tm.tm_hour) + ":" + two(tm.tm_min) + ":" + two(tm.tm_sec) + "." + String(repeating: "0", count: 6 - frac.count) + frac
        if date { s = String(tm.tm_year + 1900) + "-" + two(tm.tm_mon + 1) + "-" + two(tm.tm_mday) + " " + s }
        return s
    }

    /// The bytes tshark shows for a frame: an HCI packet with its H4 packet type before it, a
    /// monitor or sniffer record as it is.
    static func frameBytes(_ p: Packet) -> [UInt8] {
        if case .hci(let type) = p.kind { return [type.rawValue] + p.payload }
        return Array(p.payload)
    }

    /// tshark's `-x`: 16 bytes a line after a 4-digit offset, a gap after the eighth, then the
    /// bytes as ASCII ('.' for the rest); an empty line after the frame.
    static func writeHexDump(_ bytes: [UInt8], to out: Output) {
        var at = 0
        while at < bytes.count {
            let row = bytes[at..<min(at + 16, bytes.count)]
            var line = [UInt8](repeating: 32, count: 56)
            for k in 0..<4 { line[k] = Hex.lowerDigit(UInt8((at >> (12 - 4 * k)) & 0xF)) }
            for (k, b) in row.enumerated() {
                let col = 6 + 3 * k + (k >= 8 ? 1 : 0)
                line[col] = Hex.lowerDigit(b >> 4)
                line[col + 1] = Hex.lowerDigit(b & 0xF)
            }
            for (k, b) in row.enumerated() {
                if k == 8 { line.append(32) }
                line.append(b >= 0x20 && b < 0x7F ? b : UInt8(ascii: "."))
            }
            out.write(bytes: line)
            out.write(byte: 10)
            at += 16
        }
        out.write(byte: 10)
    }

    /// One object per frame; field names documented in the README.
    private func json(_ d: Decoded, relative: Int64) {
        out.write("{\"frame\":")
        out.write(int: Int64(d.packet.number))
        out.write(",\"timestamp_ns\":")
        out.write(int: d.packet.timestamp)
        out.write(",\"relative_time\":")
        out.write(seconds: relative)
        out.write(",\"direction\":\"")
        out.write(d.packet.direction == .sent ? "sent" : d.packet.direction == .received ? "received" : "unknown")
        out.write("\",\"adapter\":")
        out.write(int: Int64(d.packet.adapter))
        out.write(",\"kind\":\"")
        out.write(Self.kindName(d.packet.kind))
        out.write("\",\"file_offset\":")
        out.write(int: d.packet.fileOffset)
        out.write(",\"length\":")
        out.write(int: Int64(d.packet.payload.count))
        // Read in place: bound to a name, the connection was retained for the frame.
        if d.connection != nil {
            out.write(",\"connection\":")
            out.write(int: Int64(d.connection!.id))
        }
        out.write(",\"summary\":")
        line.clear()
        d.writeSummary(to: &line)
        out.write(jsonString: line)
        out.keepAdvertisingSummary(of: line)
        out.write(",\"layers\":{")
        // Each layer's fields are gathered (JSON groups siblings that share a key), then written
        // when the next layer starts. The state lives in the printer: locals a closure shares
        // would be boxed on the heap for every frame.
        jsonLayer = nil
        jsonLayersWritten = 0
        d.writeLayers(to: fields) { name in
            writeJSONLayer()
            jsonLayer = name
        }
        writeJSONLayer()
        out.forgetAdvertisingSummary()
        out.write(byte: UInt8(ascii: "}"))
        // Asked first: the reasons are an array, built only for a frame that has them.
        if d.isMalformed {
            let reasons = d.malformedReasons
            if !reasons.isEmpty {
                out.write(",\"malformed\":[")
                out.write(reasons.map(JSONText.quoted).joined(separator: ","))
                out.write(byte: UInt8(ascii: "]"))
            }
        }
        out.write("}\n")
    }

    /// The layer whose fields `fields` gathers, and how many layers this frame has written.
    private var jsonLayer: FieldLabel?
    private var jsonLayersWritten = 0

    private func writeJSONLayer() {
        defer {
            jsonLayer = nil
            fields.removeAll()
        }
        guard let name = jsonLayer, name != "Malformed" else { return }
        if jsonLayersWritten > 0 { out.write(byte: UInt8(ascii: ",")) }
        jsonLayersWritten += 1
        let key = out.keys.key(name)
        if !out.write(key: key) {
            FieldRendering.writeKey(name.string, to: out)
            out.write(byte: UInt8(ascii: ":"))
        }
        out.write(byte: UInt8(ascii: "{"))
        FieldRendering.writeJSONMembers(layerKey: key.hash, fields, to: out)
        out.write(byte: UInt8(ascii: "}"))
    }

    public static func kindName(_ k: PacketKind) -> String {
        switch k {
        case .hci(.command): return "command"
        case .hci(.event): return "event"
        case .hci(.aclData): return "acl"
        case .hci(.scoData): return "sco"
        case .hci(.isoData): return "iso"
        case .monitor: return "monitor"
        case .linkLayer: return "link_layer"
        case .unsupported: return "unsupported"
        case .unknownHCIType: return "unknown"
        case .truncatedHeader: return "truncated"
        }
    }
}
