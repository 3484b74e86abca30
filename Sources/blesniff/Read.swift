import ArgumentParser
import Decoders
import Report

struct Read: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decode captures frame by frame.",
        discussion: """
            Reads pcap, pcapng and btsnoop files (or - for standard input), detected by content. \
            Prints one line per frame with the deepest decoded layer; -v prints every layer's fields; \
            --format json prints one JSON object per line.
            """)

    @Argument(help: "Capture files; - reads standard input.")
    var files: [String]

    @Option(help: "Output format: text or json.")
    var format: FramePrinter.Format = .text

    @Flag(name: .shortAndLong, help: "Print the full decode of every frame.")
    var verbose = false

    @Option(help: "Stop after printing this many frames.")
    var count: Int?

    @Option(help: "Skip this many frames before printing (they are still decoded).")
    var skip: Int = 0

    @OptionGroup var decoding: DecodeOptions

    @OptionGroup var filtering: FilterOptions

    @OptionGroup var deviceFilter: DeviceFilterOption

    @Flag(name: .shortAndLong, help: "Decode everything but print only a count of frames and malformed frames.")
    var quiet = false

    mutating func run() throws {
        let out = Output()
        var printed = 0, malformed = 0, total = 0
        let limit = count ?? Int.max
        // Options read once: a property wrapper's getter per frame costs more than decoding it.
        let skip = self.skip, quiet = self.quiet
        let filter = try filtering.compile(device: deviceFilter.device)
        struct Done: Error {}
        var ok = true
        do {
            for group in decoding.groups(files) {
                let dissector = decoding.dissector()
                let printer = FramePrinter(format: format, verbose: verbose, output: out)
                var seen = 0
                filter?.reset()
                ok = try decoding.input.forEachPacket(group) { packet in
                    let d = dissector.dissect(packet)
                    printer.noteFrame(packet)
                    if let filter, !filter.matches(d) { return }
                    seen += 1
                    if d.isMalformed { malformed += 1 }
                    guard seen > skip, !quiet else { return }
                    printer.print(d)
                    printed += 1
                    if printed >= limit { throw Done() }
                } && ok
                total += seen
            }
        } catch is Done {}
        if quiet { out.write("\(total) \(filter == nil ? "frames" : "matching frames"), \(malformed) malformed\n") }
        out.flush()
        if !ok { throw ExitCode(2) }
    }
}

extension FramePrinter.Format: ExpressibleByArgument {}
