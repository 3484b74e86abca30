import CBluetooth
import Glibc
import Wire

/// An adapter as an ordinary HCI socket describes it (HCIGETDEVINFO).
public struct HCIDevice: Equatable, Sendable {
    /// Controller index: hciN.
    public var index: UInt16
    /// The kernel's device name (hciN), not the adapter's Bluetooth name.
    public var name: String
    public var address: BDAddr
    /// Transport (BlueZ `HCI_VIRTUAL`, `HCI_USB` ...): the low four bits of the kernel's type byte.
    public var bus: UInt8
    /// 0 primary, 1 AMP: the type byte's bits 4 and 5.
    public var type: UInt8
    /// Device flags: bit 0 (HCI_UP) says the adapter is up.
    public var flags: UInt32

    public var isUp: Bool { flags & 1 != 0 }

    public init(index: UInt16, name: String, address: BDAddr, bus: UInt8, type: UInt8, flags: UInt32) {
        self.index = index
        self.name = name
        self.address = address
        self.bus = bus
        self.type = type
        self.flags = flags
    }
}

/// Lists the adapters through an unbound raw HCI socket with the `HCIGETDEVLIST` and
/// `HCIGETDEVINFO` ioctls, as `hciconfig` does. Unlike the monitor channel this needs no
/// privileges, so it is how adapters are listed when capturing is not allowed.
public enum HCIDeviceList {
    /// The adapters, by index.
    public static func read() throws(CaptureError) -> [HCIDevice] {
        let name = "HCI socket"
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else {
            let e = errno
            if e == EAFNOSUPPORT || e == EPROTONOSUPPORT {
                throw CaptureError(.unsupportedSystem, file: name, "this kernel has no Bluetooth support (load the bluetooth module)")
            }
            throw CaptureError(e == EPERM || e == EACCES ? .permission : .io, file: name,
                               "cannot open an HCI socket: \(String(cString: strerror(e)))")
        }
        defer { close(fd) }
        var ids = [UInt16](repeating: 0, count: 512)
        let n = ids.withUnsafeMutableBufferPointer { blesniff_hci_dev_list(fd, $0.baseAddress, Int32($0.count)) }
        guard n >= 0 else {
            throw CaptureError(.io, file: name, "HCIGETDEVLIST failed: \(String(cString: strerror(errno)))")
        }
        var devices: [HCIDevice] = []
        for id in ids.prefix(Int(n)) {
            var info = hci_dev_info()
            guard blesniff_hci_dev_info(fd, id, &info) == 0 else {
                if errno == ENODEV { continue }  // went away between the two calls
                throw CaptureError(.io, file: name, "HCIGETDEVINFO hci\(id) failed: \(String(cString: strerror(errno)))")
            }
            devices.append(device(info))
        }
        return devices.sorted { $0.index < $1.index }
    }

    /// The fields of the kernel's `struct hci_dev_info` that say which adapter it is.
    static func device(_ info: hci_dev_info) -> HCIDevice {
        var raw: UInt64 = 0
        withUnsafeBytes(of: info.bdaddr) { b in
            for i in 0..<6 { raw |= UInt64(b[i]) << (8 * UInt64(i)) }
        }
        let name = withUnsafeBytes(of: info.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return HCIDevice(index: info.dev_id, name: name, address: BDAddr(raw), bus: info.type & 0x0f,
                         type: (info.type >> 4) & 0x03, flags: info.flags)
    }
}
