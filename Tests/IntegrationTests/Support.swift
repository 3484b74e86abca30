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

    struct Run {
        let process: Process
        let stdout: String
        let stderr: String
        init(_ binary: String, _ args: [String], environment: [String: String] = [:], stdin: String? = nil) throws {
            process = Process()
            if let stdin { process.standardInput = FileHandle(forReadingAtPath: stdin) }
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = args
            if !environment.isEmpty {
                process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            }
            stdout = NSTemporaryDirectory() + "blesniff-out-\(UUID().uuidString)"
            stderr = stdout + ".err"
            _ = FileManager.default.createFile(atPath: stdout, contents: nil)
            _ = FileManager.default.createFile(atPath: stderr, contents: nil)
            process.standardOutput = FileHandle(forWritingAtPath: stdout)
            process.standardError = FileHandle(forWritingAtPath: stderr)
            try process.run()
        }
        func wait(timeout: TimeInterval = 60) -> (status: Int32, out: String, err: String) {
            let end = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < end { Thread.sleep(forTimeInterval: 0.02) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
            let out = (try? String(contentsOfFile: stdout, encoding: .utf8)) ?? ""
            let err = (try? String(contentsOfFile: stderr, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(atPath: stdout)
            try? FileManager.default.removeItem(atPath: stderr)
            return (process.terminationStatus, out, err)
        }
    }

    static func run(_ args: [String], environment: [String: String] = [:], stdin: String? = nil) throws -> (status: Int32, out: String, err: String) {
        try Run(try binary(), args, environment: environment, stdin: stdin).wait()
    }
}
