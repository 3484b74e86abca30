import XCTest
@testable import Decoders
import Wire

final class L2CAPSignalingTests: XCTestCase {
    /// Payload of a C-frame (L2CAP header already removed).
    func frame(_ hex: String, _ channel: SignalingChannel) -> SignalingFrame {
        SignalingFrame(SMPVectors.offset(hex), channel: channel)
    }

    func single(_ hex: String, _ channel: SignalingChannel) -> SignalingPDU? {
        let f = frame(hex, channel)
        XCTAssertEqual(f.commands.count, 1, hex)
        return f.commands.first
    }

    // MARK: LE signaling channel

    /// bk300__btsnoop_hci.log.last frames 444, 445.
    func testConnectionParameterUpdate() throws {
        let req = try XCTUnwrap(single("120808000600140000006400", .le))
        XCTAssertNil(req.malformed)
        XCTAssertEqual(req.identifier, 0x08)
        XCTAssertEqual(req.command, .connectionParameterUpdateRequest(intervalMin: 6, intervalMax: 20, latency: 0,
                                                                       timeout: 100))
        XCTAssertEqual(req.summary,
                       "Connection Parameter Update Request: interval 7.5-25 ms, latency 0, timeout 1000 ms")
        guard case .quantity(6, _, let v, "ms")? = req.fields.first(where: { $0.label == "Interval Min" })?.value
        else { return XCTFail() }
        XCTAssertEqual(v, 7.5)
        let rsp = try XCTUnwrap(single("130802000000", .le))
        XCTAssertEqual(rsp.command, .connectionParameterUpdateResponse(result: 0))
        XCTAssertEqual(rsp.summary, "Connection Parameter Update Response: Connection Parameters accepted")
    }

    /// Vol 3 Part A 4.22–4.23, values checked against tshark -V.
    func testLECreditBasedConnection() throws {
        let req = try XCTUnwrap(single("14010a002500400064003c000a00", .le))
        XCTAssertEqual(req.command, .leCreditBasedConnectionRequest(spsm: 0x25, sourceCID: 0x40, mtu: 100, mps: 60,
                                                                     initialCredits: 10))
        XCTAssertEqual(req.summary,
                       "LE Credit Based Connection Request SPSM 0x0025 (OTS), SCID 0x0040, MTU 100, MPS 60, credits 10")
        let rsp = try XCTUnwrap(single("15010a00410064003c0005000000", .le))
        XCTAssertEqual(rsp.command, .leCreditBasedConnectionResponse(destinationCID: 0x41, mtu: 100, mps: 60,
                                                                      initialCredits: 5, result: 0))
        let refused = try XCTUnwrap(single("15010a00000000000000000005 00", .le))
        XCTAssertTrue(refused.summary.hasSuffix("Connection refused - insufficient authentication"))
        let credit = try XCTUnwrap(single("1602040040000300", .le))
        XCTAssertEqual(credit.command, .flowControlCreditIndication(cid: 0x40, credits: 3))
        XCTAssertEqual(credit.name, "Flow Control Credit Indication")
    }

    /// Vol 3 Part A 4.25–4.28 (tshark does not decode these).
    func testEnhancedCreditBased() throws {
        let req = try XCTUnwrap(single("1703100027006400400005004000410042004300", .le))
        XCTAssertEqual(req.command, .creditBasedConnectionRequest(spsm: 0x27, mtu: 100, mps: 64, initialCredits: 5,
                                                                   sourceCIDs: [0x40, 0x41, 0x42, 0x43]))
        XCTAssertTrue(req.summary.contains("(EATT)"))
        let rsp = try XCTUnwrap(single("18030e006400400005000400400000005000", .le))
        XCTAssertEqual(rsp.command, .creditBasedConnectionResponse(mtu: 100, mps: 64, initialCredits: 5, result: 4,
                                                                    destinationCIDs: [0x40, 0, 0x50]))
        XCTAssertTrue(rsp.summary.hasSuffix("Some connections refused - insufficient resources available"))
        XCTAssertEqual(rsp.fields.filter { $0.label == "Destination CID" }.count, 3)
        let reconf = try XCTUnwrap(single("19040800a000400040004100", .le))
        XCTAssertEqual(reconf.command, .creditBasedReconfigureRequest(mtu: 160, mps: 64, destinationCIDs: [0x40, 0x41]))
        let reconfRsp = try XCTUnwrap(single("1a0402000100", .le))
        XCTAssertEqual(reconfRsp.command, .creditBasedReconfigureResponse(result: 1))
        XCTAssertEqual(reconfRsp.summary,
                       "Credit Based Reconfigure Response: Reconfiguration failed - reduction in size of MTU not allowed")
        // Six CIDs is more than the specification allows.
        let six = try XCTUnwrap(single("19041000a0004000400041004200430044004500", .le))
        XCTAssertNil(six.command)
        XCTAssertNotNil(six.malformed)
    }

