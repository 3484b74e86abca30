import Decoders
import Wire

/// The scan filters Android's stack programs into the controller with its vendor command LE
/// Advertising Packet Content Filter (APCF, opcode 0xFD57). Android merges every client's scan into
/// one controller scan; each client's filters get an index of their own, so the indices in force
/// when a scan starts tell whose scan it is. Layout (AOSP's vendor specification): sub-command,
/// action (0 add, 1 delete, 2 clear), filter index, then the sub-command's data.
struct AndroidScanFilters {
    static let opcode: UInt16 = 0xFD57

    /// APCF sub-commands.
    enum SubCommand: UInt8 {
        case enable = 0x00, featureSelection = 0x01, address = 0x02, serviceUUID = 0x03,
             solicitationUUID = 0x04, localName = 0x05, manufacturerData = 0x06, serviceData = 0x07
    }

    /// One filter index and what it matches.
    struct Filter: Equatable {
        /// Feature selection bits of the filter's parameters; 0 is the all-pass filter Android sets
        /// for a client that scans with no filter (a foreground app's unfiltered scan).
        var features: UInt16?
        var uuids: [BluetoothUUID] = []
        var addresses: [BDAddr] = []
        /// Company identifier and the first data octets of a manufacturer-data filter.
        var manufacturer: [(company: UInt16, prefix: [UInt8])] = []
        var names: [String] = []

        static func == (a: Filter, b: Filter) -> Bool {
            a.features == b.features && a.uuids == b.uuids && a.addresses == b.addresses && a.names == b.names
                && a.manufacturer.elementsEqual(b.manufacturer) { $0.company == $1.company && $0.prefix == $1.prefix }
        }

        var isAllPass: Bool { features == 0 }
    }

    /// Filters by index, at most `cap` (the controller's own limit is about 16-32).
    private(set) var filters: [UInt8: Filter] = [:]
    static let cap = 64

    var isEmpty: Bool { filters.isEmpty }

    /// The addresses the filters name, at most 8.
    var addresses: [BDAddr] { Array(filters.values.flatMap(\.addresses).prefix(8)) }

    /// Takes one APCF command's parameters.
    mutating func command(_ params: Bytes) {
        var r = ByteReader(params)
        guard let sub = try? r.u8(), let command = SubCommand(rawValue: sub), command != .enable,
              let action = try? r.u8() else { return }
        if action == 2 {
            // Clear: for feature selection every filter, otherwise that index's data of this kind.
            if command == .featureSelection { filters.removeAll() }
            return
        }
        guard let index = try? r.u8() else { return }
        if action == 1 {
            if command == .featureSelection { filters[index] = nil }
            return
        }
        guard action == 0, filters[index] != nil || filters.count < Self.cap else { return }
        var f = filters[index] ?? Filter()
        switch command {
        case .featureSelection:
            f.features = try? r.u16()
        case .address:
            if let a = try? r.address() { f.addresses.append(a) }
        case .serviceUUID, .solicitationUUID:
            // The UUID, then a mask of the same width.
            let width = r.remaining / 2
            if [2, 4, 16].contains(width), let u = try? r.uuid(width: width) { f.uuids.append(u) }
        case .serviceData:
            // A 16-bit service UUID and data, then a mask of the same length.
            if r.remaining >= 4, let u = try? r.uuid(width: 2) { f.uuids.append(u) }
        case .manufacturerData:
            let half = r.remaining / 2
            if half >= 2, let c = try? r.u16() {
                var prefix: [UInt8] = []
                for _ in 0..<min(half - 2, 4) { if let b = try? r.u8() { prefix.append(b) } }
                f.manufacturer.append((c, prefix))
            }
        case .localName:
            f.names.append(String(decoding: r.rest(), as: UTF8.self))
        case .enable:
            break
        }
        filters[index] = f
    }

