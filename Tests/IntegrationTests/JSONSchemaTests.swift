import XCTest

/// Every command's JSON output, on every committed and shared capture, is valid against its schema
/// in schemas/ and repeats no key in any object (scripts/dev/validate_json.py; skipped without the
/// jsonschema module).
final class JSONSchemaTests: XCTestCase {
    static let commands: [(schema: String, args: [String], lines: Bool)] = [
        ("read", ["read", "--format", "json"], true),
        ("gatt", ["gatt", "--format", "json"], false),
        ("devices", ["devices", "--format", "json"], false),
        ("keys", ["keys", "--format", "json"], false),
        ("audit", ["audit", "--fail-on", "never", "--format", "json"], false),
        ("links", ["links", "--format", "json"], false),
    ]

    /// Every committed and shared capture.
    static let files: [String] = {
        var files = Fixtures.committed.map { Fixtures.captures + "/" + $0 }
        if let shared = try? Fixtures.sharedOrSkip() { files += shared.map { Fixtures.shared + "/" + $0 } }
        return files
    }()

    /// Each command's output on each file, run once for the three tests that read them (nil where
    /// the command could not be run; testEveryCommandsJSONParses fails on it).
    static let outputs: [[String?]] = {
        final class Results: @unchecked Sendable {
            var outputs: [[String?]]
            let lock = NSLock()
            init(_ commands: Int, _ files: Int) { outputs = Array(repeating: Array(repeating: nil, count: files), count: commands) }
        }
        let results = Results(commands.count, files.count)
        // The captures are independent: as many at once as there are processors.
        DispatchQueue.concurrentPerform(iterations: commands.count * files.count) { n in
            let (k, i) = n.quotientAndRemainder(dividingBy: files.count)
            let out = try? CLI.run(commands[k].args + [files[i]]).out
            results.lock.withLock { results.outputs[k][i] = out }
        }
        return results.outputs
    }()

    func testEveryCommandsJSONMatchesItsSchema() throws {
        let files = Self.files
        let dir = NSTemporaryDirectory() + "/blesniff-json-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (k, c) in Self.commands.enumerated() {
            var outputs: [String] = []
            for i in files.indices {
                guard let out = Self.outputs[k][i], !out.isEmpty else { continue }
                let path = dir + "/\(c.schema)-\(i)" + (c.lines ? ".jsonl" : ".json")
                try out.write(toFile: path, atomically: false, encoding: .utf8)
                outputs.append(path)
            }
            let p = try Subprocess.run("python3", [Fixtures.root + "/scripts/dev/validate_json.py", Fixtures.root + "/schemas/\(c.schema).schema.json"] + outputs)
            if p.status == 77 { throw XCTSkip("the jsonschema Python module is absent") }
            XCTAssertEqual(p.status, 0, "\(c.schema): \(p.err)")
        }
    }
}

extension JSONSchemaTests {
    /// A field that repeats is an array in every frame, also where it appears once: no path of
    /// `read --format json` is an array in one frame and an object or a value in another.
    func testRepeatableFieldsAreAlwaysArrays() throws {
        var arrays: Set<String> = [], others: [String: String] = [:]
        func walk(_ v: Any, _ path: String, _ frame: String) {
            guard let o = v as? [String: Any] else { return }
            for (k, child) in o {
                let p = path.isEmpty ? k : path + "." + k
                if let list = child as? [Any] {
                    // Flag sets and malformed reasons are lists by nature, not repeated fields.
                    if k == "set" || (path.isEmpty && k == "malformed") { continue }
                    arrays.insert(p)
                    for e in list { walk(e, p, frame) }
                } else {
                    others[p] = others[p] ?? frame
                    walk(child, p, frame)
                }
            }
        }
        let read = try XCTUnwrap(Self.commands.firstIndex { $0.schema == "read" })
        for (f, out) in zip(Self.files, Self.outputs[read]) {
            for (n, line) in (out ?? "").split(separator: "\n").enumerated() {
                guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
                walk(o["layers"] ?? [:], "", "\((f as NSString).lastPathComponent) line \(n + 1)")
            }
        }
        for p in arrays.sorted() { XCTAssertNil(others[p], "\(p) is an array in some frames but not in \(others[p] ?? "")") }
    }
}

extension JSONSchemaTests {
    /// Every JSON document the commands write parses, on every committed and shared capture, also
    /// where the Python validator is absent. Captures that start mid-connection (the peer's address
    /// never seen) and peers whose only GATT traffic is values of handles never discovered (a
    /// database with no fields: `homewsn_bsniffhub__encrypted-packet-501-missing.pcap`) once made
    /// `gatt` write `{"peer":…,}`.
    func testEveryCommandsJSONParses() throws {
        for (k, c) in Self.commands.enumerated() {
            for (f, output) in zip(Self.files, Self.outputs[k]) {
                guard let out = output else { XCTFail("\(c.args.joined(separator: " ")) \(f) did not run"); continue }
                let docs = c.lines ? out.split(separator: "\n").map(String.init) : (out.isEmpty ? [] : [out])
                for (n, doc) in docs.enumerated() {
                    let what = "\(c.args.joined(separator: " ")) \((f as NSString).lastPathComponent) document \(n + 1)"
                    XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(doc.utf8)), what)
                    if let at = Self.trailingComma(doc) { XCTFail("\(what): a comma before a closing bracket: …\(String(decoding: doc.utf8.prefix(at + 1).suffix(120), as: UTF8.self))") }
                }
            }
        }
    }

    /// Where a comma is followed by `}` or `]` outside strings (byte offset of the bracket).
    /// Foundation's JSONSerialization on Linux accepts such trailing commas; JSON (RFC 8259),
    /// Python and jq do not.
    static func trailingComma(_ doc: String) -> Int? {
        var inString = false, escaped = false, afterComma = false
        for (i, c) in doc.utf8.enumerated() {
            if inString {
                if escaped { escaped = false } else if c == UInt8(ascii: "\\") { escaped = true } else if c == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch c {
            case UInt8(ascii: "\""): inString = true; afterComma = false
            case UInt8(ascii: ","): afterComma = true
            case UInt8(ascii: "}"), UInt8(ascii: "]"): if afterComma { return i }
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "\r"): break
            default: afterComma = false
            }
        }
        return nil
    }
}
