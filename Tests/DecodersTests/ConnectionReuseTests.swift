import XCTest
@testable import Decoders
import Wire

/// A pass that keeps no ended connection makes an ended one the next (`Connection.reuse`): the
/// storage is kept, and none of the state.
final class ConnectionReuseTests: XCTestCase {
    /// Every stored property of a connection made new equals a fresh connection's, but the storage
    /// it keeps on purpose. A new property fails the count: reset it in `reuse` and count it here.
    func testAReusedConnectionEqualsAFreshOne() throws {
        let used = Connection(id: 1, adapter: 0, handle: 0x40, isLE: true, frame: 1, time: 0)
        used.peer = BDAddr(0xC0FF_EE00_0001)
        used.peerAddressType = 1
        used.isCentral = true
        used.overTheAir = true
        used.interval = 24
        used.latency = 2
        used.supervisionTimeout = 72
        used.createdFrame = 1
        used.createdTime = 5
        used.endedFrame = 9
        used.endedTime = 90
        used.endReason = 0x13
        used.encrypted = true
        used.encryptedFrame = 4
        used.updates.append((frame: 3, time: 30, interval: 6, latency: 0, timeout: 100))
        used.lastPacketFrame = 8
        used.linkGaps = 2
        used.unfinishedPDUs = 1
        used.lost = true
        used.skippingTruncated = (true, true)
        used.att = GATTStore<GATTServer>().bearer(local: .local(adapter: 0), remote: .peer(used.peerKey))
        used.eatt[0x41] = used.att
        _ = used.channels
        used.pairing.feed(SMPPDU([0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07][...]), from: .local, frame: 2)

        used.reuse(id: 2, adapter: 1, handle: 0x41, isLE: false, frame: 10, time: 100)
        let fresh = Connection(id: 2, adapter: 1, handle: 0x41, isLE: false, frame: 10, time: 100)

        let kept: Set<String> = ["pairingKept", "spareBearer", "reassembly"]
        let a = Mirror(reflecting: used).children, b = Mirror(reflecting: fresh).children
        XCTAssertEqual(a.count, 32, "a stored property was added or removed: reset it in Connection.reuse")
        for (x, y) in zip(a, b) where !kept.contains(x.label ?? "") {
            XCTAssertEqual(String(describing: x.value), String(describing: y.value), x.label ?? "?")
        }
        XCTAssertEqual(used.pairing.outcomes.count, 0)
        XCTAssertEqual(used.pairing.started, 0)
        XCTAssertNotNil(used.spareBearer, "the bearer nothing else held is kept for the next ATT PDU")
    }

    /// The same for a bearer: every stored property as a fresh one's, but the store's shared slot.
    func testAReusedBearerEqualsAFreshOne() {
        let store = GATTStore<GATTServer>()
        let used = store.bearer(local: .local(adapter: 0), remote: .peer(PeerKey(address: BDAddr(1), type: 0, connection: 0)))
        used.lossy = true
        used.keepsValues = false
        used.judgesValues = true
        _ = used.process(ATTPDU([0x02, 0xF7, 0x00][...]), from: .local, frame: 1, time: 0)   // Exchange MTU Request
        _ = used.process(ATTPDU([0x03, 0xF7, 0x00][...]), from: .remote, frame: 2, time: 1)  // Exchange MTU Response
        _ = used.process(ATTPDU([0x0A, 0x03, 0x00][...]), from: .local, frame: 3, time: 2)   // Read Request, unanswered
        _ = used.process(ATTPDU([0x16, 0x03, 0x00, 0x00, 0x00, 0x01][...]), from: .local, frame: 4, time: 3)  // Prepare Write
        _ = used.finish(at: 60_000_000_000)
        XCTAssertEqual(used.mtu, 247)
        XCTAssertFalse(used.timedOut.isEmpty)

        let peer = GATTServer.peer(PeerKey(address: BDAddr(2), type: 1, connection: 0))
        let reused = store.bearer(local: .local(adapter: 0), remote: peer, mtu: 64, reusing: used)
        let fresh = store.bearer(local: .local(adapter: 0), remote: peer, mtu: 64)
        XCTAssertTrue(reused === used)
        let a = Mirror(reflecting: reused).children, b = Mirror(reflecting: fresh).children
        XCTAssertEqual(a.count, 17, "a stored property was added or removed: reset it in ATTBearer.reuse")
        for (x, y) in zip(a, b) where x.label != "serial" {
            XCTAssertEqual(String(describing: x.value), String(describing: y.value), x.label ?? "?")
        }
        XCTAssertTrue(reused.remote === fresh.remote, "the new peer's database")
        XCTAssertEqual(reused.serial + 1, fresh.serial, "a serial of its own, as a new bearer has")
    }

