import Wire

/// Frames made from the decoders' own tables: every HCI command (and its Command Complete), HCI
/// event and LE subevent, ATT opcode, SMP code, L2CAP signaling code, AD type and SIG
/// characteristic value, each once with all-zero parameters and once with every bit set, a
/// sniffed LE Coded packet and every LL control PDU on a sniffed connection. The field
/// catalogue (`blesniff fields`, and the filter's field names) is scanned from them as well as from
/// captures, so it lists what each decoder can write, not only what some capture happened to hold.
public enum FieldExamples {
    public static func packets() -> [Packet] {
        var b = Builder()
        for fill: UInt8 in [0x00, 0xFF] {
            let params = [UInt8](repeating: fill, count: 48)
            for c in HCICommands.table {
                b.command(c.opcode, params)
                b.event(HCIEvents.commandComplete, [1, UInt8(truncatingIfNeeded: c.opcode), UInt8(truncatingIfNeeded: c.opcode >> 8), 0] + params)
            }
            for e in HCIEvents.events where e.code != HCIEvents.leMeta { b.event(e.code, params) }
            for e in HCIEvents.subevents { b.event(HCIEvents.leMeta, [e.code] + params) }
            let short = [UInt8](repeating: fill, count: 16)
            for op in 0...255 where ATTOpcode.table[op] != nil { b.l2cap(cid: 0x0004, [UInt8(op)] + short) }
            for code in SMPOpcode.allCases { b.l2cap(cid: 0x0006, [code.rawValue] + short) }
            for code in 1...0x1A { b.l2cap(cid: 0x0005, [UInt8(code), 1, 16, 0] + short) }
            for type in ADType.names.keys { b.advertising([9, type] + [UInt8](repeating: fill, count: 8)) }
            for uuid in CharacteristicValues.table.keys.sorted() { b.characteristic(uuid, value: short) }
        }
        // A sniffed ADV_IND on LE Coded (link type 256: the Coding Indicator after the access address).
        let coded: [UInt8] = [0, 0, 0, 0, 0xD6, 0xBE, 0x89, 0x8E, 0x01, 0x80, 0xD6, 0xBE, 0x89, 0x8E, 0x01,
                              0x00, 0x09, 0xE8, 0xDD, 0x6E, 0xE5, 0xC5, 0x78, 0x02, 0x01, 0x05, 0xC6, 0x3C, 0x96]
        b.packets.append(Packet(number: b.packets.count &+ 1, timestamp: Int64(b.packets.count &+ 1) &* 1_000_000, direction: .unknown,
                                adapter: 0, kind: .linkLayer(linkType: LinkType.leLLWithPHDR), payload: coded[...]))
        // A sniffed connection (CONNECT_IND, link type 256) carrying every LL control PDU, central to peripheral.
        func sniffed(_ aa: [UInt8], _ pdu: [UInt8], flags: UInt16) {
            let record = [UInt8](repeating: 0, count: 4) + aa + [UInt8(truncatingIfNeeded: flags), UInt8(flags >> 8)] + aa + pdu + [0, 0, 0]
            let n = b.packets.count &+ 1
            b.packets.append(Packet(number: n, timestamp: Int64(n) &* 1_000_000, direction: .unknown, adapter: 0,
                                    kind: .linkLayer(linkType: LinkType.leLLWithPHDR), payload: record[...]))
        }
        // Each on a connection of its own: some end the link or start encryption.
        for op in LLControlPDU.names.indices {
            let link: [UInt8] = [0x7B, UInt8(op), 0x65, 0x50]
            sniffed([0xD6, 0xBE, 0x89, 0x8E], [0x05, 34] + [UInt8](repeating: 0xC1, count: 12) + link
                + [0x55, 0x55, 0x55, 1, 0, 0, 24, 0, 0, 0, 100, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0x07], flags: 0)
            sniffed(link, [0x03, 25, UInt8(op)] + [UInt8](repeating: 0, count: 24), flags: 2 << 7)
        }
        return b.packets
    }

    /// Builds the frames, numbered in order, on one connection.
    private struct Builder {
        var packets: [Packet] = []
        /// Characteristic declarations are placed from here up, two handles each.
        var nextHandle: UInt16 = 0x0100
        static let connection: UInt16 = 0x0040

        mutating func add(_ kind: HCIPacketType, _ bytes: [UInt8], _ direction: Direction) {
            let n = packets.count &+ 1
            packets.append(Packet(number: n, timestamp: Int64(n) &* 1_000_000, direction: direction, adapter: 0,
                                  kind: .hci(kind), payload: bytes[...]))
        }

        mutating func command(_ opcode: UInt16, _ params: [UInt8]) {
            add(.command, [UInt8(truncatingIfNeeded: opcode), UInt8(truncatingIfNeeded: opcode >> 8), UInt8(params.count)] + params, .sent)
        }

        mutating func event(_ code: UInt8, _ params: [UInt8]) {
            add(.event, [code, UInt8(min(params.count, 255))] + params.prefix(255), .received)
        }

        /// One complete L2CAP frame on the connection, direction left to the decoder.
        mutating func l2cap(cid: UInt16, _ payload: [UInt8], _ direction: Direction = .unknown) {
            let frame = le16(UInt16(payload.count)) + le16(cid) + payload
            add(.aclData, le16(Self.connection | 0x2000) + le16(UInt16(frame.count)) + frame, direction)
        }

        /// An LE Advertising Report carrying one AD structure.
        mutating func advertising(_ ad: [UInt8]) {
            event(HCIEvents.leMeta, [0x02, 1, 0, 0, 1, 2, 3, 4, 5, 6, UInt8(ad.count)] + ad + [0xC4])
        }

        /// A characteristic discovered (Read By Type of 0x2803) and then notified, so its value is
        /// decoded as its UUID says.
        mutating func characteristic(_ uuid: UInt16, value: [UInt8]) {
            let declaration = nextHandle, valueHandle = nextHandle &+ 1
            nextHandle &+= 2
            l2cap(cid: 0x0004, [0x08] + le16(declaration) + le16(valueHandle) + le16(0x2803), .sent)
            l2cap(cid: 0x0004, [0x09, 7] + le16(declaration) + [0x12] + le16(valueHandle) + le16(uuid), .received)
            l2cap(cid: 0x0004, [0x1B] + le16(valueHandle) + value, .received)
        }

        func le16(_ v: UInt16) -> [UInt8] { [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)] }
    }
}
