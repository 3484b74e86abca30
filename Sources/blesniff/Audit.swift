import ArgumentParser
import Capture
import Decoders
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Report

extension AuditFormat: ExpressibleByArgument {}
extension FailOn: ExpressibleByArgument {}

/// `blesniff audit FILE...`: checks captures against the best-practice rules and reports for CI.
struct Audit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Check captures against BLE best-practice rules (see `blesniff rules`).",
        discussion: """
            Exit status: 0 when no unsuppressed finding is at or above --fail-on, 1 when one is, 2 when \
            a capture cannot be read, a directory holds no capture or the configuration is invalid. \
            Directories are searched recursively for every format `read` reads, recognised by content \
            (--verbose lists the files passed over and why); - is standard input. Several \
            --format/--output pairs write several reports from one pass.
            """)

    @Argument(help: "Capture files, or directories to search for captures; - reads standard input.", completion: .file())
    var paths: [String]

    @Flag(name: .shortAndLong, help: "List the files a directory search passed over, and why.")
    var verbose = false

    @Option(name: .long, help: "Report format: text, json, sarif, junit, markdown or html (the full page, as blesniff report makes it) (repeatable, paired with --output in order).")
    var format: [AuditFormat] = []

    @Option(name: [.short, .long], help: "Write the report to this file ('-' for standard output); repeatable.", completion: .file())
    var output: [String] = []

    @Option(name: .long, help: "Fail (exit 1) on unsuppressed findings at or above: error, warning, note or never.")
    var failOn: FailOn = .error

    @Option(name: .long, help: "Baseline of accepted findings: those are reported as suppressed and do not fail.", completion: .file())
    var baseline: String?

    @Option(name: .long, help: "Write every finding of this run to a baseline file.")
    var writeBaseline: String?

    @Option(name: .long, help: ArgumentHelp("SARIF: the repository root capture URIs are relative to (default: the git top level above the working directory, else the working directory).", valueName: "dir"))
    var sourceRoot: String?

    @Option(name: .long, help: "Captures audited at once (default: one per processor core).")
    var jobs: Int?

    @Flag(name: .long, help: "No colour in text output.")
    var noColor = false

    @OptionGroup var scope: AuditScopeOptions

    func run() throws {
        let configuration = scope.configurationOrExit()

        var accepted: Baseline?
        if let path = baseline {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                fail("cannot read baseline " + path)
            }
            accepted = Baseline.parse(text)
        }

        let verbose = self.verbose
        let files = CaptureFiles.expand(paths) { skip in
            if verbose { stderr("blesniff: skipped " + skip.path + ": " + skip.reason) }
        }
        if let j = jobs, j < 1 { fail("--jobs must be at least 1") }
        if streamsText {
            try runStreamingText(files, configuration: configuration, baseline: accepted)
            return
        }
        // The HTML page shows the whole capture, not only findings: collect it in the same pass.
        let wantsPage = destinations().contains { $0.0 == .html }
        let (audits, pages) = AuditRun.run(files, configuration: configuration, baseline: accepted, collectPages: wantsPage,
                                           jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount)
        for a in audits {
            if let e = a.error { writeStandardError("blesniff: " + a.path + ": " + e + "\n") }
        }

        var report = AuditReport(audits: audits)
        report.failOn = failOn
        if destinations().contains(where: { $0.0 == .sarif }) {
            let root = SourceRoot.find(sourceRoot)
            report.sarifSourcePath = { SourceRoot.relative($0, to: root) }
        }
        for (fmt, destination) in destinations() {
            if let path = destination {
                guard let out = Output(path: path) else { fail("cannot write " + path) }
                report.colour = false
                if fmt == .html, !pages.isEmpty { out.write(HTMLReport.render(pages)) } else { report.write(fmt, to: out) }
                out.close()
            } else {
                report.colour = fmt == .text && !noColor && isatty(1) == 1
                    && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
                let out = Output(fd: 1)
                if fmt == .html, !pages.isEmpty { out.write(HTMLReport.render(pages)) } else { report.write(fmt, to: out) }
                out.flush()
            }
        }

        if let path = writeBaseline {
            do {
                try Baseline.render(audits).write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                fail("cannot write baseline " + path)
            }
        }

        let code = AuditExit.code(audits, failOn: failOn)
        if code != 0 { throw ExitCode(code) }
    }

    /// Only the text report, to standard output: the common case, where each capture's part of the
    /// report is rendered as soon as it is audited and its findings dropped.
    var streamsText: Bool {
        let d = destinations()
        return d.count == 1 && d[0].0 == .text && d[0].1 == nil && writeBaseline == nil
    }

    /// The text report without keeping every capture's findings to the end: a directory audit holds
    /// the findings of the captures being audited and the text of those done. Errors still go to
    /// standard error before the report, as with the other formats.
    private func runStreamingText(_ files: [CaptureFiles.Entry], configuration: AuditConfiguration,
                                  baseline: Baseline?) throws {
        let colour = !noColor && isatty(1) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
        let spool = AuditRun.Spool()
        let sections = AuditRun.each(files.count, jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount) { i in
            AuditRun.TextSection(AuditRun.audit(files[i], configuration: configuration, baseline: baseline),
                                 colour: colour, spool: spool)
        }
        // The report's own line ("PATH: cannot audit: REASON") is the one line per error.
        let out = Output(fd: 1)
        var total = AuditReport.Counts()
        for s in sections {
            for piece in s.text { out.write(spool.text(piece)) }
            total.add(s.counts)
        }
        if sections.count > 1 { out.write(AuditReport.textTotal(total)) }
        out.flush()
        let code = AuditExit.code(sections.map { ($0.counts, $0.error) }, failOn: failOn)
        if code != 0 { throw ExitCode(code) }
    }

    /// Formats paired with outputs in order; a format without an output goes to standard output,
    /// an output without a format takes it from its extension.
    func destinations() -> [(AuditFormat, String?)] {
        if output.isEmpty { return format.isEmpty ? [(.text, nil)] : format.map { ($0, nil) } }
        var out: [(AuditFormat, String?)] = []
        for (i, path) in output.enumerated() {
            let fmt = i < format.count ? format[i] : AuditFormat(fileExtensionOf: path) ?? .text
            out.append((fmt, path == "-" ? nil : path))
        }
        if format.count > output.count { out += format[output.count...].map { ($0, nil) } }
        return out
    }

    private func fail(_ message: String) -> Never {
        writeStandardError("blesniff: error: " + message + "\n")
        Glibc.exit(AuditExit.inputError)
    }
}

