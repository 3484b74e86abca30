import Wire

/// The HCI commands and events blesniff acts on beyond showing their fields, each read once into a
/// value named as Core Vol 4 Part E §7 names it. The opcodes and event codes are declared here and
/// the tables (`HCICommands.table`, `HCIEvents.events`) list their rows under the same names.
///
/// A view reads the parameters up to the last one acted on; a parameter after one that is required
/// is optional when a short packet lacks it, so a command cut short is still acted on as far as it goes.

// MARK: Commands

extension HCICommands {
    public static let disconnect: UInt16 = 0x0406
    public static let leSetAdvertisingParameters: UInt16 = 0x2006
    public static let leSetAdvertisingData: UInt16 = 0x2008
    public static let leSetScanResponseData: UInt16 = 0x2009
    public static let leSetAdvertisingEnable: UInt16 = 0x200A
    public static let leSetScanParameters: UInt16 = 0x200B
    public static let leSetScanEnable: UInt16 = 0x200C
    public static let leCreateConnection: UInt16 = 0x200D
    public static let leSetExtendedAdvertisingParameters: UInt16 = 0x2036
    public static let leSetExtendedAdvertisingData: UInt16 = 0x2037
    public static let leSetExtendedScanResponseData: UInt16 = 0x2038
    public static let leSetExtendedAdvertisingEnable: UInt16 = 0x2039
    public static let leSetExtendedScanParameters: UInt16 = 0x2041
    public static let leSetExtendedScanEnable: UInt16 = 0x2042
    public static let leExtendedCreateConnection: UInt16 = 0x2043
    public static let leSetExtendedAdvertisingParametersV2: UInt16 = 0x207F
    public static let leExtendedCreateConnectionV2: UInt16 = 0x2085
}

/// An HCI command blesniff acts on, with its parameters.
public enum HCICommand: Sendable {
    case disconnect(Disconnect)
    /// LE Set Advertising Data or LE Set Scan Response Data: one shape.
    case leSetAdvertisingData(LESetAdvertisingData)
    case leSetAdvertisingParameters(LESetAdvertisingParameters)
    case leSetAdvertisingEnable(LESetAdvertisingEnable)
    case leSetScanParameters(LESetScanParameters)
    case leSetScanEnable(LESetScanEnable)
    case leCreateConnection(LECreateConnection)
    /// LE Set Extended Advertising Data or LE Set Extended Scan Response Data.
    case leSetExtendedAdvertisingData(LESetExtendedAdvertisingData)
    /// Versions 1 and 2.
    case leSetExtendedAdvertisingParameters(LESetExtendedAdvertisingParameters)
    case leSetExtendedAdvertisingEnable(LESetExtendedAdvertisingEnable)
    case leSetExtendedScanParameters(LESetExtendedScanParameters)
    case leSetExtendedScanEnable(LESetExtendedScanEnable)
    /// Versions 1 and 2.
    case leExtendedCreateConnection(LEExtendedCreateConnection)

    /// nil for another opcode, or parameters too short for the view.
    /// Borrowed: most commands have no view, and taking the bytes cost a retain and a release.
    public init?(opcode: UInt16, _ params: borrowing Bytes) {
        guard let read = Self.readers[Key16(opcode)] else { return nil }
        var r = ByteReader(copy params)
        guard let c = try? read.read(&r) else { return nil }
        self = c
    }

    /// Whether the command has a view: asked first, so a command without one (nearly all) has its
    /// parameters sliced out for nothing.
    public static func hasView(_ opcode: UInt16) -> Bool { readers[Key16(opcode)] != nil }

