import ArgumentParser
import Decoders
import Report

struct Read: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Decode captures frame by frame.",
        discussion: """
            Reads pcap, pcapng and btsnoop files (or - for standard input), detected by content. \
            Prints one line per frame with the deepest decoded layer; -v prints every layer's fields; \
            --format json prints one JSON object per line.
            """)

    @Argument(help: "Capture files; - reads standard input.", completion: .file())
    var files: [String] = []

    @Option(name: .customShort("r"), help: ArgumentHelp("A capture file, as tshark takes it (the same as naming it); repeatable.", valueName: "file"),
            completion: .file())
    var readFiles: [String] = []

    @Option(help: "Output format: text or json.")
    var format: FramePrinter.Format = .text

    @Option(name: .customShort("T"), help: ArgumentHelp(
        "tshark's output format: text, json, or fields (with -e: one line per frame, the fields' values separated by tabs).",
        valueName: "format"), completion: .list(["text", "json", "fields"]))
    var tsharkFormat: String?

    @Option(name: .customShort("e"), help: ArgumentHelp(
        "A field for -T fields: ours or tshark's name, or frame.number, frame.time_relative, frame.time_epoch, frame.time_delta, frame.len, _ws.col.Info; repeatable, in column order.",
        valueName: "field"), completion: .shellCommand("blesniff fields 2>/dev/null | cut -d' ' -f1"))
    var fieldNames: [String] = []

    @Option(name: .customShort("E"), help: ArgumentHelp(
        "A -T fields setting as tshark takes it: header=y, separator=/t|/s|C, aggregator=,|/s|C, occurrence=a|f|l|N, quote=d|s|n; repeatable.",
        valueName: "key=value"))
    var fieldSettings: [String] = []

    @Option(name: .customShort("t"), help: ArgumentHelp(
        "Time column as tshark's -t: r relative to the first frame (default), a time of day, ad date and time, e seconds since the epoch, d since the previous frame, dd since the previous frame printed, u and ud in UTC.",
        valueName: "format"))
    var timeFormat: FramePrinter.TimeFormat = .r

    @Option(name: .customShort("z"), help: ArgumentHelp(
        "Statistics after the frames, as tshark's -z: conv (per connection), hci (commands and events), att (PDUs by opcode and handle), io,stat[,SECONDS] (frames and octets per interval); repeatable. With -q, only them.",
        valueName: "statistic"))
    var statistics: [String] = []

    @Flag(name: .customShort("x"), help: "Print each frame's bytes in hex and ASCII after it, as tshark -x.")
    var hexDump = false

    @Flag(name: [.customShort("v"), .customShort("V"), .long], help: "Print the full decode of every frame (-V as tshark).")
    var verbose = false

    @Option(name: [.customShort("c"), .long], help: "Stop after printing this many frames.")
    var count: Int?

    @Option(help: "Skip this many frames before printing (they are still decoded).")
    var skip: Int = 0

    @OptionGroup var decoding: DecodeOptions

    @OptionGroup var filtering: FilterOptions

    @OptionGroup var deviceFilter: DeviceFilterOption

    @Flag(name: .shortAndLong, help: "Decode everything but print only a count of frames and malformed frames.")
    var quiet = false

    func validate() throws {
        if files.isEmpty && readFiles.isEmpty { throw ValidationError("Missing expected argument '<files> ...'") }
        if let t = tsharkFormat, !["text", "json", "fields"].contains(t) {
            throw ValidationError("-T \(t): expected text, json or fields")
        }
        if tsharkFormat == "fields", fieldNames.isEmpty { throw ValidationError("-T fields needs at least one -e FIELD") }
        if !fieldNames.isEmpty, tsharkFormat != "fields" { throw ValidationError("-e is for -T fields") }
        for z in statistics where Statistics.Table(z) == nil {
            throw ValidationError("-z \(z): expected conv, hci, att or io,stat[,SECONDS]")
        }
        var o = FieldColumns.Options()
        for e in fieldSettings { if let problem = o.set(e) { throw ValidationError(problem) } }
    }

    mutating func run() throws {
        files = readFiles + files
        if let t = tsharkFormat, t != "fields" { format = t == "json" ? .json : .text }
        if tsharkFormat == "fields" { return try runFields() }
        let out = Output()
        var printed = 0, malformed = 0, total = 0
        let limit = count ?? Int.max
        // Options read once: a property wrapper's getter per frame costs more than decoding it.
        let skip = self.skip, quiet = self.quiet
        let filter = try filtering.compile(device: deviceFilter.device)
        let stats = statistics.isEmpty ? nil : Statistics(statistics.compactMap(Statistics.Table.init))
        struct Done: Error {}
        var ok = true
        let groups = decoding.groups(files)
        do {
            for (n, group) in groups.enumerated() {
                // Several captures read one after another: a banner names each (text only).
                if groups.count > 1, format == .text, !quiet {
                    out.write(n == 0 ? "==> " : "\n==> ")
                    out.write(display: group.joined(separator: " + "))
                    out.write(" <==\n")
                }
                let dissector = decoding.dissector(keepEnded: 0)
                let printer = FramePrinter(format: format, verbose: verbose, output: out)
                printer.timeFormat = timeFormat
                printer.hexDump = hexDump
                var seen = 0
                filter?.reset()
                ok = try decoding.input.forEachPacket(group) { packet in
                    let d = dissector.dissect(packet)
                    printer.noteFrame(packet)
                    if let filter, !filter.matches(d) { return }
                    seen += 1
                    if d.isMalformed { malformed += 1 }
                    stats?.add(d)
                    guard seen > skip, !quiet else { return }
                    printer.print(d)
                    printed += 1
                    if printed >= limit { throw Done() }
                } && ok
                total += seen
            }
        } catch is Done {}
        if quiet, stats == nil { out.write("\(total) \(filter == nil ? "frames" : "matching frames"), \(malformed) malformed\n") }
        stats?.write(to: out)
        out.flush()
        if !ok { throw ExitCode(2) }
    }

    /// `-T fields -e …`: one line per frame that passes the filters.
    private func runFields() throws {
        let out = Output()
        var options = FieldColumns.Options()
        for e in fieldSettings { _ = options.set(e) }
        let columns: FieldColumns
        do { columns = try FieldColumns(fieldNames, options: options) } catch {
            throw ValidationError("-e: \(error)")
        }
        let filter = try filtering.compile(device: deviceFilter.device)
        let limit = count ?? Int.max, skip = self.skip
        var printed = 0
        var ok = true
        struct Done: Error {}
        columns.writeHeader(to: out)
        do {
            for group in decoding.groups(files) {
                let dissector = decoding.dissector(keepEnded: 0)
                var seen = 0
                filter?.reset()
                columns.reset()
                ok = try decoding.input.forEachPacket(group) { packet in
                    let d = dissector.dissect(packet)
                    columns.noteFrame(packet)
                    if let filter, !filter.matches(d) { return }
                    seen += 1
                    guard seen > skip else { return }
                    columns.write(d, to: out)
                    printed += 1
                    if printed >= limit { throw Done() }
                } && ok
            }
        } catch is Done {}
        out.flush()
        if !ok { throw ExitCode(2) }
    }
}

extension FramePrinter.Format: ExpressibleByArgument {}
extension FramePrinter.TimeFormat: ExpressibleByArgument {}
