import ArgumentParser
import Capture
import Decoders
import Report
#if canImport(Glibc)
import Glibc
import Wire
#endif

/// Live auditing: sees every decoded frame as it is captured; `finish` reports what is left and
/// returns the exit code (0 clean, 1 findings at or above the threshold).
protocol LiveAuditHook {
    func observe(_ d: Decoded)
    func finish() -> Int
}

struct CaptureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture",
        abstract: "Capture HCI traffic live, decode it as it happens and optionally write it to a file.",
        discussion: """
            Reads the kernel's Bluetooth monitor channel (every adapter, as btmon does; needs root or \
            CAP_NET_RAW, dropped after opening; --list does not), or with --from a pcap or btsnoop stream still being \
            written to a named pipe or standard input (Bumble's pcapsnoop:pipe:PATH, btmon -w FIFO). \
            Frames are printed as they arrive (as `read` prints them) and written whole with -w, so an \
            interrupted capture is a valid file. Ctrl-C (SIGINT) or SIGTERM stops, closes the files and \
            prints a summary on standard error.
            """)

    @Flag(help: "List the Bluetooth adapters and exit (without privileges: through an ordinary HCI socket, with up or down).")
    var list = false

    @Option(name: .shortAndLong, help: "Capture only this adapter (hciN or N).")
    var interface: String?

    @Option(help: ArgumentHelp("Read a pcap or btsnoop stream from a named pipe or file; - is standard input.", valueName: "path"))
    var from: String?

    @Option(name: .customShort("w"), help: ArgumentHelp("Write the frames to this file as they arrive.", valueName: "file"), completion: .file())
    var write: String?

    @Option(help: "Format of the -w file: pcap, pcapng or btsnoop (default: from its extension; pcap on standard output).")
    var writeFormat: WriteFormat?

    @Option(help: ArgumentHelp("Start a new file when the current one would exceed this many megabytes (10^6 bytes).", valueName: "MB"))
    var fileSize: Double?

    @Option(help: ArgumentHelp("With --file-size: keep this many files, FILE, FILE.1 ... reused in turn.", valueName: "N"))
    var files: Int?

    @Option(help: "Output format: text or json.")
    var format: FramePrinter.Format = .text

    @Flag(name: .shortAndLong, help: "Print the full decode of every frame.")
    var verbose = false

    @Flag(name: .shortAndLong, help: "Do not print frames (write them, count them).")
    var quiet = false

    @Flag(help: "Audit the traffic live: findings on standard error as soon as a rule decides, the report at the end.")
    var audit = false

    @Option(help: "With --audit: exit 1 when a finding at or above this level remains (error, warning, note, never).")
    var failOn: FailOn = .error

    @Option(help: "With --audit: configuration file (default: .blesniff.yml found upward from the working directory).", completion: .file())
    var config: String?

    @Option(help: "Stop after this many frames.")
    var count: Int?

    @Option(help: ArgumentHelp("Stop after this many seconds.", valueName: "seconds"))
    var duration: Double?

    @Option(help: "After opening the capture source as root, run as this user (default: the user who ran sudo).")
    var user: String?

    /// How long after opening the monitor socket the kernel's replay of its adapters is awaited.
    static let adapterReplayWindow = 0.2

    func validate() throws {
        if let count, count <= 0 { throw ValidationError("--count must be positive") }
        if let duration, !(duration > 0) { throw ValidationError("--duration must be positive") }
        if let fileSize, !(fileSize > 0) { throw ValidationError("--file-size must be positive") }
        if let files, files <= 0 { throw ValidationError("--files must be positive") }
        if files != nil && fileSize == nil { throw ValidationError("--files needs --file-size") }
        if (fileSize != nil || writeFormat != nil) && write == nil { throw ValidationError("--file-size and --write-format need -w") }
        if write == "-" && fileSize != nil { throw ValidationError("standard output cannot be rotated") }
        if list && from != nil { throw ValidationError("--list lists the monitor socket's adapters; it does not go with --from") }
        if let interface, Self.adapterIndex(interface) == nil { throw ValidationError("--interface \(interface): expected hciN") }
        if let write, write != "-", writeFormat == nil, WriteFormat.forPath(write) == nil {
            throw ValidationError("-w \(write): cannot tell the format from the name: capture writes .pcap, .pcapng and .btsnoop (or .log) files; name one, or give --write-format pcap|pcapng|btsnoop")
        }
    }

    static func adapterIndex(_ s: String) -> UInt16? {
        UInt16(s.hasPrefix("hci") ? String(s.dropFirst(3)) : s).flatMap { $0 == 0xffff ? nil : $0 }
    }

    /// An error already explained on standard error: exit 2.
    struct Failed: Error {}

    func fail(_ message: String) -> Failed {
        stderr("blesniff: " + message)
        return Failed()
    }

    mutating func run() throws {
        do {
            let code = try capture()
            if code != 0 { throw ExitCode(Int32(clamping: code)) }
        } catch is Failed {
            throw ExitCode(2)
        }
    }

    /// The live auditor: the decoded frames go through `AuditFeed` to an `Auditor` whose findings
    /// are printed on standard error as soon as a rule decides; the full report comes at the end.
    func makeAuditHook(_ dissector: Dissector) throws -> LiveAuditHook {
        let configuration: AuditConfiguration
        do {
            configuration = try AuditConfiguration.load(orDiscover: config)
        } catch {
            throw fail(String(describing: error))
        }
        return LiveAudit(dissector: dissector, configuration: configuration, failOn: failOn,
                         name: from ?? "live capture")
    }

    private func capture() throws -> Int {
        let dissector = Dissector()
        let auditor = audit ? try makeAuditHook(dissector) : nil
        let stop = StopSwitch()
        stop.catchSignals()
        let wanted = interface.flatMap(Self.adapterIndex)

        // 1. Open the source: this is what needs privileges.
        let live: LiveCapture
        var streamReader: CaptureReader?
        var outputLinkType: UInt32? = linuxMonitorPcapLinkType
        if let from {
            do {
                guard let r = try CaptureReader.openStream(path: from, stop: stop) else {
                    stderr("blesniff: stopped before any data arrived on \(from == "-" ? "standard input" : from)")
                    return 0
                }
                streamReader = r
                outputLinkType = r.linkType == 0 ? nil : WriteFormat.pcapLinkType(for: r.linkType)
                live = LiveCapture(source: r)
            } catch {
                throw fail("\(error)")
            }
        } else {
            do {
                live = LiveCapture(source: try MonitorSocketSource())
            } catch {
                // Listing needs no privileges: an ordinary HCI socket still lists the adapters.
                if list, error.kind == .permission, let devices = try? HCIDeviceList.read() {
                    stderr("blesniff: " + Self.explain(error) + "; listing the adapters through an HCI socket")
                    let out = Output()
                    out.write(AdapterList(devices: devices).text())
                    out.flush()
                    return 0
                }
                throw fail(Self.explain(error))
            }
        }

        // 2. Give up root before touching files or decoding untrusted frames.
        do {
            if let id = try Privileges.target(user: user) { try Privileges.drop(to: id) }
        } catch {
            throw fail("\(error)")
        }

        // 3. Which adapters exist: the kernel replays New Index for each as the socket opens.
        var pending: [Record] = []
        let end = duration.map { LiveCapture.deadline(after: $0) }
        if list || (from == nil && wanted != nil) {
            var adapters = AdapterList()
            let replayEnd = LiveCapture.deadline(after: Self.adapterReplayWindow)
            let result = live.run(stop: stop, deadline: min(replayEnd, end ?? replayEnd)) { r in
                adapters.note(r)
                if !list { pending.append(r) }
                return list || wanted.map { !adapters.has($0) } ?? true
            }
            if list {
                let out = Output()
                out.write(adapters.text())
                out.flush()
                return 0
            }
            if let wanted, !adapters.has(wanted) {
                if case .stopped = result { return 0 }
                // As btmon does: a USB dongle plugged in a moment later, a VM's vhci device made
                // after the capture started. Its frames pass the filter once it is announced.
                let present = adapters.names
                stderr("blesniff: waiting for hci\(wanted) to appear (" + (present.isEmpty ? "no adapters present" : "adapters present: " + present.joined(separator: ", ")) + ")")
            }
        }

        // 4. Output file, printer, counters.
        var writer: RotatingWriter?
        if let path = write {
            let format = writeFormat ?? WriteFormat.forPath(path) ?? .pcap
            do {
                writer = try RotatingWriter(path: path, format: format, linkType: outputLinkType,
                                            fileSize: fileSize.map { Int64(($0 * 1_000_000).rounded()) }, files: files)
            } catch {
                throw fail("\(error)")
            }
        }
        let out = Output()
        let printer = (quiet || write == "-") ? nil : FramePrinter(format: format, verbose: verbose, output: out)
        var stats = CaptureStats()
        let limit = count ?? Int.max
        var writeError: CaptureError?

        func handle(_ record: Record) throws -> Bool {
            var r = record
            if let wanted {
                let adapter = MonitorFrame(r)?.adapter ?? 0
                guard adapter == wanted || adapter == 0xffff else { return true }
            }
            stats.frames &+= 1
            r.number = stats.frames
            if let writer {
                do {
                    try writer.write(r)
                } catch {
                    writeError = error
                    return false
                }
            }
            let p = Packet(r)
            stats.count(adapter: p.adapter)
            let d = dissector.dissect(p)
            if d.isMalformed { stats.malformed &+= 1 }
            printer?.print(d)
            auditor?.observe(d)
            if printer != nil, writer == nil, out.failed { return false }
            return stats.frames < limit
        }

        // 5. Capture.
        var result = LiveCapture.End.handlerStopped
        for r in pending {
            if try !handle(r) { break }
        }
        if stats.frames < limit, writeError == nil {
            result = try live.run(stop: stop, deadline: end, handle: handle, batchDone: { out.flush() })
        }
        out.flush()
        writer?.close()

        // 6. Summary on standard error.
        var failed = false
        if case .sourceEnded(let e?) = result {
            stderr("blesniff: \(e)")
            failed = true
        } else if case .sourceEnded(nil) = result, let t = streamReader?.truncation {
            stderr("blesniff: warning: \(t)")
        }
        if let writeError {
            stderr("blesniff: \(writeError)")
            failed = true
        }
        stderr(stats.summary(writer: writer, source: live.name))
        let code = auditor?.finish() ?? 0
        return failed ? max(code, 2) : code
    }

    /// One sentence saying what is wrong with the monitor socket and what to do.
    static func explain(_ e: CaptureError) -> String {
        switch e.kind {
        case .unsupportedSystem:
            return "this kernel has no Bluetooth support (load the bluetooth module: sudo modprobe bluetooth), or use --from to read a pipe"
        case .permission:
            return "opening the Bluetooth monitor socket needs privileges (run as root, e.g. with sudo, or give blesniff CAP_NET_RAW)"
        default:
            return "\(e)"
        }
    }
}

