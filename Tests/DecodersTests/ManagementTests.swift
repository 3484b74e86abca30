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

    /// The record's line, as `read` prints it for a monitor frame.
    func summary(_ opcode: UInt16, _ hex: String, adapter: UInt16 = 0) -> String {
        let payload = LinkLayerCryptoTests.hex(hex)[...]
        return TextLine.make { Management.writeMonitorSummary(opcode, payload, adapter: adapter, to: &$0) }
    }

    func testCommandEventAndOpen() {
        XCTAssertEqual(summary(MonitorOpcode.ctrlCommand, "01000000 3a00 067f0000"),
                       "MGMT Command Start Service Discovery (0x003A)")
        XCTAssertEqual(summary(MonitorOpcode.ctrlEvent, "01000000 0100 3a00 00 06"),
                       "MGMT Event Command Complete: Start Service Discovery: Success")
        XCTAssertEqual(summary(MonitorOpcode.ctrlEvent, "01000000 1300 06 01"), "MGMT Event Discovering: started (LE)")
        XCTAssertEqual(summary(MonitorOpcode.ctrlOpen, "01000000 0000 01 1700 01000000 0a 626c7565746f6f746864", adapter: 0xFFFF),
                       "MGMT Open: bluetoothd (privileged) version 1.23")
    }

    /// Cut short or unknown: named as such, never a crash.
    func testShortAndUnknown() {
        XCTAssertEqual(summary(MonitorOpcode.ctrlCommand, "01000000 ff00"), "MGMT Command Unknown Command (0x00FF)")
        XCTAssertEqual(summary(MonitorOpcode.ctrlEvent, "010000"), "Monitor Control Event")
        let hex = "010000000100" + "3a000006"
        final class Labels: FieldSink {
            var labels: [String] = []
            func begin(_ label: FieldLabel, _ value: FieldValue) { labels.append(label.string) }
            func end() {}
        }
        for n in 0..<(hex.count / 2) {
            let sink = Labels()
            decode(MonitorOpcode.ctrlEvent, String(hex.prefix(n * 2))).writeLayers(to: sink) { _ in }
            if n >= 12 { XCTAssertEqual(Array(sink.labels.prefix(4)), ["Opcode", "Cookie", "Event Code", "Command Opcode"]) }
        }
    }
}
