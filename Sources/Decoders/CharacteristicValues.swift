import Wire

/// Characteristic and descriptor values of SIG-defined GATT characteristics (GATT Specification
/// Supplement), decoded only when printed. Simple formats come from a table; structured ones
/// (flags that select optional fields) have a function each.
public enum CharacteristicValues {
    /// The full decode of `value` as the characteristic or descriptor `uuid`; nil when blesniff
    /// does not know the UUID's format.
    public static func decode(_ uuid: BluetoothUUID, _ value: Bytes) -> [Field]? {
        run(uuid, value, wants: .fields)?.fields
    }

    /// False when `value` does not decode as the characteristic or descriptor `uuid` (its `decode`
    /// holds a Malformed field); nil when the UUID's format is unknown. Builds neither fields nor text.
    public static func decodes(_ uuid: BluetoothUUID, _ value: Bytes) -> Bool? {
        // Built here rather than returned by `run`: an optional builder came back through memory.
        guard let decoder = decoder(uuid) else { return nil }
        var b = ValueBuilder(value, wants: [])
        execute(decoder, &b)
        return !b.failed
    }

    /// One line: "Heart Rate 72 bpm, RR 0.830 s"; nil when the UUID's format is unknown.
    public static func summary(_ uuid: BluetoothUUID, _ value: Bytes) -> String? {
        run(uuid, value, wants: .parts)?.summary.string
    }

    /// Writes `prefix` and `summary` into `line` when the UUID's format is known, with no String
    /// in between.
    public static func writeSummary(_ uuid: BluetoothUUID, _ value: Bytes, prefix: StaticString, to line: inout TextLine) {
        guard let decoder = decoder(uuid) else { return }
        line += prefix
        var b = ValueBuilder(value, wants: .parts)
        // The builder writes its parts straight into the caller's line.
        swap(&b.summary, &line)
        execute(decoder, &b)
        swap(&b.summary, &line)
    }

    /// True when `decode` knows the UUID.
    public static func knows(_ uuid: BluetoothUUID) -> Bool { decoder(uuid) != nil }

    /// Summary when known, else hex with the text when the bytes are printable UTF-8.
    public static func describe(_ uuid: BluetoothUUID?, _ value: Bytes) -> String {
        if let u = uuid, let s = summary(u, value) { return s }
        return raw(value)
    }

    /// Decode when known, else the bytes (and their text when printable).
    public static func fields(_ uuid: BluetoothUUID?, _ value: Bytes) -> [Field] {
        FieldList.build { writeFields(uuid, value, to: $0) }
    }

    /// `fields`, written into `out` field by field: no array in between.
    public static func writeFields(_ uuid: BluetoothUUID?, _ value: Bytes, to out: FieldSink) {
        if let u = uuid, let decoder = decoder(u) {
            var b = ValueBuilder(value, wants: .fields, into: out)
            execute(decoder, &b)
            return
        }
        out.add("Value", .bytes(value))
        if let t = printableBytes(value) { out.add("Text", .received(t)) }
    }

    /// "48656c6c6f (\"Hello\")" or "0102".
    public static func raw(_ value: Bytes) -> String {
        let h = attValueHex(value)
        if let t = printable(value) { return h + " (\"" + t + "\")" }
        return h.isEmpty ? "(empty)" : h
    }

