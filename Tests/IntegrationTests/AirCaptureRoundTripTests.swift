import XCTest

/// Each committed Bumble session (one side's HCI log) made into the over-the-air capture a sniffer
/// would have written (scripts/fixtures/make_air_capture.py: CONNECT_IND, data PDUs with sequence numbers,
/// channel hopping, CRCs, and the encryption procedure with AES-CCM from Python's cryptography
/// package) decodes to the same SMP and ATT traffic as the HCI log, the encrypted part decrypted
/// with the LTK `--keys-from` takes from that log. An ATT client pipelining its requests stays
/// pipelining over the air (once reported as lost responses).
final class AirCaptureRoundTripTests: XCTestCase {
    static let columns = ["-T", "fields", "-e", "btsmp.opcode", "-e", "btatt.opcode", "-e", "btatt.handle", "-e", "btatt.value"]

    func testSessionsRoundTripThroughTheAir() throws {
        let dir = NSTemporaryDirectory() + "blesniff-air-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var sessions = 0, decrypted = 0
        for name in Fixtures.committed where name.hasSuffix(".btsnoop") {
            let log = Fixtures.captures + "/" + name
            let air = dir + "/" + name + ".air.pcap"
            let made = try Subprocess.run("python3", [Fixtures.root + "/scripts/fixtures/make_air_capture.py", log, air])
            if made.status == 77 { throw XCTSkip("Python's cryptography package is absent") }
            if made.status == 1 || made.status == 2 { continue }  // no LE connection, or not H4
            XCTAssertEqual(made.status, 0, "\(name): \(made.err)")
            sessions += 1
            func rows(_ args: [String]) throws -> [Substring] {
                let r = try CLI.run(["read"] + Self.columns + args)
                XCTAssertEqual(r.status, 0, "\(name): \(r.err)")
                return r.out.split(separator: "\n").filter { !$0.allSatisfy { $0 == "\t" } }
            }
            let hci = try rows([log]), overTheAir = try rows(["--keys-from", log, air])
            XCTAssertGreaterThan(hci.count, 0, name)
            XCTAssertEqual(hci, overTheAir, "\(name): the air capture decodes differently")
            let keys = try CLI.run(["keys", "--keys-from", log, air]).out
            if keys.contains("decrypted") { decrypted += 1 }
            let malformed = try CLI.run(["read", "--quiet", "--keys-from", log, air]).out
            XCTAssert(malformed.hasSuffix(", 0 malformed\n"), "\(name): \(malformed)")
        }
        XCTAssertGreaterThanOrEqual(sessions, 10)
        // The sessions that pair and encrypt (Just Works and Passkey Entry, LE Secure Connections).
        XCTAssertGreaterThanOrEqual(decrypted, 3)

        let pipelining = dir + "/bad_att_pipelining.btsnoop.air.pcap"
        let audit = try CLI.run(["audit", "--fail-on", "never", pipelining])
        XCTAssert(audit.out.contains("BLE403 att-request-pipelining"), audit.out)
    }

    /// tshark finds the made capture's CRCs correct and reads its encryption procedure as such.
    func testTsharkReadsTheMadeCapture() throws {
        let tshark = try FilterTests.tshark()
        let air = NSTemporaryDirectory() + "blesniff-air-tshark-\(getpid()).pcap"
        defer { try? FileManager.default.removeItem(atPath: air) }
        let made = try Subprocess.run("python3", [Fixtures.root + "/scripts/fixtures/make_air_capture.py", Fixtures.captures + "/good_just_works.btsnoop", air])
        if made.status == 77 { throw XCTSkip("Python's cryptography package is absent") }
        XCTAssertEqual(made.status, 0, made.err)
        let bad = try Subprocess.run(tshark, ["-r", air, "-Y", "btle.crc.incorrect", "-T", "fields", "-e", "frame.number"])
        XCTAssertEqual(bad.out, "")
        // Without the key tshark reads the encrypted LL_START_ENC_RSPs as other opcodes: the
        // plaintext procedure comes first.
        let control = try Subprocess.run(tshark, ["-r", air, "-Y", "btle.control_opcode", "-T", "fields", "-e", "btle.control_opcode"])
        XCTAssertEqual(Array(control.out.split(separator: "\n").prefix(3)), ["0x03", "0x04", "0x05"])
    }
}
