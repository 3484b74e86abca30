import XCTest
@testable import Decoders
@testable import Report
import Wire

/// A rule's per-connection state hands its lists on to the next connection's: what is reused is
/// room, never content.
final class RuleStateReuseTests: XCTestCase {
    private struct Probe: ReusableState {
        var list: [Int] = []
        var flag = false

        mutating func adopt(_ old: inout Probe) { list.takeRoom(of: &old.list) }
    }

    func testNewStateTakesTheRoomOfOneKeptAndNothingElse() {
        var t = ConnectionTable<Probe>(capacity: 64)
        t.update(1, default: Probe()) { s in
            s.list.append(contentsOf: 0..<100)
            s.flag = true
        }
        let closed = t.removeValue(forKey: 1)!
        t.keep(closed)
        t.update(2, default: Probe()) { s in
            XCTAssertTrue(s.list.isEmpty)
            XCTAssertGreaterThanOrEqual(s.list.capacity, 100, "the kept list's room")
            XCTAssertFalse(s.flag, "fields other than lists are the new state's")
        }
        // With none kept, a state is made as before.
        t.update(3, default: Probe()) { s in
            XCTAssertTrue(s.list.isEmpty)
            XCTAssertEqual(s.list.capacity, 0)
        }
    }

    private struct Counted: Windowed {
        var id: Int
        var window: FirstWindow
    }

    /// The ring finds the same window as the last `need` events kept in a list.
    func testFirstWindowRingFindsTheWindowOfTheLastEvents() {
        var seed: UInt64 = 0x2545_F491_4F6C_DD1D
        func next(_ n: Int) -> Int {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int(seed >> 33) % n
        }
        for _ in 0..<500 {
            let need = 1 + next(6), window = Int64(1 + next(20))
            // Two windows share the rings, as two handles of one connection do.
            var list = WindowedList<Counted>(limit: 8)
            let other = list.index(where: { $0.id == 1 }, need: 3, at: FrameRef(number: 0, time: 0)) { Counted(id: 1, window: $0) }
            let me = list.index(where: { $0.id == 2 }, need: need, at: FrameRef(number: 0, time: 0)) { Counted(id: 2, window: $0) }
            var recent: [FrameRef] = [], expected: (Int, Int)?
            var time: Int64 = 0
            for n in 1...40 {
                time += Int64(next(8))
                let f = FrameRef(number: n, time: time)
                if next(10) == 0 {
                    list[me].window.restart()
                    if expected == nil { recent = [] }
                }
                _ = list.add(FrameRef(number: -n, time: time), to: other, need: 3, window: 0)
                let completed = list.add(f, to: me, need: need, window: window)
                var found = false
                if expected == nil {
                    recent.append(f)
                    if recent.count > need { recent.removeFirst() }
                    if recent.count == need, f.time - recent[0].time <= window {
                        expected = (recent[0].number, n)
                        found = true
                    }
                }
                XCTAssertEqual(completed, found)
            }
            XCTAssertEqual(list[me].window.found.map { [$0.first.number, $0.decisive.number] }, expected.map { [$0.0, $0.1] })
        }
    }

    /// Past its limit a list drops its oldest element, and the new one takes its ring.
    func testWindowedListDropsTheOldestForANewOne() {
        var list = WindowedList<Counted>(limit: 2)
        let at = FrameRef(number: 1, time: 0)
        for id in 1...3 { _ = list.index(where: { $0.id == id }, need: 4, at: at) { Counted(id: id, window: $0) } }
        XCTAssertEqual(list.elements.map(\.id), [2, 3])
        XCTAssertEqual(list.elements.map(\.window.base), [4, 0], "the third took the first's ring")
        XCTAssertEqual(list.index(where: { $0.id == 2 }, need: 4, at: at) { Counted(id: 9, window: $0) }, 0, "found, not added")
    }

    /// Connections one after the other, to different peers, alternately polling a value and reading
    /// it twice: each judged on its own reads, whatever the connection before it left behind.
    func testReusedStatesJudgeEachConnectionAfresh() {
        var s = EventStream()
        var t = 0.0
        for i in 0..<8 {
            let c = s.connection(handle: 0x0040 + UInt16(i), peer: 0xC0FF_EE00_0100 + UInt64(i))
            s.add(t, .connected(c))
            let reads = i % 2 == 0 ? 6 : 2
            for r in 0..<reads {
                s.add(t + 1 + Double(r), att(c, .local, 0x0A, .request, handle: 0x2A, characteristic: 0x2A19, properties: 0x12))
                s.add(t + 1.05 + Double(r), att(c, .remote, 0x0B, .response, length: 1))
            }
            // A characteristic discovery of a range the odd connections never use.
            if i % 2 == 1 {
                s.add(t + 8, att(c, .local, 0x08, .request, handle: 0x0040, end: 0x004F, type: 0x2803, service: 0x180D))
                s.add(t + 8.1, att(c, .remote, 0x09, .response, length: 14))
            }
            s.add(t + 10, .disconnected(c, reason: 0x13))
            t += 20
        }
        let polling = audit(s, only: "BLE301")
        XCTAssertEqual(polling.map(\.subject.connectionID), [1, 3, 5, 7])
        XCTAssertTrue(polling.allSatisfy { $0.message.contains("read 6 times in 5.0 s") }, polling.map(\.message).joined(separator: " | "))
        let discovery = audit(s, only: "BLE202")
        XCTAssertEqual(discovery.map(\.subject.connectionID), [2, 4, 6, 8])
        XCTAssertTrue(discovery.allSatisfy { $0.message.contains("over 1 service range") && $0.message.contains("0x0040-0x004F") },
                      discovery.map(\.message).joined(separator: " | "))
    }
}
