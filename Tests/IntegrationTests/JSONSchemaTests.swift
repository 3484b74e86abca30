import XCTest

/// Every command's JSON output, on every committed and shared capture, is valid against its schema
/// in schemas/ and repeats no key in any object (scripts/validate_json.py; skipped without the
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

    func testEveryCommandsJSONMatchesItsSchema() throws {
        var files = Fixtures.committed.map { Fixtures.captures + "/" + $0 }
        if let shared = try? Fixtures.sharedOrSkip() { files += shared.map { Fixtures.shared + "/" + $0 } }
        let dir = NSTemporaryDirectory() + "/blesniff-json-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for c in Self.commands {
            var outputs: [String] = []
            for (i, f) in files.enumerated() {
                let r = try CLI.run(c.args + [f])
                guard !r.out.isEmpty else { continue }
                let path = dir + "/\(c.schema)-\(i)" + (c.lines ? ".jsonl" : ".json")
                try r.out.write(toFile: path, atomically: false, encoding: .utf8)
                outputs.append(path)
            }
            let p = try Subprocess.run("python3", [Fixtures.root + "/scripts/validate_json.py", Fixtures.root + "/schemas/\(c.schema).schema.json"] + outputs)
            if p.status == 77 { throw XCTSkip("the jsonschema Python module is absent") }
            XCTAssertEqual(p.status, 0, "\(c.schema): \(p.err)")
        }
    }
}

extension JSONSchemaTests {
    /// A field that repeats is an array in every frame, also where it appears once: no path of
    /// `read --format json` is an array in one frame and an object or a value in another.
    func testRepeatableFieldsAreAlwaysArrays() throws {
        var files = Fixtures.committed.map { Fixtures.captures + "/" + $0 }
        if let shared = try? Fixtures.sharedOrSkip() { files += shared.map { Fixtures.shared + "/" + $0 } }
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
        for f in files {
            let r = try CLI.run(["read", "--format", "json", f])
            for (n, line) in r.out.split(separator: "\n").enumerated() {
                guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
                walk(o["layers"] ?? [:], "", "\((f as NSString).lastPathComponent) line \(n + 1)")
            }
        }
        for p in arrays.sorted() { XCTAssertNil(others[p], "\(p) is an array in some frames but not in \(others[p] ?? "")") }
    }
}
