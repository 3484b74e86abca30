import Capture
import Decoders
import Foundation
import XCTest
import Wire

/// Behaviour on bad input, with the captures in Tests/Captures/malformed (see its README): decoding
/// goes up to the fault, the fault is reported with its frame and byte offset, and decoding goes on.
///
/// Exit codes of `blesniff read` (checked when `.build/debug/blesniff` is built, as after
/// `swift build`; otherwise only the API-level assertions run):
/// 0 the file was read to its end (frame-level problems and a truncation warning do not count);
/// 2 the file could not be opened or read to its end (a `CaptureError`), or it ended mid-record
/// under `--strict`.
final class MalformedTests: XCTestCase {
    static let dir = Fixtures.captures + "/malformed"

    struct Outcome {
        var frames: [Decoded] = []
        var error: CaptureError?
        var truncation: CaptureError?
        var dissector = Dissector()

        func frame(_ n: Int) -> Decoded? { frames.first { $0.packet.number == n } }
    }

    func decode(_ name: String) -> Outcome {
        var o = Outcome()
        do {
            let reader = try CaptureReader(path: Self.dir + "/" + name)
            while let r = try reader.next() {
                let p = Packet(r)
                let d = o.dissector.dissect(p)
                // Both renderings must work on every frame.
                _ = d.summary
                _ = d.layers
                o.frames.append(d)
            }
            o.truncation = reader.truncation
        } catch {
            o.error = error
        }
        return o
    }

    /// Exit status of `blesniff read ARGS FILE`, or nil when the executable is not built.
    func exitCode(_ name: String, _ args: [String] = []) throws -> Int32? {
        guard let exe = try? CLI.binary() else { return nil }
        return try Subprocess.run(exe, ["read"] + args + [Self.dir + "/" + name]).status
    }

    func assertExit(_ name: String, args: [String] = [], _ expected: Int32, file: StaticString = #filePath, line: UInt = #line) throws {
        if let code = try exitCode(name, args) { XCTAssertEqual(code, expected, "exit status of read \(name)", file: file, line: line) }
    }

    func assertClean(_ o: Outcome, _ frames: [Int], file: StaticString = #filePath, line: UInt = #line) {
        for n in frames {
            guard let d = o.frame(n) else { return XCTFail("frame \(n) missing", file: file, line: line) }
            XCTAssertFalse(d.isMalformed, "frame \(n): \(d.problems.map(\.reason))", file: file, line: line)
        }
    }

    func problems(_ o: Outcome, _ n: Int) -> String { o.frame(n)?.problems.map(\.reason).joined(separator: "; ") ?? "" }

    // MARK: Containers

    func testTruncatedFileHeaders() throws {
        for name in ["truncated_header.pcap", "truncated_header.btsnoop"] {
            let o = decode(name)
            XCTAssertEqual(o.error?.kind, .truncatedHeader, name)
            XCTAssertTrue(o.error?.description.contains("of \(name.hasSuffix("pcap") ? 24 : 16) bytes") == true, "\(o.error as Any)")
            XCTAssertTrue(o.frames.isEmpty)
            try assertExit(name, 2)
        }
    }

    func testTruncatedRecordIsAWarningAfterTheGoodFrames() throws {
        for name in ["truncated_record.btsnoop", "truncated_record.pcap"] {
            let o = decode(name)
            XCTAssertNil(o.error, name)
            XCTAssertEqual(o.frames.count, 2, name)
            assertClean(o, [1, 2])
            let t = try XCTUnwrap(o.truncation, name)
            XCTAssertEqual(t.kind, .truncatedRecord)
            XCTAssertEqual(t.frame, 3)
            XCTAssertEqual(t.offset, name.hasSuffix("btsnoop") ? 75 : 75)
            try assertExit(name, 0)
            try assertExit(name, args: ["--strict"], 2)
        }
    }

    func testRecordLongerThanTheFile() throws {
        let o = decode("record_larger_than_file.pcap")
        XCTAssertEqual(o.frames.count, 2)
        assertClean(o, [1, 2])
        let e = try XCTUnwrap(o.error ?? o.truncation)
        XCTAssertTrue([.recordTooLarge, .truncatedRecord].contains(e.kind), "\(e)")
        XCTAssertEqual(e.frame, 3)
        XCTAssertEqual(e.offset, 24 + 2 * 16 + 8 + 11)
        try assertExit("record_larger_than_file.pcap", o.error == nil ? 0 : 2)
    }

