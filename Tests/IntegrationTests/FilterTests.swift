import XCTest
import Capture
import Decoders
import Report

/// Display filters: the frames a filter selects are the frames tshark selects with the equivalent
/// Wireshark filter, on every committed and shared capture; errors point at the fault.
final class FilterTests: XCTestCase {
    /// Our filter and tshark's, meaning the same (Tests/Captures/filter-pairs.tsv).
    static let pairs: [(ours: String, tshark: String)] = {
        let text = (try? String(contentsOfFile: Fixtures.captures + "/filter-pairs.tsv", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard !line.hasPrefix("#"), columns.count == 2 else { return nil }
            return (String(columns[0]), String(columns[1]))
        }
    }()

    static func tshark() throws -> String {
        for dir in ["/usr/bin", "/usr/local/bin"] where FileManager.default.isExecutableFile(atPath: dir + "/tshark") {
            return dir + "/tshark"
        }
        throw XCTSkip("tshark is not installed")
    }

    /// tshark decodes old Ubertooth PPI captures (bare link-layer packets as DLT_USER0) only when
    /// told so, as scripts/fixtures/generate_expected.sh tells it.
    static let userDLT = "uat:user_dlts:\"User 0 (DLT=147)\",\"btle\",\"0\",\"\",\"0\",\"\""

    /// Frame numbers tshark selects.
    static func tsharkFrames(_ tshark: String, _ path: String, _ filter: String) throws -> [Int] {
        try Subprocess.run(tshark, ["-o", userDLT, "-r", path, "-Y", filter, "-T", "fields", "-e", "frame.number"]).out
            .split(separator: "\n").compactMap { Int($0) }
    }

    /// The frames tshark selected with each filter, as scripts/fixtures/generate_expected.sh recorded them in
    /// expected/NAME.filters.tsv ("1-5,9"); nil when the capture has no such file.
    static func recordedFrames(_ name: String) -> [String: [Int]]? {
        guard let text = try? String(contentsOfFile: Fixtures.expected + "/" + name + ".filters.tsv", encoding: .utf8) else { return nil }
        var frames: [String: [Int]] = [:]
        for line in text.split(separator: "\n") {
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard columns.count == 2 else { continue }
            frames[String(columns[0])] = columns[1].split(separator: ",").flatMap { range -> [Int] in
                let ends = range.split(separator: "-").compactMap { Int($0) }
                guard let first = ends.first, let last = ends.last, first <= last else { return [] }
                return Array(first...last)
            }
        }
        return frames
    }

    /// The selections are tshark's, recorded by scripts/fixtures/generate_expected.sh; a capture or filter it has
    /// not recorded is asked of tshark when it is installed, and left out otherwise.
    func testSelectsTheFramesTsharkSelects() throws {
        XCTAssertGreaterThan(Self.pairs.count, 20)
        let tshark = try? Self.tshark()
        var files = Fixtures.committed.map { Fixtures.captures + "/" + $0 }
        if let shared = try? Fixtures.sharedOrSkip() { files += shared.map { Fixtures.shared + "/" + $0 } }
        let filters = try Self.pairs.map { try DisplayFilter($0.ours) }
        var compared = 0
        var mismatches: [String] = []
        var unrecorded: [String] = []
        for path in files {
            let name = (path as NSString).lastPathComponent
            let recorded = Self.recordedFrames(name) ?? [:]
            var ours = [[Int]](repeating: [], count: filters.count)
            // Frames tshark reads differently on purpose (DifferentialTests.skipped: retransmissions,
            // ciphertext, broken LL headers) are left out of the comparison, and so are the first
            // fragments of an over-the-air PDU: tshark decodes what the fragment holds, blesniff
            // waits for the whole PDU.
            var skipped: Set<Int> = []
            do {
                try Fixtures.decode(path) { d in
                    if !DifferentialTests.skipped(d).isEmpty || (d.linkLayer != nil && d.fragment != nil) {
                        skipped.insert(d.packet.number)
                    }
                    for (i, f) in filters.enumerated() where f.matches(d) { ours[i].append(d.packet.number) }
                }
            } catch {
                // A capture that ends mid-record still has its frames compared.
            }
            for (i, pair) in Self.pairs.enumerated() {
                var selected = recorded[pair.tshark]
                if selected == nil, let tshark { selected = try? Self.tsharkFrames(tshark, path, pair.tshark) }
                guard let selected else { unrecorded.append("\(name): \(pair.tshark)"); continue }
                let theirs = selected.filter { !skipped.contains($0) }
                let mine = ours[i].filter { !skipped.contains($0) }
                compared += 1
                if mine != theirs {
                    let a = Set(mine), b = Set(theirs)
                    mismatches.append("\(name) \(pair.ours): \(mine.count) frames, tshark \(theirs.count); only ours \(a.subtracting(b).sorted().prefix(5)), only tshark's \(b.subtracting(a).sorted().prefix(5))")
                }
            }
        }
        XCTAssertGreaterThan(compared, 0)
        XCTAssert(mismatches.isEmpty, mismatches.joined(separator: "\n"))
        // Every committed capture has its selections recorded (scripts/fixtures/generate_expected.sh filters).
        let missing = unrecorded.filter { u in Fixtures.committed.contains { u.hasPrefix($0 + ":") } }
        XCTAssert(missing.isEmpty, "not recorded, run scripts/fixtures/generate_expected.sh filters: " + missing.prefix(5).joined(separator: "; "))
    }

    func testUUIDMatchesBothForms() throws {
        let path = Fixtures.captures + "/gatt_session.btsnoop"
        for expr in ["att.uuid == 0x2A37", "att.uuid == 00002a37-0000-1000-8000-00805f9b34fb"] {
            let f = try DisplayFilter(expr)
            var n = 0
            try Fixtures.decode(path) { if f.matches($0) { n += 1 } }
            XCTAssertGreaterThan(n, 0, expr)
        }
    }

    func testOperatorsAndFrameFields() throws {
        let path = Fixtures.captures + "/gatt_session.btsnoop"
        func count(_ expr: String) throws -> Int {
            let f = try DisplayFilter(expr)
            var n = 0
            try Fixtures.decode(path) { if f.matches($0) { n += 1 } }
            return n
        }
        let all = try count("frame")
        XCTAssertEqual(try count("frame <= 10"), 10)
        XCTAssertEqual(try count("frame > 10 && frame < 21"), 10)
        XCTAssertEqual(try count("att") + (try count("!att")), all)
        XCTAssertEqual(try count("(att or smp) and not att"), try count("smp"))
        XCTAssertEqual(try count("direction == \"sent\"") + (try count("direction == \"received\"")), all)
        XCTAssertGreaterThan(try count("hci_event.event_code.name contains \"Disconnection\""), 0)
        XCTAssertEqual(try count("hci_event.event_code.name matches \"^Disconnection Comp\""),
                       try count("hci_event.event_code == 0x05"))
        XCTAssertEqual(try count("hci_event.event_code != 0x3e") + (try count("hci_event.event_code == 0x3e")),
                       try count("hci_event"))
        XCTAssertGreaterThan(try count("connection == 1"), 0)
    }

    func testErrorsPointAtTheFault() {
        func failure(_ expr: String) -> DisplayFilterError? {
            do { _ = try DisplayFilter(expr); return nil } catch { return error }
        }
        let e = failure("att.opcod == 1")
        XCTAssertEqual(e?.code, .unknownField)
        XCTAssertEqual(e?.position, 0)
        XCTAssertEqual(e?.suggestions.first, "att.opcode")
        XCTAssertEqual(failure("att.opcode == 1 and (smp")?.code, .syntax)
        XCTAssertEqual(failure("att.opcode == 1 and (smp")?.position, 24)
        XCTAssertEqual(failure("att.opcode = 1")?.position, 11)
        XCTAssertEqual(failure("frame < abc")?.code, .badValue)
    }

    func testCommandLine() throws {
        let c = Fixtures.captures + "/gatt_session.btsnoop"
        let r = try CLI.run(["read", "-Y", "att.opcode == 0x1b", "--quiet", c])
        XCTAssertEqual(r.status, 0)
        XCTAssertEqual(r.out, "5 matching frames, 0 malformed\n")
        let bad = try CLI.run(["read", "--filter", "att.opcod == 0x1b", c])
        XCTAssertEqual(bad.status, 2)
        XCTAssert(bad.err.contains("att.opcod == 0x1b\n  ^"), bad.err)
        XCTAssert(bad.err.contains("att.opcode"), bad.err)
        let fields = try CLI.run(["fields", "att.opc"])
        XCTAssertEqual(fields.status, 0)
        XCTAssert(fields.out.hasPrefix("att.opcode"), fields.out)
        let out = NSTemporaryDirectory() + "/filtered-\(getpid()).btsnoop"
        defer { try? FileManager.default.removeItem(atPath: out) }
        XCTAssertEqual(try CLI.run(["convert", "-Y", "att.opcode == 0x1b", c, out]).status, 0)
        XCTAssertEqual(try CLI.run(["read", "--quiet", out]).out, "5 frames, 0 malformed\n")
    }

    /// Every field the decoders write for the committed captures is in the generated table.
    func testFieldTableCoversTheCommittedCaptures() throws {
        let scanner = FieldScanner()
        for name in Fixtures.committed {
            try? Fixtures.decode(Fixtures.captures + "/" + name) { scanner.add($0) }
        }
        let missing = scanner.types.keys.filter { !FieldCatalog.contains($0) }.sorted()
        XCTAssert(missing.isEmpty, "run scripts/dev/generate_field_table.sh: missing \(missing.prefix(20))")
    }
}

extension FilterTests {
    /// `hci_event.report.rssi` is every report's RSSI (`report_1`, `report_2`, … and the periodic
    /// report's `report`); a name that is neither a field nor numbered instances is an error whose
    /// suggestion is the un-numbered form.
    func testUnnumberedNameMatchesEveryInstance() throws {
        let c = Fixtures.captures + "/gatt_session.btsnoop"
        func count(_ expr: String) throws -> Int {
            let f = try DisplayFilter(expr)
            var n = 0
            try Fixtures.decode(c) { if f.matches($0) { n += 1 } }
            return n
        }
        let any = try count("hci_event.report.rssi")
        XCTAssertGreaterThan(any, 0)
        XCTAssertEqual(any, try count("hci_event.report_1.rssi or hci_event.report_2.rssi or hci_event.report.rssi"))
        XCTAssertEqual(try count("hci_event.report.rssi != 127"), try count("hci_event.report.rssi and not hci_event.report.rssi == 127"))
        XCTAssertNoThrow(try DisplayFilter("hci_event.report_9.rssi < -90"))
        XCTAssertNoThrow(try DisplayFilter("hci_event.report.advertising_data.flags.flags.value == 6"))
        do {
            _ = try DisplayFilter("hci_event.reports.rssi < -90")
            XCTFail("an unknown field compiled")
        } catch {
            XCTAssertEqual(error.code, .unknownField)
            XCTAssertEqual(error.suggestions.first, "hci_event.report.rssi", error.description)
        }
        XCTAssertThrowsError(try DisplayFilter("att.opcode_2 == 1"))
        // One word of a field's name, typed alone, finds it.
        do {
            _ = try DisplayFilter("hci_event.code == 0x0e")
            XCTFail("an unknown field compiled")
        } catch {
            XCTAssertEqual(error.suggestions.first, "hci_event.event_code", error.description)
        }
    }

