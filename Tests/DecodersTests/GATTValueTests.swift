import XCTest
@testable import Decoders

final class GATTValueTests: XCTestCase {
    func summary(_ u: UInt16, _ hex: String) -> String? { CharacteristicValues.summary(BluetoothUUID(uuid16: u), bytes(hex)) }
    func fields(_ u: UInt16, _ hex: String) -> [Field] { CharacteristicValues.decode(BluetoothUUID(uuid16: u), bytes(hex)) ?? [] }

    func testSFLOAT() {
        XCTAssertEqual(MedicalFloat(sfloat: 0x0072).description, "114")
        XCTAssertEqual(MedicalFloat(sfloat: 0xF48C).description, "116.4")
        XCTAssertEqual(MedicalFloat(sfloat: 0xEFFB).description, "-0.05")
        XCTAssertEqual(MedicalFloat(sfloat: 0x0FFF).description, "-1")
        XCTAssertEqual(MedicalFloat(sfloat: 0x2003).description, "300")
        XCTAssertEqual(MedicalFloat(sfloat: 0xF48C).double ?? 0, 116.4, accuracy: 1e-9)
        XCTAssertEqual(MedicalFloat(sfloat: 0x07FF), .nan)
        XCTAssertEqual(MedicalFloat(sfloat: 0x0800), .nres)
        XCTAssertEqual(MedicalFloat(sfloat: 0x07FE), .positiveInfinity)
        XCTAssertEqual(MedicalFloat(sfloat: 0x0802), .negativeInfinity)
        XCTAssertEqual(MedicalFloat(sfloat: 0x0801), .reserved)
        XCTAssertNil(MedicalFloat(sfloat: 0x07FF).double)
        XCTAssertEqual(MedicalFloat(sfloat: 0x07FE).double, .infinity)
        XCTAssertEqual(MedicalFloat(sfloat: 0x0802).description, "-INF")
        // A special mantissa is special only with exponent 0.
        XCTAssertEqual(MedicalFloat(sfloat: 0x17FF), .value(mantissa: 2047, exponent: 1))
        XCTAssertEqual(MedicalFloat(sfloat: 0xF800), .value(mantissa: -2048, exponent: -1))
    }

    func testFLOAT() {
        XCTAssertEqual(MedicalFloat(float: 0xFF00_016E).description, "36.6")
        XCTAssertEqual(MedicalFloat(float: 0x0200_0005).description, "500")
        XCTAssertEqual(MedicalFloat(float: 0xFDFF_FFFB).description, "-0.005")
        XCTAssertEqual(MedicalFloat(float: 0x007F_FFFF), .nan)
        XCTAssertEqual(MedicalFloat(float: 0x0080_0000), .nres)
        XCTAssertEqual(MedicalFloat(float: 0x007F_FFFE), .positiveInfinity)
        XCTAssertEqual(MedicalFloat(float: 0x0080_0002), .negativeInfinity)
        XCTAssertEqual(MedicalFloat(float: 0x0080_0001), .reserved)
        XCTAssertEqual(MedicalFloat(float: 0x0080_0001).description, "Reserved")
        XCTAssertEqual(MedicalFloat(float: 0x0000_0000).description, "0")
        XCTAssertEqual(MedicalFloat(float: 0x017F_FFFF), .value(mantissa: 8_388_607, exponent: 1))
        XCTAssertEqual(MedicalFloat(float: 0xFF80_0000), .value(mantissa: -8_388_608, exponent: -1))
        // Extreme exponents do not trap.
        _ = MedicalFloat(float: 0x80FF_FFFF).description
        _ = MedicalFloat(float: 0x7F7F_FFFD).double
    }

    func testFixed() {
        XCTAssertEqual(fixed(0.830078125, 3), "0.830")
        XCTAssertEqual(fixed(-1.5, 1), "-1.5")
        XCTAssertEqual(fixed(7.5, 2), "7.50")
        XCTAssertEqual(fixed(-0.0001, 2), "0.00")
        XCTAssertEqual(fixed(1e300, 2), "1e+300")
    }

