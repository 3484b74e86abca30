import CZlib
import Glibc
import Wire

/// Android bug reports: the zip `adb bugreport` writes, and the text inside it (or the output of
/// `dumpsys bluetooth_manager`). The zip holds the HCI snoop log files when the developer option
/// was on (`FS/data/misc/bluetooth/logs/btsnoop_hci.log`, the previous one rotated to `.last`);
/// the text always holds the btsnooz summary of the last packets (see `Btsnooz`).

/// Finds the btsnooz section in the text `source` holds and decodes it; nil when there is none.
func readBtsnoozSection(_ source: ByteSource, name: String) throws(CaptureError) -> BtsnoozReader? {
    let begin = Btsnooz.beginMarker
    // Find the BEGIN marker, keeping enough bytes between reads to match across them.
    while true {
        let p = source.pending
        if let i = firstIndex(of: begin, in: p) {
            _ = source.consume(i &- p.startIndex &+ begin.count)
            break
        }
        let keep = min(p.count, begin.count &- 1)
        _ = source.consume(p.count &- keep)
        guard try source.require(keep &+ 1) else { return nil }
    }
    // Rest of the marker line: " (N bytes in) ---".
    while true {
        guard try source.require(1) else { break }
        if source.consume(1).first == 0x0A { break }
    }
    var decoder = Base64Decoder()
    var blobError: CaptureError?
    var endFound = false
    let end = Btsnooz.endMarker
    scan: while try source.require(1) {
        let p = source.pending
        var used = 0
        for c in p {
            if c == 0x2D {  // '-': the END marker, or garbage
                _ = source.consume(used)
                used = 0
                _ = try source.require(end.count)
                if source.pending.starts(with: end) { endFound = true; break scan }
                blobError = CaptureError(.malformed, file: name, offset: source.offset,
                                         "invalid base64 in the btsnooz section (character '-')")
                break scan
            }
            guard decoder.add(c) else {
                _ = source.consume(used)
                let shown = c >= 0x20 && c < 0x7F ? "'\(String(decoding: [c], as: UTF8.self))'" : "0x\(Hex.lower(UInt64(c), width: 2))"
                blobError = CaptureError(.malformed, file: name, offset: source.offset,
                                         "invalid base64 in the btsnooz section (character \(shown))")
                break scan
            }
            used &+= 1
        }
        _ = source.consume(used)
    }
    decoder.finish()
    let truncation = endFound || blobError != nil ? nil
        : CaptureError(.truncatedRecord, file: name, offset: source.offset, "btsnooz section has no END marker (text cut short?)")
    return try BtsnoozReader(name: name, blob: decoder.output, blobError: blobError, truncation: truncation)
}

func firstIndex(of needle: [UInt8], in hay: ArraySlice<UInt8>) -> Int? {
    guard let first = needle.first, hay.count >= needle.count else { return nil }
    var i = hay.startIndex
    let last = hay.endIndex &- needle.count
    while i <= last {
        if hay[i] == first, hay[i..<(i &+ needle.count)].elementsEqual(needle) { return i }
        i &+= 1
    }
    return nil
}

/// An anonymous in-memory file: decompressed contents are replayed through it so the ordinary
/// readers (btsnoop, text scanning) read them like any file.
final class MemoryFile {
    let fd: Int32
    private var owned = true

    init(name: String) throws(CaptureError) {
        fd = memfd_create("blesniff", 1)  // MFD_CLOEXEC
        guard fd >= 0 else {
            throw CaptureError(.io, file: name, "cannot create a memory file: \(String(cString: strerror(errno)))")
        }
    }

    func append(_ bytes: ArraySlice<UInt8>) -> Bool {
        var done = 0
        return bytes.withUnsafeBytes { raw -> Bool in
            guard let base = raw.baseAddress else { return true }
            while done < raw.count {
                let n = write(fd, base + done, raw.count &- done)
                if n > 0 { done &+= n } else if n < 0 && errno == EINTR { continue } else { return false }
            }
            return true
        }
    }

    deinit { if owned { close(fd) } }

