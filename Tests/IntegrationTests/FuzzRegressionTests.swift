import Capture
import Decoders
import Foundation
import Report
import XCTest
import Wire

/// Replays every input a fuzz target once crashed on (Tests/Captures/malformed/fuzz-TARGET-HASH)
/// through the same code path as the target in fuzz/TARGET.swift, so a fixed crash stays fixed.
/// The drivers below mirror the harnesses (the fuzz sources are not part of the package).
final class FuzzRegressionTests: XCTestCase {
    static let dir = Fixtures.captures + "/malformed"

    func testEveryFuzzFindingStillDecodes() throws {
        let inputs = Fixtures.files(in: Self.dir).filter { $0.hasPrefix("fuzz-") }
        if inputs.isEmpty { throw XCTSkip("no fuzz findings committed") }
        for name in inputs {
            let target = name.split(separator: "-").dropFirst().first.map(String.init) ?? ""
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.dir + "/" + name)))
            switch target {
            case "capture": try Replay.capture(bytes, keepFile: false)
            case "pipeline": try Replay.capture(bytes, keepFile: true)
            case "hci": Replay.hci(bytes)
            case "l2cap": Replay.l2cap(bytes)
            case "att": Replay.att(bytes)
            case "ad": Replay.ad(bytes)
            case "ll": Replay.ll(bytes)
            default: XCTFail("\(name): unknown fuzz target \(target)")
            }
        }
    }

    /// The drivers also run on a few hand-made inputs, so they are exercised without findings.
    func testDriversOnEdgeInputs() throws {
        let samples: [[UInt8]] = [[], [0], [0xFF, 0xFF], Array(repeating: 0xFF, count: 300), Array(0...255)]
        for s in samples {
            Replay.hci(s)
            Replay.l2cap(s)
            Replay.att(s)
            Replay.ad(s)
            Replay.ll(s)
            try Replay.capture(s, keepFile: true)
        }
    }
}

enum Replay {
    static func chunks(_ b: [UInt8]) -> [(tag: UInt8, data: ArraySlice<UInt8>)] {
        var out: [(UInt8, ArraySlice<UInt8>)] = []
        var i = 0
        while i < b.count {
            let len = i + 1 < b.count ? Int(b[i + 1]) : 0
            let start = min(i + 2, b.count), end = min(start + len, b.count)
            out.append((b[i], b[start..<end]))
            i = end
        }
        return out
    }

    static func render(_ d: Decoded) {
        _ = d.summary
        for layer in d.layers { _ = layer.fields.map(\.label) }
    }

    static let hciLinkTypes: [UInt32] = [LinkType.h4, LinkType.h4WithPHDR, LinkType.linuxMonitor, LinkType.btsnoopH1,
                                         LinkType.btsnoopH4, LinkType.btsnoopMonitor, LinkType.leLL, LinkType.leLLWithPHDR,
                                         LinkType.nordicBLE, 192]

    static func hci(_ b: [UInt8]) {
        guard b.count >= 5 else { return }
        let flags = UInt32(b[1]) | UInt32(b[2]) << 8 | UInt32(b[3]) << 16 | UInt32(b[4]) << 24
        let p = Packet(Record(number: 1, timestamp: 0, linkType: hciLinkTypes[Int(b[0]) % hciLinkTypes.count], flags: flags, data: b[5...], originalLength: b.count - 5 + (b[0] & 0x80 != 0 ? 1 : 0), fileLength: b.count - 5))
        render(Dissector(trackAdvertisers: true).dissect(p))
    }

    static let leConnect: [UInt8] = [0x3E, 19, 0x01, 0x00, 0x40, 0x00, 0x00, 0x01, 1, 2, 3, 4, 5, 6, 0x18, 0, 0, 0, 0x48, 0, 0]

    static func event(_ dissector: Dissector, _ n: Int, _ ev: [UInt8]) {
        render(dissector.dissect(Packet(number: n, timestamp: Int64(n), direction: .received, adapter: 0, kind: .hci(.event), payload: ev[...])))
    }

    static func l2cap(_ b: [UInt8]) {
        let dissector = Dissector()
        var n = 0
        for (tag, chunk) in chunks(b) {
            let h = UInt16(tag & 3) | 0x40
            if tag & 0x40 != 0 {
                n += 1
                var ev = leConnect
                ev[4] = UInt8(h)
                event(dissector, n, ev)
            }
            n += 1
            let length = chunk.count + (tag & 0x20 != 0 ? 1 : 0)
            let acl = [UInt8(h & 0xFF), UInt8(h >> 8 | UInt16(tag >> 2 & 3) << 4), UInt8(length & 0xFF), UInt8(length >> 8)] + chunk
            render(dissector.dissect(Packet(number: n, timestamp: Int64(n), direction: tag & 0x10 != 0 ? .received : .sent,
                                            adapter: 0, kind: .hci(.aclData), payload: acl[...])))
            if tag & 0x80 != 0 {
                n += 1
                event(dissector, n, [0x05, 4, 0x00, UInt8(h & 0xFF), UInt8(h >> 8), 0x13])
            }
        }
    }

