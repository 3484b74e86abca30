import ArgumentParser
import Decoders
import Report
import Wire
#if canImport(Glibc)
import Glibc
#endif

/// `blesniff mock CAPTURE --device ADDR -o peripheral.py`: a peripheral captured once, as a
/// Bumble script anyone can run.
struct Mock: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mock",
        abstract: "Write a Python (Bumble) peripheral that stands in for a device seen in a capture.",
        discussion: """
            The script advertises the device's advertising data and scan response, serves the GATT \
            database the capture discovered (same services, characteristics, properties and descriptors), \
            answers reads with the values the device gave (each read moves on to the next value seen), \
            replays its notifications and indications at their captured intervals once subscribed, and \
            logs writes. It runs on any Bumble transport (usb:0, serial:…, tcp-client:…, android-netsim); \
            its --self-test browses it in-process and prints what it found as JSON. Several captures are \
            read as one, in timestamp order.
            """)

    @Argument(help: "Capture files; - reads standard input.", completion: .file())
    var files: [String]

    @Option(help: ArgumentHelp("The device to stand in for, by address or advertised name (needed when several peers have a database).", valueName: "addr|name"))
    var device: String?

    @Option(name: [.short, .long], help: "Write the script to this file ('-' or none: standard output).", completion: .file())
    var output: String?

    /// Keys as every decoding command takes them; the captures are always read as one.
    @OptionGroup var decoding: DecodeOptions

    mutating func run() throws {
        let file = files.joined(separator: " + ")
        let dissector = decoding.dissector(trackAdvertisers: true, findsFieldFaults: false)
        let collector = MockCollector(gatt: dissector.gatt)
        var frames = 0
        let read = try decoding.input.forEachPacket(files) {
            frames += 1
            collector.add(dissector.dissect($0))
        }
        if !read && frames == 0 { throw ExitCode(2) }
        dissector.finish()

        let connected = Set(dissector.allConnections.compactMap(\.peer))
        let peer = choose(collector, connected: connected, advertisers: dissector.advertisers, file: file)
        let summary = dissector.advertisers?.devices.first { $0.address == peer.peer.address }
        guard let model = collector.device(peer.peer, database: peer.database, advertiser: summary) else { throw ExitCode(2) }
        let script = MockScript.render(model, source: files.count == 1 ? files[0] : file,
                                       scriptName: output.flatMap { $0 == "-" ? nil : $0 } ?? "peripheral.py")
        try write(script)
        if !read { throw ExitCode(2) }
    }

    /// The peer to stand in for: the one named, else the only one whose database was discovered.
    func choose(_ c: MockCollector, connected: Set<BDAddr>, advertisers: Advertisers?, file: String) -> (peer: PeerKey, database: GATTDatabase) {
        let peers = c.peerDatabases
        let undiscovered = ": its GATT database was never discovered (no service discovery in the capture)"
        if let d = device {
            // An address, or a name the device advertised (complete or shortened).
            let named = advertisers?.devices.first { a in
                [a.completeNameBytes, a.shortNameBytes].contains { $0.map { String(decoding: $0, as: UTF8.self) } == d }
            }?.address
            guard let address = BDAddr(parsing: d) ?? named else {
                fail(file, d + ": no device has this address or advertised this name" + Self.candidates(peers))
            }
            guard let p = peers.first(where: { $0.peer.address == address }) else {
                let seen = advertisers?.devices.contains { $0.address == address } == true
                let why = connected.contains(address) ? undiscovered
                    : seen ? ": advertised but never connected to, so its GATT database is not in the capture" : ": not in the capture"
                fail(file, address.description + why + Self.candidates(peers))
            }
            guard p.discovered else { fail(file, address.description + undiscovered) }
            return (p.peer, p.database)
        }
        let discovered = peers.filter(\.discovered)
        switch discovered.count {
        case 1: return (discovered[0].peer, discovered[0].database)
        case 0:
            if peers.isEmpty, connected.count == 1, let a = connected.first { fail(file, a.description + undiscovered) }
            fail(file, connected.isEmpty ? "no connection to a device in the capture, so no GATT database"
                                         : "no device's GATT database was discovered in the capture" + Self.candidates(peers))
        default:
            fail(file, "\(discovered.count) devices have a GATT database: choose one with --device" + Self.candidates(discovered))
        }
    }

    /// The peers as indented lines after the error: address and what their database holds.
    static func candidates(_ peers: [(peer: PeerKey, database: GATTDatabase, discovered: Bool)]) -> String {
        peers.map { p in
            let n = p.database.serviceTree.count
            return "\n  " + p.peer.description + ": " + (p.discovered ? "\(n) service\(n == 1 ? "" : "s")" : "database not discovered")
        }.joined()
    }

    func fail(_ file: String, _ reason: String) -> Never {
        stderr("blesniff: " + file + ": " + reason)
        Glibc.exit(2)
    }

    func write(_ script: String) throws {
        guard let path = output, path != "-" else {
            let out = Output(fd: 1)
            out.write(script)
            out.flush()
            return
        }
        guard let out = Output(path: path) else { fail(path, "cannot write") }
        out.write(script)
        out.close()
        if out.failed { fail(path, "writing failed") }
        chmod(path, 0o755)
    }
}