private let linuxMonitorPcapLinkType: UInt32 = 254

extension WriteFormat: ExpressibleByArgument {}

/// Frame counts for the closing summary.
struct CaptureStats {
    var frames = 0
    var malformed = 0
    /// Frames per controller index, in order of first appearance.
    var adapters: [(index: UInt16, frames: Int)] = []

    mutating func count(adapter: UInt16) {
        if let i = adapters.firstIndex(where: { $0.index == adapter }) {
            adapters[i].frames &+= 1
        } else {
            adapters.append((adapter, 1))
        }
    }

    func summary(writer: RotatingWriter?, source: String) -> String {
        var s = "blesniff: \(frames) frame\(frames == 1 ? "" : "s")"
        if !adapters.isEmpty {
            s += " (" + adapters.sorted { $0.index < $1.index }
                .map { ($0.index == 0xffff ? "system" : "hci\($0.index)") + " \($0.frames)" }
                .joined(separator: ", ") + ")"
        }
        s += ", \(malformed) malformed"
        if let w = writer {
            s += ", \(w.bytesWritten) bytes written to \(w.path)"
            if w.filesOpened > 1 { s += " (\(w.filesOpened) files)" }
            if w.framesSkipped > 0 { s += ", \(w.framesSkipped) frames the \(w.format.rawValue) format cannot hold not written" }
        }
        return s
    }
}

