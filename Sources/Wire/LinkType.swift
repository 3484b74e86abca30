/// Link types (tcpdump.org LINKTYPE_ values) and btsnoop datalink values, one numbering:
/// btsnoop datalinks are offset by `btsnoopBase` so they never collide with pcap's. This is the
/// numbering of `Record.linkType`.
public enum LinkType {
    public static let h4: UInt32 = 187
    public static let h4WithPHDR: UInt32 = 201
    public static let linuxMonitor: UInt32 = 254
    public static let leLL: UInt32 = 251
    public static let leLLWithPHDR: UInt32 = 256
    public static let nordicBLE: UInt32 = 272
    /// Per-Packet Information around an LE link-layer packet (old Ubertooth captures).
    public static let ppi: UInt32 = 192
    public static let btsnoopBase: UInt32 = 0x1_0000
    public static let btsnoopH1: UInt32 = btsnoopBase + 1001
    public static let btsnoopH4: UInt32 = btsnoopBase + 1002
    public static let btsnoopMonitor: UInt32 = btsnoopBase + 2001

    /// pcap link types read: H4, H4 with direction header, Linux monitor, LE LL, LE LL with radio
    /// header, Nordic BLE sniffer, PPI around LE LL.
    public static let pcapSupported: [UInt32] = [h4, h4WithPHDR, linuxMonitor, leLL, leLLWithPHDR, nordicBLE, ppi]
    /// btsnoop datalinks read (without the offset): H1, H4, Linux monitor.
    public static let btsnoopSupported: [UInt32] = [1001, 1002, 2001]

    public static func isSupported(_ t: UInt32) -> Bool {
        t >= btsnoopBase ? btsnoopSupported.contains(t &- btsnoopBase) : pcapSupported.contains(t)
    }

    /// The btsnoop file holding `datalink`, in this numbering.
    public static func btsnoop(_ datalink: UInt32) -> UInt32 { btsnoopBase &+ datalink }

    /// Over-the-air captures from a sniffer rather than HCI logs.
    public static func isLinkLayer(_ t: UInt32) -> Bool { t == leLL || t == leLLWithPHDR || t == nordicBLE || t == ppi }

    public static func name(_ t: UInt32) -> String {
        switch t {
        case h4: return "BLUETOOTH_HCI_H4"
        case h4WithPHDR: return "BLUETOOTH_HCI_H4_WITH_PHDR"
        case linuxMonitor: return "BLUETOOTH_LINUX_MONITOR"
        case leLL: return "BLUETOOTH_LE_LL"
        case leLLWithPHDR: return "BLUETOOTH_LE_LL_WITH_PHDR"
        case nordicBLE: return "NORDIC_BLE"
        case btsnoopH1: return "btsnoop H1 (1001)"
        case btsnoopH4: return "btsnoop H4 (1002)"
        case btsnoopMonitor: return "btsnoop Linux monitor (2001)"
        case ppi: return "PPI"
        default: return "link type \(t)"
        }
    }
}