    /// A view's reader, wrapped: a bare function kept in a dictionary or array is stored in its
    /// most general form, and each call through it made a thunk, an allocation per frame with a view.
    private struct Reader: Sendable {
        let read: @Sendable (inout ByteReader) throws -> HCICommand
    }
    /// Keyed by `Key16`, hashed as one word: every command of a capture is looked up here.
    private static let readers = Dictionary(uniqueKeysWithValues: readerTable.map { (Key16($0.key), $0.value) })
    private static let readerTable: [UInt16: Reader] = [
        HCICommands.disconnect: Reader { .disconnect(try Disconnect(&$0)) },
        HCICommands.leSetAdvertisingParameters: Reader { .leSetAdvertisingParameters(try LESetAdvertisingParameters(&$0)) },
        HCICommands.leSetAdvertisingData: Reader { .leSetAdvertisingData(try LESetAdvertisingData(&$0, scanResponse: false)) },
        HCICommands.leSetScanResponseData: Reader { .leSetAdvertisingData(try LESetAdvertisingData(&$0, scanResponse: true)) },
        HCICommands.leSetAdvertisingEnable: Reader { .leSetAdvertisingEnable(try LESetAdvertisingEnable(&$0)) },
        HCICommands.leSetScanParameters: Reader { .leSetScanParameters(try LESetScanParameters(&$0)) },
        HCICommands.leSetScanEnable: Reader { .leSetScanEnable(try LESetScanEnable(&$0)) },
        HCICommands.leCreateConnection: Reader { .leCreateConnection(try LECreateConnection(&$0)) },
        HCICommands.leSetExtendedAdvertisingParameters: Reader {
            .leSetExtendedAdvertisingParameters(try LESetExtendedAdvertisingParameters(&$0))
        },
        HCICommands.leSetExtendedAdvertisingParametersV2: Reader {
            .leSetExtendedAdvertisingParameters(try LESetExtendedAdvertisingParameters(&$0))
        },
        HCICommands.leSetExtendedAdvertisingData: Reader {
            .leSetExtendedAdvertisingData(try LESetExtendedAdvertisingData(&$0, scanResponse: false))
        },
        HCICommands.leSetExtendedScanResponseData: Reader {
            .leSetExtendedAdvertisingData(try LESetExtendedAdvertisingData(&$0, scanResponse: true))
        },
        HCICommands.leSetExtendedAdvertisingEnable: Reader { .leSetExtendedAdvertisingEnable(try LESetExtendedAdvertisingEnable(&$0)) },
        HCICommands.leSetExtendedScanParameters: Reader { .leSetExtendedScanParameters(try LESetExtendedScanParameters(&$0)) },
        HCICommands.leSetExtendedScanEnable: Reader { .leSetExtendedScanEnable(try LESetExtendedScanEnable(&$0)) },
        HCICommands.leExtendedCreateConnection: Reader { .leExtendedCreateConnection(try LEExtendedCreateConnection(&$0, v2: false)) },
        HCICommands.leExtendedCreateConnectionV2: Reader { .leExtendedCreateConnection(try LEExtendedCreateConnection(&$0, v2: true)) },
    ]
}

/// Connection_Handle: 12 bits; the upper bits of the field are not part of it.
@inline(__always) private func connectionHandle(_ r: inout ByteReader) throws(DecodeError) -> UInt16 {
    try r.u16() & 0x0FFF
}

/// Disconnect (§7.1.6).
public struct Disconnect: Sendable, Equatable {
    public var connectionHandle: UInt16
    public var reason: UInt8?

    init(_ r: inout ByteReader) throws(DecodeError) {
        connectionHandle = try Decoders.connectionHandle(&r)
        reason = try? r.u8()
    }
}

/// LE Set Advertising Parameters (§7.8.5), intervals in units of 0.625 ms. The type and channel
/// map take their defaults (ADV_IND, all three channels) when the command is cut short.
public struct LESetAdvertisingParameters: Sendable, Equatable {
    public var advertisingIntervalMin: UInt16
    public var advertisingIntervalMax: UInt16
    /// 0 ADV_IND, 1 ADV_DIRECT_IND (high duty cycle), 2 ADV_SCAN_IND, 3 ADV_NONCONN_IND,
    /// 4 ADV_DIRECT_IND (low duty cycle).
    public var advertisingType: UInt8 = 0
    /// Bit 0 channel 37, bit 1 channel 38, bit 2 channel 39.
    public var channelMap: UInt8 = 0x07