    /// The bytes as text when they are valid UTF-8 without control characters (a trailing NUL is allowed).
    public static func printable(_ value: Bytes) -> String? {
        printableBytes(value).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The bytes `printable` reads as text (without the trailing NULs), or nil.
    static func printableBytes(_ value: Bytes) -> Bytes? {
        var end = value.endIndex
        while end > value.startIndex, value[end &- 1] == 0 { end &-= 1 }
        guard end > value.startIndex else { return nil }
        // A control byte is a control character, or breaks a UTF-8 sequence: either way the value
        // is not text. Most binary values are turned down here, read in place.
        for i in value.startIndex..<end where value[i] < 0x20 || value[i] == 0x7F { return nil }
        let v = value[..<end]
        var it = v.makeIterator()
        var utf8 = UTF8()
        while true {
            switch utf8.decode(&it) {
            case .scalarValue(let c): if c.value < 0x20 || c.value == 0x7F { return nil }
            case .emptyInput: return v
            case .error: return nil
            }
        }
    }

    static func run(_ uuid: BluetoothUUID, _ value: Bytes, wants: ValueBuilder.Wants) -> ValueBuilder? {
        guard let decoder = decoder(uuid) else { return nil }
        var b = ValueBuilder(value, wants: wants)
        execute(decoder, &b)
        return b
    }

    static func decoder(_ uuid: BluetoothUUID) -> DecoderEntry? {
        guard let u = uuid.uuid16, u &- firstUUID < UInt16(byUUID.count) else { return nil }
        return byUUID[Int(u &- firstUUID)]
    }

    static func execute(_ decoder: DecoderEntry, _ b: inout ValueBuilder) {
        do throws(DecodeError) {
            try decoder.decode(&b)
            if b.r.remaining > 0 {
                let rest = b.r.rest()
                b.add(Field("Additional Data", .bytes(rest)))
            }
        } catch {
            b.failed = true
            let why = ATTLayout.describe(error)
            b.add(.malformed(why), "[Malformed: " + why + "]")
        }
    }

    typealias Decoder = @Sendable (inout ValueBuilder) throws(DecodeError) -> Void

    /// A decoder in a struct: a function stored straight in a dictionary comes out through a
    /// reabstraction thunk, allocated at every lookup.
    struct DecoderEntry: Sendable {
        let decode: Decoder
    }

    /// The decoders by 16-bit UUID from 0x2900 (descriptors, then characteristics: every UUID of
    /// `table` lies in 0x2900-0x2BFF), looked up by index: the verdict asks for the decoder of every
    /// value it judges, and a dictionary lookup hashed the UUID each time.
    static let firstUUID: UInt16 = 0x2900
    static let byUUID: [DecoderEntry?] = {
        var t = [DecoderEntry?](repeating: nil, count: 0x300)
        for (u, d) in table {
            precondition(u >= firstUUID && Int(u - firstUUID) < t.count, "decoder table: UUID outside 0x2900-0x2BFF")
            t[Int(u - firstUUID)] = DecoderEntry(decode: d)
        }
        return t
    }()

    static let table: [UInt16: Decoder] = [
        // GAP and GATT services
        0x2A00: utf8("Device Name"),
        0x2A01: appearance,
        0x2A02: boolean("Peripheral Privacy Flag", "privacy enabled", "privacy disabled"),
        0x2A03: reconnectionAddress,
        0x2A04: preferredConnectionParameters,
        0x2A05: serviceChanged,
        0x2AA6: boolean("Central Address Resolution", "supported", "not supported"),
        0x2AC9: boolean("Resolvable Private Address Only", "only RPAs used", "RPA use not promised"),
        0x2B29: flags8("Client Supported Features", ["Robust Caching", "Enhanced ATT Bearer", "Multiple Handle Value Notifications"]),
        0x2B2A: bytes("Database Hash", 16),
        0x2B3A: flags8("Server Supported Features", ["EATT Supported"]),
        // Battery, Tx Power, Immediate Alert / Link Loss
        0x2A19: uint("Battery Level", 1, 1, "%", 0),
        0x2A07: sint8("Tx Power Level", "dBm"),
        0x2A06: enum8("Alert Level", GATTValueTables.alertLevels),
        // Heart Rate
        0x2A37: heartRateMeasurement,
        0x2A38: enum8("Body Sensor Location", GATTValueTables.bodySensorLocations),
        0x2A39: enum8("Heart Rate Control Point", ["Reserved", "Reset Energy Expended"]),
        // Health Thermometer
        0x2A1C: temperatureMeasurement("Temperature"),
        0x2A1E: temperatureMeasurement("Intermediate Temperature"),
        0x2A1D: enum8("Temperature Type", GATTValueTables.temperatureTypes),
        0x2A21: uint("Measurement Interval", 2, 1, "s", 0),
        // Blood Pressure, Glucose, Weight
        0x2A35: bloodPressure,
        0x2A36: bloodPressure,
        0x2A18: glucoseMeasurement,
        0x2A9D: weightMeasurement,
        // Cycling and running
        0x2A5B: cscMeasurement,
        0x2A5C: flags16("CSC Feature", ["Wheel Revolution Data Supported", "Crank Revolution Data Supported",
                                        "Multiple Sensor Locations Supported"]),
        0x2A53: rscMeasurement,
        0x2A54: flags16("RSC Feature", ["Instantaneous Stride Length Measurement Supported",
                                        "Total Distance Measurement Supported", "Walking or Running Status Supported",
                                        "Sensor Calibration Procedure Supported", "Multiple Sensor Locations Supported"]),
        0x2A5D: enum8("Sensor Location", GATTValueTables.sensorLocations),
        0x2A63: cyclingPowerMeasurement,
        // Device Information
        0x2A29: utf8("Manufacturer Name"),
        0x2A24: utf8("Model Number"),
        0x2A25: utf8("Serial Number"),
        0x2A27: utf8("Hardware Revision"),
        0x2A26: utf8("Firmware Revision"),
        0x2A28: utf8("Software Revision"),
        0x2A23: systemID,
        0x2A2A: bytes("IEEE 11073-20601 Regulatory Certification Data List", 0),
        0x2A50: pnpID,
        // Time
        0x2A2B: currentTime,
        0x2A0F: localTimeInformation,
        0x2A08: dateTime("Date Time"),
        0x2A0A: dayDateTime,
        0x2A09: enum8("Day of Week", GATTValueTables.daysOfWeek),
        // Environmental Sensing
        0x2A6E: sint16("Temperature", 0.01, "°C", 2),
        0x2A6F: uint("Humidity", 2, 0.01, "%", 2),
        0x2A6D: uint("Pressure", 4, 0.1, "Pa", 1),
        // HID
        0x2A4A: hidInformation,
        0x2A4C: enum8("HID Control Point", ["Suspend", "Exit Suspend"]),
        0x2A4E: enum8("Protocol Mode", GATTValueTables.protocolModes),
        0x2A4B: bytes("Report Map", 0),
        0x2A4D: bytes("Report", 0),
        // Descriptors
        0x2900: flags16("Characteristic Extended Properties", ["Reliable Write", "Writable Auxiliaries"]),
        0x2901: utf8("Characteristic User Description"),
        0x2902: cccd,
        0x2903: flags16("Server Characteristic Configuration", ["Broadcast"]),
        0x2904: presentationFormat,
        0x2905: aggregateFormat,
        0x2907: externalReportReference,
        0x2908: reportReference,
    ]
}

/// Collects the field tree and the summary parts side by side.
struct ValueBuilder: ~Copyable {
    /// What the caller reads: the fields (`decode`), the summary's parts (`summary`), or neither
    /// (`decodes`, which only asks whether the value decodes). What is not wanted is not built:
    /// `add` takes its field and part unevaluated.
    struct Wants: OptionSet {
        let rawValue: UInt8
        static let fields = Wants(rawValue: 1), parts = Wants(rawValue: 2)
    }

    var r: ByteReader
    let wants: Wants
    /// The fields, gathered here unless a sink takes them as they come.
    var fields: [Field] = []
    let sink: FieldSink?
    /// The summary's parts, ", " between them.
    var summary = TextLine()
    private var parts = 0
    /// The decoder threw: the value is malformed.
    var failed = false
    init(_ value: Bytes, wants: Wants = [.fields, .parts], into sink: FieldSink? = nil) {
        r = ByteReader(value)
        self.wants = wants
        self.sink = sink
    }

