import Capture
import Wire

// Any bytes as a capture file: format detection, then every record to the end, through
// libpcap (pcap, pcapng) or the btsnoop and pcapng block parsers.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCapture(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = input(data, size)
    guard let reader = try? CaptureReader(fileDescriptor: ScratchFile.load(bytes), name: "fuzz") else { return 0 }
    consume(reader.format.name)
    consume(LinkType.describe(reader.linkType))
    do {
        while let r = try reader.next() {
            consume((r.number, r.data.count, r.truncated, r.fileOffset))
            consume(reader.drops)
        }
    } catch {
        consume(error.description)
    }
    consume(reader.truncation?.description)
    return 0
}
