import Wire

/// pcapng block parser, used for files whose interfaces have different link types: libpcap
/// 1.10 refuses those ("an interface has a type … different from the type of the first
/// interface"). Reads Section Header, Interface Description (with if_tsresol and if_tsoffset),
/// Enhanced, Simple and obsolete Packet blocks; skips every other block type.
final class PcapngReader {
    struct Interface {
        var linkType: UInt32
        var snapLength: UInt32
        /// Timestamp units per second.
        var unitsPerSecond: UInt64 = 1_000_000
        /// Seconds added to every timestamp (if_tsoffset).
        var offsetSeconds: Int64 = 0
    }

    let source: ByteSource
    private var bigEndian = false
    private var interfaces: [Interface] = []
    private(set) var truncation: CaptureError?

    init(source: ByteSource) {
        self.source = source
    }

    private func u32(_ b: ArraySlice<UInt8>, _ i: Int) -> UInt32 {
        b.u32(at: i, bigEndian: bigEndian)
    }

    private func u16(_ b: ArraySlice<UInt8>, _ i: Int) -> UInt16 {
        let s = b.startIndex &+ i
        return bigEndian ? UInt16(b[s]) << 8 | UInt16(b[s + 1]) : UInt16(b[s]) | UInt16(b[s + 1]) << 8
    }

    func next(number: Int) throws(CaptureError) -> Record? {
        while true {
            let at = source.offset
            guard try source.requireStart(12, of: "a block header", frame: number, truncation: &truncation) else {
                return nil
            }
            let head = source.pending
            let type = u32(head, 0)
            if type == 0x0A0D_0D0A {
                // Section Header: its byte-order magic sets the order of everything in the section.
                let magic = head.le32(at: 8)
                if magic == 0x1A2B_3C4D { bigEndian = false }
                else if magic == 0x4D3C_2B1A { bigEndian = true }
                else { throw malformed(number, at, "section header with a bad byte-order magic") }
                interfaces.removeAll(keepingCapacity: true)
            }
            let length = u32(source.pending, 4)
            guard length >= 12, length % 4 == 0 else {
                throw malformed(number, at, "block length \(length) is not a multiple of 4 of at least 12")
            }
            guard Int(length) <= maxRecordLength &+ 64 else {
                throw CaptureError(.recordTooLarge, file: source.name, frame: number, offset: at,
                                   "block length \(length) exceeds the 16 MiB limit")
            }
            if let size = source.fileSize, Int64(length) > size {
                throw CaptureError(.recordTooLarge, file: source.name, frame: number, offset: at,
                                   "block length \(length) exceeds the file size \(size)")
            }
            guard try source.requireWhole(Int(length), of: "this block", frame: number, at: at, truncation: &truncation) else {
                return nil
            }
            let block = source.consume(Int(length))
            let body = block.dropFirst(8).dropLast(4)
            switch type {
            case 1: try interface(body, number, at)
            case 6, 2, 3:
                return try packet(type: type, body, number: number, at: at, length: Int(length))
            default: continue  // Name resolution, statistics, custom and unknown blocks.
            }
        }
    }

    private func malformed(_ number: Int, _ at: Int64, _ why: String) -> CaptureError {
        CaptureError(.malformed, file: source.name, frame: number, offset: at, why)
    }

    private func interface(_ body: ArraySlice<UInt8>, _ number: Int, _ at: Int64) throws(CaptureError) {
        guard body.count >= 8 else { throw malformed(number, at, "interface description block too short") }
        let linkType = UInt32(u16(body, 0))
        guard LinkType.isSupported(linkType) else { throw CaptureError.unsupported(source.name, linkType) }
        var ifc = Interface(linkType: linkType, snapLength: u32(body, 4))
        var i = 8
        while i &+ 4 <= body.count {
            let code = u16(body, i)
            let len = Int(u16(body, i &+ 2))
            let value = i &+ 4
            guard value &+ len <= body.count else { break }
            switch (code, len) {
            case (0, _): i = body.count
            case (9, 1):
                // if_tsresol: bit 7 clear = negative power of 10, set = negative power of 2.
                let v = body[body.startIndex &+ value]
                let exponent = Int(v & 0x7f)
                var units: UInt64 = 1
                var overflow = false
                for _ in 0..<exponent where !overflow {
                    (units, overflow) = units.multipliedReportingOverflow(by: v & 0x80 == 0 ? 10 : 2)
                }
                guard !overflow else { throw malformed(number, at, "if_tsresol \(v) out of range") }
                ifc.unitsPerSecond = units
            case (14, 8):
                let hi = u32(body, value), lo = u32(body, value &+ 4)
                ifc.offsetSeconds = Int64(bitPattern: bigEndian ? UInt64(hi) << 32 | UInt64(lo) : UInt64(lo) << 32 | UInt64(hi))
            default: break
            }
            i = value &+ (len &+ 3) & ~3
        }
        interfaces.append(ifc)
    }

    private func packet(type: UInt32, _ body: ArraySlice<UInt8>, number: Int, at: Int64, length: Int) throws(CaptureError) -> Record {
        var interfaceID = 0
        var ts: UInt64 = 0
        var captured: Int
        var original: Int
        var dataStart: Int
        switch type {
        case 3:  // Simple Packet: interface 0, no timestamp, captured = min(original, snap length, block).
            guard body.count >= 4 else { throw malformed(number, at, "simple packet block too short") }
            original = Int(u32(body, 0))
            dataStart = 4
            captured = min(original, body.count &- 4)
            if let first = interfaces.first, first.snapLength > 0 { captured = min(captured, Int(first.snapLength)) }
        default:  // Enhanced (6) or obsolete Packet (2) block.
            guard body.count >= 20 else { throw malformed(number, at, "packet block too short") }
            interfaceID = type == 6 ? Int(u32(body, 0)) : Int(u16(body, 0))
            ts = UInt64(u32(body, 4)) << 32 | UInt64(u32(body, 8))
            captured = Int(u32(body, 12))
            original = Int(u32(body, 16))
            dataStart = 20
            guard captured <= body.count &- 20 else {
                throw CaptureError(.recordTooLarge, file: source.name, frame: number, offset: at,
                                   "captured length \(captured) exceeds its block")
            }
        }
        guard interfaceID < interfaces.count else {
            throw malformed(number, at, "packet on interface \(interfaceID), which no interface block describes")
        }
        if captured > original {
            throw CaptureError(.recordTooLarge, file: source.name, frame: number, offset: at,
                               "captured length \(captured) exceeds original length \(original)")
        }
        let ifc = interfaces[interfaceID]
        let data = body.dropFirst(dataStart).prefix(captured)
        return Record(number: number, timestamp: Self.nanoseconds(ts, ifc), linkType: ifc.linkType, flags: 0,
                      data: data, originalLength: original, fileOffset: at, fileLength: length)
    }

    static func nanoseconds(_ ts: UInt64, _ ifc: Interface) -> Int64 {
        let r = ifc.unitsPerSecond
        let seconds = ts / r
        // Fraction scaled to ns without overflow for any resolution.
        let frac = r.dividingFullWidth((ts % r).multipliedFullWidth(by: 1_000_000_000)).quotient
        return (Int64(bitPattern: seconds) &+ ifc.offsetSeconds) &* 1_000_000_000 &+ Int64(bitPattern: frac)
    }
}
