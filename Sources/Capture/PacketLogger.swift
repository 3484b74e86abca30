import Wire

/// Apple PacketLogger (`.pklg`), also written by BTstack's `hci_dump` and `idevicebtlogger`.
/// No file header and no magic: a sequence of records, each
///   length (4) | seconds (4) | microseconds (4) | type (1) | payload
/// with `length` covering everything after itself. macOS writes the integers big-endian,
/// iOS and BTstack little-endian.
///
/// HCI records come out as btsnoop H4 records (`linkType` btsnoop 1002, flags bit 0 set for
/// controller → host, bit 1 for commands and events, `data` = H4 type byte + packet); notes as
/// Linux monitor System Note / User Logging records (btsnoop 2001), which the decoders show
/// as notes and never as HCI.
public enum PacketLogger {
    /// Bytes before the payload: length, seconds, microseconds, type.
    static let headerLength = 13
    /// Shortest `length`: the timestamp and the type byte.
    static let minLength: UInt32 = 9
    /// Longest `length` a plausibility check accepts: an ACL packet of 65535 bytes plus headers.
    static let maxPlausibleLength: UInt32 = 0x1_0000 + 16

    /// PacketLogger record types carrying HCI traffic: type, H4 packet indicator, received.
    public static let hciTypes: [(type: UInt8, h4: UInt8, received: Bool)] = [
        (0x00, 0x01, false),  // HCI Command
        (0x01, 0x04, true),   // HCI Event
        (0x02, 0x02, false),  // Sent ACL Data
        (0x03, 0x02, true),   // Received ACL Data
        (0x08, 0x03, false),  // Sent SCO Data
        (0x09, 0x03, true),   // Received SCO Data
    ]

    /// Log records: type and the name PacketLogger (and Wireshark) give it. `note` becomes a
    /// monitor System Note; the others User Logging records with the name as identifier.
    public static let noteTypes: [(type: UInt8, name: String)] = [
        (0xF7, "Syslog"), (0xF8, "Kernel"), (0xF9, "Kernel Debug"), (0xFA, "Error"),
        (0xFB, "Power"), (0xFC, "Note"), (0xFD, "Config"), (0xFE, "New Controller"),
    ]
    public static let note: UInt8 = 0xFC
    /// Link Manager traffic some controllers report (not HCI): kept as vendor diagnostics.
    static let lmpTypes: [UInt8] = [0x0A, 0x0B]

    /// What each of the 256 type values becomes.
    enum Kind: Sendable, Equatable {
        case hci(h4: UInt8, received: Bool)
        case systemNote
        case userLogging(ident: [UInt8], priority: UInt8)
        case vendor
        case unknown
    }

    static let kinds: [Kind] = {
        var k = [Kind](repeating: .unknown, count: 256)
        for t in hciTypes { k[Int(t.type)] = .hci(h4: t.h4, received: t.received) }
        for t in noteTypes {
            // syslog priorities: 3 error, 6 informational.
            k[Int(t.type)] = t.type == note ? .systemNote
                : .userLogging(ident: Array(t.name.utf8) + [0], priority: t.type == 0xFA ? 3 : 6)
        }
        for t in lmpTypes { k[Int(t)] = .vendor }
        return k
    }()

    /// PacketLogger type for an HCI packet (H4 indicator and direction); nil for ISO and
    /// unknown indicators, which the format has no type for.
    public static func type(h4: UInt8, received: Bool) -> UInt8? {
        hciTypes.first { $0.h4 == h4 && $0.received == received }?.type
    }

    /// PacketLogger type and text for a monitor note: System Note → Note, User Logging → the
    /// type its identifier names (or Note, with the identifier kept in the text).
    public static func noteRecord(monitorOpcode: UInt16, payload: ArraySlice<UInt8>) -> (type: UInt8, text: ArraySlice<UInt8>)? {
        switch monitorOpcode {
        case 12:
            return (note, payload)
        case 13:
            // priority (1), identifier length (1), identifier (NUL-terminated), message.
            guard payload.count >= 2 else { return (note, payload) }
            let s = payload.startIndex
            let identLength = Int(payload[s + 1])
            guard payload.count >= 2 &+ identLength else { return (note, payload) }
            let ident = payload[(s + 2)..<(s + 2 + identLength)]
            let message = payload[(s + 2 + identLength)...]
            let name = ident.last == 0 ? ident.dropLast() : ident
            if let t = noteTypes.first(where: { $0.type != note && name.elementsEqual($0.name.utf8) }) {
                return (t.type, message)
            }
            return (note, message)
        default:
            return nil
        }
    }

    /// Recognises PacketLogger records at the start of `bytes`: returns the byte order
    /// (true = big-endian) when the first records (up to four, as many as `bytes` holds) have
    /// plausible lengths, microseconds below one million and known types.
    public static func detect(_ bytes: ArraySlice<UInt8>) -> Bool? {
        if plausible(bytes, bigEndian: true) { return true }
        if plausible(bytes, bigEndian: false) { return false }
        return nil
    }

