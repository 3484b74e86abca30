import XCTest

/// Generated sources are what their generators make today: each is made again into a scratch
/// file and compared, so a table edited by hand or a generator changed without a rerun fails here.
final class GeneratedCodeTests: XCTestCase {
    /// Sources/Decoders/generated/AssignedNumbers.swift from ../shared/assigned-numbers.
    func testAssignedNumbersAreCurrent() throws {
        let data = Fixtures.root + "/../shared/assigned-numbers"
        guard FileManager.default.fileExists(atPath: data) else { throw XCTSkip("../shared/assigned-numbers is absent") }
        let scratch = NSTemporaryDirectory() + "blesniff-assigned-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let out = scratch + "/AssignedNumbers.swift"
        let status = try Self.run("/usr/bin/env", ["python3", Fixtures.root + "/scripts/dev/generate_assigned_numbers.py", data, out])
        guard status == 0 else { throw XCTSkip("python3 could not run the generator") }
        try assertSame(out, Fixtures.root + "/Sources/Decoders/generated/AssignedNumbers.swift", "scripts/dev/generate_assigned_numbers.py")
    }

    /// Sources/Report/generated/FieldTable.swift: `blesniff fields --scan` over the committed and
    /// shared captures, as scripts/dev/generate_field_table.sh runs it.
    func testFieldTableIsCurrent() throws {
        let shared = try Fixtures.sharedOrSkip().map { Fixtures.shared + "/" + $0 }
        let committed = Fixtures.files(in: Fixtures.captures)
            .filter { [".btsnoop", ".pcap", ".pcapng"].contains(where: $0.hasSuffix) }
            .map { Fixtures.captures + "/" + $0 }
        // The script's order: btsnoop, pcap, pcapng files (each sorted), then the shared ones.
        let ordered = [".btsnoop", ".pcap", ".pcapng"].flatMap { ext in committed.filter { $0.hasSuffix(ext) } } + shared
        // Every capture decoded: minutes under the sanitizers, so more than CLI.run's minute.
        let r = try CLI.Run(try CLI.binary(), ["fields"] + ordered.flatMap { ["--scan", $0] }).wait(timeout: 1800)
        XCTAssertEqual(r.status, 0, r.err)
        let file = Fixtures.root + "/Sources/Report/generated/FieldTable.swift"
        let current = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssert(r.out == current, "\(file) is not what scripts/dev/generate_field_table.sh makes today: run it")
    }

    /// Sources/Report/generated/RuleCatalogue.swift from docs/rules.md, the rule reference: the
    /// catalogue the program prints is the page people read.
    func testRuleCatalogueIsCurrent() throws {
        let scratch = NSTemporaryDirectory() + "blesniff-rules-\(UUID().uuidString).swift"
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let status = try Self.run("/usr/bin/env", ["python3", Fixtures.root + "/scripts/dev/generate_rule_catalogue.py",
                                                   Fixtures.root + "/docs/rules.md", scratch])
        guard status == 0 else { throw XCTSkip("python3 could not run the generator") }
        try assertSame(scratch, Fixtures.root + "/Sources/Report/generated/RuleCatalogue.swift", "scripts/dev/generate_rule_catalogue.py")
    }

    private func assertSame(_ made: String, _ committed: String, _ generator: String) throws {
        let a = try String(contentsOfFile: made, encoding: .utf8)
        let b = try String(contentsOfFile: committed, encoding: .utf8)
        XCTAssert(a == b, "\(committed) is not what \(generator) makes today: run it")
    }

    private static func run(_ exe: String, _ args: [String]) throws -> Int32 {
        try Subprocess.run(exe, args).status
    }
}
