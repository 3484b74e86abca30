import Capture
import Decoders
import Glibc
import Report
import Wire

// The whole of `blesniff read -v` and `--format json` on one capture: reader, link-type
// framing, dissector (with advertisers), link-layer tracker for sniffer captures, printers,
// and the auditor fed by AuditFeed.
let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPipeline(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = input(data, size)
    guard let reader = try? CaptureReader(fileDescriptor: ScratchFile.load(bytes), name: "fuzz") else { return 0 }
    let dissector = Dissector(trackAdvertisers: true)
    let tracker = LinkLayerTracker()
    let out = Output(fd: devNull)
    let text = FramePrinter(format: .text, verbose: true, output: out)
    let json = FramePrinter(format: .json, verbose: false, output: out)
    let feed = AuditFeed(dissector: dissector)
    let auditor = Auditor()
    do {
        while let r = try reader.next() {
            let p = Packet(r)
            if case .linkLayer = p.kind {
                let f = tracker.process(p)
                consume(f.summary)
                consume(f.fields.count)
            }
            let d = dissector.dissect(p)
            text.print(d)
            json.print(d)
            feed.events(d, into: auditor)
        }
    } catch {
        consume(error.description)
    }
    if let adv = dissector.advertisers {
        DevicesReport.text(adv.devices, file: "fuzz", to: out)
        DevicesReport.json(adv.devices, file: "fuzz", to: out)
    }
    for f in auditor.finish() { consume(f.fingerprint) }
    out.flush()
    return 0
}