    func testRecordOver16MiB() throws {
        let o = decode("record_over_16mib.btsnoop")
        XCTAssertEqual(o.frames.count, 2)
        let e = try XCTUnwrap(o.error)
        XCTAssertEqual(e.kind, .recordTooLarge)
        XCTAssertEqual(e.frame, 3)
        XCTAssertEqual(e.offset, 16 + 24 + 4 + 24 + 7)
        XCTAssertTrue(e.description.contains("16 MiB"), e.description)
        try assertExit("record_over_16mib.btsnoop", 2)
    }

    func testZeroLengthRecords() throws {
        let o = decode("zero_length.btsnoop")
        XCTAssertNil(o.error)
        XCTAssertEqual(o.frames.map(\.packet.number), [1, 2, 3, 4])
        for n in [2, 4] {
            XCTAssertEqual(o.frame(n)?.packet.kind, .truncatedHeader)
            XCTAssertTrue(o.frame(n)?.isMalformed == true)
            XCTAssertEqual(o.frame(n)?.summary, "Truncated record")
        }
        assertClean(o, [1, 3])
        try assertExit("zero_length.btsnoop", 0)
    }

    func testUnknownLinkType() throws {
        let o = decode("unknown_linktype.pcap")
        if let e = o.error {
            XCTAssertEqual(e.kind, .unsupportedLinkType(147))
            XCTAssertTrue(e.description.contains("147"), e.description)
            try assertExit("unknown_linktype.pcap", 2)
        } else {
            XCTAssertEqual(o.frames.first?.packet.kind, .unsupported(linkType: 147))
        }
    }

    func testPcapngUnknownBlocksAndTwoInterfaces() throws {
        let o = decode("pcapng_unknown_blocks.pcapng")
        XCTAssertNil(o.error)
        XCTAssertNil(o.truncation)
        XCTAssertEqual(o.frames.count, 3, "unknown blocks are skipped, not frames")
        XCTAssertEqual(o.frames.map(\.packet.kind), [.hci(.command), .hci(.event), .hci(.event)])
        XCTAssertEqual(o.frames.map(\.packet.direction), [.sent, .received, .received])
        assertClean(o, [1, 2, 3])
        try assertExit("pcapng_unknown_blocks.pcapng", 0)
    }

    func testBtsnoopWrongVersion() throws {
        let o = decode("btsnoop_wrong_version.btsnoop")
        XCTAssertEqual(o.error?.kind, .unsupportedVersion)
        XCTAssertTrue(o.frames.isEmpty)
        try assertExit("btsnoop_wrong_version.btsnoop", 2)
    }

    // MARK: HCI

    func testUnknownH4PacketTypes() throws {
        let o = decode("h4_unknown_type.btsnoop")
        XCTAssertEqual(o.frames.count, 5)
        XCTAssertEqual(o.frames.dropFirst().prefix(3).map(\.packet.kind), [.unknownHCIType(0x07), .unknownHCIType(0xFF), .unknownHCIType(0x00)])
        XCTAssertEqual(o.frame(2)?.summary, "Unknown HCI packet type 0x07")
        assertClean(o, [1, 5])
        try assertExit("h4_unknown_type.btsnoop", 0)
    }

    func testHCILengthsThatDisagreeWithTheRecord() throws {
        let o = decode("hci_length_mismatch.btsnoop")
        XCTAssertEqual(o.frames.count, 5)
        XCTAssertTrue(problems(o, 1).contains("parameter length 5 but 0 bytes follow"), problems(o, 1))
        XCTAssertTrue(problems(o, 2).contains("parameter length 2 but 4 bytes follow"), problems(o, 2))
        XCTAssertTrue(problems(o, 4).contains("ACL length 20 but 7 bytes follow"), problems(o, 4))
        // The fault is located: frame number and byte offset of the record.
        XCTAssertEqual(o.frame(4)?.packet.fileOffset, 121)
        assertClean(o, [3, 5])
        XCTAssertEqual(o.frame(5)?.l2cap?.cid, L2CAPChannel.att)
        try assertExit("hci_length_mismatch.btsnoop", 0)
    }

    // MARK: L2CAP

    func testL2CAPLengthsThatLie() throws {
        let o = decode("l2cap_length_lies.btsnoop")
        XCTAssertTrue(problems(o, 2).contains("longer than the L2CAP length"), problems(o, 2))
        XCTAssertNil(o.frame(2)?.l2cap)
        XCTAssertEqual(o.frame(3)?.fragment?.of, 304)
        XCTAssertTrue(problems(o, 4).contains("L2CAP PDU incomplete: 7 of 304 bytes"), problems(o, 4))
        XCTAssertTrue(problems(o, 4).contains("frames 3"), problems(o, 4))
        XCTAssertEqual(o.frame(4)?.l2cap?.captured, 3, "the new PDU still decodes")
        assertClean(o, [5])
        try assertExit("l2cap_length_lies.btsnoop", 0)
    }

