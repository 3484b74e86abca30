import Decoders
import Wire

/// A `MockDevice` as a Python script using Google's Bumble stack: the captured tables first
/// (advertising, GATT database, values, replays), then fixed code that serves them. Pure:
/// model in, text out.
public enum MockScript {
    /// Bumble's names for the characteristic property bits, lowest first.
    static let propertyNames = ["BROADCAST", "READ", "WRITE_WITHOUT_RESPONSE", "WRITE", "NOTIFY", "INDICATE",
                                "AUTHENTICATED_SIGNED_WRITES", "EXTENDED_PROPERTIES"]
    /// AD types whose value is text worth quoting in a comment.
    static let textADTypes: Set<UInt8> = [0x08, 0x09]

    /// - Parameters:
    ///   - source: the capture's name as the user gave it.
    ///   - scriptName: what the script will be called, for its usage text.
    public static func render(_ device: MockDevice, source: String, scriptName: String = "peripheral.py") -> String {
        var out = header(device, source: source, scriptName: docText(baseName(scriptName)))
        out += prelude
        out += captured(device, source: source)
        out += runtime
        return out
    }

    // MARK: Header

    static func header(_ d: MockDevice, source: String, scriptName: String) -> String {
        let who = (d.name.map { "\($0) " } ?? "") + "(" + (d.addressKnown ? d.address.description : "address not in the capture") + ")"
        return """
            #!/usr/bin/env python3
            \"\"\"\(docText(who)), as a Bluetooth LE peripheral rebuilt from \(docText(describe(source))).

            It advertises what the device advertised, serves the GATT database the capture
            discovered, answers reads with the values the device gave (successive reads of an
            attribute go through its values in turn), replays the device's notifications and
            indications at their captured intervals once a client subscribes, and logs writes.

            Usage:
              python3 \(scriptName) usb:0
                  on any Bumble transport: serial:/dev/ttyACM0, tcp-client:127.0.0.1:9000,
                  android-netsim, hci-socket:0, ...
              python3 \(scriptName) --self-test
                  serves and browses the database in this process and prints what a client
                  finds, as JSON

            Made by `blesniff mock`. Needs Bumble (pip install bumble).

            Handles: Bumble numbers attributes itself, in the order they are added. The database
            is added in the capture's order and gaps between services are kept with placeholder
            attributes, so the handles are the captured ones unless the capture missed attributes
            inside a service; the script then logs which handles moved when it starts.
            \"\"\"

            """
    }

    // MARK: Captured tables

    static func captured(_ d: MockDevice, source: String) -> String {
        var out = """


            # ---------------------------------------------------------------------------
            # What the capture showed
            # ---------------------------------------------------------------------------
            SOURCE = \(pyString(baseName(source)))

            """
        if !d.addressKnown {
            out += "# The capture never showed the device's address (it starts mid-connection): a random static address stands in.\n"
            out += "ADDRESS = " + pyString(d.address.description.uppercased()) + "\n"
        } else if d.isRandomStatic {
            out += "ADDRESS = " + pyString(d.address.description.uppercased()) + "  # random static, as captured\n"
        } else {
            // A controller can only take a random static address: keep the captured bits, mark it static.
            let standIn = BDAddr(d.address.raw | 0xC000_0000_0000)
            let kind = d.addressType == 0 ? "public" : d.addressType == 1 ? d.address.randomKind.rawValue : "of unknown type"
            out += "# The captured address " + d.address.description + " is " + kind
                + ": a controller cannot take it, so a random static address stands in.\n"
            out += "ADDRESS = " + pyString(standIn.description.uppercased()) + "\n"
        }
        out += "NAME = " + pyString(d.name ?? "mock") + "\n\n"
        out += advertising("ADVERTISING_DATA", d.advertisingData, what: "advertising data")
        out += advertising("SCAN_RESPONSE_DATA", d.scanResponseData, what: "scan response")
        if let i = d.advertisingInterval, i > 0 {
            out += "ADVERTISING_INTERVAL_MS = " + decimal(Double(i) / 1e6, places: 3) + "  # median interval between the captured reports\n"
        } else {
            out += "ADVERTISING_INTERVAL_MS = 100.0  # not measurable from the capture\n"
        }
        out += """

            # The GATT database in handle order (the handle given is the service's start, the
            # characteristic's value, the descriptor's own). `values`: each distinct value the
            # attribute had in the capture, in the order seen; each read moves on to the next.
            # `replay`: what the characteristic notified or indicated, as (seconds after the
            # previous one or after the subscription, value).
            DATABASE = [

            """
        for s in d.services { out += service(s, d) }
        out += "]\n"
        return out
    }