    /// Through the dissector: the second connection is the first one's object, with its own id,
    /// handle and role, the default ATT_MTU, no pairing and only its own pending request.
    func testTheNextConnectionTakesNoneOfTheEndedOnesState() throws {
        let dissector = Dissector(keepEnded: 0)
        var number = 0
        func frame(_ kind: HCIPacketType, _ dir: Direction, _ bytes: [UInt8]) -> Decoded {
            number += 1
            return dissector.dissect(Packet(number: number, timestamp: Int64(number) * 1_000_000, direction: dir,
                                            adapter: 0, kind: .hci(kind), payload: Bytes(bytes)))
        }
        func connect(_ handle: UInt8, role: UInt8, peer last: UInt8) -> Decoded {
            frame(.event, .received, [0x3E, 19, 0x01, 0x00, handle, 0x00, role, 0x01, last, 0, 0, 0, 0, 0xC0,
                                      0x18, 0x00, 0x00, 0x00, 0x48, 0x00, 0x00])
        }
        func l2cap(_ handle: UInt8, _ dir: Direction, cid: UInt8, _ pdu: [UInt8]) -> Decoded {
            frame(.aclData, dir, [handle, 0x20, UInt8(pdu.count + 4), 0, UInt8(pdu.count), 0, cid, 0] + pdu)
        }

        // Held weakly and in a scope: a strong reference the test kept would keep the ended
        // connection from being made new (and an identifier could match a new object at its address).
        weak var firstObject: Connection?
        try {
            let first = try XCTUnwrap(connect(0x40, role: 0, peer: 1).connection)
            _ = l2cap(0x40, .sent, cid: 4, [0x02, 0xF7, 0x00])          // Exchange MTU Request, 247
            _ = l2cap(0x40, .received, cid: 4, [0x03, 0xF7, 0x00])      // Exchange MTU Response, 247
            XCTAssertEqual(first.att?.mtu, 247)
            _ = l2cap(0x40, .sent, cid: 6, [0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07])  // Pairing Request
            _ = l2cap(0x40, .sent, cid: 4, [0x0A, 0x03, 0x00])          // Read Request, never answered
            XCTAssertEqual(first.pairing.outcomes.count, 1)
            firstObject = first
        }()
        _ = frame(.event, .received, [0x05, 0x04, 0x00, 0x40, 0x00, 0x13])

        let second = try XCTUnwrap(connect(0x41, role: 1, peer: 2).connection)
        XCTAssertTrue(second === firstObject, "the ended connection was made new")
        XCTAssertEqual(second.id, 2)
        XCTAssertEqual(second.handle, 0x41)
        XCTAssertEqual(second.isCentral, false)
        XCTAssertEqual(second.peer, BDAddr(0xC000_0000_0002))
        XCTAssertEqual(second.createdFrame, number)
        XCTAssertNil(second.endedFrame)
        XCTAssertTrue(second.pairing.outcomes.isEmpty)
        XCTAssertNil(second.att)

        let read = l2cap(0x41, .received, cid: 4, [0x0A, 0x05, 0x00])  // the peer's Read Request
        let b = try XCTUnwrap(read.connection?.att)
        XCTAssertEqual(b.mtu, ATTBearer.defaultMTU)
        XCTAssertNil(b.localRxMTU)
        XCTAssertEqual(b.pending.local.count, 0, "the first connection's request is not this one's")
        XCTAssertEqual(b.pending.remote.map(\.handle), [0x0005])
    }

    /// A peer is named by its address and type, or by the connection it was seen in.
    func testPeerKeyText() {
        let a = BDAddr(0xD4AB_CD00_0001)
        XCTAssertEqual(PeerKey(address: a, type: 1, connection: 3).description, a.description + " (random)")
        XCTAssertEqual(PeerKey(address: a, type: 0, connection: 3).description, a.description + " (public)")
        XCTAssertEqual(PeerKey(address: a, type: nil, connection: 3).description, a.description)
        XCTAssertEqual(PeerKey(address: nil, type: nil, connection: 3).description, "connection #3 (address unknown)")
    }
}
