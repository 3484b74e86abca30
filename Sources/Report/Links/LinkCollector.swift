import Decoders
import Wire

/// What one connection carried and how it was set up, for `blesniff links`.
public struct LinkSummary: Sendable {
    public struct Change: Sendable {
        public var frame: Int
        public var time: Int64
        public var value: Int
    }

    /// Request → response times of one kind of ATT operation, in nanoseconds.
    public struct Latency: Sendable {
        public var name: String
        public var count: Int
        public var p50: Int64
        public var p95: Int64
        public var max: Int64
    }

    /// One step of the set-up, from the connection's start.
    public struct Step: Sendable {
        public var name: String
        public var frame: Int
        /// Nanoseconds after the connect command (or the connection, when no command was seen).
        public var after: Int64
    }

    public var id: Int
    public var handle: UInt16
    public var peer: BDAddr?
    public var central: Bool?
    public var start: FrameRef
    public var end: FrameRef?
    /// Connection intervals (1.25 ms units), latencies and timeouts in force, first first.
    public var intervals: [Change]
    public var latency: UInt16?
    public var supervisionTimeout: UInt16?
    public var phys: [Change]
    public var dataLengths: [Change]
    public var mtus: [Change]
    public var encryptedFrame: Int?
    /// Value octets by kind: notifications, indications, writes, writes_without_response, reads.
    public var bytes: [String: Int]
    /// Value octets per second over the seconds data flowed: least, median, most.
    public var perSecond: (min: Int, median: Int, max: Int)?
    /// Value octets over time from the first value on, in at most `maxThroughputBins` bins of
    /// `secondsPerBin` seconds each (the last bin may be partial).
    public var throughput: (secondsPerBin: Int, octets: [Int])?
    public static let maxThroughputBins = 120
    /// Request → response times of every ATT operation, counted in the bins `latencyEdges` bound
    /// (each bin up to its edge; the last one past the last edge).
    public var latencyHistogram: [Int] = Array(repeating: 0, count: LinkSummary.latencyEdges.count + 1)
    /// Upper edges of the latency bins, in nanoseconds: twice the shortest connection interval
    /// (7.5 ms), then doubling.
    public static let latencyEdges: [Int64] = [7_500_000, 15_000_000, 30_000_000, 60_000_000, 120_000_000,
                                               250_000_000, 500_000_000, 1_000_000_000, 2_000_000_000]
    /// The first and last frame that carried a value.
    public var firstData: FrameRef?
    public var lastData: FrameRef?
    public var latencies: [Latency]
    public var setup: [Step]
    /// Sniffed connections only: what went over the air.
    public var air: Air?
    /// HCI logs only: data PDUs this host's controller sent per connection event, estimated from
    /// Number of Completed Packets.
    public var packetsPerEvent: PacketsPerEvent?

    /// Number of Completed Packets events that come within half an interval of each other are one
    /// connection event's; each packet completed counts as the data PDUs it was split into.
    public struct PacketsPerEvent: Sendable, Equatable {
        /// Events in which this host's controller completed packets.
        public var events = 0
        public var median = 0
        public var max = 0
        /// The most in one event while packets were still waiting in the controller: the
        /// controller's own limit per event, when the host kept it busy.
        public var limit: Int?
        /// Events counted by how many PDUs they completed (the last bin: that many or more).
        public var histogram = [Int](repeating: 0, count: 17)
    }
    /// Data PDUs each side sent and their payload octets: from HCI ACL data (split to the data
    /// length in force), or as sniffed (non-empty, not retransmitted).
    public var centralData = DataCount(), peripheralData = DataCount()

    public struct DataCount: Sendable, Equatable {
        public var pdus = 0, octets = 0
    }

    /// The intervals in force and how long each lasted, up to the end (or `until`).
    public func segments(until: Int64? = nil) -> [(interval: UInt16, duration: Int64)] {
        guard let stop = end?.time ?? until else { return [] }
        var out: [(interval: UInt16, duration: Int64)] = []
        for (i, c) in intervals.enumerated() {
            let from = max(c.time, start.time)
            let to = i + 1 < intervals.count ? max(intervals[i + 1].time, from) : stop
            if to > from { out.append((UInt16(clamping: c.value), to - from)) }
        }
        return out
    }