    // The sink read in place: bound to a name, it was retained and released for each field.
    private mutating func keep(_ f: Field) {
        if sink != nil { sink!.add(f) } else { fields.append(f) }
    }

    /// A field without children, sent as its label and value: no `Field` is built for a sink.
    private mutating func keep(_ label: FieldLabel, _ value: FieldValue) {
        if sink != nil { sink!.add(label, value) } else { fields.append(Field(label, value)) }
    }

    mutating func add(_ f: @autoclosure () -> Field, _ part: @autoclosure () -> String? = nil) {
        if wants.contains(.fields) { keep(f()) }
        if wants.contains(.parts), let p = part() { appendPart(p) }
    }

    /// A field, and a part of the summary that `write` puts straight into the line (no String).
    mutating func add(_ f: @autoclosure () -> Field, write: (inout TextLine) -> Void) {
        if wants.contains(.fields) { keep(f()) }
        if wants.contains(.parts) {
            startPart()
            write(&summary)
        }
    }

    /// A field without children and no part of the summary.
    mutating func add(_ label: FieldLabel, _ value: @autoclosure () -> FieldValue) {
        if wants.contains(.fields) { keep(label, value()) }
    }

    /// `add(_:write:)` for a field without children.
    mutating func add(_ label: FieldLabel, _ value: @autoclosure () -> FieldValue, write: (inout TextLine) -> Void) {
        if wants.contains(.fields) { keep(label, value()) }
        if wants.contains(.parts) {
            startPart()
            write(&summary)
        }
    }

    /// Writes into the summary: a new part, or more of the last one when `continuing`.
    mutating func write(continuing: Bool, _ write: (inout TextLine) -> Void) {
        guard wants.contains(.parts) else { return }
        if !continuing { startPart() }
        write(&summary)
    }

    private mutating func startPart() {
        if parts > 0 { summary += ", " }
        parts += 1
    }

    private mutating func appendPart(_ p: String) {
        startPart()
        summary.write(p)
    }

    /// A part of the summary with no field of its own.
    mutating func part(_ p: @autoclosure () -> String) {
        if wants.contains(.parts) { appendPart(p()) }
    }

    /// A quantity field and "Label 1.23 unit" in the summary.
    mutating func quantity(_ label: FieldLabel, raw: UInt64, hex: Int = 0, _ value: Double, _ unit: String,
                           decimals: Int, summary: FieldLabel? = nil) {
        guard let summary else { return add(Field(label, .quantity(raw, hex: hex, value, unit: unit))) }
        add(Field(label, .quantity(raw, hex: hex, value, unit: unit))) {
            $0.write(label: summary)
            $0 += " "
            $0.write(fixed: value, decimals: decimals)
            if !unit.isEmpty { $0 += " "; $0.write(unit) }
        }
    }

    /// A medical float field; special values are named.
    mutating func medical(_ label: FieldLabel, _ f: MedicalFloat, raw: UInt64, hex: Int, _ unit: String, summary: String? = nil) {
        guard !wants.isEmpty else { return }
        let part = summary.map { $0 + " " + f.description + (f.double != nil && !unit.isEmpty ? " " + unit : "") }
        if let d = f.double, d.isFinite {
            add(Field(label, .quantity(raw, hex: hex, d, unit: unit), [Field("Text", .text(f.description))]), part)
        } else {
            add(Field(label, .named(raw, hex: hex, FieldLabel(f.description))), part)
        }
    }

    mutating func sfloat(_ label: FieldLabel, _ unit: String, summary: String? = nil) throws(DecodeError) {
        let v = try r.u16()
        medical(label, MedicalFloat(sfloat: v), raw: UInt64(v), hex: 4, unit, summary: summary)
    }

    /// A flags field, and "Label: name, name" (or "none") in the summary.
    mutating func namedFlags<T: FixedWidthInteger>(_ label: FieldLabel, _ v: T, _ names: BitNames) {
        flags(label, v, names)
        let set = SetBitNames(UInt64(v), in: names)
        part(label.string + ": " + (set.isEmpty ? "none" : set.joined(separator: ", ")))
    }

    /// A flags field. `names` is a decoder's table, kept in a `static let` (or made once with the
    /// decoder): a list written at the call would be looked up in the interned tables each time.
    mutating func flags<T: FixedWidthInteger>(_ label: FieldLabel, _ v: T, _ names: BitNames) {
        guard wants.contains(.fields) else { return }
        add(label, .flags(UInt64(v), hex: T.bitWidth / 4, SetBitNames(UInt64(v), in: names)))
    }

    /// Date Time (7 bytes): year (0 = unknown), month, day, hours, minutes, seconds.
    mutating func dateTime(_ label: FieldLabel, summary: Bool) throws(DecodeError) {
        let year = try r.u16(), month = try r.u8(), day = try r.u8()
        let h = try r.u8(), m = try r.u8(), s = try r.u8()
        guard wants.contains(.fields) || (summary && wants.contains(.parts)) else { return }
        func two(_ v: UInt8) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let text = (year == 0 ? "????" : String(year)) + "-" + two(month) + "-" + two(day) + " "
            + two(h) + ":" + two(m) + ":" + two(s)
        add(Field(label, .text(text), [
            Field("Year", .uint(UInt64(year), hex: 0)), Field("Month", .uint(UInt64(month), hex: 0)),
            Field("Day", .uint(UInt64(day), hex: 0)), Field("Hours", .uint(UInt64(h), hex: 0)),
            Field("Minutes", .uint(UInt64(m), hex: 0)), Field("Seconds", .uint(UInt64(s), hex: 0)),
        ]), summary ? text : nil)
    }
}

// MARK: Table helpers

extension CharacteristicValues {
    static func utf8(_ label: FieldLabel) -> Decoder {
        { (b: inout ValueBuilder) throws(DecodeError) in
            var v = b.r.rest()
            while v.last == 0 { v = v.dropLast() }  // some stacks send C strings
            let s = String(decoding: v, as: UTF8.self)
            b.add(Field(label, .received(v))) { $0.write(label: label); $0 += " \""; $0.write(s); $0 += "\"" }
        }
    }

