import XCTest

/// Every command's JSON output, on every committed and shared capture, is valid against its schema
/// in schemas/ and repeats no key in any object (scripts/validate_json.py; skipped without the
/// jsonschema module).
final class JSONSchemaTests: XCTestCase {
    static let commands: [(schema: String, args: [String], lines: Bool)] = [
        ("read", ["read", "--format", "json"], true),
        ("gatt", ["gatt", "--format", "json"], false),
        ("devices", ["devices", "--format", "json"], false),
        ("audit", ["audit", "--fail-on", "never", "--format", "json"], false),
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
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            p.arguments = ["python3", Fixtures.root + "/scripts/validate_json.py", Fixtures.root + "/schemas/\(c.schema).schema.json"] + outputs
            let err = Pipe()
            p.standardError = err
            try p.run()
            let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            if p.terminationStatus == 77 { throw XCTSkip("the jsonschema Python module is absent") }
            XCTAssertEqual(p.terminationStatus, 0, "\(c.schema): \(text)")
        }
    }
}
