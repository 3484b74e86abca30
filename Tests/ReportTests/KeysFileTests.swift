import XCTest
@testable import Report
import Decoders

/// The keys file `--keys` reads: keys per device; bad entries are errors naming line and key.
final class KeysFileTests: XCTestCase {
    func testEntries() throws {
        let f = try KeysFile.parse("""
            devices:
              - name: sensor
                address: 04:ee:03:4a:8b:38
                ltk: 0F241772AC270CAFEE654186F0A65D5F
              - tk: 5E882417A987222423A1A9EC719AED27
              - address: 04:ee:03:4a:8a:2f
                passkey: 012345
            """, path: "k.yml")
        XCTAssertEqual(f.entries.count, 3)
        XCTAssertEqual(f.entries[0].device, "sensor")
        XCTAssertEqual(f.linkKeys.map(\.description), ["LTK 0F241772AC270CAFEE654186F0A65D5F from keys file k.yml (sensor)"])
        XCTAssertEqual(f.entries[2].passkey, 12_345)
        // A passkey is tried as its TK.
        XCTAssertEqual(f.temporaryKeys.map(\.description), ["5E882417A987222423A1A9EC719AED27", "00000000000000000000000000003039"])
        XCTAssertTrue(try KeysFile.parse("", path: "k.yml").entries.isEmpty)
    }

    func testErrorsNameTheLineAndKey() {
        func problem(_ text: String) -> String {
            do { _ = try KeysFile.parse(text, path: "k.yml"); return "" } catch { return error.description }
        }
        XCTAssertEqual(problem("devices:\n  - ltk: 12\n"), "k.yml:2: devices[0].ltk: expected 32 hex digits")
        XCTAssertEqual(problem("devices:\n  - passkey: 1000000\n"), "k.yml:2: devices[0].passkey: expected a passkey of 6 digits (000000-999999)")
        XCTAssertEqual(problem("devices:\n  - csrk: 00\n"), "k.yml:2: devices[0].csrk: unknown key (expected name, address, ltk, tk, passkey, private_key, irk or identity)")
        XCTAssertEqual(problem("devices:\n  - irk: 00\n"), "k.yml:2: devices[0].irk: expected 32 hex digits")
        XCTAssertEqual(problem("keys: []\n"), "k.yml:1: keys: unknown key (expected devices)")
        XCTAssertEqual(problem("- 1\n"), "k.yml:1: expected a mapping with a devices list")
    }

    /// An IRK comes with the identity address it resolves to: public, or random static (whose two
    /// most significant bits are 0b11, so such an address needs the word).
    func testIRKWithIdentity() throws {
        let f = try KeysFile.parse("""
            devices:
              - name: phone
                irk: EC0234A357C8AD05341010A60A397D9B
                identity: 00:1b:dc:07:32:a1
              - irk: 00112233445566778899AABBCCDDEEFF
                identity: C0:11:22:33:44:55 random
              - irk: 00112233445566778899AABBCCDDEEF0
                identity: f0:18:98:12:34:56 public
            """, path: "k.yml")
        XCTAssertEqual(f.identityKeys.map(\.identity.description),
                       ["00:1b:dc:07:32:a1 (public identity)", "c0:11:22:33:44:55 (random static identity)", "f0:18:98:12:34:56 (public identity)"])
        XCTAssertEqual(f.identityKeys.first?.source, "keys file k.yml (phone)")
        XCTAssertEqual(f.identityKeys.first?.irk.msbFirst.first, 0xEC)
        XCTAssertTrue(f.linkKeys.isEmpty)

        func problem(_ text: String) -> String {
            do { _ = try KeysFile.parse(text, path: "k.yml"); return "" } catch { return error.description }
        }
        XCTAssertEqual(problem("devices:\n  - irk: EC0234A357C8AD05341010A60A397D9B\n"),
                       "k.yml:2: devices[0]: irk without identity (the device's identity address)")
        XCTAssertEqual(problem("devices:\n  - identity: 00:1b:dc:07:32:a1\n"), "k.yml:2: devices[0]: identity without irk")
        XCTAssertEqual(problem("devices:\n  - irk: EC0234A357C8AD05341010A60A397D9B\n    identity: f0:18:98:12:34:56\n"),
                       "k.yml:3: devices[0].identity: public or random static? Add public or random after the address")
        XCTAssertEqual(problem("devices:\n  - irk: EC0234A357C8AD05341010A60A397D9B\n    identity: 00:1b:dc:07:32:a1 random\n"),
                       "k.yml:3: devices[0].identity: expected an identity address: aa:bb:cc:dd:ee:ff, then public or random (random static)")
    }

    /// An LE Secure Connections private key: 64 hex digits, most significant first.
    func testPrivateKey() throws {
        let f = try KeysFile.parse("devices:\n  - name: lock\n    private_key: 0x3f49f6d4a3c55f3874c9b3e3d2103f504aff607beb40b7995899b8a6cd3c1abd\n", path: "k.yml")
        XCTAssertEqual(f.privateKeys, [SecureConnectionsFunctions.debugPrivateKey])
        do {
            _ = try KeysFile.parse("devices:\n  - private_key: 3f49f6d4\n", path: "k.yml")
            XCTFail("a short private key was taken")
        } catch {
            XCTAssertEqual(error.description, "k.yml:2: devices[0].private_key: expected 64 hex digits")
        }
    }
}