    init(_ r: inout ByteReader) throws(DecodeError) {
        advertisingIntervalMin = try r.u16()
        advertisingIntervalMax = try r.u16()
        guard let type = try? r.u8() else { return }
        advertisingType = type
        guard (try? r.skip(8)) != nil, let map = try? r.u8() else { return }
        channelMap = map
    }
}

/// LE Set Advertising Data (§7.8.7) or LE Set Scan Response Data (§7.8.8): a length, then a
/// 31-octet buffer of which that many octets are significant.
public struct LESetAdvertisingData: Sendable {
    public var isScanResponse: Bool
    /// The significant octets (as many as the buffer holds when the length says more).
    public var data: Bytes

    init(_ r: inout ByteReader, scanResponse: Bool) throws(DecodeError) {
        isScanResponse = scanResponse
        let length = try r.u8()
        data = r.rest().prefix(Int(length))
    }
}

/// LE Set Advertising Enable (§7.8.9).
public struct LESetAdvertisingEnable: Sendable, Equatable {
    public var advertisingEnable: Bool

    init(_ r: inout ByteReader) throws(DecodeError) { advertisingEnable = try r.u8() != 0 }
}

/// LE Set Scan Parameters (§7.8.10). Intervals in units of 0.625 ms.
public struct LESetScanParameters: Sendable, Equatable {
    public var scanType: UInt8
    public var scanInterval: UInt16
    public var scanWindow: UInt16
    public var ownAddressType: UInt8
    public var scanningFilterPolicy: UInt8

    init(_ r: inout ByteReader) throws(DecodeError) {
        scanType = try r.u8()
        scanInterval = try r.u16()
        scanWindow = try r.u16()
        ownAddressType = try r.u8()
        scanningFilterPolicy = try r.u8()
    }
}

/// LE Set Scan Enable (§7.8.11).
public struct LESetScanEnable: Sendable, Equatable {
    public var enable: Bool
    /// 0 off, 1 on (the extended command adds 2: on, reset each scan period).
    public var filterDuplicates: UInt8

    init(_ r: inout ByteReader) throws(DecodeError) {
        enable = try r.u8() != 0
        filterDuplicates = try r.u8()
    }
}

/// LE Create Connection (§7.8.12), up to the peer's address.
public struct LECreateConnection: Sendable, Equatable {
    public var scanInterval: UInt16
    public var scanWindow: UInt16
    /// 0: connect to `peerAddress`; 1: to any device on the Filter Accept List.
    public var initiatorFilterPolicy: UInt8
    public var peerAddressType: UInt8
    public var peerAddress: BDAddr?

    init(_ r: inout ByteReader) throws(DecodeError) {
        scanInterval = try r.u16()
        scanWindow = try r.u16()
        initiatorFilterPolicy = try r.u8()
        peerAddressType = try r.u8()
        peerAddress = try? r.address()
    }

    /// The peer named, when the filter policy uses it.
    public var peer: BDAddr? { initiatorFilterPolicy == 0 ? peerAddress : nil }
}

/// LE Set Extended Advertising Parameters v1 (§7.8.53) and v2, up to the primary interval.
public struct LESetExtendedAdvertisingParameters: Sendable, Equatable {
    public var advertisingHandle: UInt8
    public var advertisingEventProperties: UInt16
    /// Units of 0.625 ms.
    public var primaryAdvertisingIntervalMin: UInt32
    public var primaryAdvertisingIntervalMax: UInt32
    /// Bit 0 channel 37, bit 1 channel 38, bit 2 channel 39.
    public var primaryChannelMap: UInt8 = 0x07
    /// 1 LE 1M, 3 LE Coded (primary); 1, 2 or 3 (secondary).
    public var primaryPHY: UInt8 = 1
    public var secondaryPHY: UInt8 = 1

