import ArgumentParser
import Capture
import Decoders
import FoundationEssentials
import Report

/// `blesniff report FILE -o report.html`: one self-contained HTML page per run.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write a self-contained HTML report: timeline, devices, connections, GATT and findings.",
        discussion: """
            One pass over each capture collects a summary, a timeline (scanning, advertising, connections \
            with their discovery, reads, writes and notifications, findings as flags), each advertiser's \
            data, RSSI and interval, each connection's parameters, MTU, encryption, rebuilt GATT database, \
            ATT round-trip times and throughput, and the audit's findings. The page has no external \
            resources and opens offline; large captures are aggregated into fixed time bins.
            """)

    @Argument(help: "Capture files; - reads standard input.", completion: .file())
    var files: [String]

    @Option(name: [.short, .long], help: "Write the page to this file ('-' for standard output; default report.html, named on standard error).", completion: .file())
    var output: String?

    @Option(name: .long, help: "Baseline of accepted findings: shown as suppressed.", completion: .file())
    var baseline: String?

    @Option(help: "Advertisers summarised in full; later ones are only counted (by address type).")
    var maxAdvertisers = Advertisers.defaultMaxTracked

    @OptionGroup var decoding: DecodeOptions

    @OptionGroup var scope: AuditScopeOptions

    @OptionGroup var filtering: FilterOptions

    mutating func run() throws {
        let configuration = scope.configurationOrExit()
        var accepted: Baseline?
        if let path = baseline {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                stderr("blesniff: error: cannot read baseline " + path)
                throw ExitCode(2)
            }
            accepted = Baseline.parse(text)
        }

        let filter = try filtering.compile()
        var limits = ReportLimits()
        limits.maxAdvertisers = maxAdvertisers
        var collectors: [ReportCollector] = []
        var ok = true
        for group in decoding.groups(files) {
            let file = group.joined(separator: " + ")
            let pass = ReportPass(path: file, configuration: configuration, baseline: accepted, keys: decoding.keys,
                                  temporaryKeys: decoding.temporaryKeys + configuration.keys.flatMap(\.temporaryKeys),
                                  givenKeys: decoding.givenKeys + configuration.keys.flatMap(\.linkKeys),
                                  privateKeys: decoding.privateKeys + configuration.keys.flatMap(\.privateKeys), limits: limits)
            var problem: String?
            filter?.reset()
            let read = try decoding.input.forEachPacket(group, platform: pass.assume) { pass.add($0, filter: filter) }
            if !read {
                ok = false
                // An unreadable file has no page; one cut short shows what was read.
                if pass.collector.frames == 0 { continue }
                problem = "the report covers the frames before the error printed when it was made"
            }
            collectors.append(pass.finish(error: problem))
        }
        guard !collectors.isEmpty else { throw ExitCode(2) }

        let page = HTMLReport.render(collectors)
        // Without -o the page lands in the working directory: say so, or it is found by chance.
        let output = self.output ?? "report.html"
        let out: Output
        if output == "-" {
            out = Output(fd: 1)
        } else {
            guard let o = Output(path: output) else {
                stderr("blesniff: error: cannot write " + output)
                throw ExitCode(2)
            }
            out = o
        }
        out.write(page)
        out.close()
        if out.failed {
            stderr("blesniff: error: writing " + output + " failed")
            throw ExitCode(2)
        }
        if self.output == nil { stderr("blesniff: wrote " + output) }
        if !ok { throw ExitCode(2) }
    }
}
