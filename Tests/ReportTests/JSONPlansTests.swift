import XCTest
import Decoders
import Wire
@testable import Report

/// A layer's JSON replayed from a plan (`JSONPlans`) is what the member walker writes for it:
/// lists of one shape with other values, and lists whose labels are the same but whose values
/// are of other kinds (which change the members the walker writes), interleaved so that every
/// plan is replayed and some are recorded again after others took their place.
final class JSONPlansTests: XCTestCase {
    private func written(_ body: (Output) -> Void) throws -> String {
        let path = NSTemporaryDirectory() + "blesniff-plans-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let out = try XCTUnwrap(Output(path: path))
        body(out)
        out.close()
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    /// The lists: `i` varies the values, never the labels.
    private func lists(_ i: UInt64) -> [(String, (FieldList) -> Void)] {
        let heartRate = BluetoothUUID(uuid16: 0x180D), unnamed = BluetoothUUID(uuid16: 0xFEFF &- UInt16(i % 3))
        return [
            ("ATT", { l in
                l.add("Handle", .uint(i, hex: 4))
                l.add("Value", .bytes([UInt8(i & 0xFF), 1, 2][...]))
            }),
            // The same labels with a value of another kind: a scalar, a name, nothing.
            ("ATT", { l in
                l.add("Handle", .named(i, hex: 4, FieldLabel("Handle \(i % 4)")))
                l.add("Value", .none)
            }),
            ("ATT", { l in
                l.add("Handle", .none)
                l.add("Value", .text("value \(i)"))
            }),
            // Repeated labels: one array.
            ("L2CAP", { l in
                for n in 0..<(2 + Int(i % 2)) { l.add("CID", .uint(i &+ UInt64(n), hex: 4)) }
                l.add("Length", .uint(i, hex: 0))
            }),
            // A UUID with a child the value's own members hold when the UUID is named.
            ("GATT", { l in
                l.begin("UUID", .uuid(i % 2 == 0 ? heartRate : unnamed))
                l.add("Name", .text("a name"))
                l.add("Extra", .bool(i % 2 == 0))
                l.end()
            }),
            ("GATT", { l in
                l.begin("UUID", .uuid(i % 2 == 1 ? heartRate : unnamed))
                l.add("Name", .text("a name"))
                l.add("Extra", .bool(i % 2 == 0))
                l.end()
            }),
            // Groups, a name with children, flags, a quantity, an error, an empty object.
            ("HCI Event", { l in
                l.begin("Event Code", .named(0x3E, hex: 2, "LE Meta"))
                l.add("Value", .uint(i, hex: 0))
                l.add("Name", .text("kept"))
                l.end()
                l.begin("Report", .none)
                l.add("Flags", .flags(i & 7, hex: 2, SetBitNames(i & 7, in: ["a", "b", "c"])))
                l.add("Interval", .quantity(i, hex: 4, Double(i) * 1.25, unit: "ms"))
                l.add("Empty", .none)
                l.end()
                if i % 3 == 0 { l.add("Malformed", .error(.reason("short \(i)"))) }
            }),
        ]
    }

    func testReplayedLayersAreWhatTheWalkWrites() throws {
        var expected = ""
        var order: [(UInt64, Int)] = []
        for i in 0..<40 as Range<UInt64> {
            // Interleaved, and now and then one list repeated at once.
            for k in 0..<7 { order.append((i, (k &* 3 &+ Int(i)) % 7)) }
            order.append((i, Int(i % 7)))
        }
        for (i, k) in order {
            let (layer, build) = lists(i)[k]
            let list = FieldList()
            build(list)
            // A fresh output each: no plan, the walk alone.
            expected += try written { FieldRendering.writeJSONMembers(layer: layer, list, to: $0) } + "\n"
        }
        let replayed = try written { out in
            for (i, k) in order {
                let (layer, build) = lists(i)[k]
                let list = FieldList()
                build(list)
                FieldRendering.writeJSONMembers(layer: layer, list, to: out)
                out.write(byte: 10)
            }
        }
        XCTAssertEqual(replayed, expected)
        // The named UUID's child "name" is its own member; the unnamed one's child keeps it.
        XCTAssertTrue(expected.contains(#""uuid":"0x180D","uuid128":"0000180D-0000-1000-8000-00805F9B34FB","name":"Heart Rate","extra""#), expected)
        XCTAssertTrue(expected.contains(#""name":"a name""#), expected)
    }

    /// A plan's storage grows past the room it was made with, one value or a run at a time, and
    /// keeps what it held; emptied, it starts again from the first place.
    func testPlainListGrowsAndKeepsItsValues() {
        var list = PlainList<UInt8>(capacity: 2)
        defer { list.deallocate() }
        var expected: [UInt8] = []
        for i in 0..<300 {
            if i % 7 == 0 {
                let run = (0..<UInt8(i % 23)).map { $0 &+ UInt8(i & 0xFF) }
                run.withUnsafeBufferPointer { list.append(contentsOf: $0) }
                expected += run
            } else {
                list.append(UInt8(i & 0xFF))
                expected.append(UInt8(i & 0xFF))
            }
        }
        XCTAssertEqual(list.count, expected.count)
        XCTAssertEqual((0..<list.count).map { list[$0] }, expected)
        list.removeAll()
        XCTAssertEqual(list.count, 0)
        list.append(42)
        XCTAssertEqual(list.count, 1)
        XCTAssertEqual(list[0], 42)
    }

    /// More shapes than the sets hold (128 sets of eight): plans are evicted and recorded again,
    /// and every list replayed from a plan is still what the walk writes.
    func testEvictedPlansReplayAsTheWalkWrites() throws {
        func build(_ n: Int, _ v: Int, _ i: UInt64) -> FieldList {
            let list = FieldList()
            for j in 0..<n { list.add("Field", j == v % n ? .none : .uint(i &+ UInt64(j), hex: j % 3)) }
            return list
        }
        var order: [(Int, Int, UInt64)] = []
        for round in 0..<2 as Range<UInt64> {
            for n in 1...200 { for v in 0..<6 { order.append((n, v, round)) } }
        }
        var expected = ""
        for (n, v, i) in order {
            expected += try written { FieldRendering.writeJSONMembers(layer: "ATT", build(n, v, i), to: $0) } + "\n"
        }
        let replayed = try written { out in
            for (n, v, i) in order {
                FieldRendering.writeJSONMembers(layer: "ATT", build(n, v, i), to: out)
                out.write(byte: 10)
            }
        }
        XCTAssertEqual(replayed, expected)
    }
}