extension Platform: ExpressibleByArgument {}

/// What the audit is about: the configuration file, and the platform and devices under test over it.
struct AuditScopeOptions: ParsableArguments {
    @Option(name: .long, help: "Configuration file (default: the nearest .blesniff.yml upward from here).", completion: .file())
    var config: String?

    @Option(name: .long, help: "The host stack the capture comes from: android, apple, linux-bluez or embedded (default: told from the capture).")
    var platform: Platform?

    @Option(name: .long, help: "A device under test besides those this host connected to: an address, or a name pattern (repeatable).")
    var device: [String] = []

    @Flag(name: .long, help: "Audit every advertiser in range, not only the devices under test.")
    var allAdvertisers = false

    /// The configuration file's settings (`--config`, else the nearest `.blesniff.yml`) with these
    /// options over them.
    func configuration() throws(ConfigurationError) -> AuditConfiguration {
        apply(to: try AuditConfiguration.load(orDiscover: config))
    }

    /// `configuration()`, or its error on standard error and exit 2 (an input error).
    func configurationOrExit() -> AuditConfiguration {
        do { return try configuration() } catch {
            stderr("blesniff: error: \(error)")
            Glibc.exit(AuditExit.inputError)
        }
    }

    func apply(to configuration: AuditConfiguration) -> AuditConfiguration {
        var c = configuration
        if let p = platform { c.platform = p == .unknown ? nil : p }
        c.devices += device.map { DeviceMatcher(parsing: $0) ?? .name($0) }
        if allAdvertisers { c.allAdvertisers = true }
        return c
    }
}

/// Audits captures in parallel, one auditor per file; results keep the input order.
enum AuditRun {
    final class Results<T>: @unchecked Sendable {
        private let lock = Lock()
        private var items: [T?]
        init(_ n: Int) { items = Array(repeating: nil, count: n) }
        func set(_ i: Int, _ a: T) { lock.lock(); items[i] = a; lock.unlock() }
        var all: [T] { lock.lock(); defer { lock.unlock() }; return items.compactMap { $0 } }
    }

    /// One capture's part of the text report, with what the run's total and exit status need.
    struct TextSection: Sendable {
        var path: String
        /// The text, in pieces: captures audited at once write theirs to the spool in turns.
        var text: [Spool.Entry] = []
        var counts: AuditReport.Counts
        var error: String?