    func testCommandReject() throws {
        let notUnderstood = try XCTUnwrap(single("010502000000", .le))
        XCTAssertEqual(notUnderstood.command, .commandReject(reason: 0, data: SMPVectors.hex("")))
        XCTAssertEqual(notUnderstood.summary, "Command Reject: Command not understood")
        let mtu = try XCTUnwrap(single("01050400010030 00", .bredr))
        XCTAssertTrue(mtu.fields.contains { $0.label == "Actual MTU" })
        let cid = try XCTUnwrap(single("01060600020040004100", .le))
        XCTAssertEqual(cid.fields.map(\.label), ["Command Code", "Identifier", "Length", "Reason", "Local CID",
                                                 "Remote CID"])
    }

    func testDisconnectionOnLE() throws {
        let req = try XCTUnwrap(single("0609040041004000", .le))
        XCTAssertEqual(req.command, .disconnectionRequest(destinationCID: 0x41, sourceCID: 0x40))
        XCTAssertNil(req.malformed)
    }

    /// A BR/EDR-only command on the LE channel is decoded but flagged.
    func testBREDRCommandOnLE() throws {
        let pdu = try XCTUnwrap(single("0207040001004000", .le))
        XCTAssertEqual(pdu.command, .connectionRequest(psm: 1, sourceCID: 0x40))
        XCTAssertNotNil(pdu.malformed)
    }

    func testLEOneCommandPerFrame() {
        let f = frame("1602040040000300" + "1602040041000100", .le)
        XCTAssertEqual(f.commands.count, 1)
        XCTAssertNotNil(f.malformed)
    }

    // MARK: BR/EDR signaling channel

    /// happyleaf__btsnoop_hci_happyleaf_fail.log frames 216, 222, 223, 228, 229, 231, 251, 255
    /// (L2CAP header removed).
    func testBREDRCapture() throws {
        let info = try XCTUnwrap(single("0a0202000200", .bredr))
        XCTAssertEqual(info.command, .informationRequest(infoType: 2))
        XCTAssertEqual(info.summary, "Information Request: Extended Features Supported")
        let infoRsp = try XCTUnwrap(single("0b0208000200000000000000", .bredr))
        XCTAssertEqual(infoRsp.command, .informationResponse(infoType: 2, result: 0, data: SMPVectors.hex("00000000")))
        XCTAssertTrue(infoRsp.fields.contains { $0.label == "Extended Features" })

        let conn = try XCTUnwrap(single("0203040001004000", .bredr))
        XCTAssertEqual(conn.command, .connectionRequest(psm: 0x0001, sourceCID: 0x0040))
        XCTAssertEqual(conn.summary, "Connection Request PSM 0x0001 (SDP), SCID 0x0040")
        let connRsp = try XCTUnwrap(single("03030800c600400000000000", .bredr))
        XCTAssertEqual(connRsp.command, .connectionResponse(destinationCID: 0xC6, sourceCID: 0x40, result: 0, status: 0))
        XCTAssertEqual(connRsp.summary, "Connection Response DCID 0x00C6, SCID 0x0040: Connection successful")

        let conf = try XCTUnwrap(single("048408004000000001028000", .bredr))
        guard case .configurationRequest(0x40, 0, let options)? = conf.command else { return XCTFail() }
        XCTAssertEqual(Hex.string(options), "01028000")
        let option = try XCTUnwrap(conf.fields.first { $0.label == "Option" })
        XCTAssertEqual(option.children.map(\.label), ["Type", "Hint", "MTU"])
        let confRsp = try XCTUnwrap(single("05840600c60000000000", .bredr))
        XCTAssertEqual(confRsp.command, .configurationResponse(sourceCID: 0xC6, flags: 0, result: 0, options: SMPVectors.hex("")))

        let disc = try XCTUnwrap(single("06050400c6004000", .bredr))
        XCTAssertEqual(disc.command, .disconnectionRequest(destinationCID: 0xC6, sourceCID: 0x40))
        let discRsp = try XCTUnwrap(single("07050400c6004000", .bredr))
        XCTAssertEqual(discRsp.command, .disconnectionResponse(destinationCID: 0xC6, sourceCID: 0x40))

        // RFCOMM, frame 258.
        XCTAssertEqual(single("0206040003004100", .bredr)?.summary, "Connection Request PSM 0x0003 (RFCOMM), SCID 0x0041")
    }

