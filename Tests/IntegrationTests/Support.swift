import XCTest
import Capture
import Decoders
import Wire

/// Paths and helpers shared by the integration tests.
enum Fixtures {
    /// The package root (this file is Tests/IntegrationTests/Support.swift).
    static let root: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()
    static let captures = root + "/Tests/Captures"
    static let expected = captures + "/expected"
    static let shared = root + "/../shared/captures"

    static func files(in dir: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: dir))?.sorted() ?? []
    }

    /// Committed test captures (every file in Tests/Captures that is a capture).
    static var committed: [String] {
        files(in: captures).filter { [".btsnoop", ".pcap", ".pcapng", ".log"].contains(where: $0.hasSuffix) }
    }

    static func sharedOrSkip() throws -> [String] {
        let f = files(in: shared).filter { $0 != "MANIFEST.tsv" && $0 != "README.md" }
        if f.isEmpty { throw XCTSkip("../shared/captures is absent") }
        return f
    }

    /// The over-the-air capture a sniffer would have written of a committed Bumble session
    /// (scripts/fixtures/make_air_capture.py with `options`: --nordic for link type 272, --coded for LE
    /// Coded), made once per test run; skips where Python's cryptography package is absent.
    static func airCapture(_ session: String, _ options: [String] = []) throws -> String {
        let path = airDirectory + "/" + ([session] + options.map { String($0.dropFirst(2)) }).joined(separator: "-") + ".pcap"
        if FileManager.default.fileExists(atPath: path) { return path }
        try FileManager.default.createDirectory(atPath: airDirectory, withIntermediateDirectories: true)
        let made = try Subprocess.run("python3", [root + "/scripts/fixtures/make_air_capture.py"] + options + [captures + "/" + session + ".btsnoop", path])
        if made.status == 77 { throw XCTSkip("Python's cryptography package is absent") }
        guard made.status == 0 else { throw XCTSkip("make_air_capture.py failed on \(session): \(made.err)") }
        return path
    }
    static let airDirectory = NSTemporaryDirectory() + "blesniff-air-captures-\(getpid())"

    /// Decodes a whole capture; returns the decoded frames through `body`.
    static func decode(_ path: String, dissector: Dissector = Dissector(), _ body: (Decoded) -> Void) throws {
        let reader = try CaptureReader(path: path)
        while let r = try reader.next() {
            let p = Packet(r)
            body(dissector.dissect(p))
        }
    }

    /// tshark's fields for a capture, from Tests/Captures/expected/NAME.tsv: one dictionary per frame.
    static func expected(_ name: String) -> [[String: String]]? {
        guard let text = try? String(contentsOfFile: expected + "/" + name + ".tsv", encoding: .utf8) else { return nil }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while lines.last == "" { lines.removeLast() }
        guard let header = lines.first?.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) else { return nil }
        return lines.dropFirst().map { line in
            let cols = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            var row: [String: String] = [:]
            for (i, h) in header.enumerated() where i < cols.count && !cols[i].isEmpty { row[h] = cols[i] }
            return row
        }
    }

    /// First integer of a tshark field value ("0x0004,0x0004" → 4).
    static func int(_ s: String?) -> Int? {
        guard let first = s?.split(separator: ",").first else { return nil }
        return first.hasPrefix("0x") ? Int(first.dropFirst(2), radix: 16) : Int(first)
    }
}

/// Runs the built `blesniff` executable.
enum CLI {
    static func binary() throws -> String {
        var candidates: [String] = []
        if let exe = Bundle.main.executablePath { candidates.append((exe as NSString).deletingLastPathComponent + "/blesniff") }
        for b in Bundle.allBundles { candidates.append((b.bundlePath as NSString).deletingLastPathComponent + "/blesniff") }
        candidates.append(Fixtures.root + "/.build/debug/blesniff")
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("the blesniff executable is not built")
        }
        return found
    }

    /// A running `blesniff` (or any program); see `Subprocess`.
    typealias Run = Subprocess

    static func run(_ args: [String], environment: [String: String] = [:], stdin: String? = nil) throws -> (status: Int32, out: String, err: String) {
        try Run(try binary(), args, environment: environment, stdin: stdin).wait()
    }
}

/// A child process started with posix_spawn, its output going to temporary files.
/// Foundation's `Process` leaves descriptors open on Linux; after a few hundred runs its own
/// scan of /proc/self/fd reads past a buffer, which AddressSanitizer stops. Here the parent
/// opens nothing: the child's descriptors are opened by the spawn's file actions.
struct Subprocess {
    let pid: pid_t
    private let outPath: String
    private let errPath: String

    /// Starts `program` (a path, or a name looked up in PATH) with `args`; `stdin` is a file to
    /// read from (default /dev/null).
    init(_ program: String, _ args: [String], environment: [String: String] = [:], stdin: String? = nil) throws {
        outPath = NSTemporaryDirectory() + "blesniff-out-\(UUID().uuidString)"
        errPath = outPath + ".err"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let env = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0)=\($1)" }
        let argv = ([program] + args).map { strdup($0) } + [nil]
        let envp = env.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawnp(&child, program, &actions, nil, argv, envp)
        guard rc == 0 else {
            throw NSError(domain: NSPOSIXErrorDomain, code: Int(rc), userInfo: [NSLocalizedDescriptionKey: "cannot run \(program): \(String(cString: strerror(rc)))"])
        }
        pid = child
    }

    /// Waits for the exit (killing the process after `timeout`) and returns its status and output.
    /// A process ended by a signal reports the signal's number, as `Process` did.
    func wait(timeout: TimeInterval = 60) -> (status: Int32, out: String, err: String) {
        let end = Date().addingTimeInterval(timeout)
        var raw: Int32 = 0
        while waitpid(pid, &raw, WNOHANG) == 0 {
            if Date() >= end { kill(pid, SIGKILL); _ = waitpid(pid, &raw, 0); break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        let signal = raw & 0x7f
        let status = signal == 0 ? (raw >> 8) & 0xff : signal
        let out = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: outPath)
        try? FileManager.default.removeItem(atPath: errPath)
        return (status, out, err)
    }

    /// Runs a program to its end.
    static func run(_ program: String, _ args: [String], environment: [String: String] = [:], stdin: String? = nil,
                    timeout: TimeInterval = 600) throws -> (status: Int32, out: String, err: String) {
        try Subprocess(program, args, environment: environment, stdin: stdin).wait(timeout: timeout)
    }
}
