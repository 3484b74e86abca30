#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Buffered output to a file descriptor: text is gathered in a byte buffer and written in large
/// chunks, so printing a line per frame costs no system call per frame.
public final class Output {
    public let fd: Int32
    private var buffer: [UInt8] = []
    private let chunk = 1 << 16
    /// Set when a write failed (a closed pipe): further output is dropped.
    public private(set) var failed = false

    public init(fd: Int32 = 1) {
        self.fd = fd
        buffer.reserveCapacity(chunk * 2)
    }

    /// Opens (creates or truncates) a file for writing.
    public convenience init?(path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return nil }
        self.init(fd: fd)
    }

    deinit { flush() }

    @inline(__always) public func write(_ s: String) {
        var s = s
        s.withUTF8 { buffer.append(contentsOf: $0) }
        if buffer.count >= chunk { flush() }
    }

    @inline(__always) public func write(byte: UInt8) { buffer.append(byte) }

    public func write<S: Sequence>(bytes: S) where S.Element == UInt8 {
        buffer.append(contentsOf: bytes)
        if buffer.count >= chunk { flush() }
    }

    /// Appends a decimal integer without building a String.
    public func write(int v: Int64) {
        if v < 0 { buffer.append(UInt8(ascii: "-")) }
        var m = v.magnitude
        var tmp: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                  UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &tmp) { t in
            repeat {
                t[n] = UInt8(ascii: "0") + UInt8(m % 10)
                m /= 10
                n += 1
            } while m > 0
            for i in stride(from: n - 1, through: 0, by: -1) { buffer.append(t[i]) }
        }
    }

    /// Appends `v` right-aligned in `width` columns.
    public func write(int v: Int64, width: Int) {
        var digits = v < 0 ? 2 : 1
        var m = v.magnitude
        while m >= 10 { m /= 10; digits += 1 }
        if width > digits { buffer.append(contentsOf: repeatElement(UInt8(ascii: " "), count: width - digits)) }
        write(int: v)
    }

    /// Appends a duration in nanoseconds as seconds with six decimals ("12.000345").
    public func write(seconds ns: Int64, width: Int = 0) {
        let neg = ns < 0
        let us = (ns.magnitude + 500) / 1000
        let whole = Int64(us / 1_000_000), frac = us % 1_000_000
        let intDigits = String(whole).count + (neg ? 1 : 0)
        if width > intDigits + 7 { buffer.append(contentsOf: repeatElement(UInt8(ascii: " "), count: width - intDigits - 7)) }
        if neg { buffer.append(UInt8(ascii: "-")) }
        write(int: whole)
        buffer.append(UInt8(ascii: "."))
        var div: UInt64 = 100_000
        while div > 0 {
            buffer.append(UInt8(ascii: "0") + UInt8(frac / div % 10))
            div /= 10
        }
    }

    public func flush() {
        guard !buffer.isEmpty else { return }
        defer { buffer.removeAll(keepingCapacity: true) }
        guard !failed else { return }
        buffer.withUnsafeBytes { raw in
            var off = 0
            while off < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + off, raw.count - off)
                if n < 0 {
                    if errno == EINTR { continue }
                    failed = true
                    return
                }
                off += n
            }
        }
    }

    public func close() {
        flush()
        if fd > 2 { _ = Glibc.close(fd) }
    }
}