    func testContinuationFragmentsWithoutAStart() throws {
        let o = decode("fragments_without_start.btsnoop")
        for n in [2, 3] { XCTAssertTrue(problems(o, n).contains("continuation fragment without a start"), problems(o, n)) }
        XCTAssertEqual(o.frame(4)?.l2cap?.cid, L2CAPChannel.att)
        XCTAssertEqual(o.frame(5)?.l2cap?.captured, 6)
        assertClean(o, [1, 4, 5])
    }

    func testInterleavedFragmentsOfTwoHandles() throws {
        let o = decode("interleaved_fragments.btsnoop")
        assertClean(o, [1, 2, 3, 4, 5, 6])
        let a = try XCTUnwrap(o.frame(5)?.l2cap), b = try XCTUnwrap(o.frame(6)?.l2cap)
        // The reassembled payloads went to ATT whole: Read Responses.
        func pdu(_ n: Int) -> [UInt8]? {
            guard case .att(let r, _)? = o.frame(n)?.upper else { return nil }
            return Array(r.pdu.bytes)
        }
        XCTAssertEqual(pdu(5), [0x0B] + Array("HRM-1".utf8))
        XCTAssertEqual(pdu(6), [0x0B] + Array("sensor two".utf8))
        XCTAssertEqual(a.captured, 6)
        XCTAssertEqual(b.captured, 11)
        XCTAssertEqual(a.fragments, [3, 5])
        XCTAssertEqual(b.fragments, [4, 6])
        XCTAssertEqual(o.frame(5)?.connection?.handle, 0x40)
        XCTAssertEqual(o.frame(6)?.connection?.handle, 0x41)
    }

    // MARK: ATT, advertising, GATT

    func testATTPDUsShorterThanTheirOpcodeNeeds() throws {
        let o = decode("att_short_pdus.btsnoop")
        XCTAssertEqual(o.frames.count, 8)
        for n in 2...6 {
            let d = try XCTUnwrap(o.frame(n))
            XCTAssertEqual(d.l2cap?.cid, L2CAPChannel.att, "frame \(n)")
            // Until ATT is decoded the PDU is carried raw; once it is, each must be flagged.
            if case .raw? = d.upper {} else { XCTAssertTrue(d.isMalformed, "frame \(n) should be malformed") }
        }
        assertClean(o, [1, 7, 8])
        try assertExit("att_short_pdus.btsnoop", 0)
    }

    func testADLengthsPastTheEnd() throws {
        let o = decode("ad_length_past_end.btsnoop")
        XCTAssertEqual(o.frames.count, 3)
        func params(_ n: Int) throws -> Bytes {
            guard let d = o.frame(n), case .event(0x3E) = d.hci else { throw XCTSkip("frame \(n) is not an LE Meta event") }
            return d.hciParameters
        }
        // Frame 1: the Complete Local Name claims 8 bytes, 3 follow; the Flags before it decode.
        let p1 = try params(1).from(1)
        let ad = try XCTUnwrap(AdvertisingReports.parse(subevent: 0x02, p1).reports.first?.advertisingData(in: p1))
        XCTAssertFalse(ad.problems.isEmpty)
        XCTAssertFalse(ad.structures.isEmpty)
        XCTAssertTrue(o.frame(1)?.summary.contains("malformed") == true, o.frame(1)?.summary ?? "")
        // Frame 2: the report's data length runs past the event.
        let r2 = AdvertisingReports.parse(subevent: 0x02, try params(2).from(1))
        XCTAssertNotNil(r2.malformed)
        // Frame 3 is whole.
        let p3 = try params(3).from(1)
        let r3 = AdvertisingReports.parse(subevent: 0x02, p3)
        XCTAssertNil(r3.malformed)
        XCTAssertEqual(r3.reports.first?.advertisingData(in: p3).localName?.name, "HRM1")
        XCTAssertTrue(r3.reports.first?.advertisingData(in: p3).problems.isEmpty == true)
        try assertExit("ad_length_past_end.btsnoop", 0)
    }

    func testHandlesOutOfOrder() throws {
        let o = decode("handles_out_of_order.btsnoop")
        XCTAssertEqual(o.frames.count, 7)
        XCTAssertEqual(o.frame(3)?.l2cap?.captured, 20)
        XCTAssertEqual(o.frame(5)?.l2cap?.captured, 14)
        assertClean(o, [1, 2, 4, 6, 7])
        try assertExit("handles_out_of_order.btsnoop", 0)
    }

