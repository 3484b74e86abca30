import ArgumentParser
import Capture
import Decoders
#if canImport(Glibc)
import Glibc
import Wire
#endif

struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert captures to another capture format.",
        discussion: """
            Reads any input blesniff reads (pcap, pcapng, btsnoop, PacketLogger, Android bug report zip \
            or text) and writes the frames with their directions and timestamps (to the microsecond). \
            Notes (PacketLogger notes, monitor System Note / User Logging) are kept in pcap254, btsnoop2001, \
            pcapng and pklg, and dropped in pcap201 and btsnoop1002. Over-the-air sniffer frames are kept \
            in pcapng and in pcap of their own link type (pcap256, pcap272). The output format comes from \
            --to, else from the output's extension (.pcap, .pcapng, .btsnoop/.log/.cfa, .pklg) and the \
            first input frame: the link type that keeps everything the input holds (Linux monitor input: \
            pcap254 or btsnoop2001, as btmon writes; sniffer input: pcap256 or pcap272; HCI input: pcap201 \
            or btsnoop1002). A frame the output cannot carry is an error (exit status 2) unless --to chose \
            that format, then a warning (an error again with --strict); when no frame can be carried, \
            nothing is written and the exit status is 2.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case pcap201, pcap254, pcap256, pcap272, pcapng, btsnoop1002, btsnoop2001, pklg

        /// The over-the-air link type a pcap of this format holds, if any.
        var linkLayerType: UInt32? {
            switch self {
            case .pcap256: return LinkType.leLLWithPHDR
            case .pcap272: return LinkType.nordicBLE
            default: return nil
            }
        }

        /// The formats that carry over-the-air frames of link type `lt`.
        static func carrying(linkLayer lt: UInt32) -> [Format] {
            [.pcapng] + allCases.filter { $0.linkLayerType == lt }
        }

        /// The file kind an output's extension names; the link type inside it is chosen by the input.
        enum Container: CaseIterable {
            case pcap, pcapng, btsnoop, pklg

            static let extensions: [String: Container] = [
                "pcap": .pcap, "pcapng": .pcapng, "btsnoop": .btsnoop, "log": .btsnoop, "cfa": .btsnoop, "pklg": .pklg,
            ]

            /// Formats of this container by the input's first record's link type: the one that
            /// loses nothing of such input. A Linux monitor capture has notes and index records
            /// that only a monitor link type keeps (and btmon writes btsnoop 2001).
            static let lossless: [Container: [UInt32: Format]] = [
                .pcap: [LinkType.linuxMonitor: .pcap254, LinkType.btsnoopMonitor: .pcap254,
                        LinkType.leLLWithPHDR: .pcap256, LinkType.nordicBLE: .pcap272],
                .btsnoop: [LinkType.linuxMonitor: .btsnoop2001, LinkType.btsnoopMonitor: .btsnoop2001],
            ]

            /// For input with nothing but HCI traffic, or no input at all.
            var plain: Format {
                switch self {
                case .pcap: return .pcap201
                case .pcapng: return .pcapng
                case .btsnoop: return .btsnoop1002
                case .pklg: return .pklg
                }
            }

            func format(forInput linkType: UInt32?) -> Format {
                linkType.flatMap { Self.lossless[self]?[$0] } ?? plain
            }
        }
    }

    enum ByteOrder: String, ExpressibleByArgument, CaseIterable {
        case big, little
    }

    @Argument(help: "Input captures (- for standard input), then the output file (- for standard output).", completion: .file())
    var paths: [String]

    @Option(help: "Output format: \(Format.allCases.map(\.rawValue).joined(separator: ", ")).")
    var to: Format?

    @Option(help: "PacketLogger byte order: big (macOS) or little (iOS, BTstack).")
    var byteOrder: ByteOrder = .big

    @Flag(help: "Merge several inputs by timestamp (default: one after the other).")
    var merge = false

    @Flag(help: "Treat an input that ends mid-record, or a frame the output format cannot carry, as an error.")
    var strict = false

    @OptionGroup var filtering: FilterOptions

    @OptionGroup var deviceFilter: DeviceFilterOption

    func validate() throws {
        guard paths.count >= 2 else { throw ValidationError("Give at least one input and the output file.") }
        if to == nil, Self.container(forExtension: paths[paths.count - 1]) == nil {
            throw ValidationError("Cannot tell the output format from \"\(paths[paths.count - 1])\": use --to.")
        }
    }

    static func container(forExtension path: String) -> Format.Container? {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
        return Format.Container.extensions[path[path.index(after: dot)...].lowercased()]
    }

    func run() throws {
        let output = paths[paths.count - 1]
        let inputs = Array(paths.dropLast())
        let choice: FrameSink.Choice
        if let to {
            choice = .given(to)
        } else if let c = Self.container(forExtension: output) {
            choice = .byInput(c)
        } else {
            throw ExitCode(2)
        }
        if output != "-", let clash = inputs.first(where: { sameFile($0, output) }) {
            stderr("blesniff: \(output): is also an input (\(clash)); not overwriting it")
            throw ExitCode(2)
        }
        // With a filter, every frame is dissected (the connection state needs them all) and only
        // the matching ones are written, as `tshark -Y -w` does.
        let filter = try filtering.compile(device: deviceFilter.device)
        func keep(_ r: Record, _ dissector: Dissector?) -> Bool {
            guard let filter, let dissector else { return true }
            return filter.matches(dissector.dissect(Packet(r)))
        }
        var ok = true
        let sink: FrameSink
        do {
            sink = try FrameSink(path: output, choice: choice, bigEndian: byteOrder == .big)
        } catch {
            stderr("blesniff: \(error)")
            throw ExitCode(2)
        }
        do {
            if merge && inputs.count > 1 {
                var readers: [CaptureReader] = []
                for path in inputs { readers.append(try CaptureReader(path: path)) }
                let merged = MergedReader(readers)
                let dissector = filter.map { _ in Dissector() }
                while true {
                    do {
                        guard let r = try merged.next() else { break }
                        if keep(r, dissector) { try sink.write(r) }
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
                    let dissector = filter.map { _ in Dissector() }
                    filter?.reset()
                    do {
                        while var r = try reader.next() {
                            guard keep(r, dissector) else { continue }
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
        } catch {
            stderr("blesniff: \(error)")
            throw ExitCode(2)
        }
        if let nothing = sink.nothingCarried() {
            // Nothing was written: an empty file would pass for a conversion.
            stderr("blesniff: \(output): \(nothing)")
            throw ExitCode(2)
        }
        do { try sink.finish() } catch {
            stderr("blesniff: \(error)")
            throw ExitCode(2)
        }
        let dropped = sink.droppedNotes + sink.droppedOther > 0
        // A loss the user did not choose is an error: the format was picked for them.
        let lossChosen = to != nil && !strict
        for line in sink.warnings() { stderr("blesniff: " + (lossChosen ? "warning: " : "error: ") + line) }
        if dropped, to == nil, !strict {
            stderr("blesniff: \(output): --to \(sink.format.rawValue) accepts the loss")
        }
        if dropped, !lossChosen { ok = false }
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
/// `Packet(record)` (HCI type, direction, adapter, payload), then framed anew in a reused
/// scratch buffer. The file is created at the first frame it can carry (or by `finish`), so a
/// conversion that can carry nothing leaves nothing behind.
final class FrameSink {
    private enum Writer {
        case pcap(PcapWriter)
        case btsnoop(BtsnoopWriter)
        case pklg(PacketLoggerWriter)
        /// Created at the first record, whose link type may add an interface.
        case pcapng(PcapngWriter?)
    }

    /// The output format: given, or chosen by the first input frame for the output's container.
    enum Choice {
        case given(Convert.Format)
        case byInput(Convert.Format.Container)
    }

    let path: String
    private let choice: Choice
    /// Settled by the first record (or by `finish` when there is none).
    private(set) var format: Convert.Format
    private var settled = false
    private let bigEndian: Bool
    private var created: Writer?
    /// Over-the-air link types of the frames dropped, for the message naming what carries them.
    private var droppedLinkLayer: Set<UInt32> = []
    private var scratch: [UInt8] = []
    private(set) var written = 0
    private(set) var droppedNotes = 0
    private(set) var droppedOther = 0
    private var pcapngLinkTypes: [UInt32] = [LinkType.h4WithPHDR, LinkType.linuxMonitor]

    init(path: String, choice: Choice, bigEndian: Bool) throws(CaptureError) {
        self.path = path
        self.choice = choice
        switch choice {
        case .given(let f): format = f
        case .byInput(let c): format = c.plain
        }
        self.bigEndian = bigEndian
    }

    /// Picks the format for the first record's link type, when the output's extension chose the container.
    private func settle(_ r: Record) {
        guard !settled else { return }
        settled = true
        if case .byInput(let c) = choice { format = c.format(forInput: r.linkType) }
    }

    /// The writer, the file created at the first call.
    private func writer() throws(CaptureError) -> Writer {
        if let created { return created }
        let w: Writer
        switch format {
        case .pcap201: w = .pcap(try PcapWriter(path: path, linkType: LinkType.h4WithPHDR))
        case .pcap254: w = .pcap(try PcapWriter(path: path, linkType: LinkType.linuxMonitor))
        case .pcap256, .pcap272: w = .pcap(try PcapWriter(path: path, linkType: format.linkLayerType ?? 0))
        case .btsnoop1002: w = .btsnoop(try BtsnoopWriter(path: path, datalink: 1002))
        case .btsnoop2001: w = .btsnoop(try BtsnoopWriter(path: path, datalink: 2001))
        case .pklg: w = .pklg(try PacketLoggerWriter(path: path, bigEndian: bigEndian))
        case .pcapng: w = .pcapng(nil)
        }
        created = w
        return w
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
        settle(r)
        let p = Packet(r)
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
            } else if format.linkLayerType == lt {
                let current = try writer()
                if case .pcap(let w) = current {
                    try w.write(timestamp: r.timestamp, data: p.payload, originalLength: original)
                    written &+= 1
                    return
                }
            }
            droppedLinkLayer.insert(lt)
            droppedOther &+= 1
            return
        case .unsupported, .truncatedHeader:
            droppedOther &+= 1
            return
        }
        let isNote = monitorOpcode == MonitorOpcode.systemNote || monitorOpcode == MonitorOpcode.userLogging
        scratch.removeAll(keepingCapacity: true)
        if format.linkLayerType != nil { return drop(isNote) }
        let current = try writer()
        switch (format, current) {
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
        if case .pcapng(let existing?) = created { return existing }
        if let lt = firstLinkType { pcapngLinkTypes.append(lt) }
        let w = try PcapngWriter(path: path, linkTypes: pcapngLinkTypes)
        created = .pcapng(w)
        return w
    }

    /// Writes the file header of an empty capture.
    func finish() throws(CaptureError) {
        if format == .pcapng { _ = try pcapngWriter(firstLinkType: nil) } else { _ = try writer() }
    }

    /// Why nothing was written when every frame read had to be dropped; nil when some frame was
    /// carried or none was read.
    func nothingCarried() -> String? {
        guard written == 0, droppedNotes + droppedOther > 0 else { return nil }
        var s = "none of the \(droppedNotes + droppedOther) frames can be carried by \(format.rawValue); nothing written"
        if let lt = droppedLinkLayer.min() {
            s += " (over-the-air frames of link type \(lt): " + Convert.Format.carrying(linkLayer: lt).map(\.rawValue).joined(separator: ", ") + " can carry them)"
        } else if droppedNotes > 0 && droppedOther == 0 {
            s += " (notes: pcap254, btsnoop2001, pcapng and pklg keep them)"
        }
        return s
    }

    func warnings() -> [String] {
        var out: [String] = []
        if droppedNotes > 0 {
            out.append("\(droppedNotes) notes dropped: \(format.rawValue) has no place for them (pcap254, btsnoop2001, pcapng and pklg keep them)")
        }
        if droppedOther > 0 {
            var line = "\(droppedOther) frames dropped: \(format.rawValue) cannot carry them"
            if let lt = droppedLinkLayer.min() {
                line += " (over-the-air frames of link type \(lt): " + Convert.Format.carrying(linkLayer: lt).map(\.rawValue).joined(separator: ", ") + " can carry them)"
            }
            out.append(line)
        }
        return out
    }
}
