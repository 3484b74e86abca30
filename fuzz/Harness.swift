// Shared by every fuzz target (compiled into each): input access, chunking, a file to read from.
import Glibc

/// The fuzzer's input as an array (copied: decoders get ordinary slices, as from a reader).
func input(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// Splits an input into chunks, each `[tag][length][length bytes]` (the last one may be short),
/// so one input describes a sequence of frames with a control byte each.
struct Chunks: Sequence, IteratorProtocol {
    private let bytes: [UInt8]
    private var i = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func next() -> (tag: UInt8, data: ArraySlice<UInt8>)? {
        guard i < bytes.count else { return nil }
        let tag = bytes[i]
        let len = i + 1 < bytes.count ? Int(bytes[i + 1]) : 0
        let start = Swift.min(i + 2, bytes.count)
        let end = Swift.min(start + len, bytes.count)
        i = end
        return (tag, bytes[start..<end])
    }
}

/// Keeps a computed value alive so the optimizer cannot drop the work that made it.
@inline(never) func consume<T>(_ value: T) { withExtendedLifetime(value) {} }

/// An unlinked regular file in /dev/shm (or /tmp) rewritten with each input, so readers see a
/// seekable file as with `blesniff read FILE` (pcapng with mixed link types rewinds it).
enum ScratchFile {
    static let fd: Int32 = {
        for dir in ["/dev/shm", "/tmp"] {
            let path = dir + "/blesniff-fuzz-\(getpid())"
            let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            if fd >= 0 {
                unlink(path)
                return fd
            }
        }
        fatalError("no scratch file")
    }()

    /// Replaces the file's content with `bytes` and positions it at the start.
    static func load(_ bytes: [UInt8]) -> Int32 {
        _ = ftruncate(fd, 0)
        _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        _ = lseek(fd, 0, SEEK_SET)
        return fd
    }
}