    /// tshark's field names stand for ours; `blesniff fields` shows them.
    func testTsharkNamesAreAliases() throws {
        XCTAssertEqual(FieldAliases.fields(for: "btatt.opcode"), ["att.opcode"])
        for p in FieldAliases.pairs {
            XCTAssertNoThrow(try DisplayFilter(p.tshark), p.tshark)
            // `frame` and `time` are frame fields, the others decoded fields.
            for f in p.ours where f != "frame" && f != "time" {
                XCTAssert(FieldCatalog.typeOfAnyInstance(f) != nil, "\(p.tshark) stands for \(f), which is not a field")
            }
        }
        let r = try CLI.run(["fields", "att.opcode"])
        XCTAssertEqual(r.status, 0, r.err)
        let first = r.out.prefix { $0 != "\n" }
        XCTAssert(first.hasPrefix("att.opcode ") && first.hasSuffix("  tshark: btatt.opcode"), r.out)
        let byAlias = try CLI.run(["fields", "btsmp.io"])
        XCTAssertEqual(byAlias.out, "smp.io_capability  named  tshark: btsmp.io_capability\n")
        let f = try CLI.run(["read", "-Y", "btatt.opcode == 0x1b", "--quiet", Fixtures.captures + "/gatt_session.btsnoop"])
        XCTAssertEqual(f.out, "5 matching frames, 0 malformed\n")
    }

    /// The field catalogue comes from the decoders' tables as well as from captures: a field no
    /// committed or shared capture holds (an SMP Keypress Notification's type, an HCI command's
    /// parameter, an AD type) is listed and can be filtered on.
    func testFieldsFromTheDecodersTablesAreKnown() throws {
        let r = try CLI.run(["fields"])
        XCTAssertEqual(r.status, 0, r.err)
        for name in ["smp.notification_type", "hci_event.report.advertising_data.broadcast_name",
                     "att.handle_length_value_tuple"] {
            XCTAssert(r.out.contains("\n" + name + " "), "\(name) is not listed")
        }
        // Numbered instances are listed once, by the name that matches any of them.
        XCTAssertFalse(r.out.contains("report_1."), "numbered names are listed")
        XCTAssertNoThrow(try DisplayFilter("hci_event.report.advertising_data.broadcast_name"))
        let f = try CLI.run(["read", "-Y", "smp.notification_type == 0", Fixtures.captures + "/gatt_session.btsnoop"])
        XCTAssertEqual(f.status, 0, f.err)
        XCTAssertEqual(f.out, "")
    }
}
