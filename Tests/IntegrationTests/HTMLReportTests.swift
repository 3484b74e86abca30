import XCTest
import Capture
import Decoders
@testable import Report
import Wire

/// The HTML report: well-formed, self-contained, escaped, with the expected content for the
/// committed captures, bounded in size for long captures, and free of script errors in Chromium.
final class HTMLReportTests: XCTestCase {
    static func report(_ name: String) throws -> (page: String, collector: ReportCollector) {
        try report(path: Fixtures.captures + "/" + name)
    }

    /// Reads a capture up to its end or its first unreadable record, as the report command does.
    static func report(path: String) throws -> (page: String, collector: ReportCollector) {
        let pass = ReportPass(path: path)
        let reader = try CaptureReader(path: path)
        var problem: String?
        do {
            while let r = try reader.next() {
                pass.add(Packet(r))
            }
        } catch {
            problem = String(describing: error)
        }
        let c = pass.finish(error: problem)
        return (HTMLReport.render([c]), c)
    }

    // MARK: Structure

    /// Checks the page is well-formed: tags balanced and properly nested, attribute values quoted,
    /// no stray `<` or `&` in text, entities known. Script and style contents are skipped.
    static func wellFormedProblem(_ page: String) -> String? {
        let b = Array(page.utf8)
        var i = 0
        var stack: [String] = []
        let void: Set<String> = ["meta", "br", "hr", "img", "input", "link", "col", "wbr", "area", "base", "source"]
        func isNameByte(_ c: UInt8) -> Bool {
            (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39) || c == 0x2D || c == 0x3A || c == 0x5F
        }
        func starts(_ s: String, at j: Int) -> Bool {
            let n = Array(s.utf8)
            return j + n.count <= b.count && b[j..<(j + n.count)].elementsEqual(n)
        }
        func find(_ s: String, from: Int) -> Int? {
            var j = from
            while j < b.count {
                if starts(s, at: j) { return j }
                j += 1
            }
            return nil
        }
        while i < b.count {
            let c = b[i]
            if c == UInt8(ascii: "&") {
                guard let semi = b[i...].prefix(10).firstIndex(of: UInt8(ascii: ";")) else { return "bare & at \(i)" }
                let name = String(decoding: b[(i + 1)..<semi], as: UTF8.self)
                guard ["amp", "lt", "gt", "quot", "#39"].contains(name) else { return "unknown entity &\(name); at \(i)" }
                i = semi + 1
                continue
            }
            guard c == UInt8(ascii: "<") else { i += 1; continue }
            if starts("<!DOCTYPE", at: i) || starts("<!--", at: i) {
                guard let end = find(">", from: i) else { return "unclosed declaration" }
                i = end + 1
                continue
            }
            var j = i + 1
            let closing = j < b.count && b[j] == UInt8(ascii: "/")
            if closing { j += 1 }
            let nameStart = j
            while j < b.count, isNameByte(b[j]) { j += 1 }
            let name = String(decoding: b[nameStart..<j], as: UTF8.self).lowercased()
            if name.isEmpty { return "stray < at \(i)" }
            // Attributes: name="value" with no < or " inside the value.
            var selfClosing = false
            while true {
                while j < b.count, b[j] == 0x20 || b[j] == 0x0A || b[j] == 0x09 { j += 1 }
                guard j < b.count else { return "unterminated tag <\(name)" }
                if b[j] == UInt8(ascii: ">") { j += 1; break }
                if b[j] == UInt8(ascii: "/"), j + 1 < b.count, b[j + 1] == UInt8(ascii: ">") { selfClosing = true; j += 2; break }
                if closing { return "attribute in closing tag </\(name)> at \(i)" }
                let a = j
                while j < b.count, isNameByte(b[j]) { j += 1 }
                guard j > a, j + 1 < b.count, b[j] == UInt8(ascii: "="), b[j + 1] == UInt8(ascii: "\"") else {
                    return "unquoted or malformed attribute in <\(name)> at \(j)"
                }
                j += 2
                while j < b.count, b[j] != UInt8(ascii: "\"") {
                    if b[j] == UInt8(ascii: "<") { return "< inside an attribute of <\(name)> at \(j)" }
                    j += 1
                }
                j += 1
            }
            i = j
            if closing {
                guard let top = stack.popLast() else { return "</\(name)> closes nothing" }
                if top != name { return "</\(name)> closes <\(top)> at \(nameStart)" }
            } else if !selfClosing, !void.contains(name) {
                if name == "script" || name == "style" {
                    guard let end = find("</" + name + ">", from: i) else { return "unclosed <\(name)>" }
                    i = end + name.utf8.count + 3
                } else {
                    stack.append(name)
                }
            }
        }
        return stack.isEmpty ? nil : "unclosed " + stack.joined(separator: " ")
    }