    /// The radio charge of each side with `profile` (nil without an interval or an end).
    public func energy(_ profile: RadioProfile) -> LinkEnergy? {
        let segs = segments()
        guard !segs.isEmpty else { return nil }
        return LinkEnergy.estimate(segments: segs, latency: latency ?? 0, phy: UInt8(clamping: phys.last?.value ?? 1),
                                   encrypted: encryptedFrame != nil,
                                   centralPDUs: centralData.pdus, centralOctets: centralData.octets,
                                   peripheralPDUs: peripheralData.pdus, peripheralOctets: peripheralData.octets, profile: profile)
    }

    /// Data channel PDUs a sniffer caught on one connection, and their time on air (Vol 6 Part B
    /// 2.1: the PDU with preamble, access address and CRC at the packet's PHY).
    public struct Air: Sendable {
        public var packets = 0, emptyPDUs = 0, retransmissions = 0, badCRC = 0
        /// Connection events with a packet caught (a new one after a gap longer than a reply's).
        public var events = 0
        public var centralMicroseconds: Int64 = 0, peripheralMicroseconds: Int64 = 0
        /// By data channel index (0–36): packets, retransmissions and bad CRCs, where the sniffer
        /// gave the channel (bsniffhub writes invalid ones: those are left out).
        public var channels: [ChannelCount] = []
        var lastTime: Int64?

        public struct ChannelCount: Sendable, Equatable {
            public var channel: UInt8
            public var packets = 0, retransmissions = 0, badCRC = 0
        }

        /// Channels whose share of bad CRCs and retransmissions is the highest, worst first, with
        /// at least `minimum` packets.
        public func worstChannels(minimum: Int = 20, count: Int = 3) -> [ChannelCount] {
            func loss(_ c: ChannelCount) -> Double { Double(c.badCRC + c.retransmissions) / Double(max(c.packets, 1)) }
            return channels.filter { $0.packets >= minimum && $0.badCRC + $0.retransmissions > 0 }
                .sorted { loss($0) > loss($1) || (loss($0) == loss($1) && $0.channel < $1.channel) }.prefix(count).map { $0 }
        }
    }

    /// The kind that carried the most value octets.
    public var mainKind: String? { bytes.filter { $0.value > 0 }.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }?.key }

    /// Value octets per second between the first and last value.
    public var achievedBitsPerSecond: Double? {
        guard let a = firstData, let b = lastData, b.time > a.time else { return nil }
        let total = bytes.values.reduce(0, +)
        return Double(total * 8) * 1e9 / Double(b.time - a.time)
    }

    /// The parameters in force at the end.
    public var parameters: LinkParameters? {
        guard let i = intervals.last else { return nil }
        return LinkParameters(interval: UInt16(clamping: i.value), phy: UInt8(clamping: phys.last?.value ?? 1),
                              dataLength: dataLengths.last?.value ?? 27, attMTU: mtus.last?.value ?? 23,
                              encrypted: encryptedFrame != nil, packetsPerEvent: streamSentByHost ? packetsPerEvent?.limit : nil)
    }

    /// Whether the main kind's values go out from this host's controller (write commands as central,
    /// notifications as peripheral): only then do its completed packets bound the stream.
    public var streamSentByHost: Bool {
        (mainKind == "writes_without_response" && central == true) || (mainKind == "notifications" && central == false)
    }

    /// Whether the main kind waits for an answer (write requests, indications, reads).
    public var acknowledged: Bool { mainKind == "writes" || mainKind == "indications" || mainKind == "reads" }

    /// The busiest second's value octets as bits per second.
    public var peakBitsPerSecond: Double? { perSecond.map { Double($0.max * 8) } }

    public var possibleBitsPerSecond: Double? {
        guard let p = parameters else { return nil }
        return acknowledged ? LinkCapacity.acknowledgedBitsPerSecond(p) : LinkCapacity.streamBitsPerSecond(p)
    }
}

/// Collects each connection's parameters over time, the values it carried, its ATT latencies and
/// the steps of its set-up, in the audit feed's pass (as `MetricsCollector` does for `diff`).
/// Bounded: at most `maxConnections` are kept in full, latencies by reservoir of `maxSamples`.
public final class LinkCollector: AuditEventSink {
    public static let maxConnections = 1024
    static let maxQueued = 256
    static let maxSamples = 2048
    static let maxSeconds = 86_400

