import Capture
import Decoders
import Report

/// Why a capture could not be read to its end.
struct AuditInputError: Error, CustomStringConvertible {
    var description: String
}

/// Calls `body` with every frame of a capture. Throws when the capture cannot be read (the audit
/// then exits with status 2); a capture cut off mid-record is read up to the cut, with a warning
/// on standard error.
func forEachPacket(in path: String, _ body: (Packet) -> Void) throws {
    let reader: CaptureReader
    do { reader = try CaptureReader(path: path) } catch { throw AuditInputError(description: error.description) }
    do {
        while let r = try reader.next() { body(CaptureInput.packet(r)) }
    } catch {
        throw AuditInputError(description: error.description)
    }
    if let t = reader.truncation { stderr("blesniff: warning: \(t)") }
}

/// Reads a capture and hands its audit events to `auditor` in frame order.
func auditCapture(_ path: String, into auditor: Auditor) throws {
    // The rules see each frame as it comes and hold what they need: ended connections are not kept.
    let dissector = Dissector(keepEnded: 0)
    let feed = AuditFeed(dissector: dissector)
    try forEachPacket(in: path) { feed.events(dissector.dissect($0), into: auditor) }
    dissector.finish()
}
