import CZlib
import Wire

/// btsnooz: the HCI summary Android puts in a bug report's text (AOSP btif_debug_btsnoop,
/// tools/scripts/btsnooz.py), between `--- BEGIN:BTSNOOP_LOG_SUMMARY (N bytes in) ---` and
/// `--- END:BTSNOOP_LOG_SUMMARY ---`:
///   base64 { version (1) | last timestamp (8, LE, µs since 1970) | zlib { records } }
/// Records (little-endian):
///   version 1: length (2) | delta (4) | type (1) | data
///   version 2: length (2) | packet length (2) | delta (4) | type (1) | data
/// `length` counts the type byte and the data kept (ACL payloads are cut short; version 2
/// keeps the original length in `packet length`, type byte included); `delta` is the time in
/// µs since the previous record, so timestamps are found backwards from the last one.
public enum Btsnooz {
    static let beginMarker = Array("--- BEGIN:BTSNOOP_LOG_SUMMARY".utf8)
    static let endMarker = Array("--- END:BTSNOOP_LOG_SUMMARY".utf8)
    static let preambleLength = 9
    static let maxInflated = 256 << 20

    /// btsnooz record types (the stack's internal packet types): H4 indicator and direction.
    static let types: [(type: UInt8, h4: UInt8, received: Bool)] = [
        (0x10, 0x04, true),   // event
        (0x11, 0x02, true),   // ACL in
        (0x12, 0x03, true),   // SCO in
        (0x17, 0x05, true),   // ISO in
        (0x20, 0x01, false),  // command
        (0x21, 0x02, false),  // ACL out
        (0x22, 0x03, false),  // SCO out
        (0x2D, 0x05, false),  // ISO out
    ]

    /// Indexed by btsnooz type: H4 indicator (0 = unknown type) and btsnoop flags.
    static let table: [(h4: UInt8, flags: UInt32)] = {
        var t = [(h4: UInt8, flags: UInt32)](repeating: (0, 0), count: 256)
        for e in types {
            t[Int(e.type)] = (e.h4, (e.received ? 1 : 0) | (e.h4 == 0x01 || e.h4 == 0x04 ? 2 : 0))
        }
        return t
    }()
}

/// Base64 (RFC 4648 standard alphabet), fed a byte at a time; whitespace and padding skipped.
struct Base64Decoder {
    static let values: [UInt8] = {
        var v = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            v[Int(c)] = UInt8(i)
        }
        return v
    }()

    var output: [UInt8] = []
    private var bits: UInt32 = 0
    private var count = 0

    /// False for a byte outside the alphabet (whitespace and '=' are accepted and ignored).
    mutating func add(_ c: UInt8) -> Bool {
        let v = Self.values[Int(c)]
        if v == 0xFF { return c == 0x3D || c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }
        bits = bits << 6 | UInt32(v)
        count &+= 1
        if count == 4 {
            output.append(UInt8(truncatingIfNeeded: bits >> 16))
            output.append(UInt8(truncatingIfNeeded: bits >> 8))
            output.append(UInt8(truncatingIfNeeded: bits))
            bits = 0
            count = 0
        }
        return true
    }

    /// Emits the bytes of a final partial group.
    mutating func finish() {
        if count == 2 { output.append(UInt8(truncatingIfNeeded: bits >> 4)) }
        if count == 3 {
            output.append(UInt8(truncatingIfNeeded: bits >> 10))
            output.append(UInt8(truncatingIfNeeded: bits >> 2))
        }
        bits = 0
        count = 0
    }
}

/// zlib inflate (system zlib), fed input in pieces; output goes to a callback in chunks.
final class Inflater {
    enum Status: Equatable { case needInput, done, failed(String) }
    private var stream = z_stream()
    private var ready = false
    private var chunk = [UInt8](repeating: 0, count: 1 << 16)

    /// - Parameter windowBits: 15 for a zlib stream, -15 for raw deflate (zip).
    init(windowBits: Int32) {
        ready = blesniff_inflate_init(&stream, windowBits) == Z_OK
    }

    deinit { if ready { inflateEnd(&stream) } }

    /// Inflates `input`; `sink` gets every output chunk and returns false to stop.
    func feed(_ input: ArraySlice<UInt8>, _ sink: (ArraySlice<UInt8>) -> Bool) -> Status {
        guard ready else { return .failed("zlib could not be initialised") }
        return input.withUnsafeBufferPointer { inBuf -> Status in
            stream.next_in = UnsafeMutablePointer(mutating: inBuf.baseAddress)
            stream.avail_in = UInt32(truncatingIfNeeded: inBuf.count)
            while true {
                let (rc, produced) = chunk.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(truncatingIfNeeded: out.count)
                    let rc = inflate(&stream, Z_NO_FLUSH)
                    return (rc, out.count &- Int(stream.avail_out))
                }
                if produced > 0, !sink(chunk[0..<produced]) { return .failed("output refused") }
                switch rc {
                case Z_STREAM_END: return .done
                case Z_OK: if stream.avail_in == 0 && produced < chunk.count { return .needInput }
                case Z_BUF_ERROR: return .needInput
                default:
                    let why = stream.msg.map { String(cString: $0) } ?? "error \(rc)"
                    return .failed("corrupt deflate stream (\(why))")
                }
            }
        }
    }
}

