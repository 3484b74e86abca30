import ArgumentParser
import Capture
import Decoders
#if canImport(Glibc)
import Glibc
#endif

struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert captures to another capture format.",
        discussion: """
            Reads any input blesniff reads (pcap, pcapng, btsnoop, PacketLogger, Android bug report zip \
            or text) and writes the frames with their directions and timestamps (to the microsecond). \
            Notes (PacketLogger notes, monitor System Note / User Logging) are kept in pcap254, btsnoop2001, \
            pcapng and pklg, and dropped with a warning in pcap201 and btsnoop1002. The output format \
            comes from --to, else from the output's extension: .pcap (201), .pcapng, .btsnoop/.log (1002), .pklg.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case pcap201, pcap254, pcapng, btsnoop1002, btsnoop2001, pklg
    }

    enum ByteOrder: String, ExpressibleByArgument, CaseIterable {
        case big, little
    }

    @Argument(help: "Input captures (- for standard input), then the output file (- for standard output).")
    var paths: [String]

    @Option(help: "Output format: \(Format.allCases.map(\.rawValue).joined(separator: ", ")).")
    var to: Format?

    @Option(help: "PacketLogger byte order: big (macOS) or little (iOS, BTstack).")
    var byteOrder: ByteOrder = .big

    @Flag(help: "Merge several inputs by timestamp (default: one after the other).")
    var merge = false

    @Flag(help: "Treat an input that ends mid-record as an error.")
    var strict = false

    func validate() throws {
        guard paths.count >= 2 else { throw ValidationError("Give at least one input and the output file.") }
        if to == nil, Self.format(forExtension: paths[paths.count - 1]) == nil {
            throw ValidationError("Cannot tell the output format from \"\(paths[paths.count - 1])\": use --to.")
        }
    }

    static func format(forExtension path: String) -> Format? {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
        switch path[path.index(after: dot)...].lowercased() {
        case "pcap": return .pcap201
        case "pcapng": return .pcapng
        case "btsnoop", "log", "cfa": return .btsnoop1002
        case "pklg": return .pklg
        default: return nil
        }
    }

    func run() throws {
        let output = paths[paths.count - 1]
        let inputs = Array(paths.dropLast())
        guard let format = to ?? Self.format(forExtension: output) else { throw ExitCode(2) }
        if output != "-", let clash = inputs.first(where: { sameFile($0, output) }) {
            stderr("blesniff: \(output): is also an input (\(clash)); not overwriting it")
            throw ExitCode(2)
        }
        var ok = true
        let sink: FrameSink
        do {
            sink = try FrameSink(path: output, format: format, bigEndian: byteOrder == .big)
        } catch {
            stderr("blesniff: \(error)")
            throw ExitCode(2)
        }
        do {
            if merge && inputs.count > 1 {
                var readers: [CaptureReader] = []
                for path in inputs { readers.append(try CaptureReader(path: path)) }
                let merged = MergedReader(readers)
                while true {
                    do {
                        guard let r = try merged.next() else { break }
                        try sink.write(r)
                    } catch let e where e.file != output {
                        stderr("blesniff: \(e)")
                        ok = false
                    }
                }
                for t in merged.truncations { ok = warnTruncation(t) && ok }
            } else {
                var number = 0
                for path in inputs {
                    let reader: CaptureReader
                    do { reader = try CaptureReader(path: path) } catch {
                        stderr("blesniff: \(error)")
                        ok = false
                        continue
                    }
                    do {
                        while var r = try reader.next() {
                            number += 1
                            r.number = number
                            try sink.write(r)
                        }
                    } catch let e where e.file != output {
                        stderr("blesniff: \(e)")
                        ok = false
                    }
                    if let t = reader.truncation { ok = warnTruncation(t) && ok }
                }
            }
            try sink.finish()
        } catch {
            stderr("blesniff: \(error)")
            throw ExitCode(2)
        }
        for line in sink.warnings() { stderr("blesniff: warning: \(line)") }
        if !ok { throw ExitCode(2) }
    }

    private func warnTruncation(_ t: CaptureError) -> Bool {
        stderr("blesniff: warning: \(t)")
        return !strict
    }

    private func sameFile(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        var sa = stat(), sb = stat()
        guard stat(a, &sa) == 0, stat(b, &sb) == 0 else { return false }
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }
}

/// Re-frames records for one output format. Every record is first taken apart by
/// `Packet.fromRecord` (HCI type, direction, adapter, payload), then framed anew in a reused
/// scratch buffer.
final class FrameSink {
    private enum Writer {
        case pcap(PcapWriter)
        case btsnoop(BtsnoopWriter)
        case pklg(PacketLoggerWriter)
        /// Created at the first record, whose link type may add an interface.
        case pcapng(PcapngWriter?)
    }

    let path: String
    let format: Convert.Format
    private var writer: Writer
    private var scratch: [UInt8] = []
    private(set) var written = 0
    private(set) var droppedNotes = 0
    private(set) var droppedOther = 0
    private var pcapngLinkTypes: [UInt32] = [LinkType.h4WithPHDR, LinkType.linuxMonitor]

    init(path: String, format: Convert.Format, bigEndian: Bool) throws(CaptureError) {
        self.path = path
        self.format = format
        switch format {
        case .pcap201: writer = .pcap(try PcapWriter(path: path, linkType: LinkType.h4WithPHDR))
        case .pcap254: writer = .pcap(try PcapWriter(path: path, linkType: LinkType.linuxMonitor))
        case .btsnoop1002: writer = .btsnoop(try BtsnoopWriter(path: path, datalink: 1002))
        case .btsnoop2001: writer = .btsnoop(try BtsnoopWriter(path: path, datalink: 2001))
        case .pklg: writer = .pklg(try PacketLoggerWriter(path: path, bigEndian: bigEndian))
        case .pcapng: writer = .pcapng(nil)
        }
    }

    /// Monitor opcodes of HCI traffic, by H4 indicator (index) and direction: (sent, received).
    private static let monitorOpcodes: [(UInt16, UInt16)?] = [
        nil,
        (MonitorOpcode.commandPacket, MonitorOpcode.commandPacket),
        (MonitorOpcode.aclTX, MonitorOpcode.aclRX),
        (MonitorOpcode.scoTX, MonitorOpcode.scoRX),
        (MonitorOpcode.eventPacket, MonitorOpcode.eventPacket),
        (MonitorOpcode.isoTX, MonitorOpcode.isoRX),
    ]

    func write(_ r: Record) throws(CaptureError) {
        let p = Packet.fromRecord(number: r.number, timestamp: r.timestamp, linkType: r.linkType, flags: r.flags,
                                  data: r.data, fileOffset: r.fileOffset, fileLength: r.fileLength, truncated: r.truncated)
        // Length on the wire of the payload: the record's, less the framing taken off.
        let original = max(r.originalLength &- (r.data.count &- p.payload.count), p.payload.count)
        let received = p.direction == .received
        var h4: UInt8?
        var monitorOpcode: UInt16?
        switch p.kind {
        case .hci(let t):
            h4 = t.rawValue
            if let ops = Self.monitorOpcodes[Int(t.rawValue)] { monitorOpcode = received ? ops.1 : ops.0 }
        case .unknownHCIType(let t):
            h4 = t
        case .monitor(let op):
            monitorOpcode = op
        case .linkLayer(let lt):
            if format == .pcapng {
                let w = try pcapngWriter(firstLinkType: lt)
                if let i = pcapngLinkTypes.firstIndex(of: lt) {
                    try w.write(interface: i, timestamp: r.timestamp, data: p.payload, originalLength: original)
                    written &+= 1
                    return
                }
            }
            droppedOther &+= 1
            return
        case .unsupported, .truncatedHeader:
            droppedOther &+= 1
            return
        }
        let isNote = monitorOpcode == MonitorOpcode.systemNote || monitorOpcode == MonitorOpcode.userLogging
        scratch.removeAll(keepingCapacity: true)
        switch (format, writer) {
        case (.pcap201, .pcap(let w)):
            guard let h4 else { return drop(isNote) }
            h4WithDirection(h4, received: received, payload: p.payload)
            try w.write(timestamp: r.timestamp, data: scratch[...], originalLength: original &+ 5)
        case (.pcap254, .pcap(let w)):
            guard let op = monitorOpcode else { return drop(isNote) }
            monitorHeader(adapter: p.adapter, opcode: op, payload: p.payload)
            try w.write(timestamp: r.timestamp, data: scratch[...], originalLength: original &+ 4)
        case (.pcapng, _):
            let w = try pcapngWriter(firstLinkType: nil)
            if let h4 {
                h4WithDirection(h4, received: received, payload: p.payload)
                try w.write(interface: 0, timestamp: r.timestamp, data: scratch[...], originalLength: original &+ 5)
            } else if let op = monitorOpcode {
                monitorHeader(adapter: p.adapter, opcode: op, payload: p.payload)
                try w.write(interface: 1, timestamp: r.timestamp, data: scratch[...], originalLength: original &+ 4)
            } else {
                return drop(isNote)
            }
        case (.btsnoop1002, .btsnoop(let w)):
            guard let h4 else { return drop(isNote) }
            scratch.append(h4)
            scratch.append(contentsOf: p.payload)
            let flags: UInt32 = (received ? 1 : 0) | (h4 == 0x01 || h4 == 0x04 ? 2 : 0)
            try w.write(timestamp: r.timestamp, flags: flags, data: scratch[...], originalLength: original &+ 1)
        case (.btsnoop2001, .btsnoop(let w)):
            guard let op = monitorOpcode else { return drop(isNote) }
            try w.write(timestamp: r.timestamp, flags: UInt32(p.adapter) << 16 | UInt32(op), data: p.payload,
                        originalLength: original)
        case (.pklg, .pklg(let w)):
            if let h4, let type = PacketLogger.type(h4: h4, received: received) {
                try w.write(timestamp: r.timestamp, type: type, payload: p.payload)
            } else if h4 == nil, let op = monitorOpcode,
                      let note = PacketLogger.noteRecord(monitorOpcode: op, payload: p.payload) {
                try w.write(timestamp: r.timestamp, type: note.type, payload: note.text)
            } else {
                return drop(false)
            }
        default:
            return drop(isNote)
        }
        written &+= 1
    }

    /// DLT 201: 4-byte big-endian direction (0 sent, 1 received), then the H4 packet.
    private func h4WithDirection(_ h4: UInt8, received: Bool, payload: Bytes) {
        scratch.append(contentsOf: [0, 0, 0, received ? 1 : 0, h4])
        scratch.append(contentsOf: payload)
    }

    /// DLT 254 / btsnoop 2001 header: adapter and opcode, big-endian.
    private func monitorHeader(adapter: UInt16, opcode: UInt16, payload: Bytes) {
        scratch.append(contentsOf: [UInt8(truncatingIfNeeded: adapter >> 8), UInt8(truncatingIfNeeded: adapter),
                                    UInt8(truncatingIfNeeded: opcode >> 8), UInt8(truncatingIfNeeded: opcode)])
        scratch.append(contentsOf: payload)
    }

    private func drop(_ note: Bool) {
        if note { droppedNotes &+= 1 } else { droppedOther &+= 1 }
    }

    /// The pcapng writer, created with the first record: a link-layer capture adds its link type.
    private func pcapngWriter(firstLinkType: UInt32?) throws(CaptureError) -> PcapngWriter {
        if case .pcapng(let existing?) = writer { return existing }
        if let lt = firstLinkType { pcapngLinkTypes.append(lt) }
        let w = try PcapngWriter(path: path, linkTypes: pcapngLinkTypes)
        writer = .pcapng(w)
        return w
    }

    /// Writes the file header of an empty pcapng.
    func finish() throws(CaptureError) {
        if format == .pcapng { _ = try pcapngWriter(firstLinkType: nil) }
    }

    func warnings() -> [String] {
        var out: [String] = []
        if droppedNotes > 0 {
            out.append("\(droppedNotes) notes dropped: \(format.rawValue) has no place for them (pcap254, btsnoop2001, pcapng and pklg keep them)")
        }
        if droppedOther > 0 {
            out.append("\(droppedOther) frames dropped: \(format.rawValue) cannot carry them")
        }
        return out
    }
}