    static func bytes(_ label: FieldLabel, _ exact: Int) -> Decoder {
        { (b: inout ValueBuilder) throws(DecodeError) in
            let v = exact > 0 ? try b.r.take(exact) : b.r.rest()
            b.add(Field(label, .bytes(v))) { $0.write(label: label); $0 += " "; writeATTValueHex(v, to: &$0) }
        }
    }

    static func uint(_ label: FieldLabel, _ width: Int, _ scale: Double, _ unit: String, _ decimals: Int) -> Decoder {
        { (b: inout ValueBuilder) throws(DecodeError) in
            let v = try b.r.uint(width: width)
            b.quantity(label, raw: v, Double(v) * scale, unit, decimals: decimals, summary: label)
        }
    }

    static func sint16(_ label: FieldLabel, _ scale: Double, _ unit: String, _ decimals: Int) -> Decoder {
        { (b: inout ValueBuilder) throws(DecodeError) in
            let raw = try b.r.u16()
            let v = Int16(bitPattern: raw)
            b.quantity(label, raw: UInt64(raw), hex: 4, Double(v) * scale, unit, decimals: decimals, summary: label)
        }
    }

    static func sint8(_ label: FieldLabel, _ unit: String) -> Decoder {
        { (b: inout ValueBuilder) throws(DecodeError) in
            let v = try b.r.i8()
            b.add(Field(label, .signed(Int64(v), unit: unit))) { $0.write(label: label); $0 += " "; $0.write(Int(v)); $0 += " "; $0.write(unit) }
        }
    }

    static func enum8(_ label: FieldLabel, _ names: [String]) -> Decoder {
        { (b: inout ValueBuilder) throws(DecodeError) in
            let v = try b.r.u8()
            let n = GATTValueTables.name(names, v)
            b.add(Field(label, .named(UInt64(v), hex: 2, FieldLabel(n)))) { $0.write(label: label); $0 += " "; $0.write(n) }
        }
    }

    static func boolean(_ label: FieldLabel, _ yes: String, _ no: String) -> Decoder {
        { (b: inout ValueBuilder) throws(DecodeError) in
            let v = try b.r.u8()
            let n = v == 0 ? no : v == 1 ? yes : "Reserved"
            b.add(Field(label, .named(UInt64(v), hex: 2, FieldLabel(n)))) { $0.write(label: label); $0 += " "; $0.write(n) }
        }
    }

    /// An octet of named bits (variable length ones, like Client Supported Features, continue in
    /// later octets: the first is decoded).
    static func flags8(_ label: FieldLabel, _ names: BitNames) -> Decoder {
        { (b: inout ValueBuilder) throws(DecodeError) in b.namedFlags(label, try b.r.u8(), names) }
    }

    static func flags16(_ label: FieldLabel, _ names: BitNames) -> Decoder {
        { (b: inout ValueBuilder) throws(DecodeError) in b.namedFlags(label, try b.r.u16(), names) }
    }

    static func dateTime(_ label: FieldLabel) -> Decoder {
        { (b: inout ValueBuilder) throws(DecodeError) in try b.dateTime(label, summary: true) }
    }
}

// MARK: Structured values

extension CharacteristicValues {
    static func appearance(_ b: inout ValueBuilder) throws(DecodeError) {
        let v = try b.r.u16()
        let n = AssignedNumbers.appearanceName(v) ?? "Unknown"
        b.add(Field("Appearance", .named(UInt64(v), hex: 4, FieldLabel(n)))) {
            $0 += "Appearance "
            $0.write(n)
            $0 += " ("
            $0.write(hex: v, width: 4)
            $0 += ")"
        }
    }

    static func reconnectionAddress(_ b: inout ValueBuilder) throws(DecodeError) {
        let a = try b.r.address()
        b.add(Field("Reconnection Address", .address(a)), "Reconnection Address " + a.description)
    }

    /// Peripheral Preferred Connection Parameters; 0xFFFF means no specific value.
    static func preferredConnectionParameters(_ b: inout ValueBuilder) throws(DecodeError) {
        let minI = try b.r.u16(), maxI = try b.r.u16(), latency = try b.r.u16(), timeout = try b.r.u16()
        func interval(_ label: FieldLabel, _ v: UInt16) -> (Field, String) {
            if v == 0xFFFF { return (Field(label, .named(0xFFFF, hex: 4, "no specific value")), "any") }
            let ms = Double(v) * 1.25
            return (Field(label, .quantity(UInt64(v), hex: 4, ms, unit: "ms")), fixed(ms, 2))
        }
        let a = interval("Minimum Connection Interval", minI), c = interval("Maximum Connection Interval", maxI)
        b.add(a.0)
        b.add(c.0)
        b.add(Field("Peripheral Latency", .uint(UInt64(latency), hex: 0)))
        let t: String
        if timeout == 0xFFFF {
            b.add(Field("Connection Supervision Timeout Multiplier", .named(0xFFFF, hex: 4, "no specific value")))
            t = "any"
        } else {
            b.add(Field("Connection Supervision Timeout Multiplier", .quantity(UInt64(timeout), hex: 4, Double(timeout) * 10, unit: "ms")))
            t = "\(Int(timeout) * 10) ms"
        }
        b.part("Interval " + a.1 + "–" + c.1 + " ms, Latency \(latency), Timeout " + t)
    }