    func testCaptureStartingMidConnection() throws {
        let o = decode("mid_connection.btsnoop")
        XCTAssertEqual(o.frames.count, 5)
        assertClean(o, [1, 2, 3, 4, 5])
        let c = try XCTUnwrap(o.frame(1)?.connection)
        XCTAssertEqual(c.handle, 0x40)
        XCTAssertNil(c.createdFrame, "no Connection Complete was seen")
        XCTAssertEqual(c.firstFrame, 1)
        XCTAssertTrue((2...5).allSatisfy { o.frame($0)?.connection === c }, "every frame is on the same connection")
        XCTAssertEqual(o.frame(4)?.l2cap?.fragments, [3, 4])
        XCTAssertEqual(c.endedFrame, 5)
        XCTAssertEqual(o.dissector.allConnections.count, 1)
    }

    // MARK: Bounded state

    /// 200,000 ACL start fragments on 4,000 handles, none ever completed: the dissector holds at
    /// most one pending PDU per handle and direction, so memory stays flat.
    func testUnfinishedFragmentsKeepStateBounded() throws {
        let dissector = Dissector()
        let before = residentBytes()
        var pending = 0
        for i in 0..<200_000 {
            let handle = UInt16(i % 4000)
            // L2CAP length 65535 announced, 23 bytes carried.
            var acl: [UInt8] = [UInt8(handle & 0xFF), UInt8(handle >> 8) | 0x20, 27, 0, 0xFF, 0xFF, 0x04, 0x00]
            acl += repeatElement(UInt8(i & 0xFF), count: 23)
            let d = dissector.dissect(Packet(number: i + 1, timestamp: Int64(i), direction: i & 1 == 0 ? .sent : .received,
                                             adapter: 0, kind: .hci(.aclData), payload: acl[...]))
            if d.fragment != nil { pending += 1 }
            if i >= 8000 { XCTAssertTrue(d.isMalformed, "a start over a pending PDU drops it, reported") }
        }
        XCTAssertEqual(pending, 200_000)
        XCTAssertLessThanOrEqual(dissector.allConnections.count, 4000)
        // A sanitizer keeps freed blocks in quarantine and adds shadow memory: resident size says
        // nothing about the dissector there.
        guard !underSanitizer else { return }
        let grown = residentBytes() - before
        XCTAssertLessThan(grown, 64 << 20, "resident memory grew by \(grown >> 20) MiB")
    }

    /// Connections on many adapters (Linux monitor indexes are 16 bits): the live table is capped.
    func testConnectionTableIsBounded() throws {
        let dissector = Dissector()
        var capNotes = 0
        for i in 0..<40_000 {
            let acl: [UInt8] = [0x40, 0x20, 5, 0, 1, 0, 4, 0, 0x1E]
            let d = dissector.dissect(Packet(number: i + 1, timestamp: Int64(i), direction: .received,
                                             adapter: UInt16(i & 0xFFFF), kind: .hci(.aclData), payload: acl[...]))
            if d.problems.contains(where: { $0.code == .captureLimit && $0.reason.contains("connection table full") }) { capNotes += 1 }
        }
        XCTAssertLessThanOrEqual(dissector.allConnections.count, Dissector.maxLiveConnections + Dissector.maxEndedKept * 9 / 8)
        XCTAssertGreaterThan(capNotes, 0)
    }

    /// 100,000 connections opened and closed: the list of ended ones stays bounded and cheap.
    func testEndedConnectionsAreBounded() throws {
        let dissector = Dissector()
        let start = Date()
        for i in 0..<100_000 {
            let h = UInt8(i & 0xFF)
            let up: [UInt8] = [0x3E, 19, 0x01, 0x00, h, 0x00, 0x00, 0x01, 1, 2, 3, 4, 5, 6, 0x18, 0, 0, 0, 0x48, 0, 0]
            let down: [UInt8] = [0x05, 4, 0x00, h, 0x00, 0x13]
            for (k, ev) in [up, down].enumerated() {
                _ = dissector.dissect(Packet(number: 2 * i + k + 1, timestamp: Int64(i), direction: .received, adapter: 0,
                                             kind: .hci(.event), payload: ev[...]))
            }
        }
        XCTAssertLessThanOrEqual(dissector.ended.count, Dissector.maxEndedKept * 9 / 8)
        XCTAssertGreaterThanOrEqual(dissector.ended.count, Dissector.maxEndedKept)
        XCTAssertEqual(dissector.allConnections.count, dissector.ended.count)
        XCTAssertEqual(dissector.ended.last?.endedFrame, 200_000)
        XCTAssertLessThan(Date().timeIntervalSince(start), 60)
    }