    func testSeveralCommandsInOneBREDRFrame() {
        // Echo Request + Information Request/Response (Fixed Channels, signaling + connectionless).
        let f = frame("08070300616263" + "0a0802000300" + "0b080c0003000000" + "0600000000000000", .bredr)
        XCTAssertNil(f.malformed)
        XCTAssertEqual(f.commands.map(\.code), [0x08, 0x0A, 0x0B])
        XCTAssertEqual(f.commands[0].command, .echoRequest(data: SMPVectors.hex("616263")))
        guard case .flags(6, _, let names)? = f.commands[2].fields.first(where: { $0.label == "Fixed Channels" })?.value
        else { return XCTFail() }
        XCTAssertEqual(names, ["L2CAP Signaling channel", "Connectionless reception"])
        XCTAssertEqual(f.summary.components(separatedBy: "; ").count, 3)
    }

    /// Create Channel, Move Channel (Vol 3 Part A 4.14–4.19), checked against tshark -V.
    func testAMPCommands() throws {
        let f = frame("0c09050019004000010d0908004100400000000000", .bredr)
        XCTAssertEqual(f.commands.map(\.command), [
            .createChannelRequest(psm: 0x19, sourceCID: 0x40, controllerID: 1),
            .createChannelResponse(destinationCID: 0x41, sourceCID: 0x40, result: 0, status: 0),
        ])
        XCTAssertTrue(f.commands[0].summary.contains("(AVDTP)"))
        XCTAssertEqual(single("0e0a0300400001", .bredr)?.command,
                       .moveChannelRequest(initiatorCID: 0x40, destinationControllerID: 1))
        XCTAssertEqual(single("0f0a040040000000", .bredr)?.command, .moveChannelResponse(initiatorCID: 0x40, result: 0))
        XCTAssertEqual(single("100b040040000100", .bredr)?.command,
                       .moveChannelConfirmationRequest(initiatorCID: 0x40, result: 1))
        XCTAssertEqual(single("110b02004000", .bredr)?.command, .moveChannelConfirmationResponse(initiatorCID: 0x40))
    }

    func testConfigurationOptions() throws {
        // MTU 128, Flush Timeout 0xFFFF, hint-flagged unknown option 0x85 with 1 byte.
        let pdu = try XCTUnwrap(single("040c0f0040000000010280000202ffff850101", .bredr))
        let options = pdu.fields.filter { $0.label == "Option" }
        XCTAssertEqual(options.count, 3)
        XCTAssertEqual(options[2].children.first { $0.label == "Hint" }.map { "\($0.value)" }, "bool(true)")
        XCTAssertEqual(SignalingPDU.mtuOption(SMPVectors.hex("0202ffff01028000")), 128)
        // Option length past the end.
        let bad = try XCTUnwrap(single("040c0800400000000105 8000", .bredr))
        XCTAssertTrue(bad.fields.contains { $0.label == "Malformed" })
    }

    // MARK: Malformed input

