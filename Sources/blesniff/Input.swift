import Capture
import Decoders
#if canImport(Glibc)
import Glibc
#endif

/// Reads captures as streams of `Packet`s, reporting bad input the way every command does:
/// a clear message naming the file, frame and byte offset; truncation after good frames is a
/// warning unless `strict`.
struct CaptureInput {
    var strict = false
    /// Show a progress bar on a terminal for files larger than this many bytes.
    var progressThreshold: Int64 = 8 << 20

    enum Failure: Error { case input }

    /// Calls `body` for every frame of every file, in order. Returns false when a file could not be
    /// read to its end (an error was printed).
    func forEachPacket(_ paths: [String], _ body: (Packet) throws -> Void) throws -> Bool {
        var ok = true
        for path in paths {
            let reader: CaptureReader
            do {
                reader = try CaptureReader(path: path)
            } catch {
                stderr("blesniff: \(error)")
                ok = false
                continue
            }
            let progress = Progress(path: path, threshold: progressThreshold)
            do {
                while let r = try reader.next() {
                    let p = Packet.fromRecord(number: r.number, timestamp: r.timestamp, linkType: r.linkType, flags: r.flags,
                                              data: r.data, fileOffset: r.fileOffset, fileLength: r.fileLength,
                                              truncated: r.truncated)
                    try body(p)
                    progress?.update(r.fileOffset)
                }
            } catch let e as CaptureError {
                progress?.finish()
                stderr("blesniff: \(e)")
                ok = false
                continue
            }
            progress?.finish()
            if let t = reader.truncation {
                stderr("blesniff: warning: \(t)")
                if strict { ok = false }
            }
        }
        return ok
    }
}

/// A progress bar on standard error, only when it is a terminal and the file is large.
final class Progress {
    let size: Int64
    var shown = -1

    init?(path: String, threshold: Int64) {
        guard path != "-", isatty(2) != 0 else { return nil }
        var st = stat()
        guard stat(path, &st) == 0, Int64(st.st_size) > threshold else { return nil }
        size = Int64(st.st_size)
    }

    func update(_ offset: Int64) {
        let pct = Int(offset * 100 / max(size, 1))
        guard pct != shown else { return }
        shown = pct
        let bar = String(repeating: "#", count: pct / 4) + String(repeating: " ", count: 25 - pct / 4)
        let s = "\r[\(bar)] \(pct)%"
        s.utf8CString.withUnsafeBufferPointer { _ = write(2, $0.baseAddress, $0.count - 1) }
    }

    func finish() {
        let s = "\r" + String(repeating: " ", count: 40) + "\r"
        s.utf8CString.withUnsafeBufferPointer { _ = write(2, $0.baseAddress, $0.count - 1) }
    }
}
