import XCTest

/// ARCHITECTURE.md's boundaries, held: each module imports only what it may. Foundation stays out of
/// every module below the command line: linked into the static binary it brings its ICU data along
/// (93 MB instead of 44) and a fifth more instructions at start-up, where the protocol conformances
/// are searched.
final class ModuleBoundaryTests: XCTestCase {
    static let allowed: [String: Set<String>] = [
        "Wire": ["Glibc", "Darwin"],
        "Decoders": ["Wire", "Glibc", "Darwin"],
        "Capture": ["Wire", "Glibc", "Darwin", "CPcap", "CBluetooth", "CZlib"],
        "Report": ["Wire", "Decoders", "Glibc", "Darwin", "CYaml"],
    ]

    func testModulesImportOnlyWhatTheyMay() throws {
        for (module, allowed) in Self.allowed {
            let dir = Fixtures.root + "/Sources/" + module
            let files = try XCTUnwrap(FileManager.default.enumerator(atPath: dir)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") })
            XCTAssertFalse(files.isEmpty, module)
            for file in files {
                let text = try String(contentsOfFile: dir + "/" + file, encoding: .utf8)
                for line in text.split(separator: "\n") where line.hasPrefix("import ") || line.hasPrefix("@testable import ") {
                    let imported = String(line.split(separator: " ").last ?? "")
                    XCTAssert(allowed.contains(imported), "\(module)/\(file) imports \(imported)")
                }
            }
        }
    }

    /// Audit rules keep a connection's number in their state and look the connection up when they
    /// judge (`RuleContext.connection`): no stored property of a rule holds the dissector's mutable
    /// `Connection`.
    func testRulesKeepConnectionNumbersNotConnections() throws {
        let dir = Fixtures.root + "/Sources/Report/Audit/Rules"
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".swift") }
        XCTAssertFalse(files.isEmpty)
        let stored = try NSRegularExpression(pattern: #"^\s*(private |fileprivate )?(var|let) \w+\s*:[^=]*\bConnection\b"#)
        for file in files {
            let text = try String(contentsOfFile: dir + "/" + file, encoding: .utf8)
            for line in text.split(separator: "\n").map(String.init) {
                let found = stored.firstMatch(in: line, range: NSRange(line.startIndex..., in: line))
                XCTAssertNil(found, "\(file): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
    }
}
