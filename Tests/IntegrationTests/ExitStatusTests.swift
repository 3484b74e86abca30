import XCTest

/// A command that did nothing must not exit 0: a CI job passes on exit 0, so a wrong path, a
/// folder with no capture or a conversion that carried no frame has to fail it.
final class ExitStatusTests: XCTestCase {
    var dir = ""

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "blesniff-exit-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: dir)
    }

    func testAuditOfAnEmptyFolderIsExitTwo() throws {
        try FileManager.default.createDirectory(atPath: dir + "/empty", withIntermediateDirectories: true)
        let r = try CLI.run(["audit", dir + "/empty"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue((r.out + r.err).contains("no capture in this directory"), r.out + r.err)
    }

    /// PacketLogger and bug-report files are recognised by content, as `read` recognises them;
    /// what the walk passes over is listed with --verbose.
    func testAuditFolderWalkFindsEveryFormatReadReads() throws {
        let folder = dir + "/phone"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var r = try CLI.run(["convert", Fixtures.captures + "/bad_just_works.btsnoop", folder + "/session.pklg"])
        XCTAssertEqual(r.status, 0, r.err)
        try FileManager.default.copyItem(atPath: Fixtures.captures + "/phone/bugreport.zip", toPath: folder + "/report.zip")
        try Data("not a capture\n".utf8).write(to: URL(fileURLWithPath: folder + "/notes.txt"))

        r = try CLI.run(["audit", "--fail-on", "never", "--verbose", folder])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains(folder + "/session.pklg: "), r.out)
        XCTAssertTrue(r.out.contains("BLE602"), "the Just Works finding of the PacketLogger file: \(r.out)")
        XCTAssertTrue(r.out.contains(folder + "/report.zip: "), r.out)
        XCTAssertEqual(r.err, "blesniff: skipped \(folder)/notes.txt: not a capture file (pcap, pcapng, btsnoop, PacketLogger or Android bug report)\n")
        r = try CLI.run(["audit", "--fail-on", "never", folder])
        XCTAssertEqual(r.err, "", "the skipped files are listed only with --verbose")
    }

    /// `-` is standard input on every command that reads a capture.
    func testDashIsStandardInputEverywhere() throws {
        let input = Fixtures.captures + "/bad_just_works.btsnoop"
        let commands: [[String]] = [["audit", "--fail-on", "never", "-"], ["gatt", "-"], ["devices", "-"], ["keys", "-"],
                                    ["report", "-o", "-", "-"], ["convert", "-", dir + "/stdin.pcapng"], ["read", "--quiet", "-"]]
        for args in commands {
            let r = try CLI.run(args, stdin: input)
            XCTAssertEqual(r.status, 0, "\(args): \(r.err)")
            XCTAssertFalse(r.out.isEmpty && args[0] != "convert", "\(args)")
            XCTAssertFalse(r.err.contains("no such file"), "\(args): \(r.err)")
        }
        let converted = try CLI.run(["read", "--quiet", dir + "/stdin.pcapng"])
        XCTAssertEqual(converted.out, try CLI.run(["read", "--quiet", input]).out)
    }

    /// One line per error: the file and the reason, not a second copy from the report.
    func testAnErrorIsPrintedOnce() throws {
        for command in [["audit"], ["read"], ["gatt"], ["devices"], ["keys"], ["report", "-o", dir + "/r.html"]] {
            let r = try CLI.run(command + ["/nonexistent.btsnoop"])
            XCTAssertEqual(r.status, 2, "\(command)")
            let lines = (r.out + r.err).split(separator: "\n")
            XCTAssertEqual(lines.count, 1, "\(command): \(lines)")
            XCTAssertTrue(lines.first?.contains("/nonexistent.btsnoop") ?? false, "\(command): \(lines)")
        }
    }

    /// An nRF Sniffer capture has no HCI frame: pcap201, btsnoop1002 and pklg cannot carry any, so
    /// nothing is written and the exit status says so; pcapng and pcap272 carry them all.
    func testConvertThatCarriesNoFrameFailsBeforeWriting() throws {
        let sniffer = dir + "/sniffer.pcap"
        try SnifferCapture.write(to: sniffer)
        for (format, ext) in [("pcap201", "pcap"), ("btsnoop1002", "btsnoop"), ("pklg", "pklg")] {
            let out = dir + "/out." + ext
            let r = try CLI.run(["convert", "--to", format, sniffer, out])
            XCTAssertEqual(r.status, 2, format)
            XCTAssertTrue(r.err.contains("none of the 3 frames can be carried by \(format)"), r.err)
            XCTAssertTrue(r.err.contains("pcapng, pcap256 can carry them"), r.err)
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), "\(format): nothing written")
        }
        for format in ["pcapng", "pcap256"] {
            let out = dir + "/kept." + format
            var r = try CLI.run(["convert", "--to", format, sniffer, out])
            XCTAssertEqual(r.status, 0, r.err)
            r = try CLI.run(["read", "--quiet", out])
            XCTAssertEqual(r.out, "3 frames, 0 malformed\n", format)
        }
    }

    /// Some frames dropped by a format the user chose: the count in a warning; with --strict, exit 2.
    func testConvertThatDropsSomeFramesWarnsAndFailsWhenStrict() throws {
        let monitor = Fixtures.captures + "/gatt_session.monitor.btsnoop"
        var r = try CLI.run(["convert", "--to", "pcap201", monitor, dir + "/a.pcap"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.err.range(of: #"warning: \d+ (notes|frames) dropped"#, options: .regularExpression) != nil, r.err)
        r = try CLI.run(["convert", "--strict", "--to", "pcap201", monitor, dir + "/b.pcap"])
        XCTAssertEqual(r.status, 2, r.err)
    }

    /// The link type of a file header: pcap's at offset 20 (little-endian as written), btsnoop's at 12.
    func linkType(_ path: String) throws -> UInt32 {
        let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        if path.hasSuffix(".pcap") { return b[20..<24].reversed().reduce(0) { $0 << 8 | UInt32($1) } }
        return b[12..<16].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The output's extension names the container; the link type is the one that loses nothing of
    /// the input: a btmon capture (notes, index records, MGMT) becomes DLT 254 or btsnoop 2001, as
    /// btmon writes, not 201 and 1002 with a third of its frames gone and exit status 0.
    func testConvertByExtensionKeepsEveryFrame() throws {
        var inputs = [Fixtures.captures + "/gatt_session.monitor.btsnoop"]
        let shared = Fixtures.shared + "/blesecpoc__hci_capture_20260306_121058.snoop"
        if FileManager.default.fileExists(atPath: shared) { inputs.append(shared) }
        for input in inputs {
            let frames = try CLI.run(["read", "--quiet", input]).out
            for (ext, type) in [("pcap", UInt32(254)), ("btsnoop", 2001), ("log", 2001)] {
                let out = dir + "/out." + ext
                let r = try CLI.run(["convert", input, out])
                XCTAssertEqual(r.status, 0, r.err)
                XCTAssertEqual(r.err, "", "nothing dropped")
                XCTAssertEqual(try linkType(out), type, "\(input) → .\(ext)")
                XCTAssertEqual(try CLI.run(["read", "--quiet", out]).out, frames, "\(input) → .\(ext)")
                try FileManager.default.removeItem(atPath: out)
            }
        }
        // HCI-only input keeps the HCI link types.
        let r = try CLI.run(["convert", Fixtures.captures + "/gatt_session.btsnoop", dir + "/h4.pcap"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(try linkType(dir + "/h4.pcap"), 201)
    }

    /// A loss the user did not choose fails: HCI input first (so btsnoop 1002), then a monitor
    /// capture whose notes and index records 1002 cannot carry.
    func testConvertThatDropsFramesNobodyChoseToDropFails() throws {
        let r = try CLI.run(["convert", Fixtures.captures + "/gatt_session.btsnoop", Fixtures.captures + "/gatt_session.monitor.btsnoop",
                             dir + "/mixed.btsnoop"])
        XCTAssertEqual(r.status, 2, r.err)
        XCTAssertTrue(r.err.contains("error: "), r.err)
        XCTAssertTrue(r.err.contains("--to btsnoop1002 accepts the loss"), r.err)
    }

    /// The -w format comes from the extension, or the command fails naming the formats it writes.
    func testCaptureRefusesAnOutputNameItCannotWrite() throws {
        let r = try CLI.run(["capture", "--from", Fixtures.captures + "/gatt_session.pcap", "-q", "-w", dir + "/out.pklg"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.err.contains(".pcap, .pcapng and .btsnoop"), r.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/out.pklg"))
    }
}

/// Three over-the-air frames as a sniffer writes them (pcap, link type 256, LE LL with the
/// pseudo header): two ADV_IND and a SCAN_REQ, flagged dewhitened with a checked, valid CRC.
enum SnifferCapture {
    static func write(to path: String) throws {
        func le32(_ v: Int) -> [UInt8] { [UInt8(v & 0xff), UInt8(v >> 8 & 0xff), UInt8(v >> 16 & 0xff), UInt8(v >> 24 & 0xff)] }
        var file: [UInt8] = le32(0xa1b2_c3d4) + [2, 0, 4, 0] + le32(0) + le32(0) + le32(65535) + le32(256)
        let accessAddress: [UInt8] = [0xd6, 0xbe, 0x89, 0x8e]
        let adv: [UInt8] = [0x00, 0x0b, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x02, 0x01, 0x06, 0x00, 0x00]
        let scanReq: [UInt8] = [0x03, 0x0c, 0x01, 0x02, 0x03, 0x04, 0x05, 0xc6, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66]
        for (i, pdu) in [adv, adv, scanReq].enumerated() {
            // Pseudo header: RF channel, signal, noise, offenses, reference access address, flags
            // 0x0C01 (dewhitened, CRC checked, CRC valid); then access address, PDU, CRC.
            let record: [UInt8] = [0, 0, 0, 0] + accessAddress + [0x01, 0x0C] + accessAddress + pdu + [0, 0, 0]
            file += le32(1_700_000_000 + i) + le32(0) + le32(record.count) + le32(record.count) + record
        }
        try Data(file).write(to: URL(fileURLWithPath: path))
    }
}