    func assertWellFormed(_ page: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNil(Self.wellFormedProblem(page), file: file, line: line)
        XCTAssertTrue(page.hasPrefix("<!DOCTYPE html>"), file: file, line: line)
    }

    func testWellFormedCheckCatchesBrokenMarkup() {
        XCTAssertNil(Self.wellFormedProblem("<!DOCTYPE html><html><head><meta charset=\"utf-8\"/><style>a>b{}</style></head>"
                                            + "<body><p class=\"x\">a &amp; b<br/></p><script>if (a > b) f();</script></body></html>"))
        for bad in ["<html><p></html>", "<html><p>a < b</p></html>", "<p>a & b</p>", "<p class=x>a</p>", "<p>&nbsp;</p>",
                    "<div><span></div></span>", "<p title=\"a<b\">x</p>", "<p>"] {
            XCTAssertNotNil(Self.wellFormedProblem(bad), bad)
        }
    }

    /// No resource or link leaves the page.
    func assertSelfContained(_ page: String, file: StaticString = #filePath, line: UInt = #line) {
        let lower = page.lowercased()
        for bad in ["src=\"http", "src='http", "src=\"//", "href=\"http", "href='http", "href=\"//", "@import", "url(http", "url(//",
                    "url(\"http", "<link ", "<iframe", "src=\""] {
            XCTAssertFalse(lower.contains(bad), "page contains " + bad, file: file, line: line)
        }
    }

    /// Every in-page link points at an element of the page.
    func assertAnchorsResolve(_ page: String, file: StaticString = #filePath, line: UInt = #line) {
        let ids = Set(matches(page, prefix: " id=\""))
        for target in Set(matches(page, prefix: "href=\"#")) {
            XCTAssertTrue(ids.contains(target), "no element with id " + target, file: file, line: line)
        }
    }

    func matches(_ s: String, prefix: String) -> [String] {
        var out: [String] = []
        var rest = s[...]
        while let r = rest.range(of: prefix) {
            let after = rest[r.upperBound...]
            guard let end = after.firstIndex(of: "\"") else { break }
            out.append(String(after[..<end]))
            rest = after[end...]
        }
        return out
    }

    // MARK: Committed captures

