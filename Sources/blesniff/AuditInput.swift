import Capture
import Decoders
import Report
import Wire

/// Why a capture could not be read to its end.
struct AuditInputError: Error, CustomStringConvertible {
    var description: String
}

/// Calls `body` with every frame of a capture. Throws when the capture cannot be read (the audit
/// then exits with status 2); a capture cut off mid-record is read up to the cut, with a warning
/// on standard error.
/// `platform` is told what the capture's format says of the host stack that made it.
func forEachPacket(in path: String, platform: (PlatformGuess) -> Void = { _ in }, _ body: (Packet) -> Void) throws {
    let reader: CaptureReader
    do { reader = try CaptureReader(path: path) } catch { throw AuditInputError(description: error.description) }
    do {
        var first = true
        while let r = try reader.next() {
            if first, let g = containerPlatform(reader.format, r.linkType, path: path) { platform(g) }
            first = false
            body(Packet(consume r))
        }
    } catch {
        throw AuditInputError(description: error.description)
    }
    if let t = reader.truncation { stderr("blesniff: warning: \(t)") }
}

/// What a capture's format says of its platform: PacketLogger is Apple's, a bug report Android's,
/// the Linux monitor channel the kernel's, and a btsnoop H4 file keeping the name of Android's
/// snoop log (`btsnoop_hci.log`, `.log.last`) most likely Android's.
func containerPlatform(_ format: CaptureFormat, _ linkType: UInt32, path: String) -> PlatformGuess? {
    switch format {
    case .packetLogger: return .container(packetLogger: true)
    case .btsnooz, .bugReportZip: return .container(androidBugReport: true)
    default:
        if linkType == LinkType.linuxMonitor || linkType == LinkType.btsnoopMonitor { return .container(linuxMonitor: true) }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return linkType == LinkType.btsnoopH4 && name.contains("btsnoop_hci") ? .container(androidSnoopLog: true) : nil
    }
}

/// Reads a capture and hands its audit events to `auditor` in frame order; returns the capture's
/// last frame (rules measure what is still open up to it).
@discardableResult
func auditCapture(_ path: String, into auditor: Auditor, configuration: AuditConfiguration) throws -> FrameRef? {
    // The rules see each frame as it comes and hold what they need: ended connections are not kept.
    // The configuration's keys files decrypt sniffed links and resolve private addresses, so the
    // rules see what the keys unlock.
    let keys = configuration.keys
    let dissector = Dissector(temporaryKeys: keys.flatMap(\.temporaryKeys), givenKeys: keys.flatMap(\.linkKeys),
                              privateKeys: keys.flatMap(\.privateKeys), identityKeys: keys.flatMap(\.identityKeys),
                              keepEnded: 0, findsFieldFaults: false, keepsValues: false)
    let feed = AuditFeed(dissector: dissector, configuration: configuration)
    auditor.resolveAddresses(with: dissector.resolver)
    var last: FrameRef?
    defer {
        feed.finish(into: auditor, at: last)
        dissector.finish()
    }
    try forEachPacket(in: path, platform: auditor.assume) { p in
        feed.events(dissector.dissect(p), into: auditor)
        last = FrameRef(number: p.number, time: p.timestamp, fileOffset: p.fileOffset, fileLength: p.fileLength)
    }
    return last
}
