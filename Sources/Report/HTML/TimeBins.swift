/// A value kept per time bin. Merging two neighbours must give the value of their union, so bins
/// can be coarsened without going back to the frames.
protocol BinValue {
    static var empty: Self { get }
    mutating func merge(_ other: Self)
}

extension Int: BinValue {
    static var empty: Int { 0 }
    mutating func merge(_ other: Int) { self = self &+ other }
}

extension Int64: BinValue {
    static var empty: Int64 { 0 }
    mutating func merge(_ other: Int64) { self = self &+ other }
}

/// A fixed number of equal time bins starting at `origin`. A time past the last bin doubles the
/// width and merges neighbours, so a capture of any length fits in the same memory and the
/// duration need not be known in advance.
struct TimeBins<Value: BinValue> {
    let origin: Int64
    /// Nanoseconds per bin.
    private(set) var width: Int64
    private(set) var bins: [Value]
    /// One past the highest bin used.
    private(set) var used = 0

    init(origin: Int64, count: Int, width: Int64 = 1_000_000) {
        self.origin = origin
        self.width = max(1, width)
        bins = Array(repeating: Value.empty, count: max(4, count))
    }

    /// Offset of `t` from the origin, never negative: a clock that steps back lands in bin 0.
    func offset(_ t: Int64) -> Int64 {
        let (d, overflow) = t.subtractingReportingOverflow(origin)
        if overflow { return t > origin ? Int64.max : 0 }
        return max(0, d)
    }

    /// The bin holding `t`, widening the bins first when it lies past the last one.
    mutating func index(_ t: Int64) -> Int {
        let off = offset(t)
        while off / width >= Int64(bins.count) {
            guard widen() else { break }
        }
        let i = Int(min(off / width, Int64(bins.count - 1)))
        if i >= used { used = i + 1 }
        return i
    }

    /// Doubles the width; false when it cannot grow any more.
    private mutating func widen() -> Bool {
        let (w, overflow) = width.multipliedReportingOverflow(by: 2)
        guard !overflow else { return false }
        let n = bins.count
        for i in 0..<(n / 2) {
            var v = bins[2 * i]
            v.merge(bins[2 * i + 1])
            bins[i] = v
        }
        if n % 2 == 1 {
            bins[n / 2] = bins[n - 1]
        }
        for i in ((n + 1) / 2)..<n { bins[i] = Value.empty }
        width = w
        used = (used + 1) / 2
        return true
    }

    mutating func update(at t: Int64, _ body: (inout Value) -> Void) {
        let i = index(t)
        body(&bins[i])
    }

    /// Start of bin `i`, as an offset from the origin in nanoseconds.
    func start(_ i: Int) -> Int64 { Int64(i).multipliedReportingOverflow(by: width).partialValue }

    var usedBins: ArraySlice<Value> { bins[0..<used] }
}

extension TimeBins where Value == Int64 {
    /// Adds the time covered by [a, b) to the bins it spans (scanning and advertising periods).
    mutating func cover(from a: Int64, to b: Int64) {
        guard b > a else { return }
        let last = index(b)
        let first = index(a)
        let oa = offset(a), ob = offset(b)
        guard first <= last else { return }
        for i in first...last {
            let s = start(i), e = s &+ width
            let lo = max(s, oa), hi = min(e, ob)
            if hi > lo { bins[i] = bins[i] &+ (hi &- lo) }
        }
    }
}

/// Counts of ATT activity in one bin of a connection, by what the PDU does.
struct ATTMarks: BinValue {
    var discovery = 0
    var reads = 0
    var writes = 0
    var notifications = 0

    static var empty: ATTMarks { ATTMarks() }

    mutating func merge(_ o: ATTMarks) {
        discovery = discovery &+ o.discovery
        reads = reads &+ o.reads
        writes = writes &+ o.writes
        notifications = notifications &+ o.notifications
    }

    var total: Int { discovery &+ reads &+ writes &+ notifications }
}

/// RSSI of the reports in one bin.
struct RSSIBin: BinValue {
    var min: Int8 = .max
    var max: Int8 = .min
    var sum = 0
    var count = 0

    static var empty: RSSIBin { RSSIBin() }

    mutating func add(_ v: Int8) {
        if v < min { min = v }
        if v > max { max = v }
        sum = sum &+ Int(v)
        count = count &+ 1
    }

    mutating func merge(_ o: RSSIBin) {
        guard o.count > 0 else { return }
        if o.min < min { min = o.min }
        if o.max > max { max = o.max }
        sum = sum &+ o.sum
        count = count &+ o.count
    }

    var mean: Double { count > 0 ? Double(sum) / Double(count) : 0 }
}

/// Samples for quantiles in bounded memory: every value while there are few, then a uniform
/// reservoir (Vitter's algorithm R) with a fixed-seed generator so reports are reproducible.
struct Reservoir {
    let capacity: Int
    private(set) var samples: [Int64] = []
    private(set) var seen = 0
    private(set) var min: Int64?
    private(set) var max: Int64?
    private var state: UInt64 = 0x9E37_79B9_7F4A_7C15

    init(capacity: Int) { self.capacity = Swift.max(1, capacity) }

    mutating func add(_ v: Int64) {
        seen = seen &+ 1
        if min.map({ v < $0 }) ?? true { min = v }
        if max.map({ v > $0 }) ?? true { max = v }
        if samples.count < capacity {
            samples.append(v)
            return
        }
        // xorshift64*
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        let r = state &* 0x2545_F491_4F6C_DD1D
        let j = Int(r % UInt64(Swift.max(1, seen)))
        if j < capacity { samples[j] = v }
    }

    /// The q-quantile (0...1) by the nearest-rank method.
    func quantile(_ q: Double) -> Int64? {
        guard !samples.isEmpty else { return nil }
        let s = samples.sorted()
        let rank = Int((q * Double(s.count)).rounded(.up))
        return s[Swift.min(Swift.max(rank, 1), s.count) - 1]
    }
}