    func testTruncatedAndUnknown() {
        // Length says 8, only 4 present.
        let cut = frame("12080800060014 00", .le)
        XCTAssertEqual(cut.commands.count, 1)
        XCTAssertNil(cut.commands[0].command)
        XCTAssertNotNil(cut.commands[0].malformed)
        // Header shorter than 4 bytes.
        XCTAssertNotNil(frame("1208", .le).malformed)
        XCTAssertNotNil(frame("", .le).malformed)
        // Unknown code: data kept.
        let unknown = frame("4b0102000102", .bredr)
        XCTAssertNil(unknown.commands.first?.command)
        XCTAssertTrue(unknown.commands.first?.summary.hasPrefix("Unknown Command 0x4B") ?? false)
        XCTAssertTrue(unknown.commands.first?.fields.contains { $0.label == "Data" } ?? false)
        // Identifier 0 is invalid.
        XCTAssertNotNil(single("0600040041004000", .bredr)?.malformed)
        // Too short for the command although the length is honest.
        XCTAssertNotNil(single("12010200 0600", .le)?.malformed)
    }

    func testEveryPrefixIsSafe() {
        for code in UInt8(0)...0x1C {
            let full: [UInt8] = [code, 1, 20, 0] + Array(repeating: 0x41, count: 20)
            for n in 0...full.count {
                for channel in [SignalingChannel.le, .bredr] {
                    let f = SignalingFrame(full[0..<n], channel: channel)
                    _ = f.summary
                    _ = f.fields
                }
            }
        }
    }

    func testPSMNames() {
        XCTAssertEqual(PSM.name(0x0001), "SDP")
        XCTAssertEqual(PSM.name(0x0003), "RFCOMM")
        XCTAssertEqual(PSM.name(0x0019), "AVDTP")
        XCTAssertEqual(PSM.name(0x0023, le: true), "IPSP")
        XCTAssertEqual(PSM.name(0x0025, le: true), "OTS")
        XCTAssertEqual(PSM.name(0x0027, le: true), "EATT")
        XCTAssertEqual(PSM.name(0x0080, le: true), "Dynamic")
        XCTAssertEqual(PSM.name(0x1001), "Dynamic")
    }

    // MARK: Dynamic channels

    /// Opens an LE credit based channel: local requests (SCID 0x0040, MTU 100, MPS 23,
    /// 2 credits), remote accepts (DCID 0x0041, MTU 50, MPS 30, 4 credits).
    func openLE(_ channels: DynamicChannels, spsm: UInt16 = 0x0080) {
        let s = Hex.padded(spsm & 0xFF, width: 2) + Hex.padded(spsm >> 8, width: 2)
        channels.feed(frame("14010a00" + s + "400064001700 0200", .le), from: .local, frame: 10)
        channels.feed(frame("15010a00410032001e0004000000", .le), from: .remote, frame: 11)
    }

    func testLEChannelOpenAndLookup() throws {
        let channels = DynamicChannels()
        openLE(channels)
        XCTAssertEqual(channels.channels.count, 1)
        // Local sends on the remote's CID; remote sends on ours.
        let ch = try XCTUnwrap(channels.channel(cid: 0x0041, from: .local))
        XCTAssertTrue(ch === channels.channel(cid: 0x0040, from: .remote))
        XCTAssertNil(channels.channel(cid: 0x0040, from: .local))
        XCTAssertEqual(ch.local, ChannelEndpoint(cid: 0x40, mtu: 100, mps: 23, credits: 2))
        XCTAssertEqual(ch.remote, ChannelEndpoint(cid: 0x41, mtu: 50, mps: 30, credits: 4))
        XCTAssertEqual(ch.mode, .leCreditBased)
        XCTAssertEqual(ch.openedFrame, 11)
        XCTAssertFalse(ch.isEATT)
    }

