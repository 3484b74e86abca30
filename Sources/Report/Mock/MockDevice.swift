import Decoders
import Wire

/// One value a characteristic sent on its own (notification or indication), with the time
/// since what preceded it: the previous one in the same connection, or the subscription.
public struct MockEmission: Sendable, Equatable {
    /// Seconds.
    public var delay: Double
    public var value: [UInt8]
    public var indication: Bool
}

/// Everything a capture showed of one peripheral that a stand-in needs: how it advertised,
/// its GATT database as discovered, and the values it gave.
public struct MockDevice: Sendable {
    /// The captured address, or a made-up one when the capture never showed it (it starts
    /// mid-connection): then `addressKnown` is false.
    public let address: BDAddr
    public let addressKnown: Bool
    /// 0 public, 1 random, nil when the capture does not say.
    public let addressType: UInt8?
    /// Advertised name, else the Device Name characteristic's value.
    public let name: String?
    /// Last advertising data and scan response data seen from the address (nil: none seen).
    public let advertisingData: [UInt8]?
    public let scanResponseData: [UInt8]?
    /// Median interval between advertising events, nanoseconds.
    public let advertisingInterval: Int64?
    public let services: [GATTService]
    /// Value or descriptor handle → each distinct value it had, in the order first seen (reads,
    /// notifications, indications and confirmed writes: what `gatt` shows as the last value).
    public let values: [UInt16: [[UInt8]]]
    /// Characteristic value handle → what it notified or indicated, in order.
    public let emissions: [UInt16: [MockEmission]]
    /// Handles whose value history or emissions were cut at the caps.
    public let capped: Set<UInt16>

    /// A random static address: one a stand-in can take over as its own.
    public var isRandomStatic: Bool { addressKnown && addressType == 1 && address.randomKind == .staticAddress }
}

extension MockDevice {
}
