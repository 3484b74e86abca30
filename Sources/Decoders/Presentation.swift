/// How a decoded frame reads: one summary line of its deepest layer, and the full tree of every
/// layer. Only called when printing.
extension Decoded {
    /// The deepest decoded layer in one line.
    public var summary: String {
        switch packet.kind {
        case .monitor(let op): return "Monitor " + MonitorOpcode.name(op) + monitorDetail(op)
        case .linkLayer:
            if let u = upper { return "LL " + u.summary(l2cap) }
            if let f = fragment { return "LL L2CAP fragment \(f.have)/\(f.of) bytes" }
            return linkLayer?.summary ?? "Link layer"
        case .unsupported(let t): return "Unsupported " + LinkType.name(t)
        case .unknownHCIType(let t): return "Unknown HCI packet type " + Hex.prefixed(t, width: 2)
        case .truncatedHeader: return "Truncated record"
        case .hci: break
        }
        switch hci {
        case .none:
            return packet.kind == .hci(.command) ? "HCI Command (truncated)" : "HCI packet (truncated)"
        case .command(let op, _):
            return "HCI Command " + HCICommands.name(op) + " (" + Hex.prefixed(op, width: 4) + ")"
        case .event(let code, let params):
            return "HCI Event " + eventSummary(code, params)
        case .acl(let h, let data):
            if let u = upper { return u.summary(l2cap) }
            if let f = fragment {
                return "ACL " + Hex.prefixed(h.handle, width: 4) + " L2CAP fragment \(f.have)/\(f.of) bytes"
            }
            if let f = l2cap { return "L2CAP CID " + Hex.prefixed(f.cid, width: 4) + " len \(f.length)" }
            if packet.truncated { return "ACL " + Hex.prefixed(h.handle, width: 4) + " \(data.count) of \(h.length) bytes (truncated in the capture)" }
            if !isMalformed, h.boundary == 1 { return "ACL " + Hex.prefixed(h.handle, width: 4) + " continuation of a truncated PDU" }
            return "ACL " + Hex.prefixed(h.handle, width: 4) + " \(data.count) bytes"
        case .isochronous(let h, let data):
            return (packet.kind == .hci(.scoData) ? "SCO " : "ISO ") + Hex.prefixed(h, width: 4) + " \(data.count) bytes"
        }
    }

    private func eventSummary(_ code: UInt8, _ params: Bytes) -> String {
        let base = HCIEvents.name(code) + " (" + Hex.prefixed(code, width: 2) + ")"
        switch code {
        case 0x0E: // Command Complete: opcode, then return parameters starting with a status for most
            guard let op = params.le16(1) else { return base }
            var s = base + " " + HCICommands.name(op)
            if let st = params.byte(3) { s += ": " + HCIErrors.name(st) }
            return s
        case 0x0F: // Command Status
            guard let st = params.byte(0), let op = params.le16(2) else { return base }
            return base + " " + HCICommands.name(op) + ": " + HCIErrors.name(st)
        case 0x3E:
            guard let sub = params.byte(0) else { return base }
            var s = base + " " + HCIEvents.leSubeventName(sub)
            if [0x01, 0x0A, 0x29].contains(sub) {
                // Status, handle, role, peer address type and address, (RPAs), interval.
                var r = ByteReader(params.from(1))
                guard let st = try? r.u8() else { return s }
                guard st == 0, let h = try? r.u16(), let role = try? r.u8(), (try? r.skip(1)) != nil, let a = try? r.address() else {
                    return s + ": " + HCIErrors.name(st)
                }
                if sub != 0x01 { _ = try? r.skip(12) }
                s += " handle " + Hex.prefixed(h & 0x0FFF, width: 4) + " " + a.description + (role == 0 ? " (central)" : " (peripheral)")
                if let i = try? r.u16() { s += " interval " + String(Double(i) * 1.25) + " ms" }
                return s
            }
            if AdvertisingReports.isReport(subevent: sub) {
                let reports = AdvertisingReports.parse(subevent: sub, params.from(1)).reports
                if let first = reports.first { s += " " + first.summary }
                if reports.count > 1 { s += " (+\(reports.count - 1) more)" }
            }
            return s
        case 0x05:
            guard let h = params.le16(1), let reason = params.byte(3) else { return base }
            return base + " handle " + Hex.prefixed(h, width: 4) + " reason " + HCIErrors.name(reason)
        case 0x08, 0x59: // Encryption Change v1/v2: status, handle, enabled
            guard let st = params.byte(0), let h = params.le16(1), let on = params.byte(3) else { return base }
            return base + " handle " + Hex.prefixed(h, width: 4) + (st != 0 ? ": " + HCIErrors.name(st) : on != 0 ? " encryption on" : " encryption off")
        default:
            return base
        }
    }

    private func monitorDetail(_ op: UInt16) -> String {
        switch op {
        case MonitorOpcode.systemNote:
            return ": " + String(decoding: packet.payload.prefix { $0 != 0 }, as: UTF8.self)
        case MonitorOpcode.newIndex:
            // type, bus, BD_ADDR, name[8]
            var r = ByteReader(packet.payload)
            guard (try? r.skip(2)) != nil, let a = try? r.address() else { return "" }
            let name = String(decoding: r.rest().prefix { $0 != 0 }, as: UTF8.self)
            return ": hci\(packet.adapter) " + a.description + (name.isEmpty ? "" : " " + name)
        default:
            return ""
        }
    }

