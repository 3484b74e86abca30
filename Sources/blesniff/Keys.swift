import ArgumentParser
import Decoders
import Report

struct Keys: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List every key the captures reveal and what each one unlocks.",
        discussion: """
            LTKs (with EDIV and Rand, or of LE Secure Connections), IRKs with their identity address and \
            CSRKs distributed in SMP (in HCI ACL data, or over the air once decrypted); LTKs a host hands \
            its controller (HCI LE Enable Encryption, LE Long Term Key Request Reply); and the TK, \
            passkey and STK of LE legacy pairings sniffed over the air (Just Works and Passkey Entry are \
            found from the confirm values; give an OOB TK with --tk). Says which pairing value the \
            sniffer missed when one is needed.
            """)

    @Argument(help: "Capture files; - reads standard input.", completion: .file())
    var files: [String]

    @Option(help: "Output format: text or json.")
    var format: FramePrinter.Format = .text

    @OptionGroup var decoding: DecodeOptions

    mutating func run() throws {
        let out = Output()
        var ok = true
        for group in decoding.groups(files) {
            let file = group.joined(separator: " + ")
            let dissector = decoding.dissector(findsFieldFaults: false)
            var notes: [KeysReport.Note] = []
            var frames = 0
            let read = try decoding.input.forEachPacket(group) {
                frames += 1
                let d = dissector.dissect($0)
                if let note = d.keyNote, notes.count < Dissector.maxRevealedKeys { notes.append(KeysReport.Note(frame: $0.number, text: note)) }
            }
            ok = read && ok
            if !read, frames == 0 { continue }
            switch format {
            case .text: KeysReport.text(dissector.revealedKeys, notes: notes, file: file, to: out)
            case .json: KeysReport.json(dissector.revealedKeys, notes: notes, file: file, to: out)
            }
        }
        out.flush()
        if !ok { throw ExitCode(2) }
    }
}
