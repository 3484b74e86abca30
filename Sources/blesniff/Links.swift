import ArgumentParser
import Decoders
import Report
import Wire

struct Links: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "links",
        abstract: "Why each connection is slow and how it was set up: throughput against what its parameters allow.",
        discussion: """
            For each LE connection: a verdict first (the value octets per second it achieved, the most its \
            connection interval, PHY, data length and ATT MTU allow, and the knob that limits it with what \
            changing it would give), then its parameters over time, the value octets it carried by kind \
            (notifications, indications, writes, writes without response, reads) with the least, median and \
            most per second, request-to-response latency per ATT operation (p50, p95, max, in milliseconds \
            and in connection intervals), and its set-up steps from the connect command: connected, MTU \
            exchanged, discovered, encrypted, subscribed, ready (the first value). The possible rate is \
            computed from air time: each data PDU answered by an empty one after 150 µs, as many as fit in \
            the interval; values that wait for their answer (write requests, indications) carry one per \
            two intervals. Packets per event are not measured from HCI logs (the whole interval is assumed \
            usable). Energy is estimated per connection for each side from the radio's currents \
            (--radio: nRF52840, nRF54L15 or CC2340R5 datasheet figures) and a per-event model: start-up, \
            one exchange each event (the peripheral's receive window widened for 100 ppm of clock drift, \
            idle events skipped up to its peripheral latency), each data PDU's air time; radio only.
            """)

    @Argument(help: "Capture files; - reads standard input.", completion: .file())
    var files: [String]

    @Option(help: "Output format: text or json.")
    var format: FramePrinter.Format = .text

    @Option(help: ArgumentHelp("The radio whose currents the energy estimate uses: " + RadioProfile.builtIn.map(\.name).joined(separator: ", ")
                               + ", or a profile file of your own (YAML: " + RadioProfile.fileKeys.map(\.0).joined(separator: ", ") + ").",
                               valueName: "name-or-file"), completion: .file())
    var radio = RadioProfile.builtIn[0].name

    @OptionGroup var decoding: DecodeOptions

    func validate() throws {
        do { _ = try RadioProfile.resolve(radio) } catch { throw ValidationError(String(describing: error)) }
    }

    mutating func run() throws {
        let out = Output()
        var ok = true
        for group in decoding.groups(files) {
            let file = group.joined(separator: " + ")
            let dissector = decoding.dissector(keepEnded: 0, findsFieldFaults: false, keepsValues: false)
            let feed = AuditFeed(dissector: dissector)
            let links = LinkCollector()
            var frames = 0
            var last: FrameRef?
            let read = try decoding.input.forEachPacket(group) { p in
                frames += 1
                let d = dissector.dissect(p)
                links.frame(d)
                feed.events(d, into: links)
                last = FrameRef(number: p.number, time: p.timestamp)
            }
            feed.finish(into: links, at: last)
            ok = read && ok
            if !read, frames == 0 { continue }
            let list = links.finish(at: last)
            let advertising = links.finishAdvertising(at: last)
            let profile = (try? RadioProfile.resolve(radio)) ?? RadioProfile.builtIn[0]
            switch format {
            case .text: LinkReport.text(list, advertising: advertising, file: file, dropped: links.dropped, profile: profile, to: out)
            case .json: LinkReport.json(list, advertising: advertising, file: file, profile: profile, to: out)
            }
        }
        out.flush()
        if !ok { throw ExitCode(2) }
    }
}