    static func serviceChanged(_ b: inout ValueBuilder) throws(DecodeError) {
        let s = try b.r.u16(), e = try b.r.u16()
        b.add(Field("Start of Affected Attribute Handle Range", .uint(UInt64(s), hex: 4)))
        b.add(Field("End of Affected Attribute Handle Range", .uint(UInt64(e), hex: 4)))
        b.part("Service Changed " + Hex.prefixed(s, width: 4) + "–" + Hex.prefixed(e, width: 4))
    }

    /// Heart Rate Measurement (HRS 3.1): flags select 16-bit rate, contact, energy, RR intervals.
    static func heartRateMeasurement(_ b: inout ValueBuilder) throws(DecodeError) {
        let f = try b.r.u8()
        b.flags("Flags", f, heartRateFlags)
        let rate = f & 1 != 0 ? UInt64(try b.r.u16()) : UInt64(try b.r.u8())
        b.add("Heart Rate Measurement Value", .quantity(rate, hex: 0, Double(rate), unit: "bpm")) {
            $0 += "Heart Rate "
            $0.write(rate)
            $0 += " bpm"
        }
        if f & 0x04 != 0 {
            let detected = f & 0x02 != 0
            b.add(Field("Sensor Contact", .named(UInt64(detected ? 1 : 0), hex: 0, detected ? "detected" : "not detected")),
                  detected ? nil : "no contact")
        }
        if f & 0x08 != 0 {
            let e = try b.r.u16()
            b.quantity("Energy Expended", raw: UInt64(e), Double(e), "kJ", decimals: 0, summary: "Energy")
        }
        if f & 0x10 != 0 {
            // One part, "RR 0.781 0.790 s", written interval by interval.
            var listed = false
            while b.r.remaining >= 2 {
                let v = try b.r.u16()
                let s = Double(v) / 1024
                b.add("RR-Interval", .quantity(UInt64(v), hex: 0, s, unit: "s"))
                b.write(continuing: listed) { $0 += listed ? " " : "RR "; $0.write(fixed: s, decimals: 3) }
                listed = true
            }
            if listed { b.write(continuing: true) { $0 += " s" } }
        }
    }

    /// Temperature Measurement (HTS 3.1): FLOAT in °C or °F, optional time stamp and type.
    static func temperatureMeasurement(_ label: FieldLabel) -> Decoder {
        { (b: inout ValueBuilder) throws(DecodeError) in
            let f = try b.r.u8()
            b.flags("Flags", f, temperatureFlags)
            let raw = try b.r.u32()
            let unit = f & 1 != 0 ? "°F" : "°C"
            b.medical("Temperature Measurement Value", MedicalFloat(float: raw), raw: UInt64(raw), hex: 8, unit, summary: label.string)
            if f & 2 != 0 { try b.dateTime("Time Stamp", summary: false) }
            if f & 4 != 0 {
                let t = try b.r.u8()
                let n = GATTValueTables.name(GATTValueTables.temperatureTypes, t)
                b.add(Field("Temperature Type", .named(UInt64(t), hex: 2, FieldLabel(n))), n)
            }
        }
    }

    /// Blood Pressure Measurement / Intermediate Cuff Pressure (BLS 3.1): SFLOAT compound value.
    static func bloodPressure(_ b: inout ValueBuilder) throws(DecodeError) {
        let f = try b.r.u8()
        b.flags("Flags", f, bloodPressureFlags)
        let unit = f & 1 != 0 ? "kPa" : "mmHg"
        let sys = try b.r.u16(), dia = try b.r.u16(), map = try b.r.u16()
        let fs = MedicalFloat(sfloat: sys), fd = MedicalFloat(sfloat: dia), fm = MedicalFloat(sfloat: map)
        b.medical("Systolic", fs, raw: UInt64(sys), hex: 4, unit)
        b.medical("Diastolic", fd, raw: UInt64(dia), hex: 4, unit)
        b.medical("Mean Arterial Pressure", fm, raw: UInt64(map), hex: 4, unit)
        b.part("Blood Pressure " + fs.description + "/" + fd.description + " " + unit + ", MAP " + fm.description)
        if f & 2 != 0 { try b.dateTime("Time Stamp", summary: false) }
        if f & 4 != 0 { try b.sfloat("Pulse Rate", "bpm", summary: "Pulse") }
        if f & 8 != 0 {
            let u = try b.r.u8()
            b.add(Field("User ID", .named(UInt64(u), hex: 2, FieldLabel(u == 0xFF ? "Unknown User" : "User \(u)"))))
        }
        if f & 0x10 != 0 { b.flags("Measurement Status", try b.r.u16(), bloodPressureStatus) }
    }

    /// Glucose Measurement (GLS 3.106): sequence number, base time, optional offset and concentration.
    static func glucoseMeasurement(_ b: inout ValueBuilder) throws(DecodeError) {
        let f = try b.r.u8()
        b.flags("Flags", f, glucoseFlags)
        let seq = try b.r.u16()
        b.add(Field("Sequence Number", .uint(UInt64(seq), hex: 0)), "Glucose #\(seq)")
        try b.dateTime("Base Time", summary: false)
        if f & 1 != 0 {
            let o = Int16(bitPattern: try b.r.u16())
            b.add(Field("Time Offset", .signed(Int64(o), unit: "min")))
        }
        if f & 2 != 0 {
            try b.sfloat("Glucose Concentration", f & 4 != 0 ? "mol/L" : "kg/L", summary: "Concentration")
            let ts = try b.r.u8()
            let loc = GATTValueTables.glucoseLocations[ts >> 4] ?? "Reserved"
            b.add(Field("Type", .named(UInt64(ts & 0xF), hex: 1, FieldLabel(GATTValueTables.name(GATTValueTables.glucoseTypes, ts & 0xF)))))
            b.add(Field("Sample Location", .named(UInt64(ts >> 4), hex: 1, FieldLabel(loc))))
        }
        if f & 8 != 0 { b.flags("Sensor Status Annunciation", try b.r.u16(), glucoseStatus) }
    }