    static func plausible(_ b: ArraySlice<UInt8>, bigEndian: Bool) -> Bool {
        var offset = 0, records = 0
        while records < 4, offset &+ headerLength <= b.count {
            let length = u32(b, offset, bigEndian)
            let micros = u32(b, offset &+ 8, bigEndian)
            let type = b[b.startIndex &+ offset &+ 12]
            guard length >= minLength, length <= maxPlausibleLength, micros < 1_000_000,
                  kinds[Int(type)] != .unknown else { return false }
            offset &+= 4 &+ Int(length)
            records &+= 1
        }
        return records > 0
    }

    @inline(__always) static func u32(_ b: ArraySlice<UInt8>, _ i: Int, _ bigEndian: Bool) -> UInt32 {
        b.u32(at: i, bigEndian: bigEndian)
    }
}

/// Reads PacketLogger records from a stream (see `PacketLogger`).
final class PacketLoggerReader {
    let source: ByteSource
    let bigEndian: Bool
    private(set) var truncation: CaptureError?
    /// Reused for every record: the H4 type byte followed by the payload, or a User Logging header.
    private var scratch: [UInt8] = []

    init(source: ByteSource, bigEndian: Bool) {
        self.source = source
        self.bigEndian = bigEndian
    }

    func next(number: Int) throws(CaptureError) -> Record? {
        let at = source.offset
        guard try source.requireStart(4, of: "a record length", frame: number, truncation: &truncation) else {
            return nil
        }
        let length = PacketLogger.u32(source.pending, 0, bigEndian)
        guard length >= PacketLogger.minLength else {
            throw CaptureError(.malformed, file: source.name, frame: number, offset: at,
                               "PacketLogger record length \(length) is shorter than its timestamp and type (9 bytes)")
        }
        guard Int(length) <= maxRecordLength else {
            throw CaptureError(.recordTooLarge, file: source.name, frame: number, offset: at,
                               "record length \(length) exceeds the 16 MiB limit")
        }
        if let size = source.fileSize, Int64(length) > size {
            throw CaptureError(.recordTooLarge, file: source.name, frame: number, offset: at,
                               "record length \(length) exceeds the file size \(size)")
        }
        let total = 4 &+ Int(length)
        guard try source.requireWhole(total, of: "this record", frame: number, at: at, truncation: &truncation) else {
            return nil
        }
        let bytes = source.consume(total)
        let seconds = Int64(PacketLogger.u32(bytes, 4, bigEndian))
        let micros = Int64(PacketLogger.u32(bytes, 8, bigEndian))
        let type = bytes[bytes.startIndex &+ 12]
        let payload = bytes.dropFirst(PacketLogger.headerLength)

        var linkType = LinkType.btsnoopMonitor
        var flags: UInt32
        scratch.removeAll(keepingCapacity: true)
        switch PacketLogger.kinds[Int(type)] {
        case .hci(let h4, let received):
            linkType = LinkType.btsnoopH4
            flags = (received ? 1 : 0) | (h4 == 0x01 || h4 == 0x04 ? 2 : 0)
            scratch.append(h4)
            scratch.append(contentsOf: payload)
        case .systemNote:
            flags = 12
            scratch.append(contentsOf: payload)
        case .userLogging(let ident, let priority):
            flags = 13
            scratch.append(priority)
            scratch.append(UInt8(truncatingIfNeeded: ident.count))
            scratch.append(contentsOf: ident)
            scratch.append(contentsOf: payload)
        case .vendor, .unknown:
            flags = 11
            scratch.append(contentsOf: payload)
        }
        return Record(number: number, timestamp: seconds &* 1_000_000_000 &+ micros &* 1000, linkType: linkType,
                      flags: flags, data: scratch[...], originalLength: scratch.count, fileOffset: at, fileLength: total)
    }
}

/// Writes PacketLogger records, big-endian (macOS) or little-endian (iOS, BTstack).
public final class PacketLoggerWriter {
    private let out: OutputFile
    public let bigEndian: Bool

    public init(path: String, bigEndian: Bool = true) throws(CaptureError) {
        out = try OutputFile(path: path)
        self.bigEndian = bigEndian
    }

    /// - Parameters:
    ///   - type: PacketLogger record type (`PacketLogger.type(h4:received:)`, `PacketLogger.note`, ...).
    ///   - payload: the packet without any transport framing, or the note's text.
    public func write(timestamp: Int64, type: UInt8, payload: ArraySlice<UInt8>) throws(CaptureError) {
        try out.checkLength(payload.count &+ 9)
        let (s, ns) = splitNanoseconds(timestamp)
        put(UInt32(truncatingIfNeeded: payload.count &+ 9))
        put(UInt32(truncatingIfNeeded: s))
        put(UInt32(truncatingIfNeeded: ns / 1000))
        out.scratch.append(type)
        out.scratch.append(contentsOf: payload)
        try out.flushScratch()
    }

    private func put(_ v: UInt32) {
        if bigEndian { out.be32(v) } else { out.le32(v) }
    }
}