    final class Track {
        var summary: LinkSummary
        let connection: Connection
        var samples: [String: [Int64]] = [:]
        var seen: [String: Int] = [:]
        var seconds: [Int] = []
        var discoveryEnd: (Int, Int64)?
        var subscribed: (Int, Int64)?
        var created: FrameRef?
        /// Sniffed links: the last LL_LENGTH_REQ, until its answer (from the central?, max RX and TX octets).
        var lengthRequest: (fromCentral: Bool, rx: Int, tx: Int)?
        /// ACL packets this host sent and the controller has not completed: the data PDUs of each,
        /// oldest first (at most `maxQueued`).
        var queued: [(pdus: Int, time: Int64)] = []
        /// The connection event whose completions are being added up: when it started, its PDUs,
        /// and whether packets were still waiting after it.
        var completing: (time: Int64, pdus: Int, waiting: Bool)?

        init(_ c: Connection, at f: FrameRef, created: FrameRef?) {
            connection = c
            self.created = created
            summary = LinkSummary(id: c.id, handle: c.handle, peer: c.peer, central: c.isCentral, start: f, end: nil,
                                  intervals: [], latency: c.latency, supervisionTimeout: c.supervisionTimeout, phys: [],
                                  dataLengths: [], mtus: [], encryptedFrame: nil,
                                  bytes: ["notifications": 0, "indications": 0, "writes": 0, "writes_without_response": 0, "reads": 0],
                                  perSecond: nil, firstData: nil, lastData: nil, latencies: [], setup: [], air: nil)
            if let i = c.interval { summary.intervals.append(.init(frame: f.number, time: f.time, value: Int(i))) }
        }

        var origin: FrameRef { created ?? summary.start }

        func step(_ name: String, _ f: FrameRef) {
            guard !summary.setup.contains(where: { $0.name == name }) else { return }
            summary.setup.append(.init(name: name, frame: f.number, after: f.time &- origin.time))
        }
    }

    private var open: [Int: Track] = [:]
    private var done: [LinkSummary] = []
    private var pendingCreate: [UInt16: FrameRef] = [:]
    /// A sniffed packet of a connection not open yet (its `connected` event follows the frame).
    private var firstAir: (id: Int, ll: LLFrame, pdu: LLDataPDU, frame: FrameRef)?
    /// Connections not kept in full (past `maxConnections`).
    public private(set) var dropped = 0
    private var advertising = AdvertisingCollector()

    public init() {}

    /// The HCI facts the feed does not turn into events: PHY and data length changes; and a
    /// sniffed connection's packets.
    public func frame(_ d: Decoded) {
        if case .hci(.aclData) = d.packet.kind, let c = d.connection, let t = open[c.id], d.packet.payload.count > 4 {
            // The link layer carries ACL data in PDUs of at most the data length in force.
            let octets = d.packet.payload.count - 4
            let per = max(t.summary.dataLengths.last?.value ?? 27, 27)
            let pdus = (octets + per - 1) / per
            if d.packet.direction == .sent, t.queued.count < Self.maxQueued { t.queued.append((pdus, d.packet.timestamp)) }
            if (d.packet.direction == .sent) == (c.isCentral ?? true) {
                t.summary.centralData.pdus &+= pdus
                t.summary.centralData.octets &+= octets
            } else {
                t.summary.peripheralData.pdus &+= pdus
                t.summary.peripheralData.octets &+= octets
            }
            return
        }
        if let ll = d.linkLayer {
            guard let pdu = ll.dataPDU, let c = d.connection else { return }
            // The packet that reveals a sniffed connection comes before the event that opens it.
            let f = FrameRef(number: d.packet.number, time: d.packet.timestamp)
            if let t = open[c.id] { air(ll, pdu, at: f, t) } else { firstAir = (c.id, ll, pdu, f) }
            return
        }
        let f = FrameRef(number: d.packet.number, time: d.packet.timestamp), adapter = d.packet.adapter
        if let e = NumberOfCompletedPackets(d) { return completed(e, adapter: adapter, at: f.time) }
        switch d.event {
        case .lePHYUpdateComplete(let e)?:
            guard e.status == 0, let t = track(adapter, e.connectionHandle) else { return }
            t.summary.phys.append(.init(frame: f.number, time: f.time, value: Int(e.txPHY)))
        case .leDataLengthChange(let e)?:
            guard let t = track(adapter, e.connectionHandle), t.summary.dataLengths.last?.value != Int(e.maxTxOctets) else { return }
            t.summary.dataLengths.append(.init(frame: f.number, time: f.time, value: Int(e.maxTxOctets)))
        default: break
        }
    }