    /// Weight Measurement (WSS 3.1): SI (0.005 kg, 0.001 m) or imperial (0.01 lb, 0.1 in).
    static func weightMeasurement(_ b: inout ValueBuilder) throws(DecodeError) {
        let f = try b.r.u8()
        b.flags("Flags", f, weightFlags)
        let imperial = f & 1 != 0
        let w = try b.r.u16()
        if w == 0xFFFF {
            b.add(Field("Weight", .named(0xFFFF, hex: 4, "Measurement Unsuccessful")), "Weight unsuccessful")
        } else {
            b.quantity("Weight", raw: UInt64(w), imperial ? Double(w) * 0.01 : Double(w) * 0.005,
                       imperial ? "lb" : "kg", decimals: imperial ? 2 : 3, summary: "Weight")
        }
        if f & 2 != 0 { try b.dateTime("Time Stamp", summary: false) }
        if f & 4 != 0 {
            let u = try b.r.u8()
            b.add(Field("User ID", .named(UInt64(u), hex: 2, FieldLabel(u == 0xFF ? "Unknown User" : "User \(u)"))))
        }
        if f & 8 != 0 {
            let bmi = try b.r.u16(), h = try b.r.u16()
            b.quantity("BMI", raw: UInt64(bmi), Double(bmi) * 0.1, "kg/m²", decimals: 1, summary: "BMI")
            b.quantity("Height", raw: UInt64(h), imperial ? Double(h) * 0.1 : Double(h) * 0.001,
                       imperial ? "in" : "m", decimals: imperial ? 1 : 3)
        }
    }

    /// CSC Measurement (CSCS 3.1): cumulative revolutions with event times in 1/1024 s.
    static func cscMeasurement(_ b: inout ValueBuilder) throws(DecodeError) {
        let f = try b.r.u8()
        b.flags("Flags", f, cyclingSpeedFlags)
        if f & 1 != 0 {
            let revs = try b.r.u32(), t = try b.r.u16()
            b.add(Field("Cumulative Wheel Revolutions", .uint(UInt64(revs), hex: 0)), "Wheel \(revs) revs")
            b.quantity("Last Wheel Event Time", raw: UInt64(t), Double(t) / 1024, "s", decimals: 3, summary: "at")
        }
        if f & 2 != 0 {
            let revs = try b.r.u16(), t = try b.r.u16()
            b.add(Field("Cumulative Crank Revolutions", .uint(UInt64(revs), hex: 0)), "Crank \(revs) revs")
            b.quantity("Last Crank Event Time", raw: UInt64(t), Double(t) / 1024, "s", decimals: 3, summary: "at")
        }
    }

    /// RSC Measurement (RSCS 3.1): speed in 1/256 m/s, cadence, optional stride and distance.
    static func rscMeasurement(_ b: inout ValueBuilder) throws(DecodeError) {
        let f = try b.r.u8()
        b.flags("Flags", f, runningSpeedFlags)
        let speed = try b.r.u16(), cadence = try b.r.u8()
        b.quantity("Instantaneous Speed", raw: UInt64(speed), Double(speed) / 256, "m/s", decimals: 2, summary: "Speed")
        b.add(Field("Instantaneous Cadence", .quantity(UInt64(cadence), hex: 0, Double(cadence), unit: "/min")),
              "Cadence \(cadence) /min")
        if f & 1 != 0 {
            let s = try b.r.u16()
            b.quantity("Instantaneous Stride Length", raw: UInt64(s), Double(s) / 100, "m", decimals: 2, summary: "Stride")
        }
        if f & 2 != 0 {
            let d = try b.r.u32()
            b.quantity("Total Distance", raw: UInt64(d), Double(d) / 10, "m", decimals: 1, summary: "Distance")
        }
        b.part(f & 4 != 0 ? "running" : "walking")
    }

    /// Cycling Power Measurement (CPS 3.2): 16-bit flags select thirteen optional fields.
    static func cyclingPowerMeasurement(_ b: inout ValueBuilder) throws(DecodeError) {
        let f = try b.r.u16()
        b.flags("Flags", f, cyclingPowerFlags)
        let p = Int16(bitPattern: try b.r.u16())
        b.add(Field("Instantaneous Power", .signed(Int64(p), unit: "W")), "Power \(p) W")
        if f & 0x001 != 0 {
            let v = try b.r.u8()
            b.quantity("Pedal Power Balance", raw: UInt64(v), Double(v) / 2, "%", decimals: 1, summary: "Balance")
        }
        if f & 0x004 != 0 {
            let v = try b.r.u16()
            b.quantity("Accumulated Torque", raw: UInt64(v), Double(v) / 32, "Nm", decimals: 2)
        }
        if f & 0x010 != 0 {
            let revs = try b.r.u32(), t = try b.r.u16()
            b.add(Field("Cumulative Wheel Revolutions", .uint(UInt64(revs), hex: 0)), "Wheel \(revs) revs")
            b.quantity("Last Wheel Event Time", raw: UInt64(t), Double(t) / 2048, "s", decimals: 3)
        }
        if f & 0x020 != 0 {
            let revs = try b.r.u16(), t = try b.r.u16()
            b.add(Field("Cumulative Crank Revolutions", .uint(UInt64(revs), hex: 0)), "Crank \(revs) revs")
            b.quantity("Last Crank Event Time", raw: UInt64(t), Double(t) / 1024, "s", decimals: 3)
        }
        if f & 0x040 != 0 {
            let mx = Int16(bitPattern: try b.r.u16()), mn = Int16(bitPattern: try b.r.u16())
            b.add(Field("Maximum Force Magnitude", .signed(Int64(mx), unit: "N")))
            b.add(Field("Minimum Force Magnitude", .signed(Int64(mn), unit: "N")))
        }
        if f & 0x080 != 0 {
            let mx = Int16(bitPattern: try b.r.u16()), mn = Int16(bitPattern: try b.r.u16())
            b.add(Field("Maximum Torque Magnitude", .quantity(UInt64(UInt16(bitPattern: mx)), hex: 4, Double(mx) / 32, unit: "Nm")))
            b.add(Field("Minimum Torque Magnitude", .quantity(UInt64(UInt16(bitPattern: mn)), hex: 4, Double(mn) / 32, unit: "Nm")))
        }
        if f & 0x100 != 0 {
            let v = try b.r.u24()
            b.add(Field("Maximum Angle", .quantity(UInt64(v & 0xFFF), hex: 0, Double(v & 0xFFF), unit: "°")))
            b.add(Field("Minimum Angle", .quantity(UInt64(v >> 12), hex: 0, Double(v >> 12), unit: "°")))
        }
        if f & 0x200 != 0 {
            let v = try b.r.u16()
            b.add(Field("Top Dead Spot Angle", .quantity(UInt64(v), hex: 0, Double(v), unit: "°")))
        }
        if f & 0x400 != 0 {
            let v = try b.r.u16()
            b.add(Field("Bottom Dead Spot Angle", .quantity(UInt64(v), hex: 0, Double(v), unit: "°")))
        }
        if f & 0x800 != 0 {
            let v = try b.r.u16()
            b.add(Field("Accumulated Energy", .quantity(UInt64(v), hex: 0, Double(v), unit: "kJ")), "Energy \(v) kJ")
        }
    }

