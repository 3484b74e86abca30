import Wire

/// Anything that hands out records one at a time: a capture file or pipe (`CaptureReader`),
/// several files merged in time (`MergedReader`), the kernel's monitor channel
/// (`MonitorSocketSource`) or monitor records relayed over a descriptor (`FileDescriptorSource`).
/// Live sources block until the next record and frame every record as Linux monitor
/// (link type 254: 2-byte adapter index, 2-byte opcode, both big-endian, then the payload).
public protocol RecordSource: AnyObject {
    /// Name used in messages: the path, "standard input", the interface.
    var name: String { get }
    /// The next record, nil at the end (or when a live source is closed). The record's `data` is
    /// valid until the next call.
    func next() throws(CaptureError) -> Record?
}

extension CaptureReader: RecordSource {}
extension MergedReader: RecordSource {}
extension MonitorSocketSource: RecordSource {}
extension FileDescriptorSource: RecordSource {}