    init(_ r: inout ByteReader) throws(DecodeError) {
        advertisingHandle = try r.u8()
        advertisingEventProperties = try r.u16()
        primaryAdvertisingIntervalMin = try r.u24()
        primaryAdvertisingIntervalMax = try r.u24()
        guard let map = try? r.u8() else { return }
        primaryChannelMap = map
        // Own and peer address types, peer address, filter policy, TX power.
        guard (try? r.skip(10)) != nil, let primary = try? r.u8() else { return }
        primaryPHY = primary
        guard (try? r.skip(1)) != nil, let secondary = try? r.u8() else { return }
        secondaryPHY = secondary
    }

    /// Advertising Event Properties bits 0 and 1.
    public var isConnectable: Bool { advertisingEventProperties & 0x01 != 0 }
    public var isScannable: Bool { advertisingEventProperties & 0x02 != 0 }

    /// Advertising Event Properties bit 4: the set advertises with legacy PDUs.
    public var usesLegacyPDUs: Bool { advertisingEventProperties & 0x10 != 0 }
}

/// LE Set Extended Advertising Data (§7.8.54) or LE Set Extended Scan Response Data (§7.8.55).
public struct LESetExtendedAdvertisingData: Sendable {
    public var isScanResponse: Bool
    public var advertisingHandle: UInt8
    public var operation: UInt8
    public var fragmentPreference: UInt8
    /// As many octets as the length says (or as follow, when fewer).
    public var data: Bytes

    init(_ r: inout ByteReader, scanResponse: Bool) throws(DecodeError) {
        isScanResponse = scanResponse
        advertisingHandle = try r.u8()
        operation = try r.u8()
        fragmentPreference = try r.u8()
        let length = try r.u8()
        data = r.rest().prefix(Int(length))
    }
}

/// LE Set Extended Advertising Enable (§7.8.56), without its per-set list.
public struct LESetExtendedAdvertisingEnable: Sendable, Equatable {
    public var enable: Bool

    init(_ r: inout ByteReader) throws(DecodeError) { enable = try r.u8() != 0 }
}

/// LE Set Extended Scan Parameters (§7.8.64).
public struct LESetExtendedScanParameters: Sendable, Equatable {
    public struct PHY: Sendable, Equatable {
        public var scanType: UInt8
        public var scanInterval: UInt16
        public var scanWindow: UInt16
    }

    public var ownAddressType: UInt8
    public var scanningFilterPolicy: UInt8
    /// Bit 0 LE 1M, bit 2 LE Coded: one `phys` entry per bit set, lowest first.
    public var scanningPHYs: UInt8
    public var phys: [PHY]

    init(_ r: inout ByteReader) throws(DecodeError) {
        ownAddressType = try r.u8()
        scanningFilterPolicy = try r.u8()
        scanningPHYs = try r.u8()
        phys = []
        for _ in 0..<scanningPHYs.nonzeroBitCount {
            phys.append(PHY(scanType: try r.u8(), scanInterval: try r.u16(), scanWindow: try r.u16()))
        }
    }
}

/// LE Set Extended Scan Enable (§7.8.65).
public struct LESetExtendedScanEnable: Sendable, Equatable {
    public var enable: Bool
    public var filterDuplicates: UInt8
    /// Units of 10 ms; 0: until disabled.
    public var duration: UInt16?
    /// Units of 1.28 s; 0: scan once.
    public var period: UInt16?

    init(_ r: inout ByteReader) throws(DecodeError) {
        enable = try r.u8() != 0
        filterDuplicates = try r.u8()
        duration = try? r.u16()
        period = try? r.u16()
    }
}

