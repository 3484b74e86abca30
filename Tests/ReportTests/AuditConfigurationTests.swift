import XCTest
@testable import Decoders
@testable import Report

final class AuditConfigurationTests: XCTestCase {
    func testParsesRulesSeveritiesThresholdsAndUUIDs() throws {
        let config = try AuditConfiguration.parse("""
            rules:
              BLE101: off
              BLE301: { reads: 8, window: 1.5s, severity: error }
              polling-read: { window: 20s }
            BLE504: { enabled: false }
            BLE403: note
            sensitive-characteristics: [2A8A, 6E400002-B5A3-F393-E0A9-E50E24DCCA9E]
            overrides:
              - paths: ["legacy/**/*.pcap"]
                rules:
                  BLE301: { reads: 3 }
              - path: "*.btsnoop"
                BLE602: off
            """)
        let s = config.settings(for: "runs/a.pcap")
        XCTAssertEqual(s["BLE101"]?.enabled, false)
        XCTAssertEqual(s["BLE301"]?.severity, .error)
        XCTAssertEqual(s["BLE301"]?.count("reads"), 8)
        XCTAssertEqual(s["BLE301"]?.duration("window"), 20_000_000_000)
        XCTAssertEqual(s["BLE504"]?.enabled, false)
        XCTAssertEqual(s["BLE403"]?.severity, .note)
        XCTAssertEqual(s["BLE102"]?.duration("grace"), 2_000_000_000)
        XCTAssertEqual(s["BLE601"]?.sensitiveCharacteristics.count, 2)
        XCTAssertEqual(config.settings(for: "legacy/x/y/a.pcap")["BLE301"]?.count("reads"), 3)
        XCTAssertEqual(config.settings(for: "legacy/a.pcap")["BLE301"]?.count("reads"), 3)
        XCTAssertEqual(config.settings(for: "captures/phone.btsnoop")["BLE602"]?.enabled, false)
        XCTAssertEqual(config.settings(for: "captures/phone.pcap")["BLE602"]?.enabled, true)
    }

    private func error(_ yaml: String) -> ConfigurationError? {
        do {
            _ = try AuditConfiguration.parse(yaml, file: "cfg.yml")
            return nil
        } catch {
            return error
        }
    }

    func testErrorsNameTheKey() {
        let cases: [(String, String, String)] = [
            ("rules:\n  BLE301: { readz: 5 }\n", "rules.BLE301.readz", "unknown option"),
            ("rules:\n  BLE999: off\n", "rules.BLE999", "unknown rule"),
            ("rulez:\n  BLE301: off\n", "rulez", "unknown key"),
            ("rules:\n  BLE301: { window: ten }\n", "rules.BLE301.window", "duration"),
            ("rules:\n  BLE301: { reads: -1 }\n", "rules.BLE301.reads", "whole number"),
            ("rules:\n  BLE301: { severity: fatal }\n", "rules.BLE301.severity", "error, warning, note"),
            ("BLE301: loud\n", "BLE301", "severity"),
            ("sensitive-characteristics: [xyz]\n", "sensitive-characteristics[0]", "UUID"),
            ("overrides:\n  - rules: { BLE101: off }\n", "overrides[0].paths", "missing"),
            ("overrides:\n  - paths: [a]\n    colour: red\n", "overrides[0].colour", "unknown key"),
        ]
        for (yaml, key, problem) in cases {
            guard let e = error(yaml) else {
                XCTFail("no error for " + yaml)
                continue
            }
            XCTAssertEqual(e.key, key, yaml)
            XCTAssertTrue(e.problem.contains(problem), e.description)
            XCTAssertTrue(e.description.hasPrefix("cfg.yml:"), e.description)
        }
        XCTAssertEqual(error("rules:\n  BLE301: { readz: 5 }\n")?.line, 2)
        XCTAssertNotNil(error("rules: [unclosed\n"))
        XCTAssertNil(error(""))
    }

    func testDisabledRuleDoesNotRun() throws {
        let config = try AuditConfiguration.parse("BLE602: off\n")
        let auditor = Auditor(configuration: config)
        XCTAssertFalse(auditor.enabledRules.contains("BLE602"))
        XCTAssertEqual(auditor.enabledRules.count, AuditRules.all.count - 1)
    }