    /// Hands the descriptor, rewound, to a reader that closes it.
    func rewound() -> Int32 {
        lseek(fd, 0, SEEK_SET)
        owned = false
        return fd
    }
}

/// The central directory of a zip file (PKWARE APPNOTE 6.3), read with `pread`; stored and
/// deflated entries, zip64 sizes and offsets.
struct ZipArchive {
    static let localHeaderSignature: [UInt8] = [0x50, 0x4B, 0x03, 0x04]
    /// Largest entry decompressed (into memory): larger sizes come from corrupt or hostile zips.
    static let maxEntrySize: UInt64 = 4 << 30
    struct Entry {
        var name: String
        var method: UInt16
        var crc: UInt32
        var compressedSize: UInt64
        var size: UInt64
        var localHeaderOffset: UInt64
    }

    let fd: Int32
    let fileSize: Int64
    let name: String
    var entries: [Entry] = []

    init(fd: Int32, fileSize: Int64, name: String) throws(CaptureError) {
        self.fd = fd
        self.fileSize = fileSize
        self.name = name
        // End of central directory: 22 bytes + a comment of up to 65535 bytes, at the end.
        let tailLength = Int(min(fileSize, 22 &+ 65535))
        guard tailLength >= 22, let tail = read(at: fileSize &- Int64(tailLength), count: tailLength) else {
            throw fault("zip file too short for its end of central directory")
        }
        var eocd = -1
        var i = tail.count &- 22
        while i >= 0 {
            if tail[i] == 0x50, tail[i + 1] == 0x4B, tail[i + 2] == 0x05, tail[i + 3] == 0x06 { eocd = i; break }
            i &-= 1
        }
        guard eocd >= 0 else { throw fault("no zip end of central directory (zip cut short?)") }
        var count = UInt64(tail.le16(at: eocd &+ 10))
        var cdSize = UInt64(tail.le32(at: eocd &+ 12))
        var cdOffset = UInt64(tail.le32(at: eocd &+ 16))
        if count == 0xFFFF || cdSize == 0xFFFF_FFFF || cdOffset == 0xFFFF_FFFF, eocd >= 20,
           tail[(eocd - 20)..<(eocd - 16)].elementsEqual([0x50, 0x4B, 0x06, 0x07]) {
            let at = tail.le64(at: eocd &- 20 &+ 8)
            guard at < UInt64(fileSize), let z = read(at: Int64(at), count: 56),
                  z[0..<4].elementsEqual([0x50, 0x4B, 0x06, 0x06]) else { throw fault("bad zip64 end of central directory") }
            count = z.le64(at: 32)
            cdSize = z.le64(at: 40)
            cdOffset = z.le64(at: 48)
        }
        guard cdOffset &+ cdSize <= UInt64(fileSize), cdSize <= UInt64(maxRecordLength) * 4,
              let cd = read(at: Int64(cdOffset), count: Int(cdSize)) else {
            throw fault("zip central directory lies outside the file")
        }
        var at = 0
        for _ in 0..<min(count, UInt64(cd.count / 46)) {
            guard at &+ 46 <= cd.count, cd[at..<(at &+ 4)].elementsEqual([0x50, 0x4B, 0x01, 0x02]) else {
                throw fault("corrupt zip central directory entry at offset \(cdOffset &+ UInt64(at))")
            }
            let nameLength = Int(cd.le16(at: at &+ 28)), extraLength = Int(cd.le16(at: at &+ 30))
            let commentLength = Int(cd.le16(at: at &+ 32))
            let next = at &+ 46 &+ nameLength &+ extraLength &+ commentLength
            guard next <= cd.count else { throw fault("zip central directory entry runs past its end") }
            var e = Entry(name: String(decoding: cd[(at + 46)..<(at + 46 + nameLength)], as: UTF8.self),
                          method: cd.le16(at: at &+ 10), crc: cd.le32(at: at &+ 16),
                          compressedSize: UInt64(cd.le32(at: at &+ 20)), size: UInt64(cd.le32(at: at &+ 24)),
                          localHeaderOffset: UInt64(cd.le32(at: at &+ 42)))
            // zip64 extended information: the fields saturated in the fixed header, in order.
            var x = at &+ 46 &+ nameLength
            let xEnd = x &+ extraLength
            while x &+ 4 <= xEnd {
                let id = cd.le16(at: x), size = Int(cd.le16(at: x &+ 2))
                var f = x &+ 4
                let fEnd = min(f &+ size, xEnd)
                if id == 1 {
                    if e.size == 0xFFFF_FFFF, f &+ 8 <= fEnd { e.size = cd.le64(at: f); f &+= 8 }
                    if e.compressedSize == 0xFFFF_FFFF, f &+ 8 <= fEnd { e.compressedSize = cd.le64(at: f); f &+= 8 }
                    if e.localHeaderOffset == 0xFFFF_FFFF, f &+ 8 <= fEnd { e.localHeaderOffset = cd.le64(at: f) }
                }
                x = x &+ 4 &+ size
            }
            entries.append(e)
            at = next
        }
    }

