import Decoders
import Wire

/// Whose doing a scan, a connection or a GATT exchange is. A phone's or computer's log holds more
/// than the app under test: the operating system scans and connects for itself (Find My, the
/// Bluetooth stack's auto-connect of bonded devices, the Linux kernel's background scan) and other
/// apps do too (Google Play services' Fast Pair and Nearby scans, companion apps). Only the app's
/// doings are findings; the rest is reported apart.
public struct ActivityOwner: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// The app under test, by configuration or evidence.
        case app
        /// The operating system's own work.
        case os
        /// Another app on the same device.
        case otherApp = "other-app"
        /// No evidence either way: judged as the app's, as on a capture of unknown platform.
        case unknown
    }

    public var kind: Kind
    /// Why, in one line: "an all-pass scan filter (an unfiltered foreground scan)".
    public var reason: String

    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    public static let unknown = ActivityOwner(.unknown, "no evidence of whose it is")

    /// Judged as the app's: its own, or nobody's known.
    public var isJudged: Bool { kind == .app || kind == .unknown }

    /// "the app", "the OS", "another app", "unknown".
    public var title: String {
        switch kind {
        case .app: return "the app"
        case .os: return "the OS"
        case .otherApp: return "another app"
        case .unknown: return "unknown"
        }
    }
}

/// How a connection came about: whose it is, and which scan last reported its peer before it opened.
public struct ConnectionOrigin: Sendable {
    public var owner: ActivityOwner
    /// The number of the scan that last reported the peer (`Scan.number`), when one did.
    public var foundIn: Int?

    public init(owner: ActivityOwner, foundIn: Int? = nil) {
        self.owner = owner
        self.foundIn = foundIn
    }
}

/// What a scan or a connection was attributed to, for the report's attribution list.
public struct Attribution: Sendable {
    public enum Subject: Sendable, Equatable {
        /// The capture's n-th scan (`Scan.number`) on an adapter.
        case scan(number: Int, adapter: UInt16)
        /// A connection by its number in the capture, with its peer.
        case connection(id: Int, peer: BDAddr?)
    }

    public var subject: Subject
    public var owner: ActivityOwner
    public var frame: FrameRef

    /// "scan #3", "connection #2 (00:1B:DC:07:32:A1)".
    public var label: String {
        switch subject {
        case .scan(let n, _): return "scan #" + String(n)
        case .connection(let id, let peer):
            return "connection #" + String(id) + (peer.map { " (" + $0.description + ")" } ?? "")
        }
    }
}
