import Decoders

/// Prints the advertisers of a capture (`blesniff devices`).
public enum DevicesReport {
    /// - Parameter start: time of the capture's first frame: first and last seen are shown as
    ///   `read` shows a frame's time, in seconds from there (JSON keeps the nanoseconds).
    public static func text(_ devices: [DeviceSummary], file: String, start: Int64? = nil, to out: Output) {
        out.write("\(file): \(devices.count) advertiser\(devices.count == 1 ? "" : "s")\n")
        for d in devices {
            out.write("\n")
            var head = d.address.description
            if let k = d.randomKind { head += " (" + k.rawValue + ")" } else { head += d.addressType == 0 ? " (public)" : " (type \(d.addressType))" }
            if let n = d.name { head += " \"" + n + "\"" }
            out.write(head + "\n")
            FieldRendering.writeText(d.fields.map { relativeTime($0, start: start) }, indent: 2, to: out)
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

    /// First and last seen as seconds from the capture's start, six decimals as `read` prints them.
    static func relativeTime(_ f: Field, start: Int64?) -> Field {
        guard let start, f.label == "First Seen" || f.label == "Last Seen", case .int(let ns) = f.value else { return f }
        let t = ns - start
        let sign = t < 0 ? "-" : ""
        let micros = (abs(t) + 500) / 1000
        let fraction = String(micros % 1_000_000)
        let seconds = String(micros / 1_000_000) + "." + String(repeating: "0", count: 6 - fraction.count) + fraction
        return Field(f.label, .text(sign + seconds + " s"), f.children)
    }
}
