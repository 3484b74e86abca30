import Capture
import Foundation
import XCTest

/// `blesniff capture` run as a process, fed through named pipes.
final class LiveCaptureTests: XCTestCase {
    var dir: String!

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "blesniff-live-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// The built executable, next to the test bundle.
    func run(_ args: [String]) throws -> (status: Int32, out: String, err: String) { try CLI.run(args) }
    func binary() throws -> String { try CLI.binary() }
    typealias Run = CLI.Run

    func records(_ path: String) throws -> [(ts: Int64, linkType: UInt32, data: [UInt8])] {
        let r = try CaptureReader(path: path)
        var out: [(Int64, UInt32, [UInt8])] = []
        while let x = try r.next() { out.append((x.timestamp, x.linkType, Array(x.data))) }
        XCTAssertNil(r.truncation, path)
        return out
    }

    func tsharkCount(_ path: String) throws -> Int? {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark") else { return nil }
        let p = try Subprocess.run("/usr/bin/tshark", ["-r", path, "-T", "fields", "-e", "frame.number"])
        XCTAssertEqual(p.status, 0, "tshark -r \(path)")
        return p.out.split(separator: "\n").count
    }

    // MARK: -

    /// This build machine has no Bluetooth in its kernel: the monitor socket cannot be opened.
    func testNoBluetoothInTheKernel() throws {
        let probe = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue), 1)
        if probe >= 0 { close(probe); throw XCTSkip("this kernel has Bluetooth sockets") }
        guard errno == EAFNOSUPPORT else { throw XCTSkip("socket(AF_BLUETOOTH) fails with errno \(errno)") }
        for args in [["capture"], ["capture", "--list"], ["capture", "-i", "hci0", "-w", dir + "/x.pcap"]] {
            let r = try run(args)
            XCTAssertEqual(r.status, 2, "\(args)")
            XCTAssertEqual(r.err, "blesniff: this kernel has no Bluetooth support (load the bluetooth module: sudo modprobe bluetooth), or use --from to read a pipe\n")
            XCTAssertEqual(r.out, "")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/x.pcap"))
    }

    /// `capture --audit` finds, live, what an offline audit of the same traffic finds, and exits by --fail-on.
    func testLiveAuditEqualsOfflineAudit() throws {
        for name in ["bad_polling_read", "bad_scan_duplicates", "good_polling_read"] {
            let file = Fixtures.captures + "/" + name + ".pcap"
            let live = try run(["capture", "--from", file, "--audit", "-q", "--fail-on", "warning"])
            let offline = try run(["audit", "--fail-on", "warning", "--format", "json", file])
            XCTAssertEqual(live.status, offline.status, name)
            let rules = { (s: String) in Set(s.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).filter { $0.hasPrefix("BLE") && $0.count == 6 }.map(String.init)) }
            let liveFindings = live.err.split(separator: "\n").filter { $0.hasPrefix("blesniff: finding:") }.joined(separator: "\n")
            XCTAssertEqual(rules(liveFindings), rules(offline.out), name)
            XCTAssertEqual(name.hasPrefix("bad"), !liveFindings.isEmpty, name)
        }
    }

    func testUsageErrors() throws {
        for args in [["capture", "--files", "3", "-w", "x"], ["capture", "--file-size", "1"], ["capture", "-i", "usb0"],
                     ["capture", "--count", "0"], ["capture", "--list", "--from", "-"]] {
            let r = try run(args)
            XCTAssertNotEqual(r.status, 0, "\(args)")
            XCTAssertTrue(r.err.contains("Error:") || r.err.contains("blesniff:"), "\(args): \(r.err)")
        }
    }

    /// A Bumble session streamed through its pcap snooper into a FIFO: decoded live, it prints what
    /// an offline `read` of the same traffic prints, and the written file holds the same frames.
    func testBumbleSessionThroughAFIFO() throws {
        guard let check = try? Subprocess.run("python3", ["-c", "import bumble"]) else { throw XCTSkip("python3 is not available") }
        guard check.status == 0 else { throw XCTSkip("python3 cannot import bumble") }

        let fifo = dir + "/hci.fifo", out = dir + "/out.pcap", reference = dir + "/reference.pcap"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let capture = try Run(try binary(), ["capture", "--from", fifo, "-w", out])
        let helper = try Subprocess.run("python3", [Fixtures.captures + "/live_helper.py", fifo, reference])
        XCTAssertEqual(helper.status, 0, "live_helper.py: \(helper.err)")
        let live = capture.wait()
        XCTAssertEqual(live.status, 0, live.err)

        let offline = try run(["read", reference])
        XCTAssertEqual(offline.status, 0)
        XCTAssertGreaterThan(offline.out.split(separator: "\n").count, 20)
        XCTAssertEqual(live.out, offline.out)
        let written = try records(out), expected = try records(reference)
        XCTAssertEqual(written.map { $0.data }, expected.map { $0.data })
        XCTAssertEqual(written.map { $0.ts }, expected.map { $0.ts })
        XCTAssertEqual(Set(written.map { $0.linkType }), [201])
        XCTAssertTrue(live.err.hasPrefix("blesniff: \(expected.count) frames (hci0 \(expected.count)), 0 malformed, "), live.err)
        if let n = try tsharkCount(out) { XCTAssertEqual(n, expected.count) }
        // Written again as btsnoop 2001 from the reference: btmon's format, same frames.
        let snoop = dir + "/out.log"
        let again = try run(["capture", "--from", reference, "-w", snoop, "-q"])
        XCTAssertEqual(again.status, 0, again.err)
        XCTAssertEqual(try records(snoop).count, expected.count)
        XCTAssertEqual(try run(["read", snoop]).out, offline.out)
    }

    /// SIGINT while the pipe is still open: exit 0, a summary, and a complete file.
    func testInterruptWritesACompleteFile() throws {
        let fifo = dir + "/hci.fifo", out = dir + "/cut.pcap"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let capture = try Run(try binary(), ["capture", "--from", fifo, "-w", out])
        let source = try Data(contentsOf: URL(fileURLWithPath: Fixtures.captures + "/gatt_session.pcap"))
        let all = try records(Fixtures.captures + "/gatt_session.pcap")
        // The header, 40 whole records and half of the next one; the writer stays connected.
        var cut = 24
        let reader = try CaptureReader(path: Fixtures.captures + "/gatt_session.pcap")
        for _ in 0..<40 { if let r = try reader.next() { cut = Int(r.fileOffset) + r.fileLength } }
        let writer = open(fifo, O_WRONLY)
        XCTAssertGreaterThanOrEqual(writer, 0)
        defer { close(writer) }
        let bytes = [UInt8](source.prefix(cut + 10))
        XCTAssertEqual(bytes.withUnsafeBytes { write(writer, $0.baseAddress, bytes.count) }, bytes.count)
        // Wait for the 40 records to reach the file, then interrupt.
        let deadline = Date().addingTimeInterval(20)
        func size() -> Int { ((try? FileManager.default.attributesOfItem(atPath: out))?[.size] as? Int) ?? 0 }
        while Date() < deadline, size() < cut {
            Thread.sleep(forTimeInterval: 0.02)
        }
        kill(capture.pid, SIGINT)
        let r = capture.wait(timeout: 10)
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.err.hasPrefix("blesniff: 40 frames (hci0 40), 0 malformed, "), r.err)
        XCTAssertEqual(r.out.split(separator: "\n").count, 40)
        let written = try records(out)
        XCTAssertEqual(written.map { $0.data }, all.prefix(40).map { $0.data })
        if let n = try tsharkCount(out) { XCTAssertEqual(n, 40) }
    }

    func testRotationCountAndDuration() throws {
        let base = dir + "/ring.log"
        let r = try run(["capture", "--from", Fixtures.captures + "/gatt_session.btsnoop", "-w", base,
                         "--file-size", "0.002", "--files", "2", "-q"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.err.contains("files)"), r.err)
        let first = try records(base), second = try records(base + ".1")
        XCTAssertFalse(first.isEmpty)
        XCTAssertFalse(second.isEmpty)
        XCTAssertFalse(FileManager.default.fileExists(atPath: base + ".2"))
        for f in [base, base + ".1"] {
            XCTAssertLessThanOrEqual((try FileManager.default.attributesOfItem(atPath: f)[.size] as? Int) ?? 0, 2000)
        }

        let counted = try run(["capture", "--from", Fixtures.captures + "/gatt_session.pcap", "--count", "5"])
        XCTAssertEqual(counted.status, 0)
        XCTAssertEqual(counted.out.split(separator: "\n").count, 5)
        XCTAssertTrue(counted.err.hasPrefix("blesniff: 5 frames"), counted.err)

        // Nothing arrives on the pipe: --duration ends the capture.
        let fifo = dir + "/idle.fifo"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let idle = try Run(try binary(), ["capture", "--from", fifo, "--duration", "0.5"])
        let writer = open(fifo, O_WRONLY)
        defer { close(writer) }
        let header = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.captures + "/gatt_session.pcap")).prefix(24))
        _ = header.withUnsafeBytes { write(writer, $0.baseAddress, header.count) }
        let done = idle.wait(timeout: 10)
        XCTAssertEqual(done.status, 0)
        XCTAssertTrue(done.err.hasPrefix("blesniff: 0 frames, 0 malformed"), done.err)
    }

    func testDropsRootForTheOutputFile() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root") }
        guard let nobody = getpwnam("nobody")?.pointee else { throw XCTSkip("no user nobody") }
        chmod(dir, 0o777)
        let out = dir + "/dropped.pcap"
        let r = try run(["capture", "--from", Fixtures.captures + "/gatt_session.pcap", "-w", out, "-q", "--user", "nobody"])
        XCTAssertEqual(r.status, 0, r.err)
        var st = stat()
        XCTAssertEqual(stat(out, &st), 0)
        XCTAssertEqual(st.st_uid, nobody.pw_uid)
        // Through sudo, the invoking user is the default.
        let sudo = try Run(try binary(), ["capture", "--from", Fixtures.captures + "/gatt_session.pcap", "-w", dir + "/sudo.pcap", "-q"],
                           environment: ["SUDO_UID": String(nobody.pw_uid), "SUDO_GID": String(nobody.pw_gid)]).wait()
        XCTAssertEqual(sudo.status, 0, sudo.err)
        XCTAssertEqual(stat(dir + "/sudo.pcap", &st), 0)
        XCTAssertEqual(st.st_uid, nobody.pw_uid)
        XCTAssertEqual(st.st_gid, nobody.pw_gid)
        let symlink = dir + "/link.pcap"
        try FileManager.default.createSymbolicLink(atPath: symlink, withDestinationPath: "/etc/passwd-blesniff-never")
        let refused = try run(["capture", "--from", Fixtures.captures + "/gatt_session.pcap", "-w", symlink, "-q"])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.err.contains("is a symbolic link; refusing to write through it"), refused.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/etc/passwd-blesniff-never"))
    }
}
