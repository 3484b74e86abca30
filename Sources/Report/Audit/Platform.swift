import Decoders
import Wire

/// The Bluetooth host stack that made a capture's HCI traffic. An app chooses only part of what goes
/// over the air: the rest is its operating system's stack, the same for every app. Rules judge the
/// app, so they need to know which stack it ran on.
public enum Platform: String, Sendable, CaseIterable {
    /// Android's Bluetooth stack (Fluoride/Gabeldorsche): the app speaks through `BluetoothLeScanner`,
    /// `BluetoothGatt`, `BluetoothLeAdvertiser`.
    case android
    /// Core Bluetooth (iOS, iPadOS, macOS).
    case apple
    /// Linux with the kernel's HCI layer and bluetoothd: the app speaks D-Bus (BlueZ).
    case linuxBluez = "linux-bluez"
    /// A host stack the app drives itself (firmware, Bumble, BTstack, NimBLE): every HCI command is
    /// the app's.
    case embedded
    /// No evidence: every rule applies, as for `embedded`.
    case unknown

    /// As people name it in messages.
    public var title: String {
        switch self {
        case .android: return "Android"
        case .apple: return "Core Bluetooth"
        case .linuxBluez: return "BlueZ"
        case .embedded: return "an embedded host"
        case .unknown: return "unknown"
        }
    }

    /// The platforms a rule table speaks of (`unknown` is judged as `embedded`).
    public static let described: [Platform] = [.apple, .android, .linuxBluez, .embedded]
}

/// Which platform a capture is taken to come from, and why.
public struct PlatformGuess: Sendable, Equatable {
    public var platform: Platform
    /// One line: "Android vendor command LE Get Vendor Capabilities (0xFD53)", "set by --platform".
    public var evidence: String
    /// The frame that gave it away, when a frame did.
    public var frame: Int?
    /// Higher wins: an explicit setting over the container over a single command.
    var strength: Int

    public init(_ platform: Platform, evidence: String, frame: Int? = nil, strength: Int) {
        self.platform = platform
        self.evidence = evidence
        self.frame = frame
        self.strength = strength
    }

    public static let unknown = PlatformGuess(.unknown, evidence: "no evidence of a phone or computer stack", strength: 0)

    /// Told by `--platform` or the configuration: nothing overrides it.
    public static func configured(_ p: Platform, by source: String) -> PlatformGuess {
        PlatformGuess(p, evidence: "set by " + source, strength: 100)
    }

    /// The Linux monitor channel read live (`capture`): the kernel's HCI layer is under it.
    public static let liveMonitor = PlatformGuess(.linuxBluez, evidence: "live capture of the Linux monitor channel",
                                                  strength: 20)

    /// What the capture file's format says: PacketLogger is Apple's, a bug report Android's, the
    /// Linux monitor channel the kernel's (bluetoothd is likely but not certain).
    public static func container(packetLogger: Bool = false, androidBugReport: Bool = false,
                                 linuxMonitor: Bool = false, androidSnoopLog: Bool = false) -> PlatformGuess? {
        if packetLogger { return PlatformGuess(.apple, evidence: "PacketLogger capture", strength: 50) }
        if androidBugReport { return PlatformGuess(.android, evidence: "Android bug report", strength: 50) }
        if linuxMonitor { return PlatformGuess(.linuxBluez, evidence: "Linux monitor channel capture", strength: 20) }
        // The weakest evidence: any command or record of another stack outweighs it.
        if androidSnoopLog {
            return PlatformGuess(.android, evidence: "btsnoop H4 file named btsnoop_hci, as Android's HCI snoop log",
                                 strength: 10)
        }
        return nil
    }
}

/// Tells the platform from HCI traffic, for the audit feed: Android's vendor commands (Core allows
/// vendor opcodes in OGF 0x3F; Android's stack sends its own 0xFD53-0xFD5F set, whatever the chip),
/// and the Linux monitor channel's management (MGMT) records, which only the kernel writes for
/// bluetoothd's socket.
struct PlatformDetector {
    private(set) var best: PlatformGuess?

    /// Android's vendor-specific HCI commands (OCF 0x153-0x15F): capabilities, multi-advertising,
    /// batch scan, APCF scan filters, energy info, ...
    static let androidVendorOpcodes: ClosedRange<UInt16> = 0xFD53...0xFD5F

    static func androidName(_ op: UInt16) -> String {
        switch op {
        case 0xFD53: return "LE Get Vendor Capabilities"
        case 0xFD54: return "LE Multi Advertising"
        case 0xFD56: return "LE Batch Scan"
        case 0xFD57: return "LE Advertising Packet Content Filter"
        case 0xFD59: return "Controller Activity and Energy Info"
        default: return "vendor command"
        }
    }

