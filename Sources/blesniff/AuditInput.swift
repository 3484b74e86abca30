import Report

/// Why a capture's audit events could not be produced.
struct AuditInputError: Error, CustomStringConvertible {
    var description: String
}

/// Reads a capture and calls `body` with its audit events in frame order. Throws when the capture
/// cannot be read (the audit then exits with status 2).
///
/// Not wired yet: the capture readers and the dissector feed (`AuditFeed`) connect here.
func auditEvents(for path: String, _ body: (AuditEvent, FrameRef) -> Void) throws {
    throw AuditInputError(description: "audit input not wired: capture decoding is not connected to the auditor yet")
}
