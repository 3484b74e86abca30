import Decoders
import Wire

/// Prints decoded frames for `blesniff read`: a summary line, the full tree, or JSON Lines.
public final class FramePrinter {
    public enum Format: String, CaseIterable, Sendable {
        case text, json
    }

    public let format: Format
    public let verbose: Bool
    let out: Output
    private var start = CaptureStart()
    /// Each frame's summary is written here, then copied to the output: one buffer for the whole capture.
    @exclusivity(unchecked) private var line = TextLine(capacity: 512)
    /// JSON keys of the layer names met so far: a few names, each made into a key once.
    private var layerKeys: [(name: String, key: String)] = []
    /// `read -v` writes each layer's fields as the decoders send them.
    private let fieldWriter: FieldRendering.TextWriter
    /// JSON gathers each layer's fields here; the storage serves every frame.
    private let fields = FieldList()

    public init(format: Format, verbose: Bool, output: Output) {
        self.format = format
        self.verbose = verbose
        out = output
        fieldWriter = FieldRendering.TextWriter(output, indent: 6)
    }

    /// Times are printed relative to the capture's start (`CaptureStart`), also when the first
    /// frames are skipped: called for every frame, printed or not.
    public func noteFrame(_ p: Packet) {
        _ = start.see(p)
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
        out.write(int: Int64(d.packet.number), width: 6)
        out.write(byte: 32)
        out.write(seconds: relative, width: 12)
        out.write(byte: 32)
        out.write(d.packet.direction.arrow)
        out.write(" hci")
        out.write(int: Int64(d.packet.adapter))
        out.write(byte: 32)
        line.clear()
        d.writeSummary(to: &line)
        // The line can quote a device (its name, a GATT string): escaped for the terminal.
        out.write(display: line)
        if d.isMalformed { out.write(" [malformed]") }
        out.write(byte: 10)
        if verbose {
            d.writeLayers(to: fieldWriter) { name in
                out.write("    ")
                out.write(name)
                out.write(byte: 10)
            }
        }
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
        if let c = d.connection {
            out.write(",\"connection\":")
            out.write(int: Int64(c.id))
        }
        out.write(",\"summary\":")
        line.clear()
        d.writeSummary(to: &line)
        out.write(jsonString: line)
        out.write(",\"layers\":{")
        // Each layer's fields are gathered (JSON groups siblings that share a key), then written
        // when the next layer starts.
        var layer: String?
        var first = true
        func writeLayer() {
            defer {
                layer = nil
                fields.removeAll()
            }
            guard let name = layer, name != "Malformed" else { return }
            if !first { out.write(byte: UInt8(ascii: ",")) }
            first = false
            FieldRendering.writeKey(name, to: out)
            out.write(":{")
            FieldRendering.writeJSONMembers(layer: layerKey(name), fields, to: out)
            out.write(byte: UInt8(ascii: "}"))
        }
        d.writeLayers(to: fields) { name in
            writeLayer()
            layer = name
        }
        writeLayer()
        out.write(byte: UInt8(ascii: "}"))
        let reasons = d.malformedReasons
        if !reasons.isEmpty {
            out.write(",\"malformed\":[")
            out.write(reasons.map(FieldRendering.jsonString).joined(separator: ","))
            out.write(byte: UInt8(ascii: "]"))
        }
        out.write("}\n")
    }

    private func layerKey(_ name: String) -> String {
        // The names are string literals: equal ones compare in a few instructions.
        if let known = layerKeys.first(where: { $0.name == name }) { return known.key }
        let key = FieldRendering.key(for: name)
        // Unknown PSMs make names of their own: past a few, they are not kept.
        if layerKeys.count < 32 { layerKeys.append((name, key)) }
        return key
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