    /// The open connection on a handle.
    private func track(_ adapter: UInt16, _ handle: UInt16) -> Track? {
        open.values.first { $0.connection.adapter == adapter && $0.connection.handle == handle }
    }

    /// Number of Completed Packets: the packets of each connection the controller has sent.
    private func completed(_ event: NumberOfCompletedPackets, adapter: UInt16, at time: Int64) {
        event.forEach { h, count in
            guard count > 0, let t = track(adapter, h) else { return }
            let k = min(Int(count), t.queued.count)
            let pdus = t.queued.prefix(k).reduce(0) { $0 + $1.pdus }
            t.queued.removeFirst(k)
            // Half an interval apart at least: another connection event.
            let interval = Int64(t.connection.interval ?? 6) * 1_250_000
            // A packet the controller held since before this event began was left for a later one.
            let waiting = t.queued.first.map { time &- $0.time > interval } ?? false
            if var e = t.completing, time &- e.time <= interval / 2 {
                e.pdus += pdus
                e.waiting = waiting
                t.completing = e
            } else {
                endEvent(t)
                t.completing = (time, pdus, waiting)
            }
        }
    }

    /// Counts the connection event whose completions were being added up.
    private func endEvent(_ t: Track) {
        guard let e = t.completing, e.pdus > 0 else { return }
        t.completing = nil
        var p = t.summary.packetsPerEvent ?? LinkSummary.PacketsPerEvent()
        p.events += 1
        p.max = max(p.max, e.pdus)
        p.histogram[min(e.pdus, p.histogram.count - 1)] += 1
        if e.waiting { p.limit = max(p.limit ?? 0, e.pdus) }
        t.summary.packetsPerEvent = p
    }

    private func air(_ ll: LLFrame, _ pdu: LLDataPDU, at f: FrameRef, _ t: Track) {
        let time = f.time
        if ll.crc != .invalid, !ll.isRetransmission { parameters(ll, pdu, at: f, t) }
        var a = t.summary.air ?? LinkSummary.Air()
        a.packets &+= 1
        if ll.crc == .invalid { a.badCRC &+= 1 }
        if pdu.length == 0 { a.emptyPDUs &+= 1 }
        if ll.isRetransmission { a.retransmissions &+= 1 }
        if let ch = ll.header.channel, ch < 37 {
            if a.channels.isEmpty { a.channels = (0..<37).map { LinkSummary.Air.ChannelCount(channel: UInt8($0)) } }
            a.channels[Int(ch)].packets &+= 1
            if ll.isRetransmission { a.channels[Int(ch)].retransmissions &+= 1 }
            if ll.crc == .invalid { a.channels[Int(ch)].badCRC &+= 1 }
        }
        if pdu.length > 0, !ll.isRetransmission, ll.crc != .invalid {
            // The payload without its MIC (the estimate adds it back on encrypted links).
            let mic = ll.encryption == .encrypted || ll.encryption == .decrypted || ll.encryption == .decryptedBySniffer ? 4 : 0
            let octets = max(Int(pdu.length) - mic, 0)
            if ll.direction == .peripheralToCentral {
                t.summary.peripheralData.pdus &+= 1
                t.summary.peripheralData.octets &+= octets
            } else {
                t.summary.centralData.pdus &+= 1
                t.summary.centralData.octets &+= octets
            }
        }
        let micros = LLPacket.airTime(pduLength: 2 &+ Int(pdu.length), phy: ll.header.phy ?? 0)
        if ll.direction == .peripheralToCentral { a.peripheralMicroseconds &+= micros } else { a.centralMicroseconds &+= micros }
        // Packets of one event follow each other within two packets' time; events are 7.5 ms apart at least.
        if a.lastTime.map({ time &- $0 > 5_000_000 }) ?? true { a.events &+= 1 }
        a.lastTime = time
        t.summary.air = a
    }

