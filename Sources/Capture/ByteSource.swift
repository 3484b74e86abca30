import CPcap
import Glibc
import Wire

/// Reads a file descriptor in large blocks into one reusable buffer and hands out slices of it.
/// Memory stays flat for any input size; on a pipe or FIFO each `read` takes what is there, so a
/// complete record is returned as soon as it has arrived (no blocking for read-ahead).
final class ByteSource {
    let fd: Int32
    let name: String
    private let closeWhenDone: Bool
    private(set) var buffer: [UInt8]
    /// Unconsumed bytes are `buffer[start..<end]`.
    private(set) var start = 0
    private(set) var end = 0
    /// Stream offset of `buffer[start]`.
    private(set) var offset: Int64 = 0
    private(set) var atEOF = false
    /// Size of a regular file, nil for pipes, terminals and sockets.
    let fileSize: Int64?
    /// Where a regular file was positioned when handed over (offset 0 of the stream).
    let initialPosition: Int64

    init(fd: Int32, name: String, closeWhenDone: Bool, blockSize: Int = 1 << 20) {
        self.fd = fd
        self.name = name
        self.closeWhenDone = closeWhenDone
        // Not zeroed: `read` fills what is used, and only bytes it filled are handed out. Zeroing
        // a megabyte first touched every page of it, for a capture of a few hundred bytes too.
        buffer = [UInt8](unsafeUninitializedCapacity: blockSize) { _, n in n = blockSize }
        var st = stat()
        if fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG {
            let pos = lseek(fd, 0, SEEK_CUR)
            initialPosition = Int64(max(pos, 0))
            fileSize = Int64(st.st_size) - initialPosition
        } else {
            initialPosition = 0
            fileSize = nil
        }
    }

    deinit {
        if closeWhenDone { close(fd) }
    }

    var available: Int { end &- start }

    /// The unconsumed bytes, without consuming them.
    var pending: ArraySlice<UInt8> { buffer[start..<end] }

    /// 32 bits at `i` bytes into the unconsumed bytes (made available by `require`), read in place
    /// rather than through a slice (a retain and release per record header).
    @inline(__always) func u32(at i: Int, bigEndian: Bool) -> UInt32 {
        buffer.withUnsafeBufferPointer { p in
            let s = start &+ i
            let v = UInt32(p[s]) | UInt32(p[s &+ 1]) << 8 | UInt32(p[s &+ 2]) << 16 | UInt32(p[s &+ 3]) << 24
            return bigEndian ? v.byteSwapped : v
        }
    }

    /// Makes a record's first `n` bytes (`what`: "a record header") available for `frame`. At the
    /// end of input it returns false, setting `truncation` unless the input ended between records.
    func requireStart(_ n: Int, of what: String, frame: Int, truncation: inout CaptureError?) throws(CaptureError) -> Bool {
        let at = offset
        if try require(n) { return true }
        if available > 0 { truncation = endsInside(what, frame: frame, at: at) }
        return false
    }

    /// Makes the whole record of `total` bytes (`what`: "this record") that began at `at` available;
    /// false, with `truncation` set, when the input ends inside it.
    func requireWhole(_ total: Int, of what: String, frame: Int, at: Int64, truncation: inout CaptureError?) throws(CaptureError) -> Bool {
        if try require(total) { return true }
        truncation = endsInside("\(what) (\(available) of \(total) bytes)", frame: frame, at: at)
        return false
    }

    /// The warning for input that ends inside record `frame`: everything before it was read.
    func endsInside(_ what: String, frame: Int, at: Int64) -> CaptureError {
        CaptureError(.truncatedRecord, file: name, frame: frame, offset: at,
                     "file ends inside \(what), after \(frame &- 1) complete frames")
    }

    /// Makes `n` bytes available; false when the input ends first (fewer are then available).
    /// Nearly always they are: that test is made in place, without a call.
    @inline(__always) func require(_ n: Int) throws(CaptureError) -> Bool {
        if end &- start >= n { return true }
        return try refill(n)
    }

