import ArgumentParser
import Decoders
import Report

struct Gatt: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatt",
        abstract: "Print each peer's attribute database, rebuilt from the traffic.",
        discussion: """
            Services, characteristics with their properties and value handles, descriptors, the last \
            value seen (decoded for SIG characteristics) and subscription state, per peer, like a GATT \
            browser shows them. A peer's database is carried across its connections. This host's own \
            database (when it acts as a server) is listed as "local".
            """)

    @OptionGroup var captures: CaptureReportOptions

    mutating func run() throws {
        let out = Output()
        let format = captures.format
        let ok = try captures.each { file, dissector in
            dissector.finish()
            let dbs = dissector.gatt.databases.filter { !$0.database.isEmpty }.map { (name: Self.name($0.key), key: $0.key, database: $0.database) }
            switch format {
            case .text:
                out.write(display: file)
                out.write(": \(dbs.count) attribute database\(dbs.count == 1 ? "" : "s")\n")
                for db in dbs {
                    let versions = db.database.versions
                    guard versions.count > 1 else {
                        out.write("\n" + db.name + "\n")
                        Self.writeTree(db.database, to: out)
                        continue
                    }
                    out.write("\n" + db.name + ": \(versions.count) database versions\n")
                    let changes = db.database.changesByVersion
                    for (i, v) in versions.enumerated() {
                        out.write("Version \(i + 1) (" + Self.frames(v.span) + ")" + (v.span.cause.map { ": " + $0.description } ?? "") + "\n")
                        if i > 0 {
                            out.write("Changes from version \(i):\n")
                            for c in changes[i] { out.write("  " + c.description + "\n") }
                        }
                        Self.writeTree(v.database, to: out)
                    }
                }
            case .json:
                out.write("{\"file\":" + JSONText.quoted(file) + ",\"databases\":[")
                for (i, db) in dbs.enumerated() {
                    if i > 0 { out.write(",") }
                    // Every member after "peer" brings its own leading comma: a database with no
                    // services (values seen for handles never discovered) has no fields to write.
                    out.write("{\"peer\":" + JSONText.quoted(db.name))
                    // The peer as fields too: tools match on the address, not on the label.
                    if let p = db.key.peer, let a = p.address {
                        out.write(",\"address\":\"" + a.description + "\"")
                        if let t = p.type { out.write(",\"address_type\":\"" + (t == 1 ? "random" : "public") + "\"") }
                    }
                    Self.writeJSONFields(db.database.fields, to: out)
                    let versions = db.database.versions
                    if versions.count > 1 { Self.writeJSONVersions(versions, changes: db.database.changesByVersion, to: out) }
                    out.write("}")
                }
                out.write("]}\n")
            }
        }
        out.flush()
        if !ok { throw ExitCode(2) }
    }

    /// The tree; values quote what the peer sent (names, strings): escaped, line breaks kept.
    static func writeTree(_ db: GATTDatabase, to out: Output) {
        let tree = db.textTree()
        out.write(display: tree, .keepNewlines)
        if !tree.hasSuffix("\n") { out.write("\n") }
    }

    static func frames(_ s: GATTVersionSpan) -> String {
        guard let a = s.firstFrame, let b = s.lastFrame else { return "no frames" }
        return a == b ? "frame \(a)" : "frames \(a)–\(b)"
    }

    /// `"versions"`: each version with its frames, why it began, what changed and its tree.
    static func writeJSONVersions(_ versions: [GATTDatabaseVersion], changes: [[GATTChange]], to out: Output) {
        out.write(",\"versions\":[")
        for (i, v) in versions.enumerated() {
            if i > 0 { out.write(",") }
            out.write("{\"version\":\(i + 1)")
            if let f = v.span.firstFrame { out.write(",\"first_frame\":\(f)") }
            if let f = v.span.lastFrame { out.write(",\"last_frame\":\(f)") }
            switch v.span.cause {
            case .serviceChanged(let f, let a, let b)?:
                out.write(",\"cause\":{\"kind\":\"service_changed\",\"frame\":\(f),\"start_handle\":\(a),\"end_handle\":\(b)}")
            case .rediscovered(let f)?:
                out.write(",\"cause\":{\"kind\":\"rediscovered\",\"frame\":\(f)}")
            case nil: break
            }
            out.write(",\"changes\":[")
            for (j, c) in changes[i].enumerated() {
                if j > 0 { out.write(",") }
                out.write("{\"change\":\"\(c.kind.rawValue)\",\"element\":\"\(c.element.rawValue)\",\"uuid\":" + JSONText.quoted(c.uuid.description))
                if let sv = c.service { out.write(",\"service\":" + JSONText.quoted(sv.description)) }
                if let h = c.before { out.write(",\"before\":\(h)") }
                if let h = c.after { out.write(",\"after\":\(h)") }
                out.write("}")
            }
            out.write("]")
            writeJSONFields(v.database.fields, to: out)
            out.write("}")
        }
        out.write("]")
    }

    /// A database's fields as members after others: nothing at all (not a lone comma) when it has none.
    static func writeJSONFields(_ fields: [Field], to out: Output) {
        guard !fields.isEmpty else { return }
        out.write(",")
        FieldRendering.writeJSONMembers(fields, arrays: repeatable, to: out)
    }

    /// Keys that can repeat in a database: always arrays in JSON, also with one element.
    static let repeatable: Set<String> = ["primary_service", "secondary_service", "included_service", "characteristic",
                                          "descriptor", "attribute"]

    static func name(_ key: GATTServer) -> String {
        if let p = key.peer { return "Peer " + p.description }
        return "Local (this host's GATT server)"
    }
}