    static func advertising(_ name: String, _ data: [UInt8]?, what: String) -> String {
        guard let data, !data.isEmpty else { return name + " = b''  # no " + what + " in the capture\n" }
        let ad = AdvertisingData(data[...], legacy: true)
        // Legacy advertising carries 31 bytes: longer (extended) data keeps the structures that fit.
        let kept = ad.structures.filter { $0.offset + 2 + $0.data.count <= AdvertisingData.legacyMaximum }
        var out = ""
        if kept.count < ad.structures.count || !ad.problems.isEmpty {
            out += "# The captured " + what + " is longer than legacy advertising allows (31 bytes) or malformed: the AD structures that fit are kept.\n"
        }
        out += name + " = (\n"
        for s in kept {
            let bytes = Array(data[s.offset..<(s.offset + 2 + s.data.count)])
            var note = s.name
            if textADTypes.contains(s.type) { note += " " + comment(String(decoding: s.data, as: UTF8.self).debugDescription) }
            out += "    " + pyBytes(bytes, width: 31) + "  # " + comment(note) + "\n"
        }
        if kept.isEmpty { out += "    b''\n" }
        out += ")\n"
        return out
    }

    static func service(_ s: GATTService, _ d: MockDevice) -> String {
        var out = "    ServiceSpec(" + Hex.prefixed(s.start, width: 4) + ", " + pyUUID(s.uuid) + ", "
            + pyString(AssignedNumbers.serviceName(s.uuid) ?? "Unknown Service") + ", ["
        out += s.characteristics.isEmpty ? "" : "\n"
        for c in s.characteristics { out += characteristic(c, d) }
        out += s.characteristics.isEmpty ? "]" : "    ]"
        if !s.isPrimary { out += ", primary=False" }
        if !s.includes.isEmpty { out += ", includes=[" + s.includes.map { Hex.prefixed($0.start, width: 4) }.joined(separator: ", ") + "]" }
        return out + "),\n"
    }

    static func characteristic(_ c: GATTCharacteristic, _ d: MockDevice) -> String {
        let indent = "        "
        let name = AssignedNumbers.characteristicName(c.uuid) ?? "Unknown Characteristic"
        let readable = c.properties.contains(.read)
        var values = readable ? d.values[c.valueHandle] ?? [] : []
        // Device Name never read: the name it advertised.
        if readable, values.isEmpty, c.uuid.uuid16 == 0x2A00, let name = d.name { values = [Array(name.utf8)] }
        var out = ""
        if readable && values.isEmpty { out += indent + "# Never read in the capture: served as an empty value.\n" }
        if d.capped.contains(c.valueHandle) {
            out += indent + "# The capture has more: the first \(MockCollector.maxValues) values and \(MockCollector.maxEmissions) notifications are kept.\n"
        }
        out += indent + "CharacteristicSpec(" + Hex.prefixed(c.valueHandle, width: 4) + ", " + pyUUID(c.uuid) + ", "
            + pyString(name) + ", " + pyString(properties(c.properties))
        out += valueList("values", values, uuid: c.uuid, indent: indent)
        if let e = d.emissions[c.valueHandle], !e.isEmpty {
            out += ", replay=[\n"
            for x in e {
                out += indent + "    (" + decimal(x.delay, places: 3) + ", " + pyBytes(x.value, indent: indent + "     ") + "),"
                    + valueComment(c.uuid, x.value) + "\n"
            }
            out += indent + "]"
        }
        let descriptors = c.descriptors
        if !descriptors.isEmpty {
            out += ", descriptors=[\n"
            for ds in descriptors {
                let dname = AssignedNumbers.descriptorName(ds.uuid) ?? "Unknown Descriptor"
                let dvalues = ds.uuid == GATTType.clientCharacteristicConfiguration ? [] : d.values[ds.handle] ?? []
                if ds.uuid != GATTType.clientCharacteristicConfiguration && dvalues.isEmpty {
                    out += indent + "    # Never read in the capture: served as an empty value.\n"
                }
                out += indent + "    DescriptorSpec(" + Hex.prefixed(ds.handle, width: 4) + ", " + pyUUID(ds.uuid) + ", " + pyString(dname)
                out += valueList("values", dvalues, uuid: ds.uuid, indent: indent + "    ") + "),\n"
            }
            out += indent + "]"
        }
        return out + "),\n"
    }