    // GAP values from tesible__mouse.pcapng: frame 1010 (Device Name), 1309 (Appearance), 1301 (Manufacturer Name).
    func testGAPAndDeviceInformation() {
        XCTAssertEqual(summary(0x2A00, "4254352e30204d6f757365"), "Device Name \"BT5.0 Mouse\"")
        XCTAssertEqual(summary(0x2A01, "8002"), "Appearance Media Player (0x0280)")
        XCTAssertEqual(summary(0x2A29, "4170706c6520496e632e"), "Manufacturer Name \"Apple Inc.\"")
        XCTAssertEqual(summary(0x2A24, "4d3100"), "Model Number \"M1\"")
        XCTAssertEqual(summary(0x2A25, "3031"), "Serial Number \"01\"")
        XCTAssertEqual(summary(0x2A27, "31"), "Hardware Revision \"1\"")
        XCTAssertEqual(summary(0x2A26, "322e30"), "Firmware Revision \"2.0\"")
        XCTAssertEqual(summary(0x2A28, "33"), "Software Revision \"3\"")
        XCTAssertEqual(summary(0x2A04, "06000c000000c800"), "Interval 7.50–15.00 ms, Latency 0, Timeout 2000 ms")
        XCTAssertEqual(summary(0x2A04, "ffffffff0000ffff"), "Interval any–any ms, Latency 0, Timeout any")
        XCTAssertEqual(summary(0x2A05, "0100ffff"), "Service Changed 0x0001–0xFFFF")
        XCTAssertEqual(summary(0x2AA6, "01"), "Central Address Resolution supported")
        XCTAssertEqual(summary(0x2A50, "014c0012341001"), "Vendor 0x004C (Apple, Inc.), Product 0x3412, Version 1.1.0")
        XCTAssertEqual(summary(0x2A23, "0102030405060708"), "System ID 0x0504030201, OUI 0x080706")
        XCTAssertEqual(summary(0x2A2A, "fe00"), "IEEE 11073-20601 Regulatory Certification Data List fe00")
        XCTAssertEqual(summary(0x2B2A, "000102030405060708090a0b0c0d0e0f"), "Database Hash 000102030405060708090a0b0c0d0e0f")
        XCTAssertEqual(summary(0x2B29, "07"), "Client Supported Features: Robust Caching, Enhanced ATT Bearer, Multiple Handle Value Notifications")
        XCTAssertEqual(summary(0x2B3A, "00"), "Server Supported Features: none")
        XCTAssertEqual(summary(0x2A07, "f4"), "Tx Power Level -12 dBm")
        XCTAssertEqual(summary(0x2A06, "02"), "Alert Level High Alert")
        XCTAssertEqual(summary(0x2A19, "55"), "Battery Level 85 %")
        XCTAssertEqual(summary(0x2A02, "01"), "Peripheral Privacy Flag privacy enabled")
        XCTAssertEqual(summary(0x2A02, "07"), "Peripheral Privacy Flag Reserved")
        XCTAssertEqual(summary(0x2B2A, "00112233445566778899aabbccddeeff"), "Database Hash 00112233445566778899aabbccddeeff")
        XCTAssertEqual(summary(0x2A4B, String(repeating: "ab", count: 33)), "Report Map " + String(repeating: "ab", count: 32) + "…")
    }

    func testHeartRate() {
        // 8-bit rate, contact supported and detected, two RR intervals of 850/1024 s.
        XCTAssertEqual(summary(0x2A37, "164852035203"), "Heart Rate 72 bpm, RR 0.830 0.830 s")
        // 16-bit rate, energy expended.
        XCTAssertEqual(summary(0x2A37, "092c01e803"), "Heart Rate 300 bpm, Energy 1000 kJ")
        // Contact supported but lost.
        XCTAssertEqual(summary(0x2A37, "0450"), "Heart Rate 80 bpm, no contact")
        let f = fields(0x2A37, "164852035203")
        XCTAssertEqual(f.map(\.label), ["Flags", "Heart Rate Measurement Value", "Sensor Contact", "RR-Interval", "RR-Interval"])
        if case .flags(_, _, let names) = f[0].value {
            XCTAssertEqual(names, ["Sensor Contact Detected", "Sensor Contact Supported", "RR-Interval Present"])
        } else { XCTFail() }
        XCTAssertEqual(summary(0x2A38, "01"), "Body Sensor Location Chest")
        XCTAssertEqual(summary(0x2A39, "01"), "Heart Rate Control Point Reset Energy Expended")
        // Truncated: the 16-bit rate is missing.
        XCTAssertEqual(summary(0x2A37, "0148"), "[Malformed: truncated: needed 2 bytes, 1 left]")
        XCTAssertEqual(fields(0x2A37, "0148").last?.label, "Malformed")
    }