    func testGATTSessionPage() throws {
        let (page, c) = try Self.report("gatt_session.btsnoop")
        assertWellFormed(page)
        assertSelfContained(page)
        assertAnchorsResolve(page)
        XCTAssertEqual(c.frames, 184)
        XCTAssertEqual(c.malformedFrames, 0)
        XCTAssertEqual(c.deviceCount, 1)
        XCTAssertEqual(c.connectionCount, 1)
        // Summary cards.
        XCTAssertTrue(page.contains("<div class=\"k\">Frames</div><div class=\"v\">184</div>"))
        XCTAssertTrue(page.contains("gatt_session.btsnoop"))
        XCTAssertTrue(page.contains("hci0"))
        // The device and its advertising data.
        XCTAssertTrue(page.contains("“HRM-1”"))
        XCTAssertTrue(page.contains("d4:ab:cd:00:00:01 (random static)"))
        XCTAssertTrue(page.contains("Heart Rate Sensor: Heart Rate Belt"))
        XCTAssertTrue(page.contains("Advertising data (frame 33, 29 bytes)"))
        XCTAssertTrue(page.contains("Scan response data (frame 34, 18 bytes)"))
        // The connection: parameters, MTU, GATT tree with last values.
        XCTAssertTrue(page.contains("id=\"c0-conn-1\""))
        XCTAssertTrue(page.contains("Connection #1"))
        XCTAssertTrue(page.contains("ATT_MTU</th><td>64 (this host Rx 64, peer Rx 517)"))
        for service in ["Generic Access", "Generic Attribute", "Heart Rate", "Battery Service", "Device Information", "User Data"] {
            XCTAssertTrue(page.contains("<span class=\"name\">" + service + "</span>"), service)
        }
        XCTAssertTrue(page.contains("Heart Rate Measurement"))
        XCTAssertTrue(page.contains("Manufacturer Name &quot;Bumble Labs&quot;"))
        XCTAssertTrue(page.contains("Battery Level 90 %"))
        XCTAssertTrue(page.contains("Round-trip time</th><td>median "))
        // Findings, grouped by rule, with flags on the timeline and frame links.
        XCTAssertEqual(c.findings.map(\.rule), ["BLE201", "BLE202"])
        XCTAssertTrue(page.contains("BLE201 full-service-discovery"))
        // Both are decided 35 ms apart: one flag holds them, and both entries link to it.
        XCTAssertTrue(page.contains("id=\"c0-fl-0\"><title>2 findings\nBLE201 Discover All Primary Services"))
        XCTAssertFalse(page.contains("id=\"c0-fl-1\""))
        XCTAssertEqual(page.components(separatedBy: "href=\"#c0-fl-0\">flag on the timeline").count, 3)
        XCTAssertTrue(page.contains("data-cap=\"c0\" data-t=\"0.666000\" title=\"frame 43 at 0.666 s\">43</a>"))
        // Timeline rows.
        XCTAssertTrue(page.contains("<svg class=\"timeline\" id=\"c0-timeline\""))
        for row in ["Frames: 184", "Scanning: 1 period", "Advertising reports: 2"] {
            XCTAssertTrue(page.contains("<title>" + row + "</title>"), row)
        }
        XCTAssertTrue(page.contains("class=\"m-disc\""))
        XCTAssertTrue(page.contains("class=\"m-notify\""))
        // The link: throughput over time (145 value bytes in the first second) and the latency
        // histogram (Bumble's virtual link answers within one bin).
        XCTAssertTrue(page.contains("aria-label=\"Throughput over time\""))
        XCTAssertTrue(page.contains("<title>0–1 s: 145 value bytes, 1 kbit/s</title>"), "first second's bar")
        XCTAssertTrue(page.contains("aria-label=\"ATT latency histogram\""))
        XCTAssertTrue(page.contains("<title>0–7.5 ms: 32</title>"))
    }

    func testBadCapturePage() throws {
        let (page, c) = try Self.report("bad_polling_read.btsnoop")
        assertWellFormed(page)
        assertSelfContained(page)
        assertAnchorsResolve(page)
        XCTAssertEqual(c.findings.map(\.rule), ["BLE301"])
        XCTAssertTrue(page.contains("BLE301 polling-read"))
        XCTAssertTrue(page.contains("<span class=\"chip warning\">1 warning</span>"))
        XCTAssertTrue(page.contains("Battery Level"))
        for frame in [52, 64, 73] { XCTAssertTrue(page.contains(">" + String(frame) + "</a>"), String(frame)) }
        XCTAssertTrue(page.contains("read 8 times in 7.0 s"))
        XCTAssertTrue(page.contains("Reads</th><td>8</td>"))
    }

    func testEveryCommittedBadCaptureRenders() throws {
        for name in Fixtures.committed where name.hasPrefix("bad_") && name.hasSuffix(".btsnoop") {
            let (page, c) = try Self.report(name)
            assertWellFormed(page)
            assertSelfContained(page)
            assertAnchorsResolve(page)
            // A scan that only sees a bystander's bad advertising gives nearby devices, not findings.
            XCTAssertFalse(c.findings.isEmpty && c.outcome.nearby.isEmpty, name)
            for f in c.findings { XCTAssertTrue(page.contains(f.rule + " " + f.ruleName), name + " " + f.rule) }
        }
    }

    /// Real captures from public projects: every page well-formed and self-contained.
    func testSharedCapturesRender() throws {
        for name in try Fixtures.sharedOrSkip() {
            guard let (page, _) = try? Self.report(path: Fixtures.shared + "/" + name) else { continue }
            assertWellFormed(page)
            assertSelfContained(page)
            assertAnchorsResolve(page)
            XCTAssertLessThan(page.utf8.count, 3_000_000, name)
        }
    }

