import Wire

/// Names used by characteristic value decoders (GATT Specification Supplement, Assigned Numbers).

/// IEEE 11073-20601 medical floats: SFLOAT (16-bit: 4-bit exponent, 12-bit mantissa) and
/// FLOAT (32-bit: 8-bit exponent, 24-bit mantissa), both base 10 with special values for
/// NaN, NRes (not at this resolution), ±infinity and a reserved code.
public enum MedicalFloat: Equatable, Sendable, CustomStringConvertible {
    case value(mantissa: Int32, exponent: Int8)
    case nan, nres, positiveInfinity, negativeInfinity, reserved

    /// 16-bit SFLOAT; special values have exponent 0 and mantissa 0x7FF, 0x800, 0x7FE, 0x802, 0x801.
    public init(sfloat raw: UInt16) {
        let e = Int8(truncatingIfNeeded: raw >> 12)
        self.init(mantissa: UInt32(raw & 0x0FFF), bits: 12, exponent: e >= 8 ? e - 16 : e)
    }

    /// 32-bit FLOAT; special values have exponent 0 and mantissa 0x7FFFFF, 0x800000, 0x7FFFFE, 0x800002, 0x800001.
    public init(float raw: UInt32) {
        self.init(mantissa: raw & 0x00FF_FFFF, bits: 24, exponent: Int8(truncatingIfNeeded: raw >> 24))
    }

    /// A two's-complement mantissa of `bits` bits; the special values sit around 2^(bits-1).
    private init(mantissa: UInt32, bits: Int, exponent: Int8) {
        let half = UInt32(1) << (bits - 1)
        switch exponent == 0 ? mantissa : 0 {
        case half - 1: self = .nan
        case half: self = .nres
        case half - 2: self = .positiveInfinity
        case half + 2: self = .negativeInfinity
        case half + 1: self = .reserved
        default:
            let m = Int32(mantissa)
            self = .value(mantissa: mantissa >= half ? m - Int32(half << 1) : m, exponent: exponent)
        }
    }

    public var double: Double? {
        switch self {
        case .value(let m, let e):
            var v = Double(m)
            if e >= 0 { for _ in 0..<Int(e) { v *= 10 } } else { for _ in 0..<Int(-Int(e)) { v /= 10 } }
            return v
        case .positiveInfinity: return .infinity
        case .negativeInfinity: return -.infinity
        default: return nil
        }
    }

    /// Exact decimal text of mantissa × 10^exponent ("36.6", "-0.05", "1200").
    public var description: String {
        switch self {
        case .nan: return "NaN"
        case .nres: return "NRes"
        case .positiveInfinity: return "+INF"
        case .negativeInfinity: return "-INF"
        case .reserved: return "Reserved"
        case .value(let m, let e):
            let negative = m < 0
            var digits = String(m.magnitude)
            if e >= 0 {
                if m != 0 { digits += String(repeating: "0", count: Int(e)) }
            } else {
                let places = Int(-Int(e))
                if digits.count <= places { digits = String(repeating: "0", count: places - digits.count + 1) + digits }
                digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -places))
            }
            return negative ? "-" + digits : digits
        }
    }
}

/// Decimal text of `x` with `decimals` digits after the point, without Foundation
/// (`TextLine.write(fixed:decimals:)` writes the same into a line).
func fixed(_ x: Double, _ decimals: Int) -> String {
    guard let f = TextCursor.fixedLayout(x, decimals: decimals) else {
        guard x.isFinite else { return x.isNaN ? "NaN" : (x < 0 ? "-INF" : "+INF") }
        return String(x)
    }
    return TextCursor.fixed(f.value, wholeDigits: f.wholeDigits, decimals: decimals, negative: f.negative)
}

enum GATTValueTables {
    /// Characteristic Presentation Format types (Assigned Numbers 2.4.1).
    static let formats: [String] = [
        "Reserved", "boolean", "unsigned 2-bit integer", "unsigned 4-bit integer", "uint8", "uint12", "uint16",
        "uint24", "uint32", "uint48", "uint64", "uint128", "sint8", "sint12", "sint16", "sint24", "sint32",
        "sint48", "sint64", "sint128", "float32", "float64", "SFLOAT", "FLOAT", "duint16", "utf8s", "utf16s",
        "struct", "medASN1",
    ]

    static func formatName(_ f: UInt8) -> String { Int(f) < formats.count ? formats[Int(f)] : "Reserved" }