    func testGlob() {
        XCTAssertTrue(Glob.match("*.pcap", "a.pcap"))
        XCTAssertFalse(Glob.match("*.pcap", "dir/a.pcap"))
        XCTAssertTrue(Glob.match("**/*.pcap", "dir/sub/a.pcap"))
        XCTAssertTrue(Glob.match("**/*.pcap", "a.pcap"))
        XCTAssertTrue(Glob.match("dir/?.pcap", "dir/a.pcap"))
        XCTAssertFalse(Glob.match("dir/?.pcap", "dir/ab.pcap"))
        XCTAssertTrue(Glob.match("dir/**", "dir/x/y"))
    }

    func testDiscoverFindsFileUpward() throws {
        let base = NSTemporaryDirectory() + "blesniff-config-" + String(getpid())
        let deep = base + "/a/b"
        try FileManager.default.createDirectory(atPath: deep, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        try "BLE101: off\n".write(toFile: base + "/.blesniff.yml", atomically: true, encoding: .utf8)
        XCTAssertEqual(AuditConfiguration.discover(from: deep), base + "/.blesniff.yml")
        let loaded = try AuditConfiguration.load(path: base + "/.blesniff.yml")
        XCTAssertEqual(loaded.settings()["BLE101"]?.enabled, false)
        XCTAssertEqual(loaded.baseDirectory, base)
    }

    func testEveryRuleIsCatalogued() {
        let ids = AuditRules.infos.map(\.id)
        XCTAssertEqual(ids, ["BLE101", "BLE102", "BLE103", "BLE201", "BLE202", "BLE203", "BLE301", "BLE302", "BLE303",
                             "BLE304", "BLE401", "BLE402", "BLE403", "BLE404", "BLE501", "BLE502", "BLE503", "BLE504", "BLE505",
                             "BLE601", "BLE602", "BLE603"])
        XCTAssertEqual(Set(AuditRules.infos.map(\.name)).count, ids.count)
        for i in AuditRules.infos { XCTAssertFalse(i.help.isEmpty || i.summary.isEmpty || i.guidance.isEmpty, i.id) }
        let defaults = Dictionary(uniqueKeysWithValues: AuditRules.infos.map { ($0.id, $0.severity) })
        XCTAssertEqual(defaults["BLE101"], .warning)
        XCTAssertEqual(defaults["BLE402"], .error)
        XCTAssertEqual(defaults["BLE403"], .error)
        XCTAssertEqual(defaults["BLE501"], .error)
        XCTAssertEqual(defaults["BLE505"], .note)
    }

    /// `keys:` names keys files relative to the configuration; `load` reads them, and a file it
    /// cannot read is an error naming the key.
    func testKeysFiles() throws {
        XCTAssertEqual(try AuditConfiguration.parse("keys: [a.yml, /k/b.yml]\n").keysPaths, ["a.yml", "/k/b.yml"])
        XCTAssertEqual(try AuditConfiguration.parse("keys: a.yml\n").keysPaths, ["a.yml"])
        let base = NSTemporaryDirectory() + "blesniff-config-keys-" + String(getpid())
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        try "devices:\n  - ltk: 063F1154BC631D186D48A05B7F5DCD8F\n".write(toFile: base + "/k.yml", atomically: true, encoding: .utf8)
        try "keys: k.yml\n".write(toFile: base + "/.blesniff.yml", atomically: true, encoding: .utf8)
        let loaded = try AuditConfiguration.load(path: base + "/.blesniff.yml")
        XCTAssertEqual(loaded.keys.flatMap(\.linkKeys).map(\.key.description), ["063F1154BC631D186D48A05B7F5DCD8F"])
        try "keys: missing.yml\n".write(toFile: base + "/bad.yml", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try AuditConfiguration.load(path: base + "/bad.yml")) { e in
            XCTAssert(String(describing: e).contains("keys: " + base + "/missing.yml: cannot read the keys file"), String(describing: e))
        }
    }
}