    /// Decompresses `entry` into `sink` in chunks, checking its size and CRC.
    func extract(_ entry: Entry, into sink: MemoryFile) throws(CaptureError) {
        let label = "\(name): \(entry.name)"
        guard let local = read(at: Int64(clamping: entry.localHeaderOffset), count: 30),
              local.starts(with: Self.localHeaderSignature) else {
            throw CaptureError(.malformed, file: label, "zip local header missing")
        }
        var position = entry.localHeaderOffset &+ 30 &+ UInt64(local.le16(at: 26)) &+ UInt64(local.le16(at: 28))
        // The local header was read, so `position` is within 64 KiB past the file: no overflow.
        guard entry.compressedSize <= UInt64(fileSize), position &+ entry.compressedSize <= UInt64(fileSize) else {
            throw CaptureError(.truncatedRecord, file: label, "zip entry data runs past the end of the file")
        }
        guard entry.size <= Self.maxEntrySize else {
            throw CaptureError(.recordTooLarge, file: label, "zip entry of \(entry.size) bytes exceeds the \(Self.maxEntrySize >> 30) GiB limit")
        }
        var left = entry.compressedSize
        var produced: UInt64 = 0
        var crc = crc32(0, nil, 0)
        var writeFailed = false
        let take: (ArraySlice<UInt8>) -> Bool = { chunk in
            produced &+= UInt64(chunk.count)
            // More than the directory says: stop (a size mismatch, or a decompression bomb).
            if produced > entry.size { return false }
            crc = chunk.withUnsafeBufferPointer { crc32(crc, $0.baseAddress, UInt32(truncatingIfNeeded: $0.count)) }
            if !sink.append(chunk) { writeFailed = true; return false }
            return true
        }
        let inflater: Inflater?
        switch entry.method {
        case 0: inflater = nil
        case 8: inflater = Inflater(windowBits: -15)
        default: throw CaptureError(.malformed, file: label, "zip compression method \(entry.method) is not supported (stored and deflate are)")
        }
        var status = Inflater.Status.needInput
        while left > 0 {
            let n = Int(min(left, 1 << 20))
            guard let chunk = read(at: Int64(position), count: n) else {
                throw CaptureError(.io, file: label, "read error in zip entry")
            }
            position &+= UInt64(n)
            left &-= UInt64(n)
            if let inflater {
                status = inflater.feed(chunk[...], take)
                if status != .needInput { break }
            } else if !take(chunk[...]) { break }
        }
        if produced > entry.size {
            throw CaptureError(.malformed, file: label, "zip entry inflates to more than its directory size \(entry.size)")
        }
        if writeFailed { throw CaptureError(.io, file: label, "cannot write the decompressed entry to memory") }
        if case .failed(let why) = status { throw CaptureError(.malformed, file: label, "zip entry: \(why)") }
        if inflater != nil, status != .done { throw CaptureError(.truncatedRecord, file: label, "zip entry's deflate stream ends early") }
        guard produced == entry.size, crc == UInt(entry.crc) else {
            throw CaptureError(.malformed, file: label, "zip entry's size or CRC does not match its directory entry")
        }
    }