        init(_ a: CaptureAudit, colour: Bool, spool: Spool) {
            path = a.path
            var pieces: [Spool.Entry] = []
            AuditReport.textSection(a, colour: colour, chunk: 1 << 16) { pieces.append(spool.add($0)) }
            text = pieces
            counts = AuditReport.Counts()
            counts.add(a.findings)
            error = a.error
        }
    }

    /// Report text of the captures audited so far, kept in an unlinked temporary file (in memory
    /// when none can be made) until the run writes it out in capture order: memory stays flat
    /// however many captures a directory holds.
    final class Spool: @unchecked Sendable {
        enum Entry: Sendable {
            case file(offset: Int, length: Int)
            case memory(String)
        }

        private let lock = Lock()
        private let file: UnsafeMutablePointer<FILE>?
        private var size = 0

        init() { file = tmpfile() }

        deinit { if let f = file { fclose(f) } }

        func add(_ text: String) -> Entry {
            guard let f = file else { return .memory(text) }
            var t = text
            return t.withUTF8 { b -> Entry in
                lock.lock()
                defer { lock.unlock() }
                guard fseek(f, size, SEEK_SET) == 0, fwrite(b.baseAddress, 1, b.count, f) == b.count else {
                    return .memory(String(decoding: b, as: UTF8.self))
                }
                let e = Entry.file(offset: size, length: b.count)
                size += b.count
                return e
            }
        }

        func text(_ e: Entry) -> String {
            switch e {
            case .memory(let s): return s
            case .file(let offset, let length):
                guard let f = file, length > 0 else { return "" }
                lock.lock()
                defer { lock.unlock() }
                var bytes = [UInt8](repeating: 0, count: length)
                let got = bytes.withUnsafeMutableBytes { p -> Int in
                    guard fseek(f, offset, SEEK_SET) == 0 else { return 0 }
                    return fread(p.baseAddress, 1, length, f)
                }
                return String(decoding: bytes.prefix(got), as: UTF8.self)
            }
        }
    }

    /// Hands out file indices to the workers in order; each takes the next when it is done.
    final class Queue: @unchecked Sendable {
        private let lock = Lock()
        private var next = 0
        private let count: Int
        init(_ count: Int) { self.count = count }
        func take() -> Int? {
            lock.lock(); defer { lock.unlock() }
            guard next < count else { return nil }
            next += 1
            return next - 1
        }
    }

    /// Audits the files in parallel (independent captures), `jobs` at a time; with `collectPages`
    /// each pass also collects what the HTML page shows.
    static func run(_ files: [CaptureFiles.Entry], configuration: AuditConfiguration, baseline: Baseline?,
                    collectPages: Bool = false, jobs: Int) -> ([CaptureAudit], [ReportCollector]) {
        let all = each(files.count, jobs: jobs) { i -> (CaptureAudit, ReportCollector?) in
            collectPages
                ? page(files[i], configuration: configuration, baseline: baseline)
                : (audit(files[i], configuration: configuration, baseline: baseline), nil)
        }
        return (all.map(\.0), all.compactMap(\.1))
    }

    /// `body` for 0..<count, `jobs` at a time; the results in index order.
    static func each<T>(_ count: Int, jobs: Int, _ body: @escaping @Sendable (Int) -> T) -> [T] {
        let results = Results<T>(count)
        let queue = Queue(count)
        let workers = max(1, min(jobs, count))
        if workers == 1 {
            for i in 0..<count { results.set(i, body(i)) }
        } else {
            DispatchQueue.concurrentPerform(iterations: workers) { _ in
                while let i = queue.take() { results.set(i, body(i)) }
            }
        }
        return results.all
    }

    static func audit(_ file: CaptureFiles.Entry, configuration: AuditConfiguration, baseline: Baseline?) -> CaptureAudit {
        let auditor = Auditor(configuration: configuration, capturePath: file.path, baseline: baseline)
        if let problem = file.problem {
            return CaptureAudit(path: file.path, error: problem, rules: auditor.enabledRules)
        }
        var last: FrameRef?
        var failure: String?
        do { last = try auditCapture(file.path, into: auditor, configuration: configuration) } catch {
            failure = String(describing: error)
        }
        return CaptureAudit(path: file.path, outcome: auditor.finishAudit(at: last), error: failure,
                            rules: auditor.enabledRules)
    }