    /// `, values=[...]` with one value per line and its decoding as a comment; nothing when empty.
    static func valueList(_ key: String, _ values: [[UInt8]], uuid: BluetoothUUID, indent: String) -> String {
        guard !values.isEmpty else { return "" }
        var out = ", " + key + "=[\n"
        for v in values { out += indent + "    " + pyBytes(v, indent: indent + "    ") + "," + valueComment(uuid, v) + "\n" }
        return out + indent + "]"
    }

    static func valueComment(_ uuid: BluetoothUUID, _ v: [UInt8]) -> String {
        guard let s = CharacteristicValues.summary(uuid, v[...]) else { return "" }
        return "  # " + comment(s)
    }

    static func properties(_ p: GATTProperties) -> String {
        (0..<8).filter { p.rawValue & (1 << $0) != 0 }.map { propertyNames[$0] }.joined(separator: "|")
    }

    // MARK: Python literals

    /// '180D' for 16-bit UUIDs, the canonical 128-bit form otherwise (32-bit ones included).
    static func pyUUID(_ u: BluetoothUUID) -> String {
        if let s = u.uuid16 { return "'" + Hex.padded(s, width: 4) + "'" }
        return "'" + u.uuidString + "'"
    }

    /// A bytes literal: as text when every byte is printable ASCII, else in \x escapes; long
    /// values are split over lines (implicit concatenation inside parentheses).
    static func pyBytes(_ b: [UInt8], indent: String = "", width: Int? = nil) -> String {
        if b.isEmpty { return "b''" }
        // Short printable values are usually numbers that happen to be printable: hex for those.
        let text = b.count >= 3 && b.allSatisfy { (0x20...0x7E).contains($0) }
        let width = width ?? (text ? 64 : 16)
        var pieces: [String] = []
        var i = 0
        while i < b.count {
            let chunk = b[i..<min(i + width, b.count)]
            var s = "b'"
            for x in chunk {
                switch x {
                case _ where !text: s += "\\x" + Hex.padded(x, width: 2).lowercased()
                case UInt8(ascii: "\\"): s += "\\\\"
                case UInt8(ascii: "'"): s += "\\'"
                default: s.unicodeScalars.append(Unicode.Scalar(x))
                }
            }
            pieces.append(s + "'")
            i += width
        }
        if pieces.count == 1 { return pieces[0] }
        return "(\n" + pieces.map { indent + "    " + $0 }.joined(separator: "\n") + "\n" + indent + ")"
    }

    /// A single-quoted str literal; anything outside printable ASCII escaped.
    static func pyString(_ s: String) -> String {
        var out = "'"
        for u in s.unicodeScalars {
            switch u {
            case "\\": out += "\\\\"
            case "'": out += "\\'"
            case " "..."~": out.unicodeScalars.append(u)
            default:
                let v = u.value
                out += v < 0x100 ? "\\x" + Hex.padded(v, width: 2).lowercased()
                    : v < 0x10000 ? "\\u" + Hex.padded(v, width: 4).lowercased() : "\\U" + Hex.padded(v, width: 8).lowercased()
            }
        }
        return out + "'"
    }

    /// Text safe in a Python comment: printable ASCII only (a device's strings cannot end the
    /// comment and start code).
    static func comment(_ s: String) -> String {
        var out = ""
        for u in s.unicodeScalars {
            if (0x20...0x7E).contains(u.value) { out.unicodeScalars.append(u) } else { out += "?" }
        }
        return out
    }

    /// Text safe inside the docstring: a comment's text without backslashes or double quotes.
    static func docText(_ s: String) -> String {
        String(comment(s).map { $0 == "\\" || $0 == "\"" ? "'" : $0 })
    }

    static func baseName(_ path: String) -> String {
        path == "-" ? "(standard input)" : String(path.split(separator: "/").last ?? Substring(path))
    }

    static func describe(_ source: String) -> String {
        source == "-" ? "a capture read from standard input" : "the capture " + baseName(source)
    }

    static func decimal(_ v: Double, places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let n = Int64((v * scale).rounded())
        let whole = n / Int64(scale), frac = n % Int64(scale)
        let digits = String(frac)
        return String(whole) + "." + String(repeating: "0", count: places - digits.count) + digits
    }
}
