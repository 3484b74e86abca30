import XCTest
import Decoders

/// Sniffer captures whose writer decrypted the link (plaintext, MIC removed) without saying so in
/// the pseudo header: WHAD's comm_dec.pcap is comm.pcap decrypted by WHAD.
final class DecryptedCaptureTests: XCTestCase {
    struct Tally: Equatable { var att = 0, encrypted = 0, decryptedInCapture = 0 }

    static func tally(_ name: String) throws -> Tally {
        let path = Fixtures.shared + "/" + name
        guard FileManager.default.fileExists(atPath: path) else { throw XCTSkip("\(name) not present") }
        var t = Tally()
        try Fixtures.decode(path) { d in
            if case .att? = d.upper { t.att += 1 }
            guard let ll = d.linkLayer, (ll.dataPDU?.length ?? 0) > 0 else { return }
            if ll.encryption == .encrypted { t.encrypted += 1 }
            if ll.encryption == .decryptedInCapture { t.decryptedInCapture += 1 }
        }
        return t
    }

    /// The 1-octet LL_START_ENC_RSP and the L2CAP Lengths give it away: every PDU after encryption
    /// is read as plaintext, so the three ATT reads and their responses decode.
    func testPlaintextAfterEncryptionIsDecoded() throws {
        let t = try Self.tally("whad-team_whad-client__comm_dec.pcap")
        XCTAssertEqual(t, Tally(att: 6, encrypted: 0, decryptedInCapture: 8))
    }

    /// The same traffic as captured: ciphertext stays ciphertext.
    func testCiphertextIsNotTakenForPlaintext() throws {
        let t = try Self.tally("whad-team_whad-client__comm.pcap")
        XCTAssertEqual(t, Tally(att: 0, encrypted: 8, decryptedInCapture: 0))
    }
}