    /// Whose scan the filters in force show: any all-pass filter is an app's unfiltered foreground
    /// scan; filters that all name Google Play services' or the OS's own services are theirs;
    /// address filters alone are an app reconnecting its known devices; anything else an app with
    /// filters (unknown which). `configured` names the app's own devices and services.
    func owner(configured: [DeviceMatcher]) -> ActivityOwner {
        guard !filters.isEmpty else { return .unknown }
        let all = filters.keys.sorted().map { filters[$0]! }
        if !configured.isEmpty, let f = all.first(where: { Self.matches($0, configured) }) {
            return ActivityOwner(.app, "scan filter " + Self.describe(f) + " names a configured device of the app")
        }
        if all.contains(where: \.isAllPass) {
            return ActivityOwner(.app, "an all-pass scan filter (a foreground scan with no filter)")
        }
        // Every filter another client's: Google Play services' or the OS's services, or addresses
        // only (a companion app reconnecting the devices it knows).
        var clients: [(client: String, what: [String])] = []
        for f in all {
            guard let who = Self.system(f) ?? (Self.addressesOnly(f) ? (Self.companion, "addresses") : nil) else {
                clients = []
                break
            }
            if let i = clients.firstIndex(where: { $0.client == who.client }) {
                if !clients[i].what.contains(who.what) { clients[i].what.append(who.what) }
            } else {
                clients.append((who.client, [who.what]))
            }
        }
        if !clients.isEmpty {
            return ActivityOwner(.otherApp, "scan filters of " + clients.map { $0.client + " (" + $0.what.joined(separator: ", ") + ")" }
                .joined(separator: " and "))
        }
        if !configured.isEmpty {
            return ActivityOwner(.otherApp, "scan filters " + all.prefix(3).map(Self.describe).joined(separator: ", ")
                                 + " name none of the app's configured devices")
        }
        return ActivityOwner(.unknown, "scan filters " + all.prefix(3).map(Self.describe).joined(separator: ", ")
                             + ": an app's filtered scan, which app is unknown")
    }

    static let companion = "an app reconnecting devices it knows"

    static func addressesOnly(_ f: Filter) -> Bool {
        !f.isAllPass && !f.addresses.isEmpty && f.uuids.isEmpty && f.manufacturer.isEmpty && f.names.isEmpty
    }

    /// The OS's or Google Play services' client a filter belongs to, when it names only their services.
    static func system(_ f: Filter) -> (client: String, what: String)? {
        if f.isAllPass || !f.addresses.isEmpty || !f.names.isEmpty { return nil }
        var who: (client: String, what: String)?
        for u in f.uuids {
            guard let s = u.uuid16.flatMap({ systemServices[$0] }) else { return nil }
            who = s
        }
        for m in f.manufacturer {
            guard let s = systemManufacturer(m.company, m.prefix) else { return nil }
            who = s
        }
        return who
    }

    static let gms = "Google Play services"

    /// 16-bit service UUIDs that only the OS's or Google Play services' own scans look for (Google
    /// LLC's member UUIDs in the Assigned Numbers, and the services they run on them).
    static let systemServices: [UInt16: (client: String, what: String)] = [
        0xFE2C: (gms, "Fast Pair 0xFE2C"),
        0xFEAA: (gms, "Eddystone 0xFEAA"),
        0xFEF3: (gms, "0xFEF3"),
        0xFEA0: (gms, "0xFEA0"),
        0xFE9F: (gms, "0xFE9F"),
        0xFCF1: (gms, "0xFCF1"),
        0xFCB1: (gms, "0xFCB1"),
        0xFFF6: (gms, "Matter commissioning 0xFFF6"),
        0xFD6F: ("the OS", "Exposure Notifications 0xFD6F"),
    ]

    /// Manufacturer-data filters of the OS's own clients: Google's company data, and iBeacon
    /// frames (Apple's company 0x004C, type 0x02 0x15), which Google Play services' Nearby watches.
    static func systemManufacturer(_ company: UInt16, _ prefix: [UInt8]) -> (client: String, what: String)? {
        switch company {
        case 0x00E0: return (gms, "Google manufacturer data")
        case 0x004C where prefix.starts(with: [0x02, 0x15]): return (gms, "iBeacon")
        default: return nil
        }
    }

    static func matches(_ f: Filter, _ configured: [DeviceMatcher]) -> Bool {
        configured.contains { m in
            switch m {
            case .address(let a): return f.addresses.contains(a)
            case .service(let u): return f.uuids.contains(u)
            case .name(let p): return f.names.contains { Glob.match(p, $0) }
            }
        }
    }

    static func describe(_ f: Filter) -> String {
        if f.isAllPass { return "all-pass" }
        var parts: [String] = f.uuids.map(\.description) + f.addresses.map(\.description) + f.names.map { "\"" + $0 + "\"" }
        parts += f.manufacturer.map { "company " + Hex.prefixed($0.company, width: 4) }
        return parts.isEmpty ? "(empty)" : parts.joined(separator: " ")
    }
}
