import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Writes `s` to standard error as it is (no escaping: for text blesniff composed itself).
func writeStandardError(_ s: String) {
    var s = s
    s.withUTF8 { buf in
        var p = buf.baseAddress
        var left = buf.count
        while left > 0, let base = p {
            let n = write(2, base, left)
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            p = base + n
            left -= n
        }
    }
}

/// Path text: what the file walk and SARIF's relative paths need, on POSIX paths.
enum Paths {
    /// Every file and directory under `dir`, relative to it, in no particular order: hidden ones
    /// too; symbolic links are listed, not followed; directories that cannot be read are passed over.
    static func walk(_ dir: String) -> [String] {
        var out: [String] = []
        let fm = FileManager.default
        func visit(_ full: String, _ rel: String) {
            guard let names = try? fm.contentsOfDirectory(atPath: full) else { return }
            for name in names {
                let childRel = rel.isEmpty ? name : rel + "/" + name
                let childFull = full + "/" + name
                out.append(childRel)
                // The item itself, not where a link leads (its attributes are not followed).
                if (try? fm.attributesOfItem(atPath: childFull)[.type] as? FileAttributeType) == .typeDirectory {
                    visit(childFull, childRel)
                }
            }
        }
        visit(dir.count > 1 && dir.hasSuffix("/") ? String(dir.dropLast()) : dir, "")
        return out
    }

    /// Repeated slashes made one, a trailing slash dropped ("/" stays).
    static func fixingSlashes(_ path: String) -> String {
        var out = ""
        var lastSlash = false
        for c in path {
            if c == "/" {
                if lastSlash { continue }
                lastSlash = true
            } else {
                lastSlash = false
            }
            out.append(c)
        }
        if out.count > 1, out.hasSuffix("/") { out.removeLast() }
        return out
    }

    /// The path without its last component: "/a/b" is "/a", "/a" is "/", "a" is "".
    static func deletingLastComponent(_ path: String) -> String {
        let p = fixingSlashes(path)
        if p == "/" || p.isEmpty { return p }
        guard let slash = p.lastIndex(of: "/") else { return "" }
        if slash == p.startIndex { return "/" }
        return String(p[..<slash])
    }

    static func appending(_ path: String, _ component: String) -> String {
        if component.isEmpty { return path }
        if path.isEmpty { return component }
        return path.hasSuffix("/") ? path + component : path + "/" + component
    }

    /// An absolute path standardized: "." and empty components dropped, ".." taking off the
    /// component before it, components that are symbolic links to absolute paths replaced by where
    /// they point.
    static func standardized(_ path: String) -> String {
        guard path.hasPrefix("/") else { return path }
        var resolved = "/"
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch component {
            case ".": break
            case "..": resolved = deletingLastComponent(resolved)
            default:
                resolved = appending(resolved, String(component))
                if let target = absoluteLinkTarget(resolved) { resolved = target }
            }
        }
        // Firmlink prefixes some systems add: taken off when the path without them exists too.
        for prefix in ["/private", "/var/automount"] where resolved.hasPrefix(prefix) && resolved != prefix {
            let stripped = String(resolved.dropFirst(prefix.count))
            if FileManager.default.fileExists(atPath: stripped) { resolved = stripped }
        }
        return resolved
    }

    /// Where a symbolic link ends up when it points at an absolute path (following chains of such
    /// links); nil when `path` is no link or points somewhere relative.
    private static func absoluteLinkTarget(_ path: String) -> String? {
        var current = path
        var followed = false
        for _ in 0..<32 {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: current) else { break }
            guard target.hasPrefix("/") else { return nil }
            current = target
            followed = true
        }
        return followed ? current : nil
    }
}

/// A mutual-exclusion lock (a pthread mutex) for the audit's worker threads.
final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
}
