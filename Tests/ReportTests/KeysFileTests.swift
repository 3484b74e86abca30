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
        XCTAssertEqual(problem("devices:\n  - irk: 00\n"), "k.yml:2: devices[0].irk: unknown key (expected name, address, ltk, tk or passkey)")
        XCTAssertEqual(problem("keys: []\n"), "k.yml:1: keys: unknown key (expected devices)")
        XCTAssertEqual(problem("- 1\n"), "k.yml:1: expected a mapping with a devices list")
    }
}