    /// System ID: 40-bit manufacturer-defined identifier, then the 24-bit OUI.
    static func systemID(_ b: inout ValueBuilder) throws(DecodeError) {
        let m = try b.r.uint(width: 5), oui = try b.r.u24()
        b.add(Field("Manufacturer Identifier", .uint(m, hex: 10)))
        b.add(Field("Organizationally Unique Identifier", .uint(UInt64(oui), hex: 6)))
        b.write(continuing: false) {
            $0 += "System ID "
            $0.write(hex: m, width: 10)
            $0 += ", OUI "
            $0.write(hex: oui, width: 6)
        }
    }

    /// PnP ID: vendor ID source (1 Bluetooth SIG, 2 USB-IF), vendor, product, version 0xJJMN.
    static func pnpID(_ b: inout ValueBuilder) throws(DecodeError) {
        let src = try b.r.u8(), vendor = try b.r.u16(), product = try b.r.u16(), version = try b.r.u16()
        let srcName = src == 1 ? "Bluetooth SIG" : src == 2 ? "USB Implementer's Forum" : "Reserved"
        b.add(Field("Vendor ID Source", .named(UInt64(src), hex: 2, FieldLabel(srcName))))
        let company = src == 1 ? AssignedNumbers.companyName(vendor) : nil
        b.add(Field("Vendor ID", (src == 1 ? .company(vendor) : nil) ?? .uint(UInt64(vendor), hex: 4)))
        b.add(Field("Product ID", .uint(UInt64(product), hex: 4)))
        let v = "\(version >> 8).\(version >> 4 & 0xF).\(version & 0xF)"
        b.add(Field("Product Version", .uint(UInt64(version), hex: 4), [Field("Text", .text(v))]))
        b.write(continuing: false) {
            $0 += "Vendor "
            $0.write(hex: vendor, width: 4)
            $0 += " ("
            $0.write(company ?? srcName)
            $0 += "), Product "
            $0.write(hex: product, width: 4)
            $0 += ", Version "
            $0.write(v)
        }
    }

    /// Current Time (CTS 3.1): Exact Time 256 and the adjust reason.
    static func currentTime(_ b: inout ValueBuilder) throws(DecodeError) {
        try b.dateTime("Date Time", summary: true)
        let dow = try b.r.u8(), frac = try b.r.u8(), reason = try b.r.u8()
        let day = GATTValueTables.name(GATTValueTables.daysOfWeek, dow)
        b.add(Field("Day of Week", .named(UInt64(dow), hex: 2, FieldLabel(day))), day)
        b.add(Field("Fractions256", .quantity(UInt64(frac), hex: 0, Double(frac) / 256, unit: "s")))
        b.flags("Adjust Reason", reason, adjustReasons)
    }

    static func dayDateTime(_ b: inout ValueBuilder) throws(DecodeError) {
        try b.dateTime("Date Time", summary: true)
        let dow = try b.r.u8()
        let day = GATTValueTables.name(GATTValueTables.daysOfWeek, dow)
        b.add(Field("Day of Week", .named(UInt64(dow), hex: 2, FieldLabel(day))), day)
    }

    /// Local Time Information: time zone in 15-minute steps (−128 unknown), DST offset.
    static func localTimeInformation(_ b: inout ValueBuilder) throws(DecodeError) {
        let tz = try b.r.i8(), dst = try b.r.u8()
        if tz == -128 {
            b.add(Field("Time Zone", .named(0x80, hex: 2, "unknown")), "Time Zone unknown")
        } else {
            let minutes = Int(tz) * 15
            let text = "UTC" + (minutes < 0 ? "-" : "+") + "\(abs(minutes) / 60):" + (abs(minutes) % 60 == 0 ? "00" : "\(abs(minutes) % 60)")
            b.add(Field("Time Zone", .signed(Int64(minutes), unit: "min")), "Time Zone " + text)
        }
        let n = GATTValueTables.dstOffsets[dst] ?? "Reserved"
        b.add(Field("DST Offset", .named(UInt64(dst), hex: 2, FieldLabel(n))), n)
    }

    static func hidInformation(_ b: inout ValueBuilder) throws(DecodeError) {
        let bcd = try b.r.u16(), country = try b.r.u8(), f = try b.r.u8()
        let v = "\(bcd >> 8).\(Hex.padded(bcd & 0xFF, width: 2))"
        b.add(Field("bcdHID", .uint(UInt64(bcd), hex: 4), [Field("Text", .text(v))]), "HID " + v)
        b.add(Field("bCountryCode", .uint(UInt64(country), hex: 2)))
        b.flags("Flags", f, hidFlags)
    }

