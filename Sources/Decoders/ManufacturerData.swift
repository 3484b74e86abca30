import Wire

/// Vendor formats carried in Manufacturer Specific Data and Service Data.
public enum ManufacturerData {
    public static let apple: UInt16 = 0x004C
    public static let microsoft: UInt16 = 0x0006

    /// A short name of the vendor format, for summaries ("iBeacon", "overflow area").
    public static func kind(company: UInt16, data: Bytes) -> String? {
        switch company {
        case apple:
            guard let t = data.byte(0) else { return nil }
            return AppleContinuity.name(t)
        case microsoft:
            guard let t = data.byte(0) else { return nil }
            return Microsoft.scenarioNames[t]
        default: return nil
        }
    }

    /// Decoded fields of the data after the company identifier, when the format is known.
    public static func fields(company: UInt16, data: Bytes) -> [Field] {
        FieldList.build { writeFields(company: company, data: data, to: $0) }
    }

    /// Sends `fields(company:data:)` to `out`, field by field: phones' advertisements are mostly
    /// Apple's and Microsoft's.
    static func writeFields(company: UInt16, data: Bytes, to out: FieldSink) {
        switch company {
        case apple: AppleContinuity.write(data, to: out)
        case microsoft: Microsoft.write(data, to: out)
        default: break
        }
    }
}

/// Apple iBeacon: company 0x004C, type 0x02, length 0x15, proximity UUID, major, minor,
/// measured power (RSSI at 1 m). UUID, major and minor are big-endian.
public struct IBeacon: Sendable, Equatable {
    public let proximityUUID: BluetoothUUID
    public let major: UInt16
    public let minor: UInt16
    public let measuredPower: Int8

    public init?(company: UInt16, data: Bytes) {
        guard company == ManufacturerData.apple, data.count >= 23, data.byte(0) == 0x02, data.byte(1) == 0x15 else { return nil }
        var r = ByteReader(data.from(2))
        guard let h = try? r.uint(width: 8).byteSwapped, let l = try? r.uint(width: 8).byteSwapped,
              let major = try? r.u16be(), let minor = try? r.u16be(), let p = try? r.i8() else { return nil }
        proximityUUID = BluetoothUUID(high: h, low: l)
        self.major = major
        self.minor = minor
        measuredPower = p
    }

    public var fields: [Field] { FieldList.build(writeFields) }

    func writeFields(to out: FieldSink) {
        ADValue.writeUUID("Proximity UUID", proximityUUID, to: out)
        out.add("Major", .uint(UInt64(major), hex: 0))
        out.add("Minor", .uint(UInt64(minor), hex: 0))
        out.add("Measured Power", .signed(Int64(measuredPower), unit: "dBm"))
    }
}

/// Apple's advertising "overflow area" (company 0x004C, type 0x01, no length byte, then a
/// 16-byte bitmap). iOS hashes each service UUID that does not fit the packet to one of 128 bits:
/// expand the UUID to 128 bits on the base UUID, take CRC-8 (polynomial 0x09, initial value 0,
/// not reflected, no final XOR) over its 16 bytes big-endian, and set bit `crc & 0x7F`, counting
/// bit b as mask 1 << (b & 7) of byte b >> 3. The hash is not reversible and different UUIDs share
/// bits, so a bitmap can only be said to be consistent with candidate UUIDs.
public struct OverflowArea: Sendable, Equatable {
    /// The 16 bitmap bytes as two words: byte i is bits 8i...8i+7.
    public let low: UInt64
    public let high: UInt64

    public init?(company: UInt16, data: Bytes) {
        guard company == ManufacturerData.apple, data.byte(0) == 0x01, data.count >= 17 else { return nil }
        self.init(bitmap: data.from(1).prefix(16))
    }

    /// From the 16 bitmap bytes.
    public init?(bitmap: Bytes) {
        guard bitmap.count == 16 else { return nil }
        var lo: UInt64 = 0, hi: UInt64 = 0
        for i in 0..<8 {
            lo |= UInt64(bitmap.byte(i) ?? 0) << UInt64(8 * i)
            hi |= UInt64(bitmap.byte(8 + i) ?? 0) << UInt64(8 * i)
        }
        low = lo
        high = hi
    }

    public init(bits: [Int]) {
        var lo: UInt64 = 0, hi: UInt64 = 0
        for b in bits where (0..<128).contains(b) {
            if b < 64 { lo |= 1 << UInt64(b) } else { hi |= 1 << UInt64(b - 64) }
        }
        low = lo
        high = hi
    }

    public func contains(bit: Int) -> Bool {
        guard (0..<128).contains(bit) else { return false }
        return bit < 64 ? low >> UInt64(bit) & 1 == 1 : high >> UInt64(bit - 64) & 1 == 1
    }

    /// The set bits, ascending.
    public var bits: [Int] { (0..<128).filter { contains(bit: $0) } }

    /// The 16 bitmap bytes.
    public var bytes: [UInt8] {
        (0..<16).map { UInt8(truncatingIfNeeded: ($0 < 8 ? low : high) >> UInt64(8 * ($0 & 7))) }
    }

