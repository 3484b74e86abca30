import CBluetooth
@testable import Capture
import Glibc
import Wire
import XCTest

final class HCIDeviceListTests: XCTestCase {
    /// Where the kernel has no Bluetooth, listing says so (as the monitor socket does); where it
    /// has, listing needs no privileges and every adapter has a name hciN.
    func testListingWithoutBluetoothOrWithout() throws {
        do {
            let devices = try HCIDeviceList.read()
            for d in devices { XCTAssertEqual(d.name, "hci\(d.index)") }
        } catch {
            XCTAssertEqual(error.kind, .unsupportedSystem)
            XCTAssertEqual(error.message, "this kernel has no Bluetooth support (load the bluetooth module)")
        }
    }

    /// The kernel's `struct hci_dev_info`: address little-endian, bus in the type byte's low
    /// nibble and the device type above it, HCI_UP as flag bit 0.
    func testDeviceInfoFields() {
        var info = hci_dev_info()
        info.dev_id = 3
        withUnsafeMutableBytes(of: &info.name) { b in
            for (i, c) in "hci3".utf8.enumerated() { b[i] = c }
        }
        withUnsafeMutableBytes(of: &info.bdaddr) { b in
            for (i, v) in [0x01, 0x00, 0x00, 0xdc, 0x1b, 0x00].enumerated() { b[i] = UInt8(v) }
        }
        info.type = 0x01 | (1 << 4)  // USB, AMP
        info.flags = 1 << 2 | 1      // HCI_RUNNING, HCI_UP
        let d = HCIDeviceList.device(info)
        XCTAssertEqual(d, HCIDevice(index: 3, name: "hci3", address: BDAddr(0x001b_dc00_0001), bus: 1, type: 1, flags: 5))
        XCTAssertEqual(d.address.description, "00:1b:dc:00:00:01")
        XCTAssertTrue(d.isUp)
        info.flags = 1 << 2
        XCTAssertFalse(HCIDeviceList.device(info).isUp)
    }
}