    func testResponseWithoutRequestOrRefusedOpensNothing() {
        let channels = DynamicChannels()
        channels.feed(frame("15010a00410032001e0004000000", .le), from: .remote, frame: 1)
        XCTAssertTrue(channels.channels.isEmpty)
        channels.feed(frame("14010a008000400064001700 0200", .le), from: .local, frame: 2)
        // Same identifier but from the requester's own side: not an answer.
        channels.feed(frame("15010a00410032001e0004000000", .le), from: .local, frame: 3)
        XCTAssertTrue(channels.channels.isEmpty)
        channels.feed(frame("15010a0000000000000000000200", .le), from: .remote, frame: 4)
        XCTAssertTrue(channels.channels.isEmpty)
    }

    func testMultiSegmentSDU() throws {
        let channels = DynamicChannels()
        openLE(channels)
        let ch = try XCTUnwrap(channels.channel(cid: 0x0040, from: .remote))
        // Remote → local: local's MPS is 23, MTU 100. SDU of 40 bytes: 2+21, then 19.
        let sdu = (0..<40).map { UInt8($0) }
        let first = [40, 0] + sdu[0..<21]
        XCTAssertEqual(ch.receive(first[...], from: .remote, frame: 20), .incomplete)
        XCTAssertTrue(ch.isReassembling(toward: .local))
        XCTAssertEqual(ch.receive(sdu[21...], from: .remote, frame: 21), .sdu(sdu, frames: [20, 21]))
        XCTAssertFalse(ch.isReassembling(toward: .local))
        // Each K-frame used one of the 2 credits local granted.
        XCTAssertEqual(ch.local.credits, 0)
        XCTAssertEqual(ch.framesWithoutCredit, 0)
        // A single-frame SDU the other way (remote MPS 30, MTU 50).
        XCTAssertEqual(ch.receive(SMPVectors.hex("0300616263"), from: .local, frame: 22), .sdu([0x61, 0x62, 0x63], frames: [22]))
        XCTAssertEqual(ch.remote.credits, 3)
        // No credits left toward local: counted.
        _ = ch.receive(SMPVectors.hex("0100ff"), from: .remote, frame: 23)
        XCTAssertEqual(ch.framesWithoutCredit, 1)
        // Flow Control Credit Indication from local on its CID restores credits.
        channels.feed(frame("1602040040000500", .le), from: .local, frame: 24)
        XCTAssertEqual(ch.local.credits, 5)
    }

    func testSDULongerThanMTUIsMalformed() throws {
        let channels = DynamicChannels()
        openLE(channels)
        let ch = try XCTUnwrap(channels.channel(cid: 0x0041, from: .local))
        // Toward remote: MTU 50.
        guard case .malformed(let why) = ch.receive(SMPVectors.hex("3300") + [UInt8](repeating: 0, count: 10)[...],
                                                    from: .local, frame: 30)
        else { return XCTFail() }
        XCTAssertTrue(why.contains("MTU"))
        XCTAssertFalse(ch.isReassembling(toward: .remote))
        // Exactly the MTU is fine (in two frames of MPS 30).
        XCTAssertEqual(ch.receive(SMPVectors.hex("3200") + [UInt8](repeating: 1, count: 28)[...], from: .local, frame: 31),
                       .incomplete)
        // Segments longer than the SDU length announced.
        guard case .malformed = ch.receive([UInt8](repeating: 2, count: 23)[...], from: .local, frame: 32)
        else { return XCTFail() }
        // K-frame above MPS.
        guard case .malformed(let mps) = ch.receive([UInt8](repeating: 3, count: 31)[...], from: .local, frame: 33)
        else { return XCTFail() }
        XCTAssertTrue(mps.contains("MPS"))
        // One byte: no room for the SDU length.
        guard case .malformed = ch.receive(SMPVectors.hex("05"), from: .local, frame: 34) else { return XCTFail() }
        // The first segment already longer than the SDU.
        guard case .malformed = ch.receive(SMPVectors.hex("0100aabb"), from: .local, frame: 35) else { return XCTFail() }
        // The channel recovers with the next first K-frame.
        XCTAssertEqual(ch.receive(SMPVectors.hex("0000"), from: .local, frame: 36), .sdu([], frames: [36]))
    }