    static func att(_ b: [UInt8]) {
        let dissector = Dissector()
        event(dissector, 1, leConnect)
        var n = 1
        let cids: [UInt16] = [L2CAPChannel.att, L2CAPChannel.att, L2CAPChannel.smp, L2CAPChannel.leSignaling]
        func send(_ acl: [UInt8], _ dir: Direction) {
            n += 1
            render(dissector.dissect(Packet(number: n, timestamp: Int64(n) * 1_000_000, direction: dir, adapter: 0,
                                            kind: .hci(.aclData), payload: acl[...])))
        }
        for (tag, pdu) in chunks(b) {
            let cid = cids[Int(tag >> 1 & 3)]
            let dir: Direction = tag & 1 == 0 ? .sent : .received
            let frame = [UInt8(pdu.count & 0xFF), UInt8(pdu.count >> 8), UInt8(cid & 0xFF), UInt8(cid >> 8)] + pdu
            if tag & 8 != 0, frame.count > 5 {
                send([0x40, 0x00, 5, 0] + frame[..<5], dir)
                send([0x40, 0x10, UInt8((frame.count - 5) & 0xFF), UInt8((frame.count - 5) >> 8)] + frame[5...], dir)
            } else {
                send([0x40, 0x20, UInt8(frame.count & 0xFF), UInt8(frame.count >> 8)] + frame, dir)
            }
        }
    }

    static func ad(_ b: [UInt8]) {
        guard let first = b.first else { return }
        let rest = b[1...]
        let subevents: [UInt8] = [0x02, 0x0B, 0x0D, 0x0F, 0x25, 0x02, 0x0D, 0x0D]
        let data = AdvertisingData(rest, legacy: first & 1 != 0)
        _ = data.summary
        _ = data.fields
        let sub = subevents[Int(first >> 1 & 7)]
        let parsed = AdvertisingReports.parse(subevent: sub, rest)
        _ = AdvertisingReports.fields(subevent: sub, rest)
        let advertisers = Advertisers()
        var assembler = ExtendedAdvertisingAssembler(maxPending: 4, maxLength: 1650)
        for (i, r) in parsed.reports.enumerated() {
            _ = r.summary(in: rest)
            _ = r.fields(in: rest)
            _ = r.advertisingData(in: rest).fields
            advertisers.add(r, data: r.data(in: rest), frame: i + 1, time: Int64(i))
            if let whole = assembler.add(r, in: rest) { _ = AdvertisingData(whole.data[...]).fields }
        }
        _ = advertisers.devices
        let ev = [0x3E, UInt8(min(rest.count + 1, 255)), sub] + rest
        render(Dissector(trackAdvertisers: true).dissect(Packet(number: 1, timestamp: 0, direction: .received, adapter: 0,
                                                                kind: .hci(.event), payload: ev[...])))
    }

    static func ll(_ b: [UInt8]) {
        let types: [UInt32] = [LinkType.leLL, LinkType.leLLWithPHDR, LinkType.nordicBLE, LinkType.nordicBLE]
        let keys = b.first.map { $0 & 4 != 0 } == true ? [LTK(msbFirst: Array(0..<16))].compactMap { $0 } : []
        let tracker = LinkLayerTracker(keys: keys)
        for (n, (tag, chunk)) in chunks(b).enumerated() {
            let p = Packet(Record(number: n + 1, timestamp: Int64(n + 1) * 1_250_000, linkType: types[Int(tag & 3)], data: chunk, fileLength: chunk.count))
            let f = tracker.process(p)
            _ = f.summary
            _ = f.fields
        }
    }

    /// A whole capture through the reader; with `keepFile` also the dissector, both printers and the auditor.
    static func capture(_ b: [UInt8], keepFile pipeline: Bool) throws {
        let path = NSTemporaryDirectory() + "blesniff-replay-\(getpid()).bin"
        try Data(b).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        guard let reader = try? CaptureReader(path: path) else { return }
        let dissector = Dissector(trackAdvertisers: true)
        let tracker = LinkLayerTracker()
        let out = Output(fd: open("/dev/null", O_WRONLY | O_CLOEXEC))
        defer { out.close() }
        let text = FramePrinter(format: .text, verbose: true, output: out)
        let json = FramePrinter(format: .json, verbose: false, output: out)
        let feed = AuditFeed(dissector: dissector)
        let auditor = Auditor()
        do {
            while let r = try reader.next() {
                guard pipeline else { continue }
                let p = Packet(r)
                if case .linkLayer = p.kind { _ = tracker.process(p).fields }
                let d = dissector.dissect(p)
                text.print(d)
                json.print(d)
                feed.events(d, into: auditor)
            }
        } catch {}
        feed.finish(into: auditor, at: nil)
        _ = auditor.finish()
        if pipeline, let adv = dissector.advertisers {
            DevicesReport.text(adv.devices, file: "replay", to: out)
            DevicesReport.json(adv.devices, file: "replay", to: out)
        }
    }
}
