import ArgumentParser
import Capture
import Decoders
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Report

extension DiffFormat: ExpressibleByArgument {}

/// `blesniff diff BASE NEW`: what changed in an app's Bluetooth behaviour between two captures.
struct DiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Compare an app's Bluetooth behaviour between two captures (or two folders of captures).",
        discussion: """
            Per host adapter (scanning) and per device under test (connections, GATT traffic by \
            characteristic UUID, estimated radio time), side by side with the change, and the audit \
            findings added and resolved. Two folders pair their captures by path (then by name without \
            extension). Exit status: 0, or 1 with --fail-on-regression when a metric got worse beyond \
            its threshold (`diff:` in .blesniff.yml), 2 when a capture cannot be read or the \
            configuration is invalid.
            """)

    @Argument(help: "The capture (or folder of captures) before the change.", completion: .file())
    var base: String

    @Argument(help: "The capture (or folder of captures) after the change.", completion: .file())
    var new: String

    @Option(name: .long, help: "Report format: text, markdown or json.")
    var format: DiffFormat = .text

    @Option(name: [.short, .long], help: "Write the report to this file ('-' for standard output).", completion: .file())
    var output: String?

    @Flag(name: .long, help: "Exit 1 when a metric got worse beyond its threshold, or a finding was added.")
    var failOnRegression = false

    @Flag(name: .long, help: "Text: list only the metrics that changed.")
    var changesOnly = false

    @Flag(name: .long, help: "No colour in text output.")
    var noColor = false

    @OptionGroup var scope: AuditScopeOptions

    func run() throws {
        let configuration = scope.configurationOrExit()

        let (pairs, onlyBase, onlyNew) = try pairs()
        var diffs: [CaptureDiff] = []
        for (a, b) in pairs {
            let before: CaptureMetrics, after: CaptureMetrics
            do {
                before = try DiffRun.measure(a, configuration: configuration)
                after = try DiffRun.measure(b, configuration: configuration)
            } catch {
                fail(String(describing: error))
            }
            diffs.append(CaptureDiff(base: a, new: b, before, after, thresholds: configuration.diff))
        }
        var report = DiffReport(diffs: diffs, onlyInBase: onlyBase, onlyInNew: onlyNew)
        report.changesOnly = changesOnly
        if let path = output, path != "-" {
            guard let out = Output(path: path) else { fail("cannot write " + path) }
            out.write(report.render(format))
            out.close()
        } else {
            report.colour = format == .text && !noColor && isatty(1) == 1
                && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
            let out = Output(fd: 1)
            out.write(report.render(format))
            out.flush()
        }
        if failOnRegression && report.regressions > 0 { throw ExitCode(1) }
    }

    /// The captures to compare: the two files, or the two folders' captures paired by path relative
    /// to their folder, then by that path without its extension (a capture converted to another
    /// format still pairs).
    private func pairs() throws -> ([(String, String)], [String], [String]) {
        var isDirA = false, isDirB = false
        let fm = FileManager.default
        for p in [base, new] where p != "-" && !fm.fileExists(atPath: p) { fail(p + ": no such file or directory") }
        _ = fm.fileExists(atPath: base, isDirectory: &isDirA)
        _ = fm.fileExists(atPath: new, isDirectory: &isDirB)
        if !isDirA && !isDirB { return ([(base, new)], [], []) }
        guard isDirA && isDirB else { fail("compare two captures or two folders, not a capture with a folder") }
        func captures(_ dir: String) -> [String: String] {
            var out: [String: String] = [:]
            let prefix = dir.hasSuffix("/") ? dir : dir + "/"
            for e in CaptureFiles.expand([dir]) {
                if let problem = e.problem { fail(e.path + ": " + problem) }
                out[String(e.path.dropFirst(prefix.count))] = e.path
            }
            return out
        }
        var a = captures(base), b = captures(new)
        var pairs: [(String, String)] = []
        for rel in a.keys.sorted() where b[rel] != nil {
            pairs.append((a.removeValue(forKey: rel)!, b.removeValue(forKey: rel)!))
        }
        func stem(_ rel: String) -> String {
            guard let dot = rel.lastIndex(of: "."), !rel[dot...].contains("/") else { return rel }
            return String(rel[..<dot])
        }
        for rel in a.keys.sorted() {
            let matches = b.keys.filter { stem($0) == stem(rel) }
            guard matches.count == 1, a.keys.filter({ stem($0) == stem(rel) }).count == 1 else { continue }
            pairs.append((a.removeValue(forKey: rel)!, b.removeValue(forKey: matches[0])!))
        }
        return (pairs.sorted { $0.0 < $1.0 }, a.values.sorted(), b.values.sorted())
    }

    private func fail(_ message: String) -> Never {
        stderr("blesniff: error: " + message)
        Glibc.exit(AuditExit.inputError)
    }
}

enum DiffRun {
    /// One capture's metrics and audit findings, in one streaming pass.
    static func measure(_ path: String, configuration: AuditConfiguration) throws -> CaptureMetrics {
        let auditor = Auditor(configuration: configuration, capturePath: path)
        let collector = MetricsCollector(passingTo: auditor, devices: configuration.devices)
        let keys = configuration.keys
        let dissector = Dissector(temporaryKeys: keys.flatMap(\.temporaryKeys), givenKeys: keys.flatMap(\.linkKeys),
                                  privateKeys: keys.flatMap(\.privateKeys), identityKeys: keys.flatMap(\.identityKeys), keepEnded: 0,
                                  findsFieldFaults: false, keepsValues: false)
        let feed = AuditFeed(dissector: dissector, configuration: configuration)
        auditor.resolveAddresses(with: dissector.resolver)
        var last: FrameRef?
        try forEachPacket(in: path, platform: auditor.assume) { p in
            let d = dissector.dissect(p)
            collector.frame(d)
            feed.events(d, into: collector)
            last = FrameRef(number: p.number, time: p.timestamp, fileOffset: p.fileOffset, fileLength: p.fileLength)
        }
        feed.finish(into: collector, at: last)
        dissector.finish()
        let outcome = auditor.finishAudit(at: last)
        return collector.finish(at: last?.time, findings: outcome.findings)
    }
}