    public func observe(_ event: AuditEvent, at f: FrameRef) {
        advertising.observe(event, at: f)
        switch event {
        case .createConnection(let adapter, _, _):
            pendingCreate[adapter] = f
        case .connected(let c):
            guard c.isLE else { return }
            guard open.count + done.count < Self.maxConnections else { dropped += 1; return }
            open[c.id] = Track(c, at: f, created: pendingCreate.removeValue(forKey: c.adapter))
            open[c.id]?.step("connected", f)
            if let a = firstAir, a.id == c.id, let t = open[c.id] { air(a.ll, a.pdu, at: a.frame, t) }
            firstAir = nil
        case .encryptionChanged(let c, let on):
            guard on, let t = open[c.id], t.summary.encryptedFrame == nil else { return }
            t.summary.encryptedFrame = f.number
            t.step("encrypted", f)
        case .disconnected(let c, _):
            if let t = open.removeValue(forKey: c.id) { close(t, at: f) }
        case .att(let c, let a):
            att(a, c, f)
        default: break
        }
    }

    public func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef) { att(a, c, frame) }

    /// No report received: of advertising data only what this host set counts (its advertising energy).
    public var advertisingInterest: AdvertisingInterest { .none }

    private static func kind(_ a: ATTObservation) -> String? {
        switch a.opcode {
        case .handleValueNotification: return "notifications"
        case .handleValueIndication: return "indications"
        case .writeRequest: return a.isCCCD || a.cccdValue != nil ? nil : "writes"
        case .writeCommand, .signedWriteCommand: return "writes_without_response"
        case .readResponse, .readBlobResponse, .readMultipleResponse, .readMultipleVariableResponse: return "reads"
        default: return nil
        }
    }

    private static func operation(_ op: ATTOpcode) -> String? {
        switch op {
        case .readResponse, .readBlobResponse, .readMultipleResponse, .readMultipleVariableResponse: return "read"
        case .writeResponse: return "write"
        case .exchangeMTUResponse: return "exchange_mtu"
        case .readByGroupTypeResponse, .readByTypeResponse, .findInformationResponse, .findByTypeValueResponse: return "discovery"
        case .handleValueConfirmation: return "indication"
        default: return nil
        }
    }

    private func att(_ a: ATTObservation, _ c: Connection, _ f: FrameRef) {
        guard let t = open[c.id] else { return }
        if t.summary.mtus.last?.value != a.mtu, a.mtu != 23 || !t.summary.mtus.isEmpty {
            t.summary.mtus.append(.init(frame: f.number, time: f.time, value: a.mtu))
        }
        if a.opcode == .exchangeMTUResponse { t.step("mtu_exchanged", f) }
        if let op = Self.operation(a.opcode), let req = a.answers {
            sample(t, op, f.time &- req.time)
            if op == "discovery" { t.discoveryEnd = (f.number, f.time) }
        }
        if a.origin == .local, let v = a.cccdValue, v & 3 != 0, a.opcode == .writeRequest || a.opcode == .writeCommand {
            if let d = t.discoveryEnd { t.step("discovered", FrameRef(number: d.0, time: d.1)) }
            t.step("subscribed", f)
        }
        guard let kind = Self.kind(a) else { return }
        if t.summary.firstData == nil {
            if let d = t.discoveryEnd { t.step("discovered", FrameRef(number: d.0, time: d.1)) }
            t.step("ready", f)
            t.summary.firstData = f
        }
        t.summary.lastData = f
        t.summary.bytes[kind, default: 0] += a.valueLength
        let second = Int((f.time &- t.summary.firstData!.time) / 1_000_000_000)
        if second < Self.maxSeconds {
            while t.seconds.count <= second { t.seconds.append(0) }
            t.seconds[second] += a.valueLength
        }
    }

    /// Keeps a uniform sample of at most `maxSamples` latencies per operation (reservoir sampling
    /// with a fixed sequence, so runs agree).
    private func sample(_ t: Track, _ op: String, _ ns: Int64) {
        let bin = LinkSummary.latencyEdges.firstIndex { ns <= $0 } ?? LinkSummary.latencyEdges.count
        t.summary.latencyHistogram[bin] += 1
        let n = t.seen[op, default: 0]
        t.seen[op] = n + 1
        if n < Self.maxSamples {
            t.samples[op, default: []].append(ns)
        } else {
            let j = Int((UInt64(n) &* 2_654_435_761) % UInt64(n + 1))
            if j < Self.maxSamples { t.samples[op]![j] = ns }
        }
    }

    /// A sniffed link's PHY and data length, as the air shows them: the PHY each packet was received
    /// on (from LL_PHY_UPDATE_IND's instant on), and the data length an LL_LENGTH_REQ and its
    /// LL_LENGTH_RSP leave in force (Vol 6 Part B 4.5.10: each direction carries at most the
    /// smaller of its sender's MaxTxOctets and its receiver's MaxRxOctets; the larger direction is
    /// kept, as the one data would use).
    private func parameters(_ ll: LLFrame, _ pdu: LLDataPDU, at f: FrameRef, _ t: Track) {
        // Sniffers number PHYs 0 1M, 1 2M, 2 Coded; the summary keeps HCI's 1, 2, 3.
        if let p = ll.header.phy, p < 3, (t.summary.phys.last?.value ?? 1) != Int(p) + 1 {
            t.summary.phys.append(.init(frame: f.number, time: f.time, value: Int(p) + 1))
        }
        guard let control = pdu.control, control.opcode == 0x14 || control.opcode == 0x15,
              let rx = control.parameters.le16(0), let tx = control.parameters.le16(4), let dir = ll.direction else { return }
        let fromCentral = dir == .centralToPeripheral
        if control.opcode == 0x14 {
            t.lengthRequest = (fromCentral, Int(rx), Int(tx))
        } else if let req = t.lengthRequest, req.fromCentral != fromCentral {
            t.lengthRequest = nil
            let value = max(min(req.tx, Int(rx)), min(Int(tx), req.rx), 27)
            if (t.summary.dataLengths.last?.value ?? 27) != value {
                t.summary.dataLengths.append(.init(frame: f.number, time: f.time, value: value))
            }
        }
    }

    private func close(_ t: Track, at f: FrameRef?) {
        endEvent(t)
        if var p = t.summary.packetsPerEvent {
            // The median from the histogram (its last bin counted as its floor).
            var seen = 0
            p.median = p.histogram.indices.first { seen += p.histogram[$0]; return seen * 2 > p.events } ?? 0
            t.summary.packetsPerEvent = p
        }
        var s = t.summary
        s.end = f
        let c = t.connection
        // Parameter updates the dissector saw (HCI Connection Update Complete, LL_CONNECTION_UPDATE_IND).
        for u in c.updates where !s.intervals.contains(where: { $0.frame == u.frame }) {
            s.intervals.append(.init(frame: u.frame, time: u.time, value: Int(u.interval)))
        }
        s.intervals.sort { $0.frame < $1.frame }
        if s.intervals.isEmpty, let i = c.interval { s.intervals.append(.init(frame: s.start.number, time: s.start.time, value: Int(i))) }
        s.latency = c.latency
        s.supervisionTimeout = c.supervisionTimeout
        if s.encryptedFrame == nil, c.encrypted { s.encryptedFrame = c.encryptedFrame }
        if !t.seconds.isEmpty {
            let sorted = t.seconds.sorted()
            s.perSecond = (sorted.first!, sorted[sorted.count / 2], sorted.last!)
            let width = (t.seconds.count + LinkSummary.maxThroughputBins - 1) / LinkSummary.maxThroughputBins
            s.throughput = (width, stride(from: 0, to: t.seconds.count, by: width).map { t.seconds[$0..<min($0 + width, t.seconds.count)].reduce(0, +) })
        }
        s.latencies = t.samples.keys.sorted().map { op in
            let v = t.samples[op]!.sorted()
            return LinkSummary.Latency(name: op, count: t.seen[op] ?? v.count, p50: v[v.count / 2],
                                       p95: v[min(v.count - 1, v.count * 95 / 100)], max: v.last!)
        }
        s.setup.sort { $0.frame < $1.frame }
        done.append(s)
    }

    /// This host's advertising per adapter, what is still on stopped at `end`.
    public func finishAdvertising(at end: FrameRef?) -> [AdvertisingSummary] { advertising.finish(at: end) }

    /// The connections in order, those still open closed at `end`.
    public func finish(at end: FrameRef?) -> [LinkSummary] {
        for t in open.values.sorted(by: { $0.summary.id < $1.summary.id }) { close(t, at: end) }
        open = [:]
        return done.sorted { $0.id < $1.id }
    }
}
