import Decoders
import Wire

/// Prints the advertisers of a capture (`blesniff devices`).
public enum DevicesReport {
    /// Names and the file name go through `DisplayText`: a device chooses its name.
    /// - Parameter start: time of the capture's first frame: first and last seen are shown as
    ///   `read` shows a frame's time, in seconds from there (JSON keeps the nanoseconds).
    public static func text(_ devices: [DeviceSummary], untracked: UntrackedAdvertisers = UntrackedAdvertisers(), cap: Int = 0,
                            file: String, start: Int64? = nil, to out: Output) {
        out.write(display: file)
        out.write(": \(devices.count) advertiser\(devices.count == 1 ? "" : "s")")
        if !untracked.isEmpty { out.write(" in detail, \(untracked.advertisers) more only counted (past --max-advertisers \(cap))") }
        out.write("\n")
        for d in devices {
            out.write("\n")
            out.write(address: d.address.raw)
            if let id = d.identity { out.write(" (" + id.identity.kind + ")") } else if let k = d.randomKind { out.write(" (" + k.rawValue + ")") } else { out.write(d.addressType == 0 ? " (public)" : " (type \(d.addressType))") }
            if let n = d.nameBytes {
                out.write(" \"")
                out.write(display: n[...])
                out.write("\"")
            }
            out.write("\n")
            FieldRendering.writeText(d.fields.map { relativeTime($0, start: start) }, indent: 2, to: out)
        }
        guard !untracked.isEmpty else { return }
        out.write("\nOnly counted (past the first \(cap) advertisers):\n")
        for g in untracked.groups {
            out.write("  " + addressTypeName(g.addressType) + ": " + (g.atLeast ? "at least " : "") + "\(g.advertisers) advertiser"
                      + (g.advertisers == 1 ? "" : "s") + ", \(g.reports) report" + (g.reports == 1 ? "" : "s"))
            if let lo = g.rssiMin, let hi = g.rssiMax { out.write(", RSSI \(lo) to \(hi) dBm") }
            out.write("\n")
        }
    }

    static func addressTypeName(_ t: UInt8) -> String {
        AdvertisingReports.addressTypeNames[t] ?? "address type " + Hex.prefixed(t, width: 2)
    }

    /// Keys a device can have several of: always arrays in JSON, also with one element.
    static let repeatable: Set<String> = ["service_uuid", "manufacturer"]

    public static func json(_ devices: [DeviceSummary], untracked: UntrackedAdvertisers = UntrackedAdvertisers(), file: String,
                            to out: Output) {
        out.write("{\"file\":" + JSONText.quoted(file) + ",\"devices\":[")
        for (i, d) in devices.enumerated() {
            if i > 0 { out.write(",") }
            out.write("{")
            // Addresses seen are a list in JSON, also with one.
            FieldRendering.writeJSONMembers(d.fields.filter { $0.label != "Addresses Seen" }, arrays: repeatable, to: out)
            if d.identity != nil {
                out.write(",\"addresses_seen\":[" + d.addressesSeen.map { "\"" + $0.description + "\"" }.joined(separator: ",") + "]")
                out.write(",\"address_count\":\(d.addressCount)")
            }
            out.write("}")
        }
        out.write("]")
        if !untracked.isEmpty {
            out.write(",\"untracked\":{\"advertisers\":\(untracked.advertisers),\"reports\":\(untracked.reports),\"by_address_type\":[")
            for (i, g) in untracked.groups.enumerated() {
                if i > 0 { out.write(",") }
                out.write("{\"address_type\":\(g.addressType),\"name\":" + JSONText.quoted(addressTypeName(g.addressType))
                          + ",\"advertisers\":\(g.advertisers),\"at_least\":\(g.atLeast),\"reports\":\(g.reports)")
                if let lo = g.rssiMin, let hi = g.rssiMax { out.write(",\"rssi_min\":\(lo),\"rssi_max\":\(hi)") }
                out.write("}")
            }
            out.write("]}")
        }
        out.write("}\n")
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
