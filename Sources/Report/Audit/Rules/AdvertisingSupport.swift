import Decoders
import Wire

/// The AD structures of advertising or scan-response data (Core Vol 3 Part C 11: length, type,
/// value). Only what the advertising rules need: no decoding of the values beyond their bytes.
enum ADWalk {
    /// Calls `body` with each structure's type and value; returns the offset of the first structure
    /// whose length runs past the data, or nil when the data is well formed. A zero length ends the
    /// data early (what follows is padding). Offsets are from the start of `data`.
    @discardableResult
    static func walk(_ data: Bytes, _ body: (_ type: UInt8, _ value: ArraySlice<UInt8>) -> Void) -> Int? {
        let start = data.startIndex, end = data.endIndex
        var i = start
        while i < end {
            let length = Int(data[i])
            if length == 0 { return nil }
            guard length <= end &- i &- 1 else { return i &- start }
            body(data[i + 1], data[(i + 2)..<(i + 1 + length)])
            i += 1 + length
        }
        return nil
    }

    /// Apple's "overflow area": manufacturer data 0x004C, type 0x01, then a 16-byte bitmap of
    /// hashed service UUIDs that only explicit scanners on Apple devices match.
    static func isAppleOverflowArea(_ type: UInt8, _ value: ArraySlice<UInt8>) -> Bool {
        guard type == 0xFF, value.count >= 19, let lo = value.byte(0), let hi = value.byte(1), let t = value.byte(2)
        else { return false }
        return lo == 0x4C && hi == 0x00 && t == 0x01
    }
}

/// Who set or sent advertising data: this host's controller or a remote advertiser.
struct AdvertiserKey: Hashable {
    var adapter: UInt16
    var address: BDAddr?
    var host: Bool

    var subject: FindingSubject {
        host ? .host(adapter: adapter) : .advertiser(adapter: adapter, address: address)
    }
}

/// Advertising rules look at the data this host sets, and at received data unless switched off.
let includeReceivedOption = RuleOption("include-received", .bool, 1,
                                       "also check advertising data received from other devices")