/// LE Extended Create Connection v1 (§7.8.66) and v2 (which starts with an advertising handle and
/// subevent, for PAwR), up to the peer's address.
public struct LEExtendedCreateConnection: Sendable, Equatable {
    /// v2 only.
    public var advertisingHandle: UInt8?
    public var subevent: UInt8?
    public var initiatorFilterPolicy: UInt8
    public var ownAddressType: UInt8
    public var peerAddressType: UInt8
    public var peerAddress: BDAddr?
    /// The scan interval of the first initiating PHY (units of 0.625 ms).
    public var scanInterval: UInt16?

    init(_ r: inout ByteReader, v2: Bool) throws(DecodeError) {
        if v2 {
            advertisingHandle = try r.u8()
            subevent = try r.u8()
        }
        initiatorFilterPolicy = try r.u8()
        ownAddressType = try r.u8()
        peerAddressType = try r.u8()
        peerAddress = try? r.address()
        // Initiating PHYs, then per PHY: scan interval, scan window, ...
        if (try? r.u8()).map({ $0 != 0 }) == true { scanInterval = try? r.u16() }
    }

    /// The peer named, when the filter policy uses it.
    public var peer: BDAddr? { initiatorFilterPolicy == 0 ? peerAddress : nil }
}

// MARK: Events

extension HCIEvents {
    public static let connectionComplete: UInt8 = 0x03
    public static let disconnectionComplete: UInt8 = 0x05
    public static let encryptionChange: UInt8 = 0x08
    public static let encryptionKeyRefreshComplete: UInt8 = 0x30
    public static let encryptionChangeV2: UInt8 = 0x59
    public static let numberOfCompletedPackets: UInt8 = 0x13

    /// LE Meta subevent codes.
    public static let leConnectionComplete: UInt8 = 0x01
    public static let leConnectionUpdateComplete: UInt8 = 0x03
    public static let leDataLengthChange: UInt8 = 0x07
    public static let lePHYUpdateComplete: UInt8 = 0x0C
    public static let leEnhancedConnectionComplete: UInt8 = 0x0A
    public static let leEnhancedConnectionCompleteV2: UInt8 = 0x29
}

/// An HCI event blesniff acts on (the connection table follows them), with its parameters.
public enum HCIEvent: Sendable {
    case connectionComplete(ConnectionComplete)
    case disconnectionComplete(DisconnectionComplete)
    /// Versions 1 and 2.
    case encryptionChange(EncryptionChange)
    case encryptionKeyRefreshComplete(EncryptionKeyRefreshComplete)
    /// LE Connection Complete and LE Enhanced Connection Complete v1 and v2.
    case leConnectionComplete(LEConnectionComplete)
    case leConnectionUpdateComplete(LEConnectionUpdateComplete)
    case leDataLengthChange(LEDataLengthChange)
    case lePHYUpdateComplete(LEPHYUpdateComplete)

    /// nil for another event or LE subevent, or parameters too short for the view.
    public init?(code: UInt8, _ params: borrowing Bytes) {
        // The reader is found before the bytes are taken: most events (advertising reports above
        // all) have no view, and taking the bytes costs a retain and a release.
        let read: Reader
        let isMeta = code == HCIEvents.leMeta
        if isMeta {
            guard let sub = params.first, let found = Self.leReaders[Int(sub)] else { return nil }
            read = found
        } else {
            guard let found = Self.readers[Int(code)] else { return nil }
            read = found
        }
        var r = ByteReader(isMeta ? (copy params).dropFirst() : copy params)
        guard let e = try? read.read(&r) else { return nil }
        self = e
    }

    /// Wrapped as `HCICommand.Reader` is.
    private struct Reader: Sendable {
        let read: @Sendable (inout ByteReader) throws -> HCIEvent
    }

