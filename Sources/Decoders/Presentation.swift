import Wire

/// How a decoded frame reads: one summary line of its deepest layer, and the full tree of every
/// layer. Only called when printing.
extension Decoded {
    /// The deepest decoded layer in one line.
    public var summary: String { TextLine.make(writeSummary) }

    /// Writes `summary` into `line` (printing reuses one line for every frame).
    public func writeSummary(to line: inout TextLine) {
        writeLayerSummary(to: &line)
        if let keyNote {
            line += " ["
            line.write(keyNote)
            line.write(byte: UInt8(ascii: "]"))
        }
    }

    private func writeLayerSummary(to line: inout TextLine) {
        switch packet.kind {
        case .monitor(let op):
            if Management.writeSummary(monitorOpcode: op, packet.payload, to: &line) { return }
            line += "Monitor "
            line.write(MonitorOpcode.name(op))
            writeMonitorDetail(op, to: &line)
            return
        case .linkLayer:
            if let u = upper {
                line += "LL "
                u.writeSummary(to: &line)
            } else if let f = fragment {
                line += "LL L2CAP fragment "
                line.write(f.have)
                line.write(byte: UInt8(ascii: "/"))
                line.write(f.of)
                line += " bytes"
            } else if let ll = linkLayer {
                ll.writeSummary(to: &line)
            } else {
                line += "Link layer"
            }
            return
        case .unsupported(let t): line += "Unsupported "; line.write(LinkType.name(t)); return
        case .unknownHCIType(let t): line += "Unknown HCI packet type "; line.write(hex: t, width: 2); return
        case .truncatedHeader: line += "Truncated record"; return
        case .hci: break
        }
        switch hci {
        case .none:
            line += packet.kind == .hci(.command) ? "HCI Command (truncated)" : "HCI packet (truncated)"
        case .command(let op):
            line += "HCI Command "
            HCICommands.writeName(op, to: &line)
            line += " ("
            line.write(hex: op, width: 4)
            line.write(byte: UInt8(ascii: ")"))
        case .event(let code):
            line += "HCI Event "
            writeEventSummary(code, hciParameters, to: &line)
        case .acl(let h):
            if let u = upper { u.writeSummary(to: &line); return }
            if let f = l2cap, packet.truncated {
                line += "L2CAP "
                if let name = L2CAPChannel.name(f.cid) { line.write(name) } else { line += "CID "; line.write(hex: f.cid, width: 4) }
                line += ", "
                line.write(f.payload.count)
                line += " of "
                line.write(f.length)
                line += " bytes (truncated in the capture)"
                return
            }
            if let f = l2cap, fragment == nil {
                line += "L2CAP CID "
                line.write(hex: f.cid, width: 4)
                line += " len "
                line.write(f.length)
                return
            }
            line += "ACL "
            line.write(hex: h.handle, width: 4)
            if let f = fragment {
                line += " L2CAP fragment "
                line.write(f.have)
                line.write(byte: UInt8(ascii: "/"))
                line.write(f.of)
                line += " bytes"
            } else if packet.truncated {
                line.write(byte: 32)
                line.write(hciParameters.count)
                line += " of "
                line.write(h.length)
                line += " bytes (truncated in the capture)"
            } else if problems.isEmpty, h.boundary == 1 {
                line += " continuation of a truncated PDU"
            } else {
                line.write(byte: 32)
                line.write(hciParameters.count)
                line += " bytes"
            }
        case .isochronous(let h):
            line += packet.kind == .hci(.scoData) ? "SCO " : "ISO "
            line.write(hex: h, width: 4)
            line.write(byte: 32)
            line.write(hciParameters.count)
            line += " bytes"
        }
    }

