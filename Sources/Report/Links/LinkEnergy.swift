/// A radio's supply currents from its datasheet: what the energy estimate multiplies air time by.
public struct RadioProfile: Sendable, Equatable {
    public var name: String
    /// Where the figures come from.
    public var source: String
    /// Transmitting at 0 dBm, receiving at 1M and 2M (mA, typical, DC/DC regulator, 3 V).
    public var txMilliamps: Double
    public var rx1MMilliamps: Double
    public var rx2MMilliamps: Double
    /// Radio start-up before each event (µs, counted at the receive current).
    public var rampMicroseconds: Double

    public init(name: String, source: String, txMilliamps: Double, rx1MMilliamps: Double, rx2MMilliamps: Double,
                rampMicroseconds: Double) {
        self.name = name
        self.source = source
        self.txMilliamps = txMilliamps
        self.rx1MMilliamps = rx1MMilliamps
        self.rx2MMilliamps = rx2MMilliamps
        self.rampMicroseconds = rampMicroseconds
    }

    func rx(phy: UInt8) -> Double { phy == 2 ? rx2MMilliamps : rx1MMilliamps }

    /// Typical currents at 3 V with the DC/DC regulator, radio only (no CPU), from the product
    /// specifications; start-up is the fast ramp-up of 40 µs.
    public static let builtIn: [RadioProfile] = [
        RadioProfile(name: "nRF52840", source: "nRF52840 Product Specification, radio current (IRADIO_TX1 0 dBm, IRADIO_RX0 1 Mbps; no 2 Mbps figure: the 1 Mbps one is used)",
                     txMilliamps: 6.40, rx1MMilliamps: 6.26, rx2MMilliamps: 6.26, rampMicroseconds: 40),
        RadioProfile(name: "nRF54L15", source: "nRF54L15 Product Specification, current consumption (IRADIO_TX0 0 dBm, IRADIO_RX0 1 Mbps, IRADIO_RX1 2 Mbps)",
                     txMilliamps: 4.8, rx1MMilliamps: 3.4, rx2MMilliamps: 3.6, rampMicroseconds: 40),
        RadioProfile(name: "CC2340R5", source: "TI CC2340R5 datasheet (SWRS272), radio modes (ITX 0 dBm, IRX 1 Mbps; the 1 Mbps figure for 2 Mbps)",
                     txMilliamps: 5.1, rx1MMilliamps: 5.3, rx2MMilliamps: 5.3, rampMicroseconds: 40),
    ]

    public static func named(_ name: String) -> RadioProfile? {
        builtIn.first { $0.name.lowercased() == name.lowercased() }
    }

    /// The keys of a profile file, with what each holds.
    public static let fileKeys = [("name", "the radio's name"), ("source", "where the figures come from"),
                           ("tx_ma", "transmit current at the power used, mA"), ("rx_1m_ma", "receive current on LE 1M, mA"),
                           ("rx_2m_ma", "receive current on LE 2M, mA (default: rx_1m_ma)"),
                           ("ramp_us", "radio start-up before each event, µs (default 40)")]

    /// A radio of one's own, from a YAML file of `key: value` lines (`fileKeys`): `tx_ma` and
    /// `rx_1m_ma` are needed. Errors name the file, the line and the key.
    public static func load(path: String) throws -> RadioProfile {
        func fail(_ why: String) -> ProfileError { ProfileError(description: path + ": " + why) }
        let text: String
        do { text = try TextFile.read(path) } catch { throw fail(error == .tooLarge ? "larger than 1 MiB: not a radio profile" : "cannot be read") }
        let root: YAMLNode?
        do { root = try YAML.compose(text) } catch { throw fail(error.description) }
        guard let pairs = root?.mapping else { throw fail("expected a mapping of " + fileKeys.map(\.0).joined(separator: ", ")) }
        var strings: [String: String] = [:], numbers: [String: Double] = [:]
        for (k, v) in pairs {
            let line = k.mark.map { "line " + String($0.line) + ": " } ?? ""
            guard let key = k.string, fileKeys.contains(where: { $0.0 == key }) else {
                throw fail(line + "unknown key " + (k.string ?? "?") + "; expected " + fileKeys.map(\.0).joined(separator: ", "))
            }
            guard let value = v.string else { throw fail(line + key + " is not a single value") }
            if key == "name" || key == "source" { strings[key] = value; continue }
            guard let n = Double(value), n.isFinite, n >= 0, n < 1000 else { throw fail(line + key + ": " + value + " is not a number from 0 to 1000") }
            numbers[key] = n
        }
        guard let tx = numbers["tx_ma"], let rx1 = numbers["rx_1m_ma"] else { throw fail("tx_ma and rx_1m_ma are needed") }
        return RadioProfile(name: strings["name"] ?? String(path.split(separator: "/").last ?? Substring(path)), source: strings["source"] ?? path,
                            txMilliamps: tx, rx1MMilliamps: rx1, rx2MMilliamps: numbers["rx_2m_ma"] ?? rx1,
                            rampMicroseconds: numbers["ramp_us"] ?? 40)
    }

    /// A built-in radio by name, else a profile file by path.
    public static func resolve(_ nameOrPath: String) throws -> RadioProfile {
        if let p = named(nameOrPath) { return p }
        guard nameOrPath.contains("/") || nameOrPath.hasSuffix(".yml") || nameOrPath.hasSuffix(".yaml") else {
            throw ProfileError(description: "--radio " + nameOrPath + ": expected one of " + builtIn.map(\.name).joined(separator: ", ")
                               + ", or a profile file's path")
        }
        return try load(path: nameOrPath)
    }

