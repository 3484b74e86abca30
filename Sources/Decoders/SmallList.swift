/// A list that keeps its first element inline. Most ATT PDUs carry at most one note: as an array,
/// that was a heap allocation (and free) for every frame. (Not for large elements: copying them in
/// and out of the inline slot costs more than the allocation saves.)
@frozen public struct SmallList<Element>: RandomAccessCollection, ExpressibleByArrayLiteral {
    @usableFromInline var head: Element?
    @usableFromInline var tail: [Element] = []

    @inlinable public init() {}
    @inlinable public init(arrayLiteral elements: Element...) { for e in elements { append(e) } }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { head == nil ? 0 : 1 &+ tail.count }
    @inlinable public var isEmpty: Bool { head == nil }
    @inlinable public var first: Element? { head }

    @inlinable public subscript(i: Int) -> Element { i == 0 ? head! : tail[i &- 1] }

    @inlinable public mutating func append(_ e: Element) {
        if head == nil { head = e } else { tail.append(e) }
    }

    /// Empties the list, keeping the room the rest took: a stream of PDUs with two notes each
    /// then allocates nothing.
    @inlinable @inline(__always) public mutating func removeAll() {
        head = nil
        if !tail.isEmpty { tail.removeAll(keepingCapacity: true) }
    }
}

extension SmallList: Sendable where Element: Sendable {}