    private func writeEventSummary(_ code: UInt8, _ params: Bytes, to line: inout TextLine) {
        HCIEvents.writeName(code, to: &line)
        line += " ("
        line.write(hex: code, width: 2)
        line.write(byte: UInt8(ascii: ")"))
        switch code {
        case 0x0E: // Command Complete: opcode, then return parameters starting with a status for most
            guard let op = params.le16(1) else { return }
            line.write(byte: 32)
            HCICommands.writeName(op, to: &line)
            if let st = params.byte(3) { line += ": "; HCIErrors.writeName(st, to: &line) }
        case 0x0F: // Command Status
            guard let st = params.byte(0), let op = params.le16(2) else { return }
            line.write(byte: 32)
            HCICommands.writeName(op, to: &line)
            line += ": "
            HCIErrors.writeName(st, to: &line)
        case 0x3E:
            guard let sub = params.byte(0) else { return }
            line.write(byte: 32)
            HCIEvents.writeLESubeventName(sub, to: &line)
            if sub == 0x01 || sub == 0x0A || sub == 0x29 {
                // Status, handle, role, peer address type and address, (RPAs), interval.
                var r = ByteReader(params.from(1))
                guard let st = try? r.u8() else { return }
                guard st == 0, let h = try? r.u16(), let role = try? r.u8(), (try? r.skip(1)) != nil, let a = try? r.address() else {
                    line += ": "
                    HCIErrors.writeName(st, to: &line)
                    return
                }
                if sub != 0x01 { _ = try? r.skip(12) }
                line += " handle "
                line.write(hex: h & 0x0FFF, width: 4)
                line.write(byte: 32)
                line.write(a)
                line += role == 0 ? " (central)" : " (peripheral)"
                if let i = try? r.u16() { line += " interval "; line.write(String(Double(i) * 1.25)); line += " ms" }
                return
            }
            if AdvertisingReports.isReport(subevent: sub) {
                // The first report, and how many follow it: no array of reports.
                var count = 0
                let reports = params.from(1)
                AdvertisingReports.forEach(subevent: sub, reports) { r in
                    if count == 0 { line.write(byte: 32); r.writeSummary(in: reports, to: &line) }
                    count += 1
                }
                if count > 1 { line += " (+"; line.write(count - 1); line += " more)" }
            }
        case 0x05:
            guard let h = params.le16(1), let reason = params.byte(3) else { return }
            line += " handle "
            line.write(hex: h, width: 4)
            line += " reason "
            HCIErrors.writeName(reason, to: &line)
        case 0x08, 0x59: // Encryption Change v1/v2: status, handle, enabled
            guard let st = params.byte(0), let h = params.le16(1), let on = params.byte(3) else { return }
            line += " handle "
            line.write(hex: h, width: 4)
            if st != 0 { line += ": "; HCIErrors.writeName(st, to: &line) } else { line += on != 0 ? " encryption on" : " encryption off" }
        default:
            break
        }
    }

    private func writeMonitorDetail(_ op: UInt16, to line: inout TextLine) {
        switch op {
        case MonitorOpcode.systemNote:
            line += ": "
            line.write(received: packet.payload.prefix { $0 != 0 })
        case MonitorOpcode.newIndex:
            // type, bus, BD_ADDR, name[8]
            var r = ByteReader(packet.payload)
            guard (try? r.skip(2)) != nil, let a = try? r.address() else { return }
            let name = r.rest().prefix { $0 != 0 }
            line += ": hci"
            line.write(packet.adapter)
            line.write(byte: 32)
            line.write(a)
            if !name.isEmpty { line.write(byte: 32); line.write(received: name) }
        default:
            break
        }
    }

    private func writeL2CAP(to out: FieldSink?, layer: (String) -> Void) {
        if let f = fragment {
            layer("L2CAP")
            out?.add("Fragment", .derived(.reassemblyPending(have: f.have, of: f.of)))
        }
        if let f = l2cap {
            layer("L2CAP")
            if let out {
                out.add("Length", .uint(UInt64(f.length), hex: 0))
                out.add("CID", L2CAPChannel.name(f.cid).map { .named(UInt64(f.cid), hex: 4, $0) } ?? .uint(UInt64(f.cid), hex: 4))
                if !f.fragments.isEmpty {
                    out.add("Reassembled From Frames", .derived(.frameNumbers(f.fragments)))
                }
                if packet.truncated {
                    out.add("Payload", .derived(.truncatedPayload(have: f.payload.count, of: Int(f.length))))
                }
            }
        }
        if let u = upper {
            layer(u.protocolName)
            if let out { u.writeFields(to: out) }
        }
    }

    /// Every layer's full decode, outermost first: `layer` is called with each protocol's name,
    /// then that layer's fields go to `out`. Printing sends them straight to the output.
    public func writeLayers(to out: FieldSink, layer: (String) -> Void) {
        writeLayers(fieldsTo: out, layer: layer)
    }

    /// Only the names of the layers `writeLayers` would write, in the same order, with none of
    /// their fields decoded: a display filter asks which layers a frame has at this cost.
    public func forEachLayerName(_ layer: (String) -> Void) {
        writeLayers(fieldsTo: nil, layer: layer)
    }