    /// Signaling that opens a credit-based channel on every CID: the channel list is capped.
    func testDynamicChannelsAreBounded() throws {
        let dissector = Dissector()
        var n = 0
        func signal(_ cmd: [UInt8], _ dir: Direction) {
            n += 1
            let frame: [UInt8] = [UInt8(cmd.count), 0, 0x05, 0x00] + cmd
            let acl: [UInt8] = [0x40, 0x20, UInt8(frame.count), 0] + frame
            _ = dissector.dissect(Packet(number: n, timestamp: Int64(n), direction: dir, adapter: 0, kind: .hci(.aclData), payload: acl[...]))
        }
        for i in 0..<1000 {
            let cid = UInt16(0x40 + i), id = UInt8(i % 255 + 1)
            // LE Credit Based Connection Request / Response, SPSM 0x0080, MTU 512, MPS 247, 10 credits.
            signal([0x14, id, 10, 0, 0x80, 0x00, UInt8(cid & 0xFF), UInt8(cid >> 8), 0x00, 0x02, 0xF7, 0x00, 10, 0], .sent)
            signal([0x15, id, 10, 0, UInt8(cid & 0xFF), UInt8(cid >> 8), 0x00, 0x02, 0xF7, 0x00, 10, 0, 0, 0], .received)
        }
        let c = try XCTUnwrap(dissector.allConnections.first)
        XCTAssertEqual(c.channels.channels.count, DynamicChannels.maxChannels, "the newest are kept")
        XCTAssertEqual(c.channels.channels.last?.local.cid, 0x40 + 999)
    }

    /// True when the AddressSanitizer or ThreadSanitizer runtime is linked in (nil is RTLD_DEFAULT).
    private var underSanitizer: Bool {
        dlsym(nil, "__asan_init") != nil
            || dlsym(nil, "__tsan_init") != nil
    }

    private func residentBytes() -> Int {
        guard let s = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
              let pages = s.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

/// One definition of a malformed frame (it is when any layer is), the same count in every output.
final class MalformedCountTests: XCTestCase {
    func counts(_ path: String) throws -> (text: Int, json: Int, quiet: String) {
        let text = try CLI.run(["read", path]).out.split(separator: "\n").filter { $0.hasSuffix(" [malformed]") }.count
        let json = try CLI.run(["read", "--format", "json", path]).out.split(separator: "\n").filter { line in
            let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return o?["malformed"] != nil
        }.count
        return (text, json, try CLI.run(["read", "--quiet", path]).out)
    }

    /// An LE Set Advertising Data command whose AD length exceeds 31 is malformed in its HCI layer
    /// only: the frame carries the flag, and read, read --format json and read --quiet agree.
    func testAFaultInAnInnerLayerMarksTheFrame() throws {
        let path = Fixtures.captures + "/bad_adv_data.btsnoop"
        let c = try counts(path)
        XCTAssertEqual(c.text, 2)
        XCTAssertEqual(c.json, 2)
        XCTAssertEqual(c.quiet, "38 frames, 2 malformed\n")
        let line = try CLI.run(["read", "--format", "json", "--skip", "30", "--count", "1", path]).out
        XCTAssertTrue(line.contains(#""malformed":["Advertising Data Length 32 exceeds 31"]"#), line)
    }

    func testEveryCommittedCaptureCountsAlike() throws {
        for name in Fixtures.committed {
            let c = try counts(Fixtures.captures + "/" + name)
            XCTAssertEqual(c.text, c.json, name)
            XCTAssertTrue(c.quiet.hasSuffix(" \(c.text) malformed\n"), "\(name): \(c.quiet) vs \(c.text)")
        }
    }
}

extension MalformedTests {
    /// Each problem carries a stable code naming the layer at fault, besides its reason.
    func testProblemsCarryStableCodes() throws {
        let codes: [(file: String, code: DecodeProblem.Code)] = [
            ("hci_length_mismatch.btsnoop", .hciLength),
            ("att_short_pdus.btsnoop", .att),
            ("fragments_without_start.btsnoop", .l2capReassembly),
        ]
        for (file, code) in codes {
            var seen: Set<DecodeProblem.Code> = []
            try Fixtures.decode(Fixtures.captures + "/malformed/" + file) { d in
                for p in d.problems { seen.insert(p.code) }
            }
            XCTAssert(seen.contains(code), "\(file): \(seen)")
        }
    }
}
