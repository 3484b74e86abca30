import Glibc

/// Small text files a user names (configuration, keys, radio profiles), read whole with libc.
enum TextFile {
    enum Failure: Error { case unreadable, tooLarge }

    /// The file's text, or why not: it cannot be read, or it is larger than `limit` bytes (the
    /// wrong file: these are a few lines).
    static func read(_ path: String, limit: Int = 1 << 20) throws(Failure) -> String {
        guard let f = fopen(path, "r") else { throw .unreadable }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&chunk, 1, chunk.count, f)
            if n <= 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > limit { throw .tooLarge }
        }
        if ferror(f) != 0 { throw .unreadable }
        return String(decoding: bytes, as: UTF8.self)
    }
}