    /// `require` when the buffer holds fewer than `n` bytes: reads more.
    @inline(never) private func refill(_ n: Int) throws(CaptureError) -> Bool {
        if buffer.count &- start < n || end == buffer.count {
            if buffer.count < n { buffer.reserveCapacity(n) }
            let have = end &- start
            if start > 0 {
                buffer.withUnsafeMutableBufferPointer { p in
                    if let base = p.baseAddress, have > 0 { memmove(base, base + start, have) }
                }
            }
            start = 0
            end = have
            if buffer.count < n {
                // Grow in block steps so a run of large records does not reallocate each time.
                let block = max(1 << 20, n)
                buffer.append(contentsOf: repeatElement(0, count: block &- buffer.count))
            }
        }
        while end &- start < n && !atEOF {
            let got = buffer.withUnsafeMutableBufferPointer { p -> Int in
                guard let base = p.baseAddress else { return 0 }
                return read(fd, base + end, p.count &- end)
            }
            if got > 0 { end &+= got }
            else if got == 0 { atEOF = true }
            else if errno != EINTR {
                throw CaptureError(.io, file: name, offset: offset &+ Int64(available),
                                   "read error: \(String(cString: strerror(errno)))")
            }
        }
        return end &- start >= n
    }

    /// Consumes `n` bytes (made available by `require`) and returns them as a slice of the buffer.
    func consume(_ n: Int) -> ArraySlice<UInt8> {
        let s = buffer[start..<(start &+ n)]
        start &+= n
        offset &+= Int64(n)
        return s
    }

    /// Consumes a record of `n` bytes (made available by `require`) and returns what follows its
    /// `header` bytes: one slice of the buffer, where slicing the whole record and then dropping
    /// its header made two (a retain and a release more a record).
    func consume(_ n: Int, after header: Int) -> ArraySlice<UInt8> {
        let s = buffer[(start &+ header)..<(start &+ n)]
        start &+= n
        offset &+= Int64(n)
        return s
    }

    /// Back to the start of a regular file, discarding what is buffered.
    func rewind() -> Bool {
        guard fileSize != nil, lseek(fd, off_t(initialPosition), SEEK_SET) == initialPosition else { return false }
        start = 0
        end = 0
        offset = 0
        atEOF = false
        return true
    }

    /// Reads `count` bytes at stream offset `at` of a regular file without disturbing the stream.
    func peek(at: Int64, count: Int) -> [UInt8]? {
        guard fileSize != nil else { return nil }
        var out = [UInt8](repeating: 0, count: count)
        let got = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(initialPosition &+ at)) }
        return got == count ? out : nil
    }
}

/// A read-only stdio stream over a `ByteSource`: first the bytes it has already buffered (the
/// ones read to detect the format), then the rest of the descriptor. libpcap reads pcap and
/// pcapng through it, so standard input and pipes work like files, and `ftell` reports the
/// stream offset (seeking to the current position is the only seek it supports).
final class ReplayStream {
    private let source: ByteSource
    private var position: Int64 = 0
    private(set) var file: UnsafeMutablePointer<FILE>?

    /// `unbuffered`: every read of the stream takes exactly what it asks for from `source`, so
    /// `source` stands right after what libpcap has read (the pcap reader parses records itself
    /// after libpcap checked the file header).
    init(_ source: ByteSource, unbuffered: Bool = false) {
        self.source = source
        var io = blesniff_cookie_io_functions()
        io.read = { cookie, buf, size in
            guard let cookie, let buf else { return -1 }
            return Unmanaged<ReplayStream>.fromOpaque(cookie).takeUnretainedValue().read(buf, size)
        }
        io.seek = { cookie, offset, whence in
            guard let cookie, let offset, whence == SEEK_CUR, offset.pointee == 0 else {
                errno = ESPIPE
                return -1
            }
            offset.pointee = off_t(Unmanaged<ReplayStream>.fromOpaque(cookie).takeUnretainedValue().position)
            return 0
        }
        // The stream never owns the descriptor: `source` closes it.
        io.close = { _ in 0 }
        file = fopencookie(Unmanaged.passUnretained(self).toOpaque(), "r", io)
        if unbuffered, let f = file { setvbuf(f, nil, _IONBF, 0) }
    }

    private func read(_ buf: UnsafeMutablePointer<CChar>, _ size: Int) -> Int {
        if source.available == 0 {
            do {
                guard try source.require(1) else { return 0 }
            } catch {
                return -1
            }
        }
        let n = min(size, source.available)
        let bytes = source.consume(n)
        bytes.withUnsafeBytes { raw in
            if let base = raw.baseAddress { memcpy(buf, base, n) }
        }
        position &+= Int64(n)
        return n
    }
}
