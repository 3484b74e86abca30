import Glibc
import Wire

/// Giving up root once the capture source is open: files are then created, and untrusted
/// frames decoded, as an ordinary user.
public enum Privileges {
    /// The account to run as.
    public struct Identity: Equatable, Sendable {
        public var uid: uid_t
        public var gid: gid_t
        /// Login name when known (its supplementary groups are taken from the group database).
        public var name: String?

        public init(uid: uid_t, gid: gid_t, name: String? = nil) {
            self.uid = uid
            self.gid = gid
            self.name = name
        }
    }

    /// Whom to become: `user` (a login name or numeric uid) when given, otherwise the user who ran
    /// `sudo` (SUDO_UID, SUDO_GID). nil when there is nothing to drop: not running as root, or
    /// root not through sudo.
    /// - Throws: an unknown user, or `user` given without root.
    public static func target(user: String?, environment: (String) -> String? = Privileges.environment) throws(CaptureError) -> Identity? {
        if let user {
            guard let id = lookUp(user) else {
                throw CaptureError(.permission, file: "--user", "no user named \(user)")
            }
            if geteuid() != 0 {
                guard id.uid == geteuid() else {
                    throw CaptureError(.permission, file: "--user", "switching to \(user) needs root")
                }
                return nil
            }
            return id.uid == 0 ? nil : id
        }
        guard geteuid() == 0,
              let u = environment("SUDO_UID").flatMap({ UInt32($0) }), u != 0 else { return nil }
        let g = environment("SUDO_GID").flatMap { UInt32($0) }
        let pw = getpwuid(u)
        let name = pw.flatMap { $0.pointee.pw_name.map { String(cString: $0) } }
        guard let gid = g ?? pw.map({ $0.pointee.pw_gid }) else {
            throw CaptureError(.permission, file: "SUDO_UID", "no group known for uid \(u); give --user")
        }
        return Identity(uid: u, gid: gid, name: name)
    }

    public static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// A login name or a numeric uid from the password database.
    static func lookUp(_ user: String) -> Identity? {
        var pw = getpwnam(user)
        if pw == nil, let n = UInt32(user) { pw = getpwuid(n) }
        guard let p = pw?.pointee else { return nil }
        return Identity(uid: p.pw_uid, gid: p.pw_gid, name: p.pw_name.map { String(cString: $0) })
    }

    /// Becomes `id` for good: supplementary groups, then group, then user (the order matters:
    /// once the uid is gone the others can no longer be changed), then checks that it took and
    /// that root cannot be regained.
    public static func drop(to id: Identity) throws(CaptureError) {
        func fail(_ what: String) -> CaptureError {
            CaptureError(.permission, file: "privileges", "\(what) failed: \(String(cString: strerror(errno)))")
        }
        if let name = id.name {
            guard initgroups(name, id.gid) == 0 else { throw fail("initgroups") }
        } else {
            var g = id.gid
            guard setgroups(1, &g) == 0 else { throw fail("setgroups") }
        }
        guard setgid(id.gid) == 0 else { throw fail("setgid") }
        guard setuid(id.uid) == 0 else { throw fail("setuid") }
        guard getuid() == id.uid, geteuid() == id.uid, getgid() == id.gid, getegid() == id.gid else {
            throw CaptureError(.permission, file: "privileges", "still running with other ids after dropping them")
        }
        if id.uid != 0, setuid(0) == 0 {
            throw CaptureError(.permission, file: "privileges", "root could be regained after dropping it")
        }
    }
}
