import Decoders
import Wire

/// Tells whose each connection is, from how it was made: this host's connect command (to one
/// address, or to whatever on the Filter Accept List shows up first), the scan that found the
/// peer and that scan's owner, the app's configured devices, and services only the OS uses.
struct ConnectionOwners {
    /// The last LE (Extended) Create Connection per adapter: whether it was a background connect.
    private var creates = AdapterTable<Bool>()
    /// Each scan's owner and address filters, by number (the latest ones).
    private var scanOwners = BoundedMap<Int, (owner: ActivityOwner, addresses: [BDAddr])>(capacity: 1024)
    /// Connections whose owner the OS's own services settled.
    private var settled = BoundedMap<Int, Bool>(capacity: 4096)
    private let configured: [DeviceMatcher]

    init(configured: [DeviceMatcher]) { self.configured = configured }

    mutating func scanStarted(_ s: Scan) { scanOwners[s.number] = (s.owner, s.addressFilters) }

    /// A connect command. A background connect initiates from the Filter Accept List (filter policy
    /// 1) with a slow scan (interval of 1 s or more): the stack reconnecting bonded or remembered
    /// devices (Android's `autoConnect`, BlueZ's auto-connect). Android's newer stack makes direct
    /// connects through the accept list too, with a fast scan (60/30 ms): those are not background.
    mutating func create(adapter: UInt16, filterPolicy: UInt8, scanInterval: UInt16?) {
        creates[adapter] = filterPolicy & 1 == 1 && (scanInterval ?? 0) >= Self.slowScanInterval
    }

    /// 1 s in units of 0.625 ms.
    static let slowScanInterval: UInt16 = 0x0640

    /// Whose a connection that just opened is; `foundIn` and `foundByApp` are the scan that last
    /// reported the peer and the app's scan that last did (`Advertiser`).
    mutating func connected(_ c: Connection, foundIn found: Int?, foundByApp: Int?) -> ConnectionOrigin {
        let create = creates.removeValue(forKey: c.adapter)
        guard c.isCentral == true else {
            return ConnectionOrigin(owner: c.isCentral == false
                                    ? ActivityOwner(.unknown, "the peer connected to this host (peripheral role)") : .unknown,
                                    foundIn: found)
        }
        if let p = c.peer, configured.contains(.address(p)) {
            return ConnectionOrigin(owner: ActivityOwner(.app, "a configured device of the app"), foundIn: found)
        }
        if create == true {
            return ConnectionOrigin(owner: ActivityOwner(.os, """
                a background connect (Filter Accept List, slow scan): the stack reconnecting a known device \
                (autoConnect), not a connect after a scan
                """), foundIn: found)
        }
        // The app's own scan reported the peer (a stack may scan once more, for the connect itself).
        if let n = foundByApp {
            return ConnectionOrigin(owner: ActivityOwner(.app, "connected to what its scan #\(n) found"), foundIn: found)
        }
        if let n = found, let (o, addresses) = scanOwners[n] {
            switch o.kind {
            case .app: return ConnectionOrigin(owner: ActivityOwner(.app, "connected to what its scan #\(n) found"), foundIn: n)
            case .os, .otherApp:
                // Another client's scan reports every advertiser it lets through: only a filter on
                // the peer's own address says the connect was that client's.
                if let p = c.peer, addresses.contains(p) {
                    return ConnectionOrigin(owner: ActivityOwner(o.kind, "scan #\(n) filtered on the peer's address (" + o.reason + ")"),
                                            foundIn: n)
                }
                return ConnectionOrigin(owner: ActivityOwner(.unknown, "found by scan #\(n) of " + o.title + ", connected by whom is unknown"),
                                        foundIn: n)
            case .unknown:
                return ConnectionOrigin(owner: .unknown, foundIn: n)
            }
        }
        return ConnectionOrigin(owner: .unknown, foundIn: found)
    }

    /// Services that only the OS's own clients use: a connection that discovers or uses one is the OS's.
    static func systemService(_ u: BluetoothUUID) -> String? {
        // Find My's UUID as its two halves: a lazily made global would be a call on every PDU.
        if u.high == 0x7DFC9000_7D1C4951, u.low == 0x86AA8D97_28F8D66C {
            return "Apple's Find My service (7DFC9000-…): iOS checks its accessories itself"
        }
        switch u.uuid16 {
        case 0xFD44?: return "Apple's Find My accessory service (0xFD44): iOS checks its accessories itself"
        default: return nil
        }
    }

    /// The connection's owner when `u`, a service it discovered or used, settles it; once per connection.
    mutating func service(_ u: BluetoothUUID, on c: Connection) -> ActivityOwner? {
        guard let why = Self.systemService(u), !settled.contains(c.id) else { return nil }
        settled[c.id] = true
        return ActivityOwner(.os, why)
    }

    mutating func disconnected(_ c: Connection) { settled[c.id] = nil }
}
