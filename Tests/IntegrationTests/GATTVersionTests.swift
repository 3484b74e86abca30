import XCTest
@testable import Decoders
import Foundation
import Wire

/// A peer's database kept per version: the Bumble capture whose peripheral changes its database
/// between two connections (Tests/Captures/gatt_db_change, a firmware update), and a Service
/// Changed indication replayed through a bearer.
final class GATTVersionTests: XCTestCase {
    static let battery = BluetoothUUID(uuid16: 0x180F), deviceInformation = BluetoothUUID(uuid16: 0x180A)
    static let rsc = BluetoothUUID(uuid16: 0x1814), userData = BluetoothUUID(uuid16: 0x181C)
    static let custom = BluetoothUUID("8D5A0001-6C3B-4E5F-9A1D-2B7C4E8F0A11")!

    func testDatabaseChangedBetweenConnections() throws {
        // Also as the audit decodes, keeping no ended connection: the first connection's bearer is
        // freed before the second's is made, and may be made at its address.
        for (file, keepEnded) in [("gatt_db_change.btsnoop", Dissector.maxEndedKept), ("gatt_db_change.pcap", Dissector.maxEndedKept),
                                  ("gatt_db_change.btsnoop", 0)] {
            let dissector = Dissector(keepEnded: keepEnded)
            try Fixtures.decode(Fixtures.captures + "/" + file, dissector: dissector) { _ in }
            dissector.finish()
            let dbs = dissector.gatt.databases.filter { !$0.database.isEmpty && $0.key.peer != nil }
            XCTAssertEqual(dbs.count, 1, file)
            guard let db = dbs.first?.database else { continue }
            let versions = db.versions
            XCTAssertEqual(versions.count, 2, "\(file), \(keepEnded) ended connections kept")
            guard versions.count == 2 else { continue }
            XCTAssertEqual(versions.map(\.span.firstFrame), [40, 124])
            XCTAssertEqual(versions.map(\.span.lastFrame), [117, 204])
            XCTAssertNil(versions[0].span.cause)
            XCTAssertEqual(versions[1].span.cause, .rediscovered(frame: 126))
            XCTAssertEqual(versions[0].database.serviceTree.map(\.uuid).contains(Self.battery), true)
            XCTAssertEqual(versions[1].database.serviceTree.map(\.uuid).contains(Self.battery), false)
            // Each version keeps the value read while it held: firmware 1.2.3, then 2.0.0.
            XCTAssertEqual(versions[0].database.lastValue(0x001E)?.bytes, Array("1.2.3".utf8))
            XCTAssertEqual(versions[1].database.lastValue(0x001A)?.bytes, Array("2.0.0".utf8))
            XCTAssertNil(versions[1].database.lastValue(0x001E))
            let changes = db.changesByVersion
            XCTAssertEqual(changes[0], [])
            XCTAssertEqual(changes[1], [
                GATTChange(kind: .moved, element: .service, uuid: Self.deviceInformation, service: nil, before: 0x0018, after: 0x0014),
                GATTChange(kind: .added, element: .service, uuid: Self.rsc, service: nil, before: nil, after: 0x001D),
                GATTChange(kind: .moved, element: .service, uuid: Self.custom, service: nil, before: 0x001F, after: 0x0021),
                GATTChange(kind: .moved, element: .service, uuid: Self.userData, service: nil, before: 0x0027, after: 0x0029),
                GATTChange(kind: .removed, element: .service, uuid: Self.battery, service: nil, before: 0x0014, after: nil),
                GATTChange(kind: .added, element: .characteristic, uuid: BluetoothUUID(uuid16: 0x2A27),
                           service: Self.deviceInformation, before: nil, after: 0x001C),
            ], file)
        }
    }

    func testBearersAreToldApartByTheirNumberWhileBothLive() {
        // Two connections to one server, both bearers alive at once: the second one's discovery is
        // a rediscovery, whatever their addresses; the first one discovering again is not.
        let server = GATTDatabase()
        let first = ATTBearer(local: GATTDatabase(), remote: server, serial: 1)
        let second = ATTBearer(local: GATTDatabase(), remote: server, serial: 2)
        server.touch(10, by: first)
        server.discovering(frame: 10, by: first)
        server.addService(start: 1, end: 5, uuid: Self.battery, primary: true)
        server.touch(12, by: first)
        server.discovering(frame: 12, by: first)
        server.addService(start: 1, end: 5, uuid: Self.battery, primary: true)
        server.settle()
        XCTAssertEqual(server.versions.count, 1, "the same bearer discovering again")
        server.touch(20, by: second)
        server.discovering(frame: 20, by: second)
        server.addService(start: 1, end: 5, uuid: Self.deviceInformation, primary: true)
        server.settle()
        XCTAssertEqual(server.versions.count, 2)
        XCTAssertEqual(server.versions.last?.span.cause, .rediscovered(frame: 20))
        XCTAssertEqual(server.versions.last?.database.serviceTree.map(\.uuid), [Self.deviceInformation])
    }

