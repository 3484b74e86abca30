import Capture
import Decoders
import Report

/// Why a capture's audit events could not be produced.
struct AuditInputError: Error, CustomStringConvertible {
    var description: String
}

/// Reads a capture and calls `body` with its audit events in frame order. Throws when the capture
/// cannot be read (the audit then exits with status 2). A capture cut off mid-record is audited up
/// to the cut, with a warning on standard error.
func auditEvents(for path: String, _ body: (AuditEvent, FrameRef) -> Void) throws {
    let reader: CaptureReader
    do { reader = try CaptureReader(path: path) } catch { throw AuditInputError(description: error.description) }
    let dissector = Dissector()
    let feed = AuditFeed(dissector: dissector)
    do {
        while let r = try reader.next() {
            let p = Packet.fromRecord(number: r.number, timestamp: r.timestamp, linkType: r.linkType, flags: r.flags,
                                      data: r.data, fileOffset: r.fileOffset, fileLength: r.fileLength,
                                      truncated: r.truncated)
            feed.events(dissector.dissect(p), body)
        }
    } catch {
        throw AuditInputError(description: error.description)
    }
    dissector.finish()
    if let t = reader.truncation { stderr("blesniff: warning: \(t)") }
}
