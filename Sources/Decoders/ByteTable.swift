/// A table keyed by one byte (AD types, Apple continuity types, ...), written as a dictionary
/// literal and stored as 256 slots: a lookup is an index, where a dictionary would hash the key on
/// every structure of every frame.
public struct ByteTable<Value>: ExpressibleByDictionaryLiteral {
    @usableFromInline let slots: [Value?]

    public init(dictionaryLiteral rows: (UInt8, Value)...) {
        var slots = [Value?](repeating: nil, count: 256)
        for (key, value) in rows { slots[Int(key)] = value }
        self.slots = slots
    }

    @inlinable public subscript(_ key: UInt8) -> Value? { slots[Int(key)] }

    /// The same keys, each value transformed.
    public func map<T>(_ transform: (Value) -> T) -> ByteTable<T> { ByteTable<T>(slots: slots.map { $0.map(transform) }) }

    private init(slots: [Value?]) { self.slots = slots }

    /// The keys with a value, in order.
    public var keys: [UInt8] { slots.indices.compactMap { slots[$0] == nil ? nil : UInt8($0) } }
}

extension ByteTable: Sendable where Value: Sendable {}
