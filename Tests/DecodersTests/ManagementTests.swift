import XCTest
@testable import Decoders
import Wire

/// BlueZ management records on the Linux monitor channel, named as btmon names them (the bytes are
/// blesecpoc__hci_capture_20260306_121058.snoop's frames 6, 7 and 15).
final class ManagementTests: XCTestCase {
    func decode(_ opcode: UInt16, _ hex: String, adapter: UInt16 = 0) -> Decoded {
        let bytes = LinkLayerCryptoTests.hex(hex)
        return Dissector().dissect(Packet(number: 1, timestamp: 0, direction: .received, adapter: adapter,
                                          kind: .monitor(opcode: opcode), payload: bytes[...]))
    }

    func testCommandEventAndOpen() {
        XCTAssertEqual(decode(MonitorOpcode.ctrlCommand, "01000000 3a00 067f0000").summary,
                       "MGMT Command Start Service Discovery (0x003A)")
        XCTAssertEqual(decode(MonitorOpcode.ctrlEvent, "01000000 0100 3a00 00 06").summary,
                       "MGMT Event Command Complete: Start Service Discovery: Success")
        XCTAssertEqual(decode(MonitorOpcode.ctrlEvent, "01000000 1300 06 01").summary, "MGMT Event Discovering: started (LE)")
        XCTAssertEqual(decode(MonitorOpcode.ctrlOpen, "01000000 0000 01 1700 01000000 0a 626c7565746f6f746864", adapter: 0xFFFF).summary,
                       "MGMT Open: bluetoothd (privileged) version 1.23")
    }

    /// Cut short or unknown: named as such, never a crash.
    func testShortAndUnknown() {
        XCTAssertEqual(decode(MonitorOpcode.ctrlCommand, "01000000 ff00").summary, "MGMT Command Unknown Command (0x00FF)")
        XCTAssertEqual(decode(MonitorOpcode.ctrlEvent, "010000").summary, "Monitor Control Event")
        let hex = "010000000100" + "3a000006"
        final class Labels: FieldSink {
            var labels: [String] = []
            func begin(_ label: String, _ value: FieldValue) { labels.append(label) }
            func end() {}
        }
        for n in 0..<(hex.count / 2) {
            let sink = Labels()
            decode(MonitorOpcode.ctrlEvent, String(hex.prefix(n * 2))).writeLayers(to: sink) { _ in }
            if n >= 12 { XCTAssertEqual(Array(sink.labels.prefix(4)), ["Opcode", "Cookie", "Event Code", "Command Opcode"]) }
        }
    }
}