/// Frames of a btsnooz blob, as btsnoop H4 records (datalink 1002) sliced from the inflated
/// record stream. A fault part-way (bad base64, cut deflate stream, bad record) keeps the
/// frames before it and is thrown after the last of them.
final class BtsnoozReader {
    let name: String
    let version: UInt8
    private(set) var truncation: CaptureError?
    /// Inflated records, type bytes replaced by H4 indicators so each frame is one slice.
    private var stream: [UInt8] = []
    private var end = 0
    private var offset = 0
    private var micros: Int64 = 0
    private var pendingError: CaptureError?
    /// btsnoop flags of each record (the type byte now holds the H4 indicator, not the direction).
    private var recordFlags: [UInt8] = []
    private var index = 0

    /// - Parameters:
    ///   - blob: the decoded base64 (preamble + deflate stream).
    ///   - blobError: a fault found while extracting the blob, raised after its frames.
    ///   - truncation: a warning to report at the end (e.g. no END marker).
    init(name: String, blob: [UInt8], blobError: CaptureError?, truncation: CaptureError?) throws(CaptureError) {
        self.name = name
        guard blob.count >= Btsnooz.preambleLength else {
            throw blobError ?? CaptureError(.truncatedHeader, file: name,
                                            "btsnooz section holds \(blob.count) bytes, shorter than its 9-byte header")
        }
        version = blob[0]
        guard version == 1 || version == 2 else {
            throw CaptureError(.unsupportedVersion, file: name, "unsupported btsnooz version \(version) (1 and 2 are read)")
        }
        var last: UInt64 = 0
        for i in (1...8).reversed() { last = last << 8 | UInt64(blob[i]) }

        let inflater = Inflater(windowBits: 15)
        var out: [UInt8] = []
        let status = inflater.feed(blob[Btsnooz.preambleLength...]) { chunk in
            // Android keeps a few MB; far more is a decompression bomb.
            guard out.count &+ chunk.count <= Btsnooz.maxInflated else { return false }
            out.append(contentsOf: chunk)
            return true
        }
        stream = out
        var streamError: CaptureError?
        switch status {
        case .done: break
        case .needInput:
            streamError = CaptureError(.truncatedRecord, file: name, "btsnooz deflate stream ends early (section cut short?)")
        case .failed(_) where out.count &+ (1 << 16) > Btsnooz.maxInflated:
            streamError = CaptureError(.recordTooLarge, file: name, "btsnooz records exceed \(Btsnooz.maxInflated >> 20) MiB; the rest is not read")
        case .failed(let why):
            streamError = CaptureError(.malformed, file: name, "btsnooz: \(why)")
        }

        // Walk the records: validate, rewrite type bytes, sum the deltas.
        let header = version == 1 ? 7 : 9
        var at = 0, total: Int64 = 0
        var recordError: CaptureError?
        var frame = 1
        while at < stream.count {
            guard at &+ header <= stream.count else {
                recordError = CaptureError(.truncatedRecord, file: name, frame: frame, offset: Int64(at), "btsnooz record header cut short")
                break
            }
            let length = Int(stream[at]) | Int(stream[at &+ 1]) << 8
            let typeIndex = at &+ header &- 1
            let type = stream[typeIndex]
            let entry = Btsnooz.table[Int(type)]
            guard entry.h4 != 0 else {
                recordError = CaptureError(.malformed, file: name, frame: frame, offset: Int64(at),
                                           "unknown btsnooz record type 0x\(Hex.lower(UInt64(type), width: 2))")
                break
            }
            guard length >= 1 else {
                recordError = CaptureError(.malformed, file: name, frame: frame, offset: Int64(at), "btsnooz record length 0")
                break
            }
            guard typeIndex &+ length <= stream.count else {
                recordError = CaptureError(.truncatedRecord, file: name, frame: frame, offset: Int64(at),
                                           "btsnooz record of \(length) bytes cut short")
                break
            }
            let d = at &+ (version == 1 ? 2 : 4)
            total &+= Int64(UInt32(stream[d]) | UInt32(stream[d &+ 1]) << 8 | UInt32(stream[d &+ 2]) << 16 | UInt32(stream[d &+ 3]) << 24)
            stream[typeIndex] = entry.h4
            recordFlags.append(UInt8(truncatingIfNeeded: entry.flags))
            at = typeIndex &+ length
            frame &+= 1
        }
        end = at
        // The first fault in the input explains any later one: base64, then deflate, then records.
        pendingError = blobError ?? streamError ?? recordError
        self.truncation = truncation
        micros = Int64(bitPattern: last) &- total
    }

    func next(number: Int) throws(CaptureError) -> Record? {
        guard offset < end else {
            if let e = pendingError {
                pendingError = nil
                var e2 = e
                if e2.frame == nil { e2.frame = number }
                throw e2
            }
            return nil
        }
        let at = offset
        let header = version == 1 ? 7 : 9
        let length = Int(stream[at]) | Int(stream[at &+ 1]) << 8
        let packetLength = version == 1 ? length : Int(stream[at &+ 2]) | Int(stream[at &+ 3]) << 8
        let d = at &+ (version == 1 ? 2 : 4)
        micros &+= Int64(UInt32(stream[d]) | UInt32(stream[d &+ 1]) << 8 | UInt32(stream[d &+ 2]) << 16 | UInt32(stream[d &+ 3]) << 24)
        let typeIndex = at &+ header &- 1
        let data = stream[typeIndex..<(typeIndex &+ length)]
        let flags = index < recordFlags.count ? UInt32(recordFlags[index]) : 0
        offset = typeIndex &+ length
        index &+= 1
        return Record(number: number, timestamp: micros &* 1000, linkType: LinkType.btsnoopH4, flags: flags,
                      data: data, originalLength: max(packetLength, length), fileOffset: Int64(at),
                      fileLength: header &- 1 &+ length)
    }
}

