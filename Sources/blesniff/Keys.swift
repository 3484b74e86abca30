import ArgumentParser
import Decoders
import Report

struct Keys: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "List every key the captures reveal and what each one unlocks.",
        discussion: """
            LTKs (with EDIV and Rand, or of LE Secure Connections), IRKs with their identity address and \
            CSRKs distributed in SMP (in HCI ACL data, or over the air once decrypted); LTKs a host hands \
            its controller (HCI LE Enable Encryption, LE Long Term Key Request Reply); and the TK, \
            passkey and STK of LE legacy pairings sniffed over the air (Just Works and Passkey Entry are \
            found from the confirm values; give an OOB TK with --tk). Says which pairing value the \
            sniffer missed when one is needed.
            """)

    @OptionGroup var captures: CaptureReportOptions

    mutating func run() throws {
        let out = Output()
        let format = captures.format
        var notes: [KeysReport.Note] = []
        let ok = try captures.each(frame: { p, d in
            if let note = d.keyNote, notes.count < Dissector.maxRevealedKeys { notes.append(KeysReport.Note(frame: p.number, text: note)) }
        }) { file, dissector in
            switch format {
            case .text: KeysReport.text(dissector.revealedKeys, notes: notes, file: file, to: out)
            case .json: KeysReport.json(dissector.revealedKeys, notes: notes, file: file, to: out)
            }
            notes.removeAll()
        }
        out.flush()
        if !ok { throw ExitCode(2) }
    }
}