    public struct ProfileError: Error, CustomStringConvertible {
        public var description: String
    }
}

/// The radio charge of one connection for each side, estimated from a per-event model.
///
/// Every connection event the central opens costs each side that attends it the radio's start-up
/// plus one exchange: a PDU each way and T_IFS (150 µs) between, at the transmit current while
/// sending and the receive current otherwise. The peripheral opens its receiver early and keeps it
/// open late by the window widening of Core Vol 6 Part B 4.5.7 (both sleep clocks at 50 ppm, so
/// 100 ppm of the time since its last anchor, plus 16 µs), and skips up to `latency` events that
/// carry nothing. Each data PDU is counted as its own exchange (the other side answering with an
/// empty PDU); events that carry data are at most as many as data PDUs. Left out: the CPU, the
/// crystal's start-up, sleep current, retransmissions and PDUs the capture does not show (an HCI
/// log shows the host's data, not the link layer's control PDUs).
public struct LinkEnergy: Sendable, Equatable {
    public struct Side: Sendable, Equatable {
        /// Connection events attended (a fraction where the time is not a whole number of intervals).
        public var attended: Double
        /// Radio charge, nanocoulombs.
        public var nanocoulombs: Double
        public var events: Int { Int(attended.rounded()) }
        /// Charge per attended event, microcoulombs.
        public var microcoulombsPerEvent: Double { attended > 0 ? nanocoulombs / 1000 / attended : 0 }
    }

    public var profile: String
    public var central: Side
    public var peripheral: Side
    /// The time the estimate covers, nanoseconds.
    public var duration: Int64

    /// Average radio current over the connection, µA.
    public func averageMicroamps(_ s: Side) -> Double {
        duration > 0 ? s.nanocoulombs / (Double(duration) / 1e9) / 1000 : 0
    }

    /// mAh a day if the connection went on like this.
    public func milliampHoursPerDay(_ s: Side) -> Double { averageMicroamps(s) * 24 / 1000 }

    /// The radio `diff` compares charges with.
    public static let diffProfile = RadioProfile.builtIn[0]

    static let ifsMicroseconds = 150.0
    static let sleepClockPPM = 100.0

    /// - Parameters:
    ///   - segments: the intervals in force (1.25 ms units) and how long each lasted (ns).
    ///   - centralPDUs, peripheralPDUs: data PDUs each side sent, with their payload octets.
    public static func estimate(segments: [(interval: UInt16, duration: Int64)], latency: UInt16, phy: UInt8, encrypted: Bool,
                                centralPDUs: Int, centralOctets: Int, peripheralPDUs: Int, peripheralOctets: Int,
                                profile: RadioProfile) -> LinkEnergy {
        func air(_ octets: Int) -> Double { Double(RadioEstimate.pduTime(octets, phy: phy, encrypted: encrypted)) / 1000 }
        let rx = profile.rx(phy: phy), tx = profile.txMilliamps
        var events = 0.0, totalDuration: Int64 = 0, widening = 0.0
        for s in segments where s.interval > 0 && s.duration > 0 {
            let n = Double(s.duration) / Double(Int64(s.interval) * 1_250_000)
            events += n
            // Weighted by events: the mean interval's widening.
            widening += n * (Double(s.interval) * 1250 * sleepClockPPM / 1e6)
            totalDuration += s.duration
        }
        let meanWidening = events > 0 ? widening / events : 0
        let dataPDUs = centralPDUs + peripheralPDUs
        let dataEvents = min(events, Double(dataPDUs))
        let idleEvents = events - dataEvents
        let skip = Double(latency) + 1
        let empty = air(0), ifs = ifsMicroseconds

        // One empty exchange, seen from each side (charge in nC = mA × µs).
        let centralExchange = profile.rampMicroseconds * rx + empty * tx + ifs * rx + empty * rx
        func peripheralExchange(widening w: Double) -> Double {
            profile.rampMicroseconds * rx + (2 * w + 16 + empty) * rx + ifs * rx + empty * tx
        }
        // A data PDU of n octets instead of an empty one: the sender transmits, the receiver listens longer.
        let centralDataExtra = (air(max(centralOctets / max(centralPDUs, 1), 0)) - empty)
        let peripheralDataExtra = (air(max(peripheralOctets / max(peripheralPDUs, 1), 0)) - empty)
        // Exchanges beyond one per data event (several PDUs in one event) cost a whole exchange without start-up.
        let extraExchanges = Double(dataPDUs) - dataEvents
        let exchangeNoRamp = empty * tx + ifs * rx + empty * rx + ifs * rx

        var c = (dataEvents + idleEvents) * centralExchange + extraExchanges * exchangeNoRamp
        c += Double(centralPDUs) * centralDataExtra * tx + Double(peripheralPDUs) * peripheralDataExtra * rx
        var p = dataEvents * peripheralExchange(widening: meanWidening)
            + (idleEvents / skip) * peripheralExchange(widening: meanWidening * skip)
            + extraExchanges * exchangeNoRamp
        p += Double(centralPDUs) * centralDataExtra * rx + Double(peripheralPDUs) * peripheralDataExtra * tx
        return LinkEnergy(profile: profile.name,
                          central: Side(attended: events, nanocoulombs: c),
                          peripheral: Side(attended: dataEvents + idleEvents / skip, nanocoulombs: p),
                          duration: totalDuration)
    }
}