    /// CRC-8, polynomial 0x09, initial 0, MSB first, no final XOR. CRC("123456789") = 0x09.
    public static func crc8<S: Sequence>(_ bytes: S) -> UInt8 where S.Element == UInt8 {
        var crc: UInt8 = 0
        for b in bytes {
            crc ^= b
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? crc << 1 ^ 0x09 : crc << 1 }
        }
        return crc
    }

    /// The bit a service UUID sets.
    public static func bit(for uuid: BluetoothUUID) -> Int { Int(crc8(uuid.bigEndianBytes) & 0x7F) }

    /// Which candidates the bitmap is consistent with, each with the other candidates that hash
    /// to the same bit (a collision: the bitmap cannot tell them apart).
    public func matches(_ candidates: [BluetoothUUID]) -> [OverflowMatch] {
        var seen = Set<BluetoothUUID>()
        var byBit: [Int: [BluetoothUUID]] = [:]
        for c in candidates where seen.insert(c).inserted { byBit[OverflowArea.bit(for: c), default: []].append(c) }
        var out: [OverflowMatch] = []
        for (bit, uuids) in byBit.sorted(by: { $0.key < $1.key }) where contains(bit: bit) {
            for u in uuids { out.append(OverflowMatch(uuid: u, bit: bit, collidesWith: uuids.filter { $0 != u })) }
        }
        return out
    }

    /// Set bits that no candidate explains.
    public func unexplainedBits(_ candidates: [BluetoothUUID]) -> [Int] {
        let covered = Set(candidates.map(OverflowArea.bit(for:)))
        return bits.filter { !covered.contains($0) }
    }

    public func fields(candidates: [BluetoothUUID] = []) -> [Field] {
        var out = [Field("Bitmap", .text(Hex.string(bytes[...]))),
                   Field("Set Bits", .text(bits.map(String.init).joined(separator: " ")))]
        for m in matches(candidates) {
            var children = [Field("Bit", .int(Int64(m.bit)))]
            if !m.collidesWith.isEmpty {
                children.append(Field("Collision", .text("same bit as " + m.collidesWith.map(\.description).joined(separator: ", "))))
            }
            out.append(Field("Matches", .uuid(m.uuid), children))
        }
        return out
    }
}

/// A candidate UUID whose bit is set in an overflow area.
public struct OverflowMatch: Sendable, Equatable {
    public let uuid: BluetoothUUID
    public let bit: Int
    /// Other candidates hashing to the same bit.
    public let collidesWith: [BluetoothUUID]
}

/// Apple Continuity messages: a sequence of `type | length | data`, except the overflow area
/// (type 0x01), which has no length byte. Names from public reverse engineering.
enum AppleContinuity {
    static let names: ByteTable<String> = [
        0x01: "Overflow Area", 0x02: "iBeacon", 0x03: "AirPrint", 0x05: "AirDrop", 0x06: "HomeKit",
        0x07: "Proximity Pairing", 0x08: "Hey Siri", 0x09: "AirPlay Target", 0x0A: "AirPlay Source",
        0x0B: "Magic Switch", 0x0C: "Handoff", 0x0D: "Tethering Target Presence", 0x0E: "Tethering Source Presence",
        0x0F: "Nearby Action", 0x10: "Nearby Info", 0x12: "Find My",
    ]

    static func name(_ type: UInt8) -> String? { names[type] }
    private static let labels = names.map(FieldLabel.init)

    static func write(_ data: Bytes, to out: FieldSink) {
        if let o = OverflowArea(company: ManufacturerData.apple, data: data) {
            out.begin("Apple Overflow Area", .none)
            out.add(o.fields())
            out.end()
            return
        }
        var r = ByteReader(data)
        while let type = try? r.u8() {
            let len = try? r.u8()
            let body = len.flatMap { try? r.take(Int($0)) }
            out.begin(type == 0x02 && body != nil ? "iBeacon" : "Apple Continuity", .none)
            defer { out.end() }
            out.add("Type", .named(UInt64(type), hex: 2, labels[type] ?? "Unknown"))
            guard let len else { out.malformed("missing length"); break }
            out.add("Length", .uint(UInt64(len), hex: 0))
            guard let body else {
                out.malformed("length \(len) runs past the data")
                out.add("Data", .bytes(r.rest()))
                break
            }
            out.add("Data", .bytes(body))
            if type == 0x02, let b = IBeacon(company: ManufacturerData.apple, data: data[body.startIndex - 2..<body.endIndex]) {
                b.writeFields(to: out)
            }
        }
    }
}

/// Microsoft Beacon (company 0x0006): the first byte names the scenario.
enum Microsoft {
    static let scenarioNames: ByteTable<String> = [0x01: "Connected Devices Platform", 0x03: "Swift Pair"]
    private static let scenarioLabels = scenarioNames.map(FieldLabel.init)
    static let cdpDeviceTypes: ByteTable<FieldLabel> = [
        1: "Xbox One", 6: "Apple iPhone", 7: "Apple iPad", 8: "Android device", 9: "Windows 10 Desktop",
        11: "Windows 10 Phone", 12: "Linux device", 13: "Windows IoT", 14: "Surface Hub", 15: "Windows laptop",
        16: "Windows tablet",
    ]