    func testHealth() {
        XCTAssertEqual(summary(0x2A1C, "066e0100ffe8070c1f173b3b02"), "Temperature 36.6 °C, Body (general)")
        let t = fields(0x2A1C, "066e0100ffe8070c1f173b3b02")
        XCTAssertEqual(t.map(\.label), ["Flags", "Temperature Measurement Value", "Time Stamp", "Temperature Type"])
        if case .text(let s) = t[2].value { XCTAssertEqual(s, "2024-12-31 23:59:59") } else { XCTFail() }
        XCTAssertEqual(summary(0x2A1C, "01ffff7f00"), "Temperature NaN")
        XCTAssertEqual(summary(0x2A1D, "06"), "Temperature Type Mouth")
        XCTAssertEqual(summary(0x2A35, "04780050005d004800"), "Blood Pressure 120/80 mmHg, MAP 93, Pulse 72 bpm")
        XCTAssertEqual(summary(0x2A18, "020500e80701010000005fb011"), "Glucose #5, Concentration 0.00095 kg/L")
        XCTAssertEqual(summary(0x2A9D, "00b80b"), "Weight 15.000 kg")
        XCTAssertEqual(summary(0x2A9D, "01b80b"), "Weight 30.00 lb")
    }

    func testSportsAndTime() {
        XCTAssertEqual(summary(0x2A5B, "030a000000000405000008"), "Wheel 10 revs, at 1.000 s, Crank 5 revs, at 2.000 s")
        XCTAssertEqual(summary(0x2A5C, "0300"), "CSC Feature: Wheel Revolution Data Supported, Crank Revolution Data Supported")
        XCTAssertEqual(summary(0x2A53, "02800250e8030000"), "Speed 2.50 m/s, Cadence 80 /min, Distance 100.0 m, walking")
        XCTAssertEqual(summary(0x2A63, "2000fa0005000008"), "Power 250 W, Crank 5 revs")
        XCTAssertEqual(summary(0x2A5D, "04"), "Sensor Location Front Wheel")
        XCTAssertEqual(summary(0x2A2B, "e8070c1f173b3b028001"), "2024-12-31 23:59:59, Tuesday")
        XCTAssertEqual(summary(0x2A0F, "0404"), "Time Zone UTC+1:00, Daylight Time (+1h)")
        XCTAssertEqual(summary(0x2A0F, "f200"), "Time Zone UTC-3:30, Standard Time")
        XCTAssertEqual(summary(0x2A08, "00000101000000"), "????-01-01 00:00:00")
        XCTAssertEqual(summary(0x2A6E, "2c09"), "Temperature 23.48 °C")
    }

    // HID values from tesible__mouse.pcapng frames 1259, 1267, 1275.
    func testHIDAndDescriptors() {
        XCTAssertEqual(summary(0x2A4A, "11010003"), "HID 1.11")
        XCTAssertEqual(summary(0x2908, "0101"), "Report ID 1, Input Report")
        XCTAssertEqual(summary(0x2908, "0301"), "Report ID 3, Input Report")
        XCTAssertEqual(summary(0x2A4E, "01"), "Protocol Mode Report Protocol Mode")
        XCTAssertEqual(summary(0x2902, "0100"), "notifications on")
        XCTAssertEqual(summary(0x2902, "0300"), "notifications and indications on")
        XCTAssertEqual(summary(0x2902, "0000"), "notifications and indications off")
        XCTAssertEqual(summary(0x2901, "5374726170"), "Characteristic User Description \"Strap\"")
        XCTAssertEqual(summary(0x2904, "0400ad27010000"), "Format uint8, Exponent 0, Unit percentage")
        XCTAssertEqual(summary(0x2904, "0efe2f27010d01"), "Format sint16, Exponent -2, Unit degree Celsius, left")
        XCTAssertEqual(summary(0x2900, "0100"), "Characteristic Extended Properties: Reliable Write")
    }

