import Decoders
import Wire

/// A decoded frame in one line, as `read` prints it: the deepest decoded layer's summary, or what
/// the frame is when nothing above HCI decoded. Only called when printing.
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
            Management.writeMonitorSummary(op, packet.payload, adapter: packet.adapter, to: &line)
            return
        case .linkLayer:
            // Through the optional in place: `if let` would copy the layer (and retain what it holds).
            if upper != nil {
                line += "LL "
                upper?.writeSummary(to: &line)
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
            HCIEvents.writeSummary(code: code, hciParameters, to: &line)
        case .acl(let h):
            if upper != nil { upper?.writeSummary(to: &line); return }
            if packet.truncated, let f = l2cap {
                line += "L2CAP "
                if let name = L2CAPChannel.name(f.cid) { line.write(name) } else { line += "CID "; line.write(hex: f.cid, width: 4) }
                line += ", "
                line.write(f.captured)
                line += " of "
                line.write(f.length)
                line += " bytes (truncated in the capture)"
                return
            }
            // Read through the optional in place: `if let` copied the frame, payload and all.
            if fragment == nil, let cid = l2cap?.cid, let length = l2cap?.length {
                line += "L2CAP CID "
                line.write(hex: cid, width: 4)
                line += " len "
                line.write(length)
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
}

extension UpperLayer {
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
}