    /// By event code, and by LE subevent code: an index rather than a hash, on the path of every event.
    private static let readers: [Reader?] = table([
        HCIEvents.connectionComplete: Reader { .connectionComplete(try ConnectionComplete(&$0)) },
        HCIEvents.disconnectionComplete: Reader { .disconnectionComplete(try DisconnectionComplete(&$0)) },
        HCIEvents.encryptionChange: Reader { .encryptionChange(try EncryptionChange(&$0, v2: false)) },
        HCIEvents.encryptionChangeV2: Reader { .encryptionChange(try EncryptionChange(&$0, v2: true)) },
        HCIEvents.encryptionKeyRefreshComplete: Reader { .encryptionKeyRefreshComplete(try EncryptionKeyRefreshComplete(&$0)) },
    ])
    private static let leReaders: [Reader?] = table([
        HCIEvents.leConnectionComplete: Reader { .leConnectionComplete(try LEConnectionComplete(&$0, enhanced: false)) },
        HCIEvents.leEnhancedConnectionComplete: Reader { .leConnectionComplete(try LEConnectionComplete(&$0, enhanced: true)) },
        HCIEvents.leEnhancedConnectionCompleteV2: Reader { .leConnectionComplete(try LEConnectionComplete(&$0, enhanced: true)) },
        HCIEvents.leConnectionUpdateComplete: Reader { .leConnectionUpdateComplete(try LEConnectionUpdateComplete(&$0)) },
        HCIEvents.leDataLengthChange: Reader { .leDataLengthChange(try LEDataLengthChange(&$0)) },
        HCIEvents.lePHYUpdateComplete: Reader { .lePHYUpdateComplete(try LEPHYUpdateComplete(&$0)) },
    ])

    private static func table(_ rows: [UInt8: Reader]) -> [Reader?] {
        var t = [Reader?](repeating: nil, count: 256)
        for (code, read) in rows { t[Int(code)] = read }
        return t
    }
}

/// Connection Complete (§7.7.3), BR/EDR.
public struct ConnectionComplete: Sendable, Equatable {
    public var status: UInt8
    public var connectionHandle: UInt16
    public var bdAddr: BDAddr?

    init(_ r: inout ByteReader) throws(DecodeError) {
        status = try r.u8()
        connectionHandle = try Decoders.connectionHandle(&r)
        bdAddr = try? r.address()
    }
}

/// Disconnection Complete (§7.7.5).
public struct DisconnectionComplete: Sendable, Equatable {
    public var status: UInt8
    public var connectionHandle: UInt16
    public var reason: UInt8?

    init(_ r: inout ByteReader) throws(DecodeError) {
        status = try r.u8()
        connectionHandle = try Decoders.connectionHandle(&r)
        reason = try? r.u8()
    }
}

/// Encryption Change v1 (§7.7.8) and v2 (§7.7.8, with the key size).
public struct EncryptionChange: Sendable, Equatable {
    public var status: UInt8
    public var connectionHandle: UInt16
    /// 0 off; 1 E0 or AES-CCM; 2 AES-CCM on BR/EDR.
    public var encryptionEnabled: UInt8
    /// v2 only.
    public var encryptionKeySize: UInt8?

    init(_ r: inout ByteReader, v2: Bool) throws(DecodeError) {
        status = try r.u8()
        connectionHandle = try Decoders.connectionHandle(&r)
        encryptionEnabled = try r.u8()
        encryptionKeySize = nil
        if v2 { encryptionKeySize = try? r.u8() }
    }

    public var isOn: Bool { encryptionEnabled != 0 }
}

/// Encryption Key Refresh Complete (§7.7.39).
public struct EncryptionKeyRefreshComplete: Sendable, Equatable {
    public var status: UInt8
    public var connectionHandle: UInt16

    init(_ r: inout ByteReader) throws(DecodeError) {
        status = try r.u8()
        connectionHandle = try Decoders.connectionHandle(&r)
    }
}