/// Adapters announced on the monitor channel: New Index (type, bus, address, name) and
/// Index Info (address, manufacturer), as the kernel replays them when the socket opens.
struct AdapterList {
    struct Adapter {
        var index: UInt16
        var type: UInt8 = 0
        var bus: UInt8 = 0
        var address: BDAddr?
        var name = ""
        var manufacturer: UInt16?
        /// Up or down, where known (the HCI socket says; the monitor channel's replay does not).
        var up: Bool?
    }

    private(set) var adapters: [Adapter] = []

    init() {}

    /// Adapters as an HCI socket lists them (`capture --list` without privileges).
    init(devices: [HCIDevice]) {
        adapters = devices.map { d in
            var a = Adapter(index: d.index)
            a.type = d.type
            a.bus = d.bus
            a.address = d.address
            a.name = d.name
            a.up = d.isUp
            return a
        }
    }

    /// Bus names (BlueZ `HCI_VIRTUAL` ... `HCI_VIRTIO`).
    static let buses = ["virtual", "USB", "PC Card", "UART", "RS232", "PCI", "SDIO", "SPI", "I2C", "SMD", "VIRTIO"]

    func has(_ index: UInt16) -> Bool { adapters.contains { $0.index == index } }

    var names: [String] { adapters.map { "hci\($0.index)" } }

