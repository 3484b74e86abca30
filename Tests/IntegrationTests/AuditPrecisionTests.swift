import XCTest

/// The auditor against the labelled table of its output on real captures
/// (Tests/Captures/audit-labels.tsv): each finding judged right, wrong, or platform (what the stack
/// does whatever the app asks) as the app's developer would judge it. Runs the command-line tool,
/// as a user or CI job would.
final class AuditPrecisionTests: XCTestCase {
    struct Label {
        var capture, rule, fingerprint, place, verdict, reason: String
        /// One finding of a rule on a subject may stand in two places: the app's and another app's.
        var key: String { capture + " " + rule + " " + fingerprint + " " + place }
    }

    static func labels() throws -> [Label] {
        let text = try String(contentsOfFile: Fixtures.captures + "/audit-labels.tsv", encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), !line.hasPrefix("capture\t") else { return nil }
            let c = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard c.count >= 8 else { return nil }
            return Label(capture: c[0], rule: c[1], fingerprint: c[2], place: c[3], verdict: c[4], reason: c[7])
        }
    }

    /// Findings judged platform that the auditor still reports, for want of evidence in the capture
    /// (an ATT-only export of an Android app's traffic). The README states the figure.
    static let knownPlatformFindings = 2

    func testFindingsOnRealCapturesMatchTheirLabels() throws {
        _ = try Fixtures.sharedOrSkip()
        let labels = try Self.labels()
        let byKey = Dictionary(labels.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        var produced: [String: String] = [:]
        for name in Fixtures.files(in: Fixtures.shared) where !name.hasSuffix(".tsv") && !name.hasSuffix(".md") {
            let r = try CLI.run(["audit", "--format", "json", "--fail-on", "never", Fixtures.shared + "/" + name])
            guard let json = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any],
                  let captures = json["captures"] as? [[String: Any]] else { XCTFail(name + ": no JSON"); continue }
            for c in captures {
                for (place, key) in [("finding", "findings"), ("platform", "platform_behaviour"), ("other-app", "other_apps")] {
                    for f in c[key] as? [[String: Any]] ?? [] {
                        let k = name + " " + (f["rule"] as? String ?? "") + " " + (f["fingerprint"] as? String ?? "") + " " + place
                        produced[k] = place
                        XCTAssertNotNil(byKey[k], "unlabelled \(place): \(k) \(f["message"] ?? "") — judge it in audit-labels.tsv")
                    }
                }
            }
        }
        var right = 0, total = 0, wrongFound: [String] = []
        for l in labels {
            if let place = produced[l.key] {
                XCTAssertEqual(place, l.place, "\(l.key) is now a \(place), labelled as a \(l.place)")
                guard place == "finding" else { continue }
                total += 1
                if l.verdict == "right" { right += 1 } else { wrongFound.append(l.key + " (" + l.verdict + ")") }
            } else if l.place == "finding" && l.verdict == "right" {
                XCTFail("a right finding is gone: \(l.key): \(l.reason)")
            }
        }
        XCTAssertFalse(wrongFound.contains { $0.hasSuffix("(wrong)") }, "findings labelled wrong: \(wrongFound)")
        XCTAssertLessThanOrEqual(wrongFound.count, Self.knownPlatformFindings, "\(wrongFound)")
        print("audit precision on ../shared/captures: \(right) of \(total) findings right")
    }
}