    /// Units (Assigned Numbers 3.5): uuid16 → (name, symbol).
    static let units: [UInt16: (String, String)] = [
        0x2700: ("unitless", ""), 0x2701: ("metre", "m"), 0x2702: ("kilogram", "kg"), 0x2703: ("second", "s"),
        0x2704: ("ampere", "A"), 0x2705: ("kelvin", "K"), 0x2706: ("mole", "mol"), 0x2707: ("candela", "cd"),
        0x2712: ("metres per second", "m/s"), 0x2720: ("radian", "rad"), 0x2722: ("hertz", "Hz"),
        0x2723: ("newton", "N"), 0x2724: ("pascal", "Pa"), 0x2725: ("joule", "J"), 0x2726: ("watt", "W"),
        0x2727: ("coulomb", "C"), 0x2728: ("volt", "V"), 0x2729: ("farad", "F"), 0x272A: ("ohm", "Ω"),
        0x272B: ("siemens", "S"), 0x272C: ("weber", "Wb"), 0x272D: ("tesla", "T"), 0x272E: ("henry", "H"),
        0x272F: ("degree Celsius", "°C"), 0x2730: ("lumen", "lm"), 0x2731: ("lux", "lx"),
        0x2760: ("minute", "min"), 0x2761: ("hour", "h"), 0x2762: ("day", "d"), 0x2763: ("degree", "°"),
        0x2767: ("litre", "L"), 0x2780: ("bar", "bar"), 0x2781: ("millimetre of mercury", "mmHg"),
        0x27A2: ("inch", "in"), 0x27A3: ("foot", "ft"), 0x27A4: ("mile", "mi"),
        0x27A5: ("pound-force per square inch", "psi"), 0x27A6: ("kilometre per hour", "km/h"),
        0x27A7: ("mile per hour", "mph"), 0x27A8: ("revolution per minute", "rpm"),
        0x27AA: ("kilogram calorie", "kcal"), 0x27AB: ("kilowatt hour", "kWh"),
        0x27AC: ("degree Fahrenheit", "°F"), 0x27AD: ("percentage", "%"), 0x27AE: ("per mille", "‰"),
        0x27AF: ("beats per minute", "bpm"), 0x27B0: ("ampere hours", "Ah"),
        0x27B1: ("milligram per decilitre", "mg/dL"), 0x27B2: ("millimole per litre", "mmol/L"),
        0x27B8: ("pound", "lb"), 0x27C3: ("decibel", "dB"), 0x27C4: ("parts per million", "ppm"),
    ]

    static func unitName(_ u: UInt16) -> String { units[u]?.0 ?? "Unknown unit" }

    /// Presentation Format descriptions in the Bluetooth SIG namespace (Assigned Numbers 2.4.2.1).
    static let descriptions: [UInt16: String] = [
        0x0000: "unknown", 0x0100: "front", 0x0101: "back", 0x0102: "top", 0x0103: "bottom", 0x0104: "upper",
        0x0105: "lower", 0x0106: "main", 0x0107: "backup", 0x0108: "auxiliary", 0x0109: "supplementary",
        0x010A: "flash", 0x010B: "inside", 0x010C: "outside", 0x010D: "left", 0x010E: "right",
        0x010F: "internal", 0x0110: "external",
    ]

    static func descriptionName(_ d: UInt16) -> String {
        if let n = descriptions[d] { return n }
        if d >= 1 && d <= 0xFF { return "#\(d)" }
        return "Reserved"
    }

    static let bodySensorLocations: [String] = ["Other", "Chest", "Wrist", "Finger", "Hand", "Ear Lobe", "Foot"]
    static let temperatureTypes: [String] = [
        "Reserved", "Armpit", "Body (general)", "Ear (usually earlobe)", "Finger", "Gastrointestinal Tract",
        "Mouth", "Rectum", "Toe", "Tympanum (ear drum)",
    ]
    static let sensorLocations: [String] = [
        "Other", "Top of shoe", "In shoe", "Hip", "Front Wheel", "Left Crank", "Right Crank", "Left Pedal",
        "Right Pedal", "Front Hub", "Rear Dropout", "Chainstay", "Rear Wheel", "Rear Hub", "Chest", "Spider",
        "Chain Ring",
    ]
    static let alertLevels: [String] = ["No Alert", "Mild Alert", "High Alert"]
    static let daysOfWeek: [String] = ["Unknown", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    static let glucoseTypes: [String] = [
        "Reserved", "Capillary Whole blood", "Capillary Plasma", "Venous Whole blood", "Venous Plasma",
        "Arterial Whole blood", "Arterial Plasma", "Undetermined Whole blood", "Undetermined Plasma",
        "Interstitial Fluid (ISF)", "Control Solution",
    ]
    static let glucoseLocations: ByteTable<String> = [
        1: "Finger", 2: "Alternate Site Test (AST)", 3: "Earlobe", 4: "Control solution",
        15: "Sample Location value not available",
    ]
    static let protocolModes: [String] = ["Boot Protocol Mode", "Report Protocol Mode"]
    static let reportTypes: [String] = ["Reserved", "Input Report", "Output Report", "Feature Report"]
    static let dstOffsets: ByteTable<String> = [
        0: "Standard Time", 2: "Half an Hour Daylight Time (+0.5h)", 4: "Daylight Time (+1h)",
        8: "Double Daylight Time (+2h)", 255: "DST is not known",
    ]

    static func name(_ table: [String], _ v: UInt8) -> String { Int(v) < table.count ? table[Int(v)] : "Reserved" }
}