    mutating func note(_ r: Record) {
        guard let m = MonitorFrame(r) else { return }
        let p = m.payload
        func address(_ at: Int) -> BDAddr? {
            guard p.count >= at &+ 6 else { return nil }
            var raw: UInt64 = 0
            for i in 0..<6 { raw |= UInt64(p[p.startIndex &+ at &+ i]) << (8 * UInt64(i)) }
            return BDAddr(raw)
        }
        switch m.opcode {
        case MonitorOpcode.newIndex:
            guard p.count >= 8 else { return }
            var a = Adapter(index: m.adapter)
            a.type = p[p.startIndex]
            a.bus = p[p.startIndex &+ 1]
            a.address = address(2)
            a.name = String(decoding: p.dropFirst(8).prefix(8).prefix { $0 != 0 }, as: UTF8.self)
            if let i = adapters.firstIndex(where: { $0.index == m.adapter }) { adapters[i] = a } else { adapters.append(a) }
        case MonitorOpcode.deleteIndex:
            adapters.removeAll { $0.index == m.adapter }
        case MonitorOpcode.indexInfo:
            guard let i = adapters.firstIndex(where: { $0.index == m.adapter }), p.count >= 8 else { return }
            adapters[i].address = address(0) ?? adapters[i].address
            adapters[i].manufacturer = UInt16(p[p.startIndex &+ 6]) | UInt16(p[p.startIndex &+ 7]) << 8
        default:
            break
        }
    }

    func text() -> String {
        guard !adapters.isEmpty else { return "no Bluetooth adapters\n" }
        var s = ""
        for a in adapters.sorted(by: { $0.index < $1.index }) {
            s += "hci\(a.index)  " + (a.address?.description ?? "-")
            s += "  " + (Int(a.bus) < Self.buses.count ? Self.buses[Int(a.bus)] : "bus \(a.bus)")
            s += a.type == 0 ? "  primary" : a.type == 1 ? "  AMP" : "  type \(a.type)"
            if !a.name.isEmpty, a.name != "hci\(a.index)" { s += "  " + a.name }
            if let m = a.manufacturer {
                s += "  " + (AssignedNumbers.companyName(m) ?? "manufacturer") + " (\(m))"
            }
            if let up = a.up { s += up ? "  up" : "  down" }
            s += "\n"
        }
        return s
    }
}

/// Audits frames as they are captured (`capture --audit`).
final class LiveAudit: LiveAuditHook {
    let feed: AuditFeed
    let auditor: Auditor
    let failOn: FailOn
    let name: String
    private var last: FrameRef?

    init(dissector: Dissector, configuration: AuditConfiguration, failOn: FailOn, name: String) {
        feed = AuditFeed(dissector: dissector, configuration: configuration)
        auditor = Auditor(configuration: configuration, capturePath: name)
        auditor.assume(.liveMonitor)
        auditor.resolveAddresses(with: dissector.resolver)
        self.failOn = failOn
        self.name = name
        auditor.onFinding = { f in
            let frames = f.evidence.map { String($0.number) }.joined(separator: ", ")
            stderr("blesniff: finding: \(f.severity) \(f.rule) \(f.ruleName): \(f.message) [frames \(frames)]")
        }
    }

    func observe(_ d: Decoded) {
        feed.events(d, into: auditor)
        last = FrameRef(number: d.packet.number, time: d.packet.timestamp, fileOffset: d.packet.fileOffset,
                        fileLength: d.packet.fileLength)
    }

    func finish() -> Int {
        feed.finish(into: auditor, at: last)
        let audits = [CaptureAudit(path: name, outcome: auditor.finishAudit(at: last))]
        var report = AuditReport(audits: audits)
        report.failOn = failOn
        report.colour = false
        let out = Output(fd: 2)
        report.write(.text, to: out)
        out.flush()
        return Int(AuditExit.code(audits, failOn: failOn))
    }
}