    func testAuditHTMLFormat() throws {
        XCTAssertEqual(AuditFormat(fileExtensionOf: "out.html"), .html)
        let path = Fixtures.captures + "/bad_polling_read.btsnoop"
        let (_, c) = try Self.report("bad_polling_read.btsnoop")
        let page = AuditReport(audits: [CaptureAudit(path: path, findings: c.findings)]).render(.html)
        assertWellFormed(page)
        assertSelfContained(page)
        assertAnchorsResolve(page)
        XCTAssertTrue(page.contains("BLE301 polling-read"))
        XCTAssertTrue(page.contains("Findings only;"))
    }

    // MARK: Escaping

    /// An advertiser's name and a capture path full of markup come out as text.
    func testCaptureTextIsEscaped() throws {
        let name = Array("<img src=x onerror=1>&'\"".utf8)
        let ad: [UInt8] = [UInt8(name.count + 1), 0x09] + name
        let report: [UInt8] = [0x02, 0x01, 0x00, 0x01, 0x01, 0x02, 0x03, 0x04, 0x05, 0xC6, UInt8(ad.count)] + ad + [0xC4]
        let event: [UInt8] = [0x3E, UInt8(report.count)] + report
        let pass = ReportPass(path: "/tmp/<script>alert('x')</script>.btsnoop")
        for i in 0..<3 {
            pass.add(Packet(number: i + 1, timestamp: 1_000_000_000 + Int64(i) * 100_000_000, direction: .received, adapter: 0,
                            kind: .hci(.event), payload: event[...]))
        }
        let page = HTMLReport.render([pass.finish()])
        assertWellFormed(page)
        XCTAssertFalse(page.contains("<img"))
        XCTAssertFalse(page.contains("<script>alert"))
        XCTAssertTrue(page.contains("&lt;img src=x onerror=1&gt;&amp;&#39;&quot;"))
        XCTAssertTrue(page.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;.btsnoop"))
        XCTAssertEqual(HTMLWriter.escape("a\u{0}b\u{1B}c"), "a\u{FFFD}b\u{FFFD}c")
    }

    // MARK: Bounded size

    /// Hours of advertising from thousands of devices plus a long connection still give a small
    /// page: everything is binned.
    func testLongCaptureStaysSmall() throws {
        var limits = ReportLimits()
        limits.maxDevices = 300
        let pass = ReportPass(path: "synthetic", limits: limits)
        let hour: Int64 = 3_600_000_000_000
        let n = 60_000
        var number = 0
        func add(_ bytes: [UInt8], _ t: Int64, _ dir: Direction = .received, _ kind: HCIPacketType = .event) {
            number += 1
            pass.add(Packet(number: number, timestamp: t, direction: dir, adapter: 0, kind: .hci(kind), payload: bytes[...]))
        }
        add([0x0C, 0x20, 0x02, 0x01, 0x00], 0, .sent, .command)  // LE Set Scan Enable on
        // LE Connection Complete, handle 0x0040, to a device that also advertises.
        add([0x3E, 0x13, 0x01, 0x00, 0x40, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0xC0, 0x18, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x00], 1)
        for i in 0..<n {
            let t = Int64(i) * (3 * hour / Int64(n))
            let dev = UInt8(truncatingIfNeeded: i % 1000), hi = UInt8(truncatingIfNeeded: (i % 1000) >> 8)
            let rssi = UInt8(bitPattern: Int8(-40 - i % 50))
            add([0x3E, 0x0F, 0x02, 0x01, 0x00, 0x01, dev, hi, 0x00, 0x00, 0x00, 0xC0, 0x03, 0x02, 0x01, 0x06, rssi], t)
            if i % 3 == 0 {  // a notification on the connection: ACL handle 0x0040, L2CAP CID 4, ATT 0x1B
                add([0x40, 0x20, 0x08, 0x00, 0x04, 0x00, 0x04, 0x00, 0x1B, 0x10, 0x00, 0x48], t &+ 1, .received, .aclData)
            }
        }
        let c = pass.finish()
        XCTAssertEqual(c.frames, number)
        XCTAssertEqual(c.deviceCount, 1000)
        XCTAssertEqual(c.trackedDevices.count, 300)
        XCTAssertLessThanOrEqual(c.frameBins?.bins.count ?? 0, limits.timelineBins)
        let page = HTMLReport.render([c])
        assertWellFormed(page)
        XCTAssertLessThan(page.utf8.count, 3_000_000)
        XCTAssertTrue(page.contains("Notifications / indications</th><td>20" + "\u{2009}" + "000</td>"))
    }

    // MARK: Bins

    func testTimeBinsWidenAndKeepTotals() {
        var b = TimeBins<Int>(origin: 1_000, count: 8, width: 10)
        for t in stride(from: Int64(1_000), to: 2_000, by: 5) { b.update(at: t) { $0 += 1 } }
        XCTAssertEqual(b.bins.count, 8)
        XCTAssertEqual(b.bins.reduce(0, +), 200)
        XCTAssertEqual(b.width, 160)
        b.update(at: 0) { $0 += 1 }  // before the origin: first bin
        XCTAssertEqual(b.bins[0], 33)
        b.update(at: Int64.max) { $0 += 1 }
        XCTAssertEqual(b.bins.reduce(0, +), 202)

        var cover = TimeBins<Int64>(origin: 0, count: 4, width: 10)
        cover.cover(from: 5, to: 35)
        XCTAssertEqual(Array(cover.usedBins), [5, 10, 10, 5])
        cover.cover(from: 35, to: 75)
        XCTAssertEqual(cover.width, 20)
        XCTAssertEqual(cover.bins.reduce(0, +), 70)

        var r = Reservoir(capacity: 100)
        for v in 1...100 { r.add(Int64(v)) }
        XCTAssertEqual(r.quantile(0.5), 50)
        XCTAssertEqual(r.quantile(0.95), 95)
        for v in 101...10_000 { r.add(Int64(v)) }
        XCTAssertEqual(r.samples.count, 100)
        XCTAssertEqual(r.max, 10_000)
    }

    // MARK: In a browser

    /// Renders the page with headless Chromium (skipped when it is not installed): a PNG comes out
    /// and the console shows no script error.
    func testChromiumRendersWithoutScriptErrors() throws {
        let browser = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
            .first { FileManager.default.isExecutableFile(atPath: $0) }
        guard browser != nil else { throw XCTSkip("Chromium is not installed") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("blesniff-html-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in ["gatt_session.btsnoop", "bad_polling_read.btsnoop"] {
            let html = dir.appendingPathComponent(name + ".html"), png = dir.appendingPathComponent(name + ".png")
            try Self.report(name).page.write(to: html, atomically: true, encoding: .utf8)
            let p = try Subprocess.run("/bin/sh", [Fixtures.root + "/scripts/dev/screenshot.sh", html.path, png.path, "1200", "1600"])
            let log = (try? String(contentsOf: URL(fileURLWithPath: png.path + ".log"), encoding: .utf8)) ?? ""
            XCTAssertEqual(p.status, 0, name + ": " + log.split(separator: "\n").filter { $0.contains("CONSOLE") }.joined())
            XCTAssertFalse(log.contains("Uncaught"), name)
            let size = (try? FileManager.default.attributesOfItem(atPath: png.path)[.size] as? Int) ?? 0
            XCTAssertGreaterThan(size, 10_000, name)
        }
    }
}

extension HTMLReportTests {
    /// A sniffer capture has no adapter and no host role: the page says what was sniffed, and a
    /// connection shows no "This host's role". Rules are listed worst first.
    func testSnifferCapturePage() throws {
        let path = Fixtures.shared + "/tesible__mouse.pcapng"
        guard FileManager.default.fileExists(atPath: path) else { throw XCTSkip("shared captures are absent") }
        let (page, c) = try Self.report(path: path)
        XCTAssertGreaterThan(c.airFrames, 0)
        XCTAssertTrue(page.contains(">Sniffed<"), "no Sniffed card")
        XCTAssertFalse(page.contains(">Adapters<"))
        XCTAssertFalse(page.contains("host&#39;s role") || page.contains("host's role"))
        let severities = c.findings.map(\.severity)
        let rules = matches(page, prefix: "<details class=\"item\" open=\"open\" id=\"").filter { $0.contains("-rule-") }
        if let worst = severities.max(), let firstRule = rules.first {
            XCTAssertEqual(c.findings.first { firstRule.hasSuffix($0.rule) }?.severity, worst)
        }
    }
}