    static func write(_ d: Bytes, to out: FieldSink) {
        guard let scenario = d.byte(0) else { return }
        out.add("Scenario Type", .named(UInt64(scenario), hex: 2, scenarioLabels[scenario] ?? "Unknown"))
        var r = ByteReader(d.from(1))
        switch scenario {
        case 0x01:
            // [MS-CDP] 3.1.1.1: version and device type, version and flags, reserved, salt, device hash.
            guard let vt = try? r.u8(), let vf = try? r.u8(), let reserved = try? r.u8(), let salt = try? r.take(4) else {
                return out.malformed("CDP beacon too short")
            }
            out.add("Version", .uint(UInt64(vt >> 5), hex: 0))
            out.add("Device Type", .named(UInt64(vt & 0x1F), hex: 2, cdpDeviceTypes[vt & 0x1F] ?? "Unknown"))
            out.add("Flags Version", .uint(UInt64(vf >> 5), hex: 0))
            out.add("Flags", .uint(UInt64(vf & 0x1F), hex: 2))
            out.add("Reserved", .uint(UInt64(reserved), hex: 2))
            out.add("Salt", .bytes(salt))
            out.add("Device Hash", .bytes(r.rest()))
        case 0x03:
            // Swift Pair: sub-scenario, reserved RSSI byte, then the display name (pairing mode).
            guard let sub = try? r.u8(), let rssi = try? r.u8() else { return out.malformed("Swift Pair beacon too short") }
            out.add("Sub Scenario", .uint(UInt64(sub), hex: 2))
            out.add("Reserved RSSI", .uint(UInt64(rssi), hex: 2))
            let rest = r.rest()
            if !rest.isEmpty { out.add("Data", .bytes(rest)) }
        default:
            out.add("Data", .bytes(r.rest()))
        }
    }
}

/// Google Eddystone frames in Service Data for UUID 0xFEAA. Multi-byte values are big-endian.
public enum Eddystone {
    public static let uuid16: UInt16 = 0xFEAA

    static let frameNames: ByteTable<FieldLabel> = [0x00: "UID", 0x10: "URL", 0x20: "TLM", 0x30: "EID"]
    static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    static let expansions = [".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
                             ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov"]

    /// The URL of a URL frame's body (after the frame type and TX power), expanded.
    public static func url(_ body: Bytes) -> String? {
        guard let s = body.first, Int(s) < schemes.count else { return nil }
        var url = schemes[Int(s)]
        for b in body.dropFirst() {
            if Int(b) < expansions.count { url += expansions[Int(b)] } else { url.unicodeScalars.append(Unicode.Scalar(b)) }
        }
        return url
    }

    public static func fields(_ d: Bytes) -> [Field] {
        guard let frame = d.byte(0) else { return [Field.malformed("empty Eddystone frame")] }
        var out = [Field("Frame Type", .named(UInt64(frame), hex: 2, frameNames[frame] ?? "Unknown"))]
        var r = ByteReader(d.from(1))
        func tx() -> Field? { (try? r.i8()).map { Field("TX Power at 0 m", .signed(Int64($0), unit: "dBm")) } }
        switch frame {
        case 0x00:
            guard let t = tx(), let ns = try? r.take(10), let inst = try? r.take(6) else { return out + [Field.malformed("UID frame too short")] }
            out += [t, Field("Namespace", .bytes(ns)), Field("Instance", .bytes(inst))]
            if r.remaining > 0 { out.append(Field("Reserved", .bytes(r.rest()))) }
        case 0x10:
            guard let t = tx(), let u = url(r.rest()) else { return out + [Field.malformed("URL frame too short or unknown scheme")] }
            out += [t, Field("URL", .text(u))]
        case 0x20:
            guard let version = try? r.u8() else { return out + [Field.malformed("TLM frame too short")] }
            out.append(Field.u8("Version", version))
            if version == 0 {
                guard let mv = try? r.u16be(), let temp = try? r.u16be(), let count = try? r.u32be(), let secs = try? r.u32be() else {
                    return out + [Field.malformed("TLM frame too short")]
                }
                out += [Field("Battery Voltage", .quantity(UInt64(mv), hex: 0, Double(mv), unit: "mV")),
                        temp == 0x8000 ? Field("Temperature", .named(UInt64(temp), hex: 4, "not supported"))
                            : Field("Temperature", .quantity(UInt64(temp), hex: 4, Double(Int16(bitPattern: temp)) / 256, unit: "°C")),
                        Field.dec("Advertising PDU Count", count),
                        Field("Time Since Power-on", .quantity(UInt64(secs), hex: 0, Double(secs) / 10, unit: "s"))]
            } else {
                out.append(Field("Encrypted TLM", .bytes(r.rest())))
            }
        case 0x30:
            guard let t = tx(), let eid = try? r.take(8) else { return out + [Field.malformed("EID frame too short")] }
            out += [t, Field("Ephemeral Identifier", .bytes(eid))]
        default:
            out.append(Field("Data", .bytes(r.rest())))
        }
        return out
    }
}
