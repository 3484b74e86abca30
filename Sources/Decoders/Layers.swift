import Wire

/// A decoded frame's layers, each with its fields, in the order they were peeled off: what `-v`,
/// JSON, filters and the field catalogue walk. Only called when printing or matching.
extension Decoded {
    private func writeL2CAP(to out: FieldSink?, layer: (FieldLabel) -> Void) {
        if let f = fragment {
            layer("L2CAP")
            out?.add("Fragment", .derived(.reassemblyPending(have: f.have, of: f.of)))
        }
        // The header's fields read through the optional in place: `if let` copied the frame
        // (retaining its payload).
        if let length = l2cap?.length, let cid = l2cap?.cid {
            layer("L2CAP")
            if out != nil {
                out!.add("Length", .uint(UInt64(length), hex: 0))
                out!.add("CID", L2CAPChannel.label(cid).map { .named(UInt64(cid), hex: 4, $0) } ?? .uint(UInt64(cid), hex: 4))
                if let fragments = l2cap?.reassembledFrom, !fragments.isEmpty {
                    out!.add("Reassembled From Frames", .derived(.frameNumbers(fragments)))
                }
                if packet.truncated, let have = l2cap?.captured {
                    out!.add("Payload", .derived(.truncatedPayload(have: have, of: Int(length))))
                }
            }
        }
        // Through the optional in place: `if let` would copy the layer (and retain what it holds).
        if let name = upper?.protocolLabel {
            layer(name)
            if out != nil { upper?.writeFields(to: out!) }
        }
    }

    /// Every layer's full decode, outermost first: `layer` is called with each protocol's name,
    /// then that layer's fields go to `out`. Printing sends them straight to the output.
    public func writeLayers(to out: FieldSink, layer: (FieldLabel) -> Void) {
        writeLayers(fieldsTo: out, layer: layer)
    }

    /// Only the names of the layers `writeLayers` would write, in the same order, with none of
    /// their fields decoded: a display filter asks which layers a frame has at this cost.
    public func forEachLayerName(_ layer: (FieldLabel) -> Void) {
        writeLayers(fieldsTo: nil, layer: layer)
    }

    /// The monitor opcodes' names as labels (those past the list are interned when printed).
    private static let monitorLabels = FieldLabel.table((0..<32).map { MonitorOpcode.name(UInt16($0)) })

    /// The one walk over the layers: their names always, their fields when `out` is given.
    /// `out` is read in place (`out != nil`, then `out!`): bound with `if let`, it was retained and
    /// released for every frame printed.
    private func writeLayers(fieldsTo out: FieldSink?, layer: (FieldLabel) -> Void) {
        switch packet.kind {
        case .monitor(let op):
            layer("Monitor")
            out?.add("Opcode", .named(UInt64(op), hex: 4, Int(op) < Self.monitorLabels.count ? Self.monitorLabels[Int(op)] : FieldLabel(MonitorOpcode.name(op))))
            if op >= MonitorOpcode.ctrlOpen, op <= MonitorOpcode.ctrlEvent, packet.payload.count >= 4 {
                layer("MGMT")
                if out != nil { _ = Management.writeFields(monitorOpcode: op, packet.payload, to: out!) }
            } else {
                out?.add("Data", .bytes(packet.payload))
            }
        case .linkLayer:
            if let f = linkLayer {
                layer("Link Layer")
                if out != nil { f.writeFields(to: out!) }
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
            out.begin("Opcode", .named(UInt64(op), hex: 4, HCICommands.label(op)))
            out.add("OGF", .uint(UInt64(op >> 10), hex: 2))
            out.add("OCF", .uint(UInt64(op & 0x3FF), hex: 4))
            out.end()
            out.add("Parameter Total Length", .uint(UInt64(params.count), hex: 0))
            HCICommands.writeParameters(opcode: op, params, to: out)
        case .event(let code):
            layer("HCI Event")
            guard let out else { break }
            let params = hciParameters
            out.add("Event Code", .named(UInt64(code), hex: 2, HCIEvents.label(code)))
            out.add("Parameter Total Length", .uint(UInt64(params.count), hex: 0))
            HCIEvents.writeParameters(code: code, params, to: out)
        case .acl(let h):
            layer("HCI ACL")
            if out != nil {
                out!.add("Handle", .uint(UInt64(h.handle), hex: 4))
                out!.add("Packet Boundary Flag", .named(UInt64(h.boundary), hex: 1, ACLHeader.boundaryNames[Int(h.boundary)]))
                out!.add("Broadcast Flag", .uint(UInt64(h.broadcast), hex: 1))
                out!.add("Data Total Length", .uint(UInt64(h.length), hex: 0))
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
        if hasProblems {
            layer("Malformed")
            if out != nil { for p in problems { out!.malformed(p.reason) } }
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
            out.append((name.string, []))
        }
        finish()
        return out
    }
}

extension UpperLayer {
    /// The layer's name: a literal, or a label made once for a channel's PSM (`FieldLabel`).
    @inline(__always) public var protocolLabel: FieldLabel {
        switch self {
        case .att(_, let cid): return cid == nil ? "ATT" : "EATT"
        case .smp: return "SMP"
        case .signaling(let s): return s.channel == .le ? "LE Signaling" : "L2CAP Signaling"
        case .channel(_, let psm, _): return PSM.layerLabel(psm)
        case .raw(let cid, _): return L2CAPChannel.label(cid) ?? "L2CAP Payload"
        }
    }

    @inline(__always) func writeFields(to out: FieldSink) {
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
            var out = [Field("PSM", .named(UInt64(psm), hex: 4, FieldLabel(PSM.name(psm, le: true))))]
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