    func testUnknownValues() {
        let u = BluetoothUUID(uuid16: 0xFFF1)
        XCTAssertNil(CharacteristicValues.decode(u, bytes("01")))
        XCTAssertEqual(CharacteristicValues.describe(u, bytes("48656c6c6f")), "48656c6c6f (\"Hello\")")
        XCTAssertEqual(CharacteristicValues.describe(u, bytes("0102")), "0102")
        XCTAssertEqual(CharacteristicValues.describe(nil, bytes("")), "(empty)")
        XCTAssertNil(CharacteristicValues.printable(bytes("c328")))  // invalid UTF-8
        XCTAssertEqual(CharacteristicValues.printable(bytes("c3a900")), "é")
        XCTAssertNil(CharacteristicValues.printable(bytes("410a42")))  // a control character
        XCTAssertNil(CharacteristicValues.printable(bytes("c30a")))  // one breaking a sequence
        XCTAssertNil(CharacteristicValues.printable(bytes("0000")))
        XCTAssertEqual(CharacteristicValues.printable(bytes("41004200")), nil)  // a NUL inside is no terminator
        XCTAssertEqual(CharacteristicValues.printable(bytes("4142000000")), "AB")
        XCTAssertEqual(CharacteristicValues.fields(u, bytes("4142")).map(\.label), ["Value", "Text"])
        // Extra bytes after a known format are kept.
        XCTAssertEqual(fields(0x2A19, "5501").last?.label, "Additional Data")
    }

    func testAtLeastThirtyCharacteristics() {
        XCTAssertGreaterThanOrEqual(CharacteristicValues.table.keys.filter { $0 >= 0x2A00 }.count, 30)
    }

    /// Every known format, fed every length of junk, decodes without trapping.
    func testNeverCrashes() {
        let junk: [UInt8] = [0xFF, 0x7F, 0x80, 0x00, 0xFE, 0x01, 0xFF, 0xFF, 0x12, 0x80, 0x00, 0x08, 0xFF, 0x7F,
                             0xC3, 0x28, 0xFF, 0xFF, 0xFF, 0x1F, 0xFF, 0xFF, 0x00, 0x01]
        for u in CharacteristicValues.table.keys {
            for n in 0...junk.count {
                for fill: UInt8 in [0x00, 0xFF] {
                    var b = junk
                    b[0] = fill
                    _ = CharacteristicValues.decode(BluetoothUUID(uuid16: u), b[0..<n])
                    _ = CharacteristicValues.summary(BluetoothUUID(uuid16: u), b[0..<n])
                }
            }
        }
    }
}

extension GATTValueTests {
    /// `fixed` writes its digits into one buffer; it must print what plain string arithmetic does.
    func testFixedPointFormattingMatchesStringArithmetic() {
        func reference(_ x: Double, _ decimals: Int) -> String {
            var scale = 1.0
            for _ in 0..<decimals { scale *= 10 }
            let n = UInt64((x.magnitude * scale).rounded())
            var s = String(n / UInt64(scale))
            if decimals > 0 {
                let frac = String(n % UInt64(scale))
                s += "." + String(repeating: "0", count: decimals - frac.count) + frac
            }
            return x < 0 && n != 0 ? "-" + s : s
        }
        var g = SystemRandomNumberGenerator()
        let samples: [Double] = [0, -0.0, 0.0004, -0.0004, 0.0005, 1, -1, 9.9995, 123.456, -98.7654, 1e12, 0.830078125]
        let random = (0..<2000).map { _ in Double.random(in: -1e6...1e6, using: &g) }
        for x in samples + random {
            for d in 0...4 { XCTAssertEqual(fixed(x, d), reference(x, d), "\(x) with \(d) decimals") }
        }
        XCTAssertEqual(fixed(.nan, 2), "NaN")
        // Whether a value decodes: unknown formats are not judged, a short Heart Rate Measurement fails.
        XCTAssertNil(CharacteristicValues.decodes(BluetoothUUID(uuid16: 0xFFF1), [1, 2][...]))
        XCTAssertEqual(CharacteristicValues.decodes(BluetoothUUID(uuid16: 0x2A37), [0x00, 72][...]), true)
        XCTAssertEqual(CharacteristicValues.decodes(BluetoothUUID(uuid16: 0x2A37), [0x01, 72][...]), false)
        XCTAssertEqual(fixed(-.infinity, 2), "-INF")
    }
}