    private func fault(_ why: String) -> CaptureError { CaptureError(.malformed, file: name, why) }

    func read(at: Int64, count: Int) -> [UInt8]? {
        guard at >= 0, count >= 0 else { return nil }
        var out = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = out.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return pread(fd, base + done, count &- done, off_t(at &+ Int64(done)))
            }
            if n > 0 { done &+= n } else if n < 0 && errno == EINTR { continue } else { return nil }
        }
        return out
    }
}


/// A bug report zip: its HCI snoop logs (`.last` and current, merged in time order), or, when
/// it has none, the btsnooz section of its main text.
final class BugReportZipReader {
    private var merged: MergedReader?
    private var btsnooz: BtsnoozReader?
    /// Names of the zip entries read.
    let sources: [String]

    init(source: ByteSource) throws(CaptureError) {
        let name = source.name
        // A zip is read from its end: a stream is first copied to memory.
        let fd: Int32, size: Int64
        var copy: MemoryFile?
        if let fileSize = source.fileSize, source.offset == 0, source.initialPosition == 0 {
            fd = source.fd
            size = fileSize
        } else {
            let m = try MemoryFile(name: name)
            var total: Int64 = 0
            while try source.require(1) {
                let p = source.consume(source.available)
                total &+= Int64(p.count)
                guard m.append(p) else { throw CaptureError(.io, file: name, "cannot copy the input to memory") }
            }
            fd = m.fd
            size = total
            copy = m
        }
        let zip = try ZipArchive(fd: fd, fileSize: size, name: name)
        _ = copy
        let logs = Self.snoopLogs(zip.entries)
        if !logs.isEmpty {
            var readers: [CaptureReader] = []
            for entry in logs {
                let m = try MemoryFile(name: name)
                try zip.extract(entry, into: m)
                readers.append(try CaptureReader(fileDescriptor: m.rewound(), name: "\(name): \(entry.name)", closeWhenDone: true))
            }
            merged = MergedReader(readers)
            sources = logs.map(\.name)
            return
        }
        guard let text = Self.mainText(zip.entries) else {
            throw CaptureError(.notACapture, file: name,
                               "zip without btsnoop_hci.log or bug report text (is this an Android bug report?)")
        }
        let m = try MemoryFile(name: name)
        try zip.extract(text, into: m)
        let textName = "\(name): \(text.name)"
        let textSource = ByteSource(fd: m.rewound(), name: textName, closeWhenDone: true)
        guard let reader = try readBtsnoozSection(textSource, name: textName) else {
            throw CaptureError(.notACapture, file: name,
                               "bug report without HCI snoop log or btsnooz section (turn on \"Enable Bluetooth HCI snoop log\" in Developer options)")
        }
        btsnooz = reader
        sources = [text.name]
    }

    /// `btsnoop_hci.log.last` then `btsnoop_hci.log` (the unfiltered ones when both kinds exist).
    static func snoopLogs(_ entries: [ZipArchive.Entry]) -> [ZipArchive.Entry] {
        let dir = "misc/bluetooth/logs/"
        for base in ["btsnoop_hci.log", "btsnoop_hci.log.filtered"] {
            let found = [base + ".last", base].compactMap { file in
                entries.first { $0.name.hasSuffix(dir + file) }
            }
            if !found.isEmpty { return found }
        }
        return []
    }

    /// The bug report's main text: `bugreport-*.txt` at the top level.
    static func mainText(_ entries: [ZipArchive.Entry]) -> ZipArchive.Entry? {
        entries.first { !$0.name.contains("/") && $0.name.hasPrefix("bugreport") && $0.name.hasSuffix(".txt") }
            ?? entries.first { !$0.name.contains("/") && $0.name.hasPrefix("dumpstate") && $0.name.hasSuffix(".txt") }
    }

    var truncation: CaptureError? { btsnooz?.truncation ?? merged?.truncations.first }

    func next(number: Int) throws(CaptureError) -> Record? {
        if let btsnooz { return try btsnooz.next(number: number) }
        guard let merged, var r = try merged.next() else { return nil }
        r.number = number
        return r
    }
}
