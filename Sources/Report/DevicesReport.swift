import Decoders

/// Prints the advertisers of a capture (`blesniff devices`).
public enum DevicesReport {
    public static func text(_ devices: [DeviceSummary], file: String, to out: Output) {
        out.write("\(file): \(devices.count) advertiser\(devices.count == 1 ? "" : "s")\n")
        for d in devices {
            out.write("\n")
            var head = d.address.description
            if let k = d.randomKind { head += " (" + k.rawValue + ")" } else { head += d.addressType == 0 ? " (public)" : " (type \(d.addressType))" }
            if let n = d.name { head += " \"" + n + "\"" }
            out.write(head + "\n")
            FieldRendering.writeText(d.fields, indent: 2, to: out)
        }
    }

    public static func json(_ devices: [DeviceSummary], file: String, to out: Output) {
        out.write("{\"file\":" + FieldRendering.jsonString(file) + ",\"devices\":[")
        for (i, d) in devices.enumerated() {
            if i > 0 { out.write(",") }
            out.write("{")
            FieldRendering.writeJSONMembers(d.fields, to: out)
            out.write("}")
        }
        out.write("]}\n")
    }
}
