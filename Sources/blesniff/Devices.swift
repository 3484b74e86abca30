import ArgumentParser
import Decoders
import Report

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "Summarise every advertiser seen in the captures.",
        discussion: """
            For each advertiser: address and type, names, flags, appearance, services (16-bit ones also \
            in their 128-bit form; those matched through Apple's overflow area marked), manufacturer, TX \
            power, RSSI min/median/max, reports, first and last seen, observed advertising interval, \
            connectable, and whether a connection to it followed. Resolvable private addresses that an IRK \
            resolves (from the capture's pairing, an HCI resolving list or --keys) are one device under \
            its identity address, with the addresses seen.
            """)

    @Argument(help: "Capture files; - reads standard input.", completion: .file())
    var files: [String]

    @Option(help: "Output format: text or json.")
    var format: FramePrinter.Format = .text

    @Option(name: .customLong("uuid"), help: "A 128-bit service UUID to look for in Apple overflow areas (repeatable).")
    var uuids: [String] = []

    @Option(help: "Advertisers listed in full; later ones are only counted (by address type). Those the host connected to are always listed.")
    var maxAdvertisers = Advertisers.defaultMaxTracked

    @OptionGroup var decoding: DecodeOptions

    mutating func run() throws {
        var candidates: [BluetoothUUID] = []
        for u in uuids {
            guard let id = BluetoothUUID(u) else { throw ValidationError("--uuid \(u): not a UUID") }
            candidates.append(id)
        }
        let out = Output()
        let (format, maxAdvertisers, decoding) = (format, maxAdvertisers, decoding)
        var start = CaptureStart()
        let ok = try decoding.eachCapture(files, {
            decoding.dissector(trackAdvertisers: true, candidateUUIDs: candidates, maxAdvertisers: maxAdvertisers, findsFieldFaults: false)
        }, frame: { p, _ in _ = start.see(p) }) { file, dissector in
            defer { start = CaptureStart() }
            let devices = dissector.advertisers?.devices(resolvingWith: dissector.resolver) ?? []
            let untracked = dissector.advertisers?.untracked ?? UntrackedAdvertisers()
            let cap = dissector.advertisers?.maxTracked ?? maxAdvertisers
            switch format {
            case .text: DevicesReport.text(devices, untracked: untracked, cap: cap, file: file, start: start.time, to: out)
            case .json: DevicesReport.json(devices, untracked: untracked, file: file, to: out)
            }
        }
        out.flush()
        if !ok { throw ExitCode(2) }
    }
}
