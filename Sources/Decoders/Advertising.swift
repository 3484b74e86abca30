/// Advertising data (AD structures, Core Supplement Part A). Placeholder until the decoder lands.
public struct AdvertisingData: Dissectable {
    public let data: Bytes
    public init(_ data: Bytes) { self.data = data }
    public var summary: String { "" }
    public var fields: [Field] { [Field("Data", .bytes(data))] }
}

/// LE advertising report subevents (0x02, 0x0B, 0x0D, 0x0F, 0x26 ...). Placeholder.
public enum AdvertisingReports {
    /// Full decode of a report subevent's parameters; nil when the subevent is not a report.
    public static func fields(subevent: UInt8, _ params: Bytes) -> [Field]? { nil }
}
