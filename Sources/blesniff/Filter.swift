import ArgumentParser
import Decoders
import Report

/// `--filter`, `--connection` and `--device`: which frames a command keeps.
struct FilterOptions: ParsableArguments {
    @Option(name: [.customShort("Y"), .customLong("filter")], help: ArgumentHelp(
        "Keep only the frames that match a display filter, e.g. 'att.opcode == 0x1b' (see blesniff fields).",
        valueName: "expr"))
    var filter: String?

    @Option(help: ArgumentHelp("Keep only the frames of this connection (its number in read --format json).", valueName: "n"))
    var connection: Int?

    /// The compiled filter, nil when none was given; a bad one is reported (with a caret under
    /// the fault) and exits with status 2. `device`: `--device` of `DeviceFilterOption`.
    func compile(device: String? = nil) throws -> DisplayFilter? {
        do {
            var parts: [DisplayFilter] = []
            if let filter { parts.append(try DisplayFilter(filter)) }
            if let connection { parts.append(DisplayFilter.connection(connection)) }
            if let device { parts.append(try DisplayFilter.device(device)) }
            return try DisplayFilter.all(parts)
        } catch {
            stderr("blesniff: \(error)")
            throw ExitCode(2)
        }
    }
}

/// `--device ADDR` as a filter shortcut. Not in `report`, whose `--device` names a device under
/// test for the audit (there, `-Y 'device == ADDR'`).
struct DeviceFilterOption: ParsableArguments {
    @Option(help: ArgumentHelp("Keep only the frames to or from this device address (same as -Y 'device == ADDR').", valueName: "addr"))
    var device: String?
}

struct Fields: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fields",
        abstract: "List the fields a display filter can test, with their types.",
        discussion: """
            Field names are the keys of read --format json: a layer (att, hci_event, …) and the keys \
            below it joined by dots, or a frame field. A named, uuid or flags value can also be tested \
            by its JSON member (hci_event.event_code.name, att.uuid.uuid128, ….set). A field written in \
            numbered instances (hci_event.report_1, report_2, …) can be named without the number to \
            match any instance (hci_event.report.rssi). tshark's name of a field, where it has one, is \
            shown next to it and can be used in its place (btatt.opcode).
            """)

    @Argument(help: "Only the fields whose name starts with this.")
    var prefix: String?

    @Option(help: ArgumentHelp("Print the field table: what the decoders' tables can write and what they write for these captures (Swift source).", visibility: .hidden))
    var scan: [String] = []

    func run() throws {
        let out = Output()
        if !scan.isEmpty {
            let scanner = FieldScanner()
            // What the decoders' tables can write, then what the captures hold.
            let examples = Dissector()
            for p in FieldExamples.packets() { scanner.add(examples.dissect(p)) }
            examples.finish()
            for path in scan {
                let dissector = Dissector()
                _ = try CaptureInput().forEachPacket([path]) { scanner.add(dissector.dissect($0)) }
            }
            out.write(scanner.source(generator: "scripts/dev/generate_field_table.sh (blesniff fields --scan)"))
            out.flush()
            return
        }
        // A field is listed for its own name or its tshark name (`blesniff fields btatt`).
        // Numbered instances (report_1, report_2, …) are listed once, by the name without the
        // number, which matches any of them.
        var seen = Set<String>()
        var rows: [(name: String, type: String)] = []
        for f in FieldCatalog.all {
            let name = FieldCatalog.unnumbered(f.name)
            guard prefix.map({ p in f.name.hasPrefix(p) || name.hasPrefix(p) || FieldAliases.aliases(of: f.name).contains { $0.hasPrefix(p) } }) ?? true,
                  seen.insert(name).inserted else { continue }
            rows.append((name, f.type))
        }
        // Long names do not push every type to the right: past this width a name has its type
        // two spaces after it.
        let width = min(rows.map(\.name.count).max() ?? 0, 56)
        let typeWidth = rows.map(\.type.count).max() ?? 0
        for r in rows {
            out.write(r.name)
            out.write(String(repeating: " ", count: max(width - r.name.count, 0) + 2))
            out.write(r.type)
            let aliases = FieldAliases.aliases(of: r.name)
            if !aliases.isEmpty {
                out.write(String(repeating: " ", count: typeWidth - r.type.count + 2))
                out.write("tshark: " + aliases.joined(separator: ", "))
            }
            out.write("\n")
        }
        out.flush()
        if rows.isEmpty {
            stderr("blesniff: no field starts with \"\(prefix ?? "")\"")
            throw ExitCode(2)
        }
    }
}