    /// `gatt` shows both versions with their frames and the change list, in text and JSON.
    func testGattCommandShowsVersions() throws {
        let path = Fixtures.captures + "/gatt_db_change.btsnoop"
        let text = try CLI.run(["gatt", path])
        XCTAssertEqual(text.status, 0)
        for line in ["Peer d4:ab:cd:00:00:01 (random): 2 database versions", "Version 1 (frames 40–117)",
                     "Version 2 (frames 124–204): discovery from frame 126 found a different database",
                     "Changes from version 1:", "  removed: Service 0x180F Battery Service at 0x0014",
                     "  added: Service 0x1814 Running Speed and Cadence at 0x001D",
                     "  moved: Service 0x180A Device Information from 0x0018 to 0x0014",
                     "  added: Characteristic 0x2A27 Hardware Revision String in 0x180A Device Information value 0x001C"] {
            XCTAssertTrue(text.out.contains(line + "\n"), line)
        }
        let json = try CLI.run(["gatt", "--format", "json", path])
        let root = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any]
        let db = (root?["databases"] as? [[String: Any]])?.first { $0["address"] as? String == "d4:ab:cd:00:00:01" }
        let versions = db?["versions"] as? [[String: Any]] ?? []
        XCTAssertEqual(versions.compactMap { $0["first_frame"] as? Int }, [40, 124])
        XCTAssertEqual((versions.last?["cause"] as? [String: Any])?["kind"] as? String, "rediscovered")
        let changes = versions.last?["changes"] as? [[String: Any]] ?? []
        XCTAssertEqual(changes.compactMap { $0["change"] as? String }, ["moved", "added", "moved", "moved", "removed", "added"])
        XCTAssertEqual(changes.first?["before"] as? Int, 0x18)
        // The database's own members are the last version.
        let services = (db?["primary_service"] as? [[String: Any]])?.compactMap { $0["uuid"] as? String } ?? []
        XCTAssertTrue(services.contains("0x1814") && !services.contains("0x180F"))
    }

    /// The same database found again on a later connection is one version.
    func testSameDatabaseOnALaterConnectionIsOneVersion() throws {
        let dissector = Dissector()
        try Fixtures.decode(Fixtures.captures + "/gatt_session.btsnoop", dissector: dissector) { _ in }
        dissector.finish()
        for (_, db) in dissector.gatt.databases { XCTAssertEqual(db.versions.count, 1) }
        let store = GATTStore<String>()
        let first = store.bearer(local: "local", remote: "peer")
        discover(first, frame: 10, services: [(0x0001, 0x0005, 0x1800), (0x0006, 0xFFFF, 0x180F)])
        let second = store.bearer(local: "local", remote: "peer")
        discover(second, frame: 50, services: [(0x0001, 0x0005, 0x1800), (0x0006, 0xFFFF, 0x180F)])
        store.finish()
        XCTAssertEqual(store.database(for: "peer").versions.count, 1)
    }

    /// Rediscoveries that find nothing new pass their databases on to the next one: each later
    /// rediscovery still compares with what the database held then, and finds only real changes.
    func testRediscoveriesAfterSameOnesSeeEachChange() {
        let store = GATTStore<String>()
        let a: [(UInt16, UInt16, UInt16)] = [(0x0001, 0x0005, 0x1800), (0x0006, 0xFFFF, 0x180F)]
        let b: [(UInt16, UInt16, UInt16)] = [(0x0001, 0x0005, 0x1800), (0x0006, 0xFFFF, 0x180D)]
        for (i, services) in [a, a, a, b, b, b, a].enumerated() {
            discover(store.bearer(local: "local", remote: "peer"), frame: 10 + 10 * i, services: services)
        }
        store.finish()
        let db = store.database(for: "peer")
        XCTAssertEqual(db.versions.map(\.span.firstFrame), [10, 40, 70])
        XCTAssertEqual(db.versions.map { $0.database.serviceTree.map(\.uuid.uuid16) }, [[0x1800, 0x180F], [0x1800, 0x180D], [0x1800, 0x180F]])
        XCTAssertEqual(db.changesByVersion.map(\.count), [0, 2, 2])
    }

    /// Values and type hints a rediscovery changes stay with the version it ends as they were
    /// when it began (the database's copy does not share those tables; what changed is saved
    /// once): a value set only during it belongs to the new version alone. A rediscovery that
    /// found the same database before it does not mix its saves into the next one's.
    func testValuesChangedDuringARediscoveryStayWithTheOldVersion() {
        let store = GATTStore<String>()
        let a: [(UInt16, UInt16, UInt16)] = [(0x0001, 0x0005, 0x1800), (0x0006, 0xFFFF, 0x180F)]
        let b: [(UInt16, UInt16, UInt16)] = [(0x0001, 0x0005, 0x1800), (0x0006, 0xFFFF, 0x180D)]
        func read(_ bearer: ATTBearer, _ h: UInt8, _ v: UInt8, frame: Int) {
            _ = bearer.process(ATTPDU([0x0A, h, 0x00][...]), from: .local, frame: frame, time: 0)
            _ = bearer.process(ATTPDU([0x0B, v][...]), from: .remote, frame: frame + 1, time: 0)
        }
        let first = store.bearer(local: "local", remote: "peer")
        discover(first, frame: 10, services: a)
        read(first, 0x07, 1, frame: 12)
        let second = store.bearer(local: "local", remote: "peer")
        discover(second, frame: 40, services: a)
        read(second, 0x07, 2, frame: 42)
        read(second, 0x07, 3, frame: 44)
        let third = store.bearer(local: "local", remote: "peer")
        discover(third, frame: 70, services: b)
        read(third, 0x07, 4, frame: 72)
        read(third, 0x07, 5, frame: 74)
        read(third, 0x09, 9, frame: 76)
        // Read Using Characteristic UUID (Battery Level): a type hint and a value for 0x000A.
        _ = third.process(ATTPDU([0x08, 0x06, 0x00, 0xFF, 0xFF, 0x19, 0x2A][...]), from: .local, frame: 78, time: 0)
        _ = third.process(ATTPDU([0x09, 0x03, 0x0A, 0x00, 0x50][...]), from: .remote, frame: 79, time: 0)
        store.finish()
        let db = store.database(for: "peer")
        let versions = db.versions
        XCTAssertEqual(versions.map(\.span.firstFrame), [10, 70])
        guard versions.count == 2 else { return }
        let old = versions[0].database, now = versions[1].database
        XCTAssertEqual(old.lastValue(0x07)?.bytes, [3], "the value when the version ended")
        XCTAssertEqual(old.lastValue(0x07)?.frame, 45)
        XCTAssertNil(old.lastValue(0x09))
        XCTAssertNil(old.lastValue(0x0A))
        XCTAssertNil(old.typeHints[0x0A])
        XCTAssertEqual(now.lastValue(0x07)?.bytes, [5])
        XCTAssertEqual(now.lastValue(0x09)?.bytes, [9])
        XCTAssertEqual(now.lastValue(0x0A)?.bytes, [0x50])
        XCTAssertEqual(now.typeHints[0x0A], BluetoothUUID(uuid16: 0x2A19))
    }

    /// A Service Changed indication, then rediscovery that finds another service there.
    func testServiceChangedIndication() {
        let store = GATTStore<String>()
        let b = store.bearer(local: "local", remote: "peer")
        discover(b, frame: 10, services: [(0x0001, 0x0005, 0x1801), (0x0006, 0xFFFF, 0x180F)])
        // The Service Changed characteristic: declaration 0x0002, value 0x0003, in the GATT service.
        _ = b.process(ATTPDU([0x08, 0x01, 0x00, 0x05, 0x00, 0x03, 0x28][...]), from: .local, frame: 20, time: 0)
        _ = b.process(ATTPDU([0x09, 0x07, 0x02, 0x00, 0x20, 0x03, 0x00, 0x05, 0x2A][...]), from: .remote, frame: 21, time: 0)
        _ = b.process(ATTPDU([0x1D, 0x03, 0x00, 0x06, 0x00, 0xFF, 0xFF][...]), from: .remote, frame: 30, time: 0)
        _ = b.process(ATTPDU([0x1E][...]), from: .local, frame: 31, time: 0)
        discover(b, frame: 40, services: [(0x0001, 0x0005, 0x1801), (0x0006, 0xFFFF, 0x180D)])
        store.finish()
        let db = store.database(for: "peer")
        XCTAssertEqual(db.versions.count, 2)
        XCTAssertEqual(db.versions[0].span.lastFrame, 30)
        XCTAssertEqual(db.versions[1].span.cause, .serviceChanged(frame: 30, start: 0x0006, end: 0xFFFF))
        XCTAssertEqual(db.changesByVersion[1], [
            GATTChange(kind: .added, element: .service, uuid: BluetoothUUID(uuid16: 0x180D), service: nil, before: nil, after: 0x0006),
            GATTChange(kind: .removed, element: .service, uuid: BluetoothUUID(uuid16: 0x180F), service: nil, before: 0x0006, after: nil),
        ])
    }

    /// The allocation-free test for a change agrees with the list of changes on random pairs of
    /// databases: few types and handles, so that services repeat a type, move, overlap a range
    /// discovered on the other side, and hold some, all or none of the other side's characteristics.
    func testChangesExistExactlyWhenBetweenListsSome() {
        var rng = SplitMix(seed: 0x5EED)
        var differing = 0
        for _ in 0..<20_000 {
            let old = Self.randomDatabase(&rng), new = Self.randomDatabase(&rng)
            // Half the pairs start from the same database, as a rediscovery mostly does.
            if rng.next() % 2 == 0 { Self.derive(new, from: old, &rng) }
            let listed = !GATTChange.between(old, new).isEmpty
            if listed { differing += 1 }
            XCTAssertEqual(GATTChange.exist(old, new), listed,
                           "old \(old.services) \(old.characteristics), new \(new.services) \(new.characteristics)")
        }
        // Both answers occur often enough to mean something.
        XCTAssertGreaterThan(differing, 2_000)
        XCTAssertLessThan(differing, 18_000)
    }

    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    static func randomDatabase(_ rng: inout SplitMix) -> GATTDatabase {
        let db = GATTDatabase()
        var start = UInt16(1 + rng.below(3))
        for _ in 0..<rng.below(5) {
            let end = start + UInt16(rng.below(6))
            db.services[start] = .init(uuid: BluetoothUUID(uuid16: UInt16(0x1800 + rng.below(3))), end: end, isPrimary: rng.below(5) > 0)
            for d in stride(from: start + 1, to: end, by: 2) where rng.below(3) > 0 {
                db.characteristics[d + 1] = .init(declaration: d, properties: [], uuid: BluetoothUUID(uuid16: UInt16(0x2A00 + rng.below(3))))
            }
            start = end + UInt16(1 + rng.below(3))
        }
        return db
    }

    /// `new` made from `old` with a few services or characteristics dropped, moved or retyped.
    static func derive(_ new: GATTDatabase, from old: GATTDatabase, _ rng: inout SplitMix) {
        new.services = old.services
        new.characteristics = old.characteristics
        for (start, s) in old.services {
            switch rng.below(8) {
            case 0: new.services[start] = nil
            case 1: new.services[start]?.end = s.end + 1
            case 2: new.services[start]?.uuid = BluetoothUUID(uuid16: 0x1802)
            default: break
            }
        }
        for (vh, c) in old.characteristics {
            switch rng.below(8) {
            case 0: new.characteristics[vh] = nil
            case 1: new.characteristics[vh]?.uuid = BluetoothUUID(uuid16: 0x2A02)
            case 2 where c.declaration > 1: new.characteristics[vh] = nil; new.characteristics[vh + 40] = .init(declaration: c.declaration, properties: [], uuid: c.uuid)
            default: break
            }
        }
    }

    /// Read By Group Type request and response for primary services (16-bit UUIDs).
    func discover(_ b: ATTBearer, frame: Int, services: [(UInt16, UInt16, UInt16)]) {
        _ = b.process(ATTPDU([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28][...]), from: .local, frame: frame, time: 0)
        var rsp: [UInt8] = [0x11, 6]
        for (s, e, u) in services { rsp += [UInt8(s & 0xFF), UInt8(s >> 8), UInt8(e & 0xFF), UInt8(e >> 8), UInt8(u & 0xFF), UInt8(u >> 8)] }
        _ = b.process(ATTPDU(rsp[...]), from: .remote, frame: frame + 1, time: 0)
    }
}