    /// A guess to keep when it is stronger than what is known: returns it when it changed the answer.
    mutating func offer(_ g: PlatformGuess) -> Bool {
        guard g.strength > (best?.strength ?? -1) else { return false }
        best = g
        return true
    }

    /// Called for every HCI command the host sent; nil unless it says something new.
    mutating func command(_ op: UInt16, frame: Int) -> PlatformGuess? {
        guard Self.androidVendorOpcodes.contains(op), (best?.strength ?? 0) < 40 else { return nil }
        let g = PlatformGuess(.android, evidence: "Android vendor command " + Self.androidName(op) + " ("
                              + Hex.prefixed(op, width: 4) + ")", frame: frame, strength: 40)
        return offer(g) ? g : nil
    }

    /// AOSP's scan modes as LE Set (Extended) Scan Parameters (interval, window, in 0.625 ms units):
    /// Android 8+ low power 1400/140 ms, balanced 730/183 ms, low latency 100/100 ms, screen-off
    /// 10240/512 ms; before it 5000 ms intervals with windows of 500 ms (low power), 2000 ms
    /// (balanced) and 5000 ms (low latency). Other stacks rarely pick these exact pairs.
    static let androidScanModes: Set<UInt32> = [
        2240 << 16 | 224, 1168 << 16 | 292, 160 << 16 | 160, 16384 << 16 | 819,
        8000 << 16 | 800, 8000 << 16 | 3200, 8000 << 16 | 8000,
    ]

    /// Called for the scan parameters the host set; nil unless they say something new.
    mutating func scanParameters(interval: UInt16, window: UInt16, frame: Int) -> PlatformGuess? {
        guard Self.androidScanModes.contains(UInt32(interval) << 16 | UInt32(window)), (best?.strength ?? 0) < 15 else { return nil }
        let g = PlatformGuess(.android, evidence: "Android's scan mode parameters (" + Say.milliseconds(interval) + "/"
                              + Say.milliseconds(window) + " ms)", frame: frame, strength: 15)
        return offer(g) ? g : nil
    }

    /// Qualcomm controllers on Android phones log their own debug data as ACL data on handle 0x0EDC,
    /// which is no connection.
    static let vendorDebugHandle: UInt16 = 0x0EDC

    mutating func vendorDebugData(frame: Int) -> PlatformGuess? {
        guard (best?.strength ?? 0) < 30 else { return nil }
        let g = PlatformGuess(.android, evidence: "Qualcomm vendor debug data on ACL handle 0x0EDC", frame: frame, strength: 30)
        return offer(g) ? g : nil
    }

    /// Called for Linux monitor records that are not HCI traffic.
    mutating func monitor(_ op: UInt16, frame: Int) -> PlatformGuess? {
        switch op {
        case MonitorOpcode.ctrlOpen, MonitorOpcode.ctrlCommand, MonitorOpcode.ctrlEvent:
            guard (best?.strength ?? 0) < 40 else { return nil }
            let g = PlatformGuess(.linuxBluez, evidence: "BlueZ management (MGMT) traffic on the monitor channel",
                                  frame: frame, strength: 40)
            return offer(g) ? g : nil
        default:
            guard (best?.strength ?? 0) < 20 else { return nil }
            let g = PlatformGuess(.linuxBluez, evidence: "Linux monitor channel capture", frame: frame, strength: 20)
            return offer(g) ? g : nil
        }
    }
}

/// For one rule on one platform: whether the app chooses what the rule judges, and how.
public struct PlatformControl: Sendable {
    public enum Who: Sendable { case app, stack }
    public var who: Who
    /// For the app: the call or setting to change ("scan without
    /// CBCentralManagerScanOptionAllowDuplicatesKey"). For the stack: what it does regardless.
    public var text: String

    public static func app(_ text: String) -> PlatformControl { PlatformControl(who: .app, text: text) }
    public static func stack(_ text: String) -> PlatformControl { PlatformControl(who: .stack, text: text) }
}

/// A rule's platform table: for each platform, who controls the behaviour. A platform left out is
/// the app's, with the rule's own help as the advice.
public struct PlatformTable: Sendable {
    public var apple: PlatformControl?
    public var android: PlatformControl?
    public var linuxBluez: PlatformControl?
    public var embedded: PlatformControl?

    public init(apple: PlatformControl? = nil, android: PlatformControl? = nil, linuxBluez: PlatformControl? = nil,
                embedded: PlatformControl? = nil) {
        self.apple = apple
        self.android = android
        self.linuxBluez = linuxBluez
        self.embedded = embedded
    }

    public subscript(p: Platform) -> PlatformControl? {
        switch p {
        case .apple: return apple
        case .android: return android
        case .linuxBluez: return linuxBluez
        case .embedded, .unknown: return embedded
        }
    }

    public var isEmpty: Bool { apple == nil && android == nil && linuxBluez == nil && embedded == nil }
}