    /// Client Characteristic Configuration: bit 0 notifications, bit 1 indications.
    static func cccd(_ b: inout ValueBuilder) throws(DecodeError) {
        let v = try b.r.u16()
        b.flags("Client Characteristic Configuration", v, configurationBits)
        b.part(GATTSubscription.describe(notify: v & 1 != 0, indicate: v & 2 != 0))
    }

    /// Characteristic Presentation Format (Vol 3 Part G 3.3.3.5).
    static func presentationFormat(_ b: inout ValueBuilder) throws(DecodeError) {
        let format = try b.r.u8(), exponent = try b.r.i8(), unit = try b.r.u16(), ns = try b.r.u8(), desc = try b.r.u16()
        let fname = GATTValueTables.formatName(format), uname = GATTValueTables.unitName(unit)
        b.add(Field("Format", .named(UInt64(format), hex: 2, FieldLabel(fname))))
        b.add(Field("Exponent", .int(Int64(exponent))))
        b.add(Field("Unit", .named(UInt64(unit), hex: 4, FieldLabel(uname))))
        b.add(Field("Name Space", .named(UInt64(ns), hex: 2, ns == 1 ? "Bluetooth SIG" : "Reserved")))
        let dname = ns == 1 ? GATTValueTables.descriptionName(desc) : "Unknown"
        b.add(Field("Description", .named(UInt64(desc), hex: 4, FieldLabel(dname))))
        b.part("Format " + fname + ", Exponent \(exponent), Unit " + uname + (ns == 1 && desc != 0 ? ", " + dname : ""))
    }

    static func aggregateFormat(_ b: inout ValueBuilder) throws(DecodeError) {
        var hs: [String] = []
        while b.r.remaining >= 2 {
            let h = try b.r.u16()
            b.add(.handle(h))
            hs.append(Hex.prefixed(h, width: 4))
        }
        b.part("Aggregate of " + hs.joined(separator: ", "))
    }

    static func externalReportReference(_ b: inout ValueBuilder) throws(DecodeError) {
        let width = b.r.remaining == 16 ? 16 : 2
        let u = try b.r.uuid(width: width)
        b.add(uuidField(u, label: "External Report Reference"), "External Report " + attUUIDName(u))
    }

    static func reportReference(_ b: inout ValueBuilder) throws(DecodeError) {
        let id = try b.r.u8(), type = try b.r.u8()
        let n = GATTValueTables.name(GATTValueTables.reportTypes, type)
        b.add(Field("Report ID", .uint(UInt64(id), hex: 2)))
        b.add(Field("Report Type", .named(UInt64(type), hex: 2, FieldLabel(n))))
        b.write(continuing: false) {
            $0 += "Report ID "
            $0.write(Int(id))
            $0 += ", "
            $0.write(n)
        }
    }
}

extension CharacteristicValues {
    // The names of the values' bit fields, by bit: made once, not at each value (`ValueBuilder.flags`).
    static let heartRateFlags: BitNames = ["Heart Rate Value Format UINT16", "Sensor Contact Detected",
                                           "Sensor Contact Supported", "Energy Expended Present",
                                           "RR-Interval Present"]
    static let temperatureFlags: BitNames = ["Fahrenheit", "Time Stamp Present", "Temperature Type Present"]
    static let bloodPressureFlags: BitNames = ["Units kPa", "Time Stamp Present", "Pulse Rate Present",
                                               "User ID Present", "Measurement Status Present"]
    static let bloodPressureStatus: BitNames = ["Body Movement Detected", "Cuff Too Loose",
                                                "Irregular Pulse Detected", "Pulse Rate Exceeds Upper Limit",
                                                "Pulse Rate Below Lower Limit", "Improper Measurement Position"]
    static let glucoseFlags: BitNames = ["Time Offset Present",
                                         "Glucose Concentration, Type and Sample Location Present",
                                         "Glucose Concentration Units mol/L", "Sensor Status Annunciation Present",
                                         "Context Information Follows"]
    static let glucoseStatus: BitNames = ["Device battery low", "Sensor malfunction", "Sample size insufficient",
                                          "Strip insertion error", "Strip type incorrect",
                                          "Sensor result higher than the device can process",
                                          "Sensor result lower than the device can process",
                                          "Sensor temperature too high", "Sensor temperature too low",
                                          "Sensor read interrupted", "General device fault", "Time fault"]
    static let weightFlags: BitNames = ["Imperial Units", "Time Stamp Present", "User ID Present",
                                        "BMI and Height Present"]
    static let cyclingSpeedFlags: BitNames = ["Wheel Revolution Data Present", "Crank Revolution Data Present"]
    static let runningSpeedFlags: BitNames = ["Instantaneous Stride Length Present", "Total Distance Present",
                                              "Running"]
    static let cyclingPowerFlags: BitNames = ["Pedal Power Balance Present", "Pedal Power Balance Reference Left",
                                              "Accumulated Torque Present", "Accumulated Torque Source Crank",
                                              "Wheel Revolution Data Present", "Crank Revolution Data Present",
                                              "Extreme Force Magnitudes Present",
                                              "Extreme Torque Magnitudes Present", "Extreme Angles Present",
                                              "Top Dead Spot Angle Present", "Bottom Dead Spot Angle Present",
                                              "Accumulated Energy Present", "Offset Compensation Indicator"]
    static let adjustReasons: BitNames = ["Manual Time Update", "External Reference Time Update",
                                          "Change of Time Zone", "Change of DST"]
    static let hidFlags: BitNames = ["RemoteWake", "NormallyConnectable"]
    static let configurationBits: BitNames = ["Notification", "Indication"]
}