    static func page(_ file: CaptureFiles.Entry, configuration: AuditConfiguration,
                     baseline: Baseline?) -> (CaptureAudit, ReportCollector?) {
        let rules = Auditor(configuration: configuration, capturePath: file.path).enabledRules
        if let problem = file.problem { return (CaptureAudit(path: file.path, error: problem, rules: rules), nil) }
        let pass = ReportPass(path: file.path, configuration: configuration, baseline: baseline)
        var failure: String?
        do { try forEachPacket(in: file.path, platform: pass.assume) { pass.add($0) } } catch { failure = String(describing: error) }
        let collector = pass.finish(error: failure)
        return (CaptureAudit(path: file.path, outcome: collector.outcome, error: failure, rules: rules), collector)
    }
}

/// The capture files named on the command line, directories searched recursively.
enum CaptureFiles {
    struct Entry: Sendable {
        var path: String
        /// Why it cannot be audited (missing, unreadable, a folder with no capture), found before reading it.
        var problem: String?
    }

    /// A file a directory walk passed over, and why.
    struct Skipped: Sendable {
        var path: String
        var reason: String
    }

    /// The captures `paths` name: "-" is standard input, a directory is searched recursively for
    /// files in any format `read` reads, recognised by content as `read` recognises them (a
    /// PacketLogger or bug-report file counts whatever its name). A directory holding none is an
    /// entry with a problem: a wrong path must not pass as a clean audit.
    static func expand(_ paths: [String], skipped: ((Skipped) -> Void)? = nil) -> [Entry] {
        var out: [Entry] = []
        let fm = FileManager.default
        for p in paths {
            if p == "-" {
                out.append(Entry(path: p))
                continue
            }
            var isDir = false
            guard fm.fileExists(atPath: p, isDirectory: &isDir) else {
                out.append(Entry(path: p, problem: "no such file or directory"))
                continue
            }
            guard isDir else {
                out.append(Entry(path: p, problem: fm.isReadableFile(atPath: p) ? nil : "not readable"))
                continue
            }
            var found: [String] = []
            for rel in Paths.walk(p).sorted() {
                let full = (p.hasSuffix("/") ? p : p + "/") + rel
                var d = false
                guard fm.fileExists(atPath: full, isDirectory: &d), !d else { continue }
                if let why = whyNotACapture(full) {
                    skipped?(Skipped(path: full, reason: why))
                } else {
                    found.append(full)
                }
            }
            if found.isEmpty {
                out.append(Entry(path: p, problem: "no capture in this directory"))
            } else {
                out += found.map { Entry(path: $0) }
            }
        }
        return out
    }

    /// Nil when `path` opens as a capture in any format `read` reads, or when it is one that
    /// cannot be read (a broken header, an unsupported link type: the audit reports that);
    /// else why it is not one.
    static func whyNotACapture(_ path: String) -> String? {
        do {
            _ = try CaptureReader(path: path)
            return nil
        } catch {
            switch error.kind {
            case .notACapture: return "not a capture file (pcap, pcapng, btsnoop, PacketLogger or Android bug report)"
            case .io: return error.message
            default: return nil
            }
        }
    }
}

/// Where SARIF paths are relative to: code scanning resolves them against the repository.
enum SourceRoot {
    /// `given` made absolute, else the nearest directory upward from the working directory that
    /// holds `.git` (the git top level), else the working directory.
    static func find(_ given: String?) -> String {
        let cwd = FileManager.default.currentDirectoryPath
        if let given { return absolute(given, cwd: cwd) }
        var dir = cwd
        while true {
            if FileManager.default.fileExists(atPath: dir + "/.git") { return dir }
            let up = Paths.deletingLastComponent(dir)
            if up == dir || up.isEmpty { return cwd }
            dir = up
        }
    }

    static func absolute(_ path: String, cwd: String = FileManager.default.currentDirectoryPath) -> String {
        Paths.standardized(path.hasPrefix("/") ? path : cwd + "/" + path)
    }

    /// `path` relative to `root` when under it; else absolute. Standard input stays "-".
    static func relative(_ path: String, to root: String) -> (path: String, underRoot: Bool) {
        guard path != "-" else { return (path, false) }
        let full = absolute(path)
        let prefix = root.hasSuffix("/") ? root : root + "/"
        return full.hasPrefix(prefix) ? (String(full.dropFirst(prefix.count)), true) : (full, false)
    }
}