    func testDisconnectionClosesChannel() {
        let channels = DynamicChannels()
        openLE(channels)
        // Remote asks to close: DCID is local's 0x0040, SCID remote's 0x0041.
        channels.feed(frame("0605040040004100", .le), from: .remote, frame: 40)
        XCTAssertEqual(channels.channels.count, 1)
        // The response only closes it when its CIDs match (DCID = responder's end).
        channels.feed(frame("0705040041004000", .le), from: .local, frame: 41)
        XCTAssertEqual(channels.channels.count, 1)
        channels.feed(frame("0705040040004100", .le), from: .local, frame: 41)
        XCTAssertTrue(channels.channels.isEmpty)
        XCTAssertNil(channels.channel(cid: 0x0041, from: .local))
    }

    func testEnhancedChannelsAndEATT() throws {
        let channels = DynamicChannels()
        // Remote requests three EATT channels; local accepts two, refuses the middle one.
        channels.feed(frame("170510002700400040000a00400041004200", .le), from: .remote, frame: 50)
        channels.feed(frame("18050e00f70040000300040060000000610 0", .le), from: .local, frame: 51)
        XCTAssertEqual(channels.channels.count, 2)
        let a = try XCTUnwrap(channels.channel(cid: 0x0060, from: .remote))
        XCTAssertTrue(a.isEATT)
        XCTAssertEqual(a.mode, .enhancedCreditBased)
        XCTAssertEqual(a.remote, ChannelEndpoint(cid: 0x40, mtu: 64, mps: 64, credits: 10))
        XCTAssertEqual(a.local, ChannelEndpoint(cid: 0x60, mtu: 247, mps: 64, credits: 3))
        XCTAssertEqual(channels.channel(cid: 0x0061, from: .remote)?.remote.cid, 0x42)
        XCTAssertNil(channels.channel(cid: 0x0041, from: .local))
        // ATT Read Request as an SDU on the EATT bearer.
        XCTAssertEqual(a.receive(SMPVectors.hex("03000a0300"), from: .remote, frame: 52), .sdu([0x0A, 0x03, 0x00], frames: [52]))
        // Reconfigure by local of its ends 0x60 and 0x61: MTU 512, MPS 100.
        channels.feed(frame("19060800000264006000 6100", .le), from: .local, frame: 53)
        XCTAssertEqual(a.local.mtu, 247)
        channels.feed(frame("1a0602000000", .le), from: .remote, frame: 54)
        XCTAssertEqual(a.local.mtu, 512)
        XCTAssertEqual(a.local.mps, 100)
    }

    func testPendingThenFinalEnhancedResponse() {
        let channels = DynamicChannels()
        channels.feed(frame("170710008000400040000100 4000", .le), from: .local, frame: 1)
        channels.feed(frame("18070a004000400001000e00 0000", .le), from: .remote, frame: 2)
        XCTAssertTrue(channels.channels.isEmpty)
        channels.feed(frame("18070a00400040000100000 05000", .le), from: .remote, frame: 3)
        XCTAssertEqual(channels.channels.count, 1)
    }

    /// happyleaf__btsnoop_hci_happyleaf_fail.log frames 223 (sent), 228 (received),
    /// 229/230 configuration, 251 (sent), 255 (received): an SDP channel's life.
    func testBasicChannelFromCapture() throws {
        let channels = DynamicChannels()
        channels.feed(frame("0203040001004000", .bredr), from: .local, frame: 223)
        channels.feed(frame("03030800c600400000000000", .bredr), from: .remote, frame: 228)
        let ch = try XCTUnwrap(channels.channel(cid: 0x00C6, from: .local))
        XCTAssertEqual(ch.psm, 0x0001)
        XCTAssertEqual(ch.mode, .basic)
        channels.feed(frame("048408004000000001028000", .bredr), from: .remote, frame: 229)
        XCTAssertEqual(ch.remote.mtu, 128)
        XCTAssertEqual(ch.receive(SMPVectors.hex("0600"), from: .local, frame: 240), .sdu([6, 0], frames: [240]))
        channels.feed(frame("06050400c6004000", .bredr), from: .local, frame: 251)
        channels.feed(frame("07050400c6004000", .bredr), from: .remote, frame: 255)
        XCTAssertTrue(channels.channels.isEmpty)
    }
}
