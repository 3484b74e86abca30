import Wire

/// Several captures read as one, records in timestamp order: a k-way merge that is stable
/// (equal timestamps keep the order of the readers given, and each reader's own order), with
/// frames renumbered from 1. For logs of one device split into files, e.g. Android's
/// `btsnoop_hci.log.last` and `btsnoop_hci.log`.
public final class MergedReader {
    private let readers: [CaptureReader]
    /// The record each reader would give next; nil once it is finished.
    private var heads: [Record?]
    private var started = false
    /// Reader whose record was returned last: it is advanced on the next call (its record's
    /// data stays valid until then).
    private var advance: Int?
    private var count = 0
    /// Index (in the array given) of the reader the last record came from.
    public private(set) var currentReader: Int?
    /// Readers that ended inside a record (warnings, as `CaptureReader.truncation`).
    public var truncations: [CaptureError] { readers.compactMap(\.truncation) }

    /// The files' names, as given.
    public var name: String { readers.map(\.name).joined(separator: ", ") }

    public init(_ readers: [CaptureReader]) {
        self.readers = readers
        heads = Array(repeating: nil, count: readers.count)
    }

    /// The next record in time order, or nil when every reader is finished. A reader that
    /// fails throws its error here once and is then left out: calling again goes on with the others.
    public func next() throws(CaptureError) -> Record? {
        if !started {
            started = true
            for i in readers.indices { try fill(i) }
        } else if let i = advance {
            advance = nil
            try fill(i)
        }
        var best: Int?
        for i in heads.indices {
            guard let h = heads[i] else { continue }
            if let b = best, let hb = heads[b], hb.timestamp <= h.timestamp { continue }
            best = i
        }
        guard let b = best, var r = heads[b] else { return nil }
        advance = b
        currentReader = b
        count &+= 1
        r.number = count
        return r
    }

    private func fill(_ i: Int) throws(CaptureError) {
        heads[i] = nil
        heads[i] = try readers[i].next()
    }
}