    private func appendL2CAP(_ out: inout [(name: String, fields: [Field])]) {
        if let f = fragment {
            out.append(("L2CAP", [Field("Fragment", .text("\(f.have) of \(f.of == 0 ? "?" : String(f.of)) bytes, reassembly pending"))]))
        }
        if let f = l2cap {
            var fs = [Field("Length", .uint(UInt64(f.length), hex: 0)),
                      Field("CID", L2CAPChannel.name(f.cid).map { .named(UInt64(f.cid), hex: 4, $0) } ?? .uint(UInt64(f.cid), hex: 4))]
            if !f.fragments.isEmpty {
                fs.append(Field("Reassembled From Frames", .text(f.fragments.map(String.init).joined(separator: ", "))))
            }
            out.append(("L2CAP", fs))
        }
        if let u = upper { out.append((u.protocolName, u.fields)) }
    }

    /// Every layer's full decode, outermost first, each as (protocol name, its fields).
    public var layers: [(name: String, fields: [Field])] {
        var out: [(name: String, fields: [Field])] = []
        out.reserveCapacity(4)
        switch packet.kind {
        case .monitor(let op):
            out.append(("Monitor", [Field("Opcode", .named(UInt64(op), hex: 4, MonitorOpcode.name(op))),
                                    Field("Data", .bytes(packet.payload))]))
        case .linkLayer:
            if let f = linkLayer { out.append(("Link Layer", f.fields)) }
            appendL2CAP(&out)
        case .unsupported, .unknownHCIType, .truncatedHeader:
            out.append(("Data", [Field("Data", .bytes(packet.payload))]))
        case .hci: break
        }
        switch hci {
        case .none: break
        case .command(let op, let params):
            // Header fields first, the parameters appended: one array rather than a concatenation of two.
            let rest = HCICommands.parameters(opcode: op, params)
            var fields: [Field] = []
            fields.reserveCapacity(2 &+ rest.count)
            fields.append(Field("Opcode", .named(UInt64(op), hex: 4, HCICommands.name(op)),
                                [Field("OGF", .uint(UInt64(op >> 10), hex: 2)), Field("OCF", .uint(UInt64(op & 0x3FF), hex: 4))]))
            fields.append(Field("Parameter Total Length", .uint(UInt64(params.count), hex: 0)))
            fields.append(contentsOf: rest)
            out.append(("HCI Command", fields))
        case .event(let code, let params):
            let rest = HCIEvents.parameters(code: code, params)
            var fields: [Field] = []
            fields.reserveCapacity(2 &+ rest.count)
            fields.append(Field("Event Code", .named(UInt64(code), hex: 2, HCIEvents.name(code))))
            fields.append(Field("Parameter Total Length", .uint(UInt64(params.count), hex: 0)))
            fields.append(contentsOf: rest)
            out.append(("HCI Event", fields))
        case .acl(let h, _):
            out.append(("HCI ACL", [
                Field("Handle", .uint(UInt64(h.handle), hex: 4)),
                Field("Packet Boundary Flag", .named(UInt64(h.boundary), hex: 1, ACLHeader.boundaryNames[Int(h.boundary)])),
                Field("Broadcast Flag", .uint(UInt64(h.broadcast), hex: 1)),
                Field("Data Total Length", .uint(UInt64(h.length), hex: 0)),
            ]))
            appendL2CAP(&out)
        case .isochronous(let h, let data):
            out.append((packet.kind == .hci(.scoData) ? "HCI SCO" : "HCI ISO",
                        [Field("Handle", .uint(UInt64(h), hex: 4)), Field("Data", .bytes(data))]))
        }
        if !problems.isEmpty {
            out.append(("Malformed", problems.map { Field.malformed($0) }))
        }
        return out
    }
}

extension UpperLayer {
    public var protocolName: String {
        switch self {
        case .att(_, let cid): return cid == nil ? "ATT" : "EATT"
        case .smp: return "SMP"
        case .signaling(let s): return s.channel == .le ? "LE Signaling" : "L2CAP Signaling"
        case .channel(_, let psm, _): return "L2CAP " + PSM.name(psm, le: true)
        case .raw(let cid, _): return L2CAPChannel.name(cid) ?? "L2CAP Payload"
        }
    }

    func summary(_ f: L2CAPFrame?) -> String {
        switch self {
        case .att(let r, let cid): return (cid == nil ? "ATT " : "EATT ") + r.summary
        case .smp(let pdu): return "SMP " + pdu.summary
        case .signaling(let s): return (s.channel == .le ? "LE Signaling " : "L2CAP Signaling ") + s.summary
        case .channel(let cid, let psm, let r):
            let head = "L2CAP " + PSM.name(psm, le: true) + " CID " + Hex.prefixed(cid, width: 4)
            switch r {
            case .incomplete: return head + " SDU segment"
            case .sdu(let b, let frames): return head + " SDU \(b.count) bytes" + (frames.count > 1 ? " from \(frames.count) K-frames" : "")
            case .malformed(let why): return head + " malformed: " + why
            }
        case .raw(let cid, let data):
            return "L2CAP CID " + Hex.prefixed(cid, width: 4) + " \(data.count) bytes"
        }
    }

    public var fields: [Field] {
        switch self {
        case .att(let r, _): return r.fields
        case .smp(let pdu): return pdu.fields
        case .signaling(let s): return s.fields
        case .channel(_, let psm, let r):
            var out = [Field("PSM", .named(UInt64(psm), hex: 4, PSM.name(psm, le: true)))]
            switch r {
            case .incomplete: out.append(Field("SDU", .text("segment stored, SDU incomplete")))
            case .sdu(let b, let frames):
                out.append(Field("SDU", .bytes(b[...]), [Field("K-frames", .text(frames.map(String.init).joined(separator: ", ")))]))
            case .malformed(let why): out.append(Field.malformed(why))
            }
            return out
        case .raw(_, let data): return [Field("Payload", .bytes(data))]
        }
    }
}