/// LE Connection Complete (§7.7.65.1) and LE Enhanced Connection Complete v1 and v2 (§7.7.65.10),
/// without the resolvable private addresses.
public struct LEConnectionComplete: Sendable, Equatable {
    public var status: UInt8
    public var connectionHandle: UInt16
    /// 0: this host's controller is the central.
    public var role: UInt8
    public var peerAddressType: UInt8
    public var peerAddress: BDAddr
    /// Units of 1.25 ms, connection events, 10 ms.
    public var connectionInterval: UInt16?
    public var peripheralLatency: UInt16?
    public var supervisionTimeout: UInt16?

    init(_ r: inout ByteReader, enhanced: Bool) throws(DecodeError) {
        status = try r.u8()
        connectionHandle = try Decoders.connectionHandle(&r)
        role = try r.u8()
        peerAddressType = try r.u8()
        peerAddress = try r.address()
        // Local and peer resolvable private addresses.
        if enhanced { _ = try? r.skip(12) }
        connectionInterval = try? r.u16()
        peripheralLatency = try? r.u16()
        supervisionTimeout = try? r.u16()
    }
}

/// LE Connection Update Complete (§7.7.65.3).
public struct LEConnectionUpdateComplete: Sendable, Equatable {
    public var status: UInt8
    public var connectionHandle: UInt16
    public var connectionInterval: UInt16
    public var peripheralLatency: UInt16
    public var supervisionTimeout: UInt16

    init(_ r: inout ByteReader) throws(DecodeError) {
        status = try r.u8()
        connectionHandle = try Decoders.connectionHandle(&r)
        connectionInterval = try r.u16()
        peripheralLatency = try r.u16()
        supervisionTimeout = try r.u16()
    }
}

/// LE Data Length Change (§7.7.65.7): the largest payloads and times the link now uses.
public struct LEDataLengthChange: Sendable, Equatable {
    public var connectionHandle: UInt16
    public var maxTxOctets: UInt16
    public var maxTxTime: UInt16
    public var maxRxOctets: UInt16
    public var maxRxTime: UInt16

    init(_ r: inout ByteReader) throws(DecodeError) {
        connectionHandle = try Decoders.connectionHandle(&r)
        maxTxOctets = try r.u16()
        maxTxTime = try r.u16()
        maxRxOctets = try r.u16()
        maxRxTime = try r.u16()
    }
}

/// LE PHY Update Complete (§7.7.65.12).
public struct LEPHYUpdateComplete: Sendable, Equatable {
    public var status: UInt8
    public var connectionHandle: UInt16
    /// 1 LE 1M, 2 LE 2M, 3 LE Coded.
    public var txPHY: UInt8
    public var rxPHY: UInt8

    init(_ r: inout ByteReader) throws(DecodeError) {
        status = try r.u8()
        connectionHandle = try Decoders.connectionHandle(&r)
        txPHY = try r.u8()
        rxPHY = try r.u8()
    }
}

/// Number Of Completed Packets (§7.7.19): per connection handle, the packets the controller sent
/// (or flushed) since the last such event. Not one of `HCIEvent`'s views: those hold no
/// references, so a frame's decode copies as plain bytes, and this one reads the event's bytes.
public struct NumberOfCompletedPackets: Sendable {
    private let entries: Bytes

    /// A frame's event; nil for another frame.
    public init?(_ d: Decoded) {
        guard case .event(let code) = d.hci else { return nil }
        self.init(code: code, d.hciParameters)
    }

    /// nil for another event.
    public init?(code: UInt8, _ params: Bytes) {
        guard code == HCIEvents.numberOfCompletedPackets, let n = params.first else { return nil }
        // A list cut short keeps the entries it holds.
        entries = params.dropFirst().prefix(4 * Int(n))
    }

    /// Each handle (without its flags) and its count, in the event's order.
    public func forEach(_ body: (_ handle: UInt16, _ count: UInt16) -> Void) {
        var r = ByteReader(entries)
        while let h = try? r.u16(), let n = try? r.u16() { body(h & 0x0FFF, n) }
    }
}