    /// The one walk over the layers: their names always, their fields when `out` is given.
    private func writeLayers(fieldsTo out: FieldSink?, layer: (String) -> Void) {
        switch packet.kind {
        case .monitor(let op):
            layer("Monitor")
            out?.add("Opcode", .named(UInt64(op), hex: 4, MonitorOpcode.name(op)))
            if op >= MonitorOpcode.ctrlOpen, op <= MonitorOpcode.ctrlEvent, packet.payload.count >= 4 {
                layer("MGMT")
                if let out { _ = Management.writeFields(monitorOpcode: op, packet.payload, to: out) }
            } else {
                out?.add("Data", .bytes(packet.payload))
            }
        case .linkLayer:
            if let f = linkLayer {
                layer("Link Layer")
                if let out { f.writeFields(to: out) }
            }
            writeL2CAP(to: out, layer: layer)
        case .unsupported, .unknownHCIType, .truncatedHeader:
            layer("Data")
            out?.add("Data", .bytes(packet.payload))
        case .hci: break
        }
        switch hci {
        case .none: break
        case .command(let op):
            layer("HCI Command")
            guard let out else { break }
            let params = hciParameters
            out.begin("Opcode", .named(UInt64(op), hex: 4, HCICommands.name(op)))
            out.add("OGF", .uint(UInt64(op >> 10), hex: 2))
            out.add("OCF", .uint(UInt64(op & 0x3FF), hex: 4))
            out.end()
            out.add("Parameter Total Length", .uint(UInt64(params.count), hex: 0))
            HCICommands.writeParameters(opcode: op, params, to: out)
        case .event(let code):
            layer("HCI Event")
            guard let out else { break }
            let params = hciParameters
            out.add("Event Code", .named(UInt64(code), hex: 2, HCIEvents.name(code)))
            out.add("Parameter Total Length", .uint(UInt64(params.count), hex: 0))
            HCIEvents.writeParameters(code: code, params, to: out)
        case .acl(let h):
            layer("HCI ACL")
            if let out {
                out.add("Handle", .uint(UInt64(h.handle), hex: 4))
                out.add("Packet Boundary Flag", .named(UInt64(h.boundary), hex: 1, ACLHeader.boundaryNames[Int(h.boundary)]))
                out.add("Broadcast Flag", .uint(UInt64(h.broadcast), hex: 1))
                out.add("Data Total Length", .uint(UInt64(h.length), hex: 0))
            }
            writeL2CAP(to: out, layer: layer)
        case .isochronous(let h):
            layer(packet.kind == .hci(.scoData) ? "HCI SCO" : "HCI ISO")
            out?.add("Handle", .uint(UInt64(h), hex: 4))
            out?.add("Data", .bytes(hciParameters))
        }
        if let keyNote {
            layer("Keys")
            out?.add("Recovery", .text(keyNote))
        }
        if !problems.isEmpty {
            layer("Malformed")
            if let out { for p in problems { out.malformed(p.reason) } }
        }
    }

    /// Every layer's full decode, outermost first, each as (protocol name, its fields).
    public var layers: [(name: String, fields: [Field])] {
        var out: [(name: String, fields: [Field])] = []
        let list = FieldList()
        func finish() {
            if !out.isEmpty { out[out.count - 1].fields = list.tree }
            list.removeAll()
        }
        writeLayers(to: list) { name in
            finish()
            out.append((name, []))
        }
        finish()
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

    func writeSummary(to line: inout TextLine) {
        switch self {
        case .att(let r, let cid):
            line += cid == nil ? "ATT " : "EATT "
            r.writeSummary(to: &line)
        case .smp(let pdu):
            line += "SMP "
            pdu.writeSummary(to: &line)
        case .signaling(let s):
            line += s.channel == .le ? "LE Signaling " : "L2CAP Signaling "
            s.writeSummary(to: &line)
        case .channel(let cid, let psm, let r):
            line += "L2CAP "
            line.write(PSM.name(psm, le: true))
            line += " CID "
            line.write(hex: cid, width: 4)
            switch r {
            case .incomplete: line += " SDU segment"
            case .sdu(let b, let frames):
                line += " SDU "
                line.write(b.count)
                line += " bytes"
                if frames.count > 1 { line += " from "; line.write(frames.count); line += " K-frames" }
            case .malformed(let why): line += " malformed: "; line.write(why)
            }
        case .raw(let cid, let data):
            line += "L2CAP CID "
            line.write(hex: cid, width: 4)
            line.write(byte: 32)
            line.write(data.count)
            line += " bytes"
        }
    }

    func writeFields(to out: FieldSink) {
        switch self {
        case .att(let r, _): r.writeFields(to: out)
        case .smp(let pdu): pdu.writeFields(to: out)
        case .signaling(let s): s.writeFields(to: out)
        default: out.add(fields)
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
