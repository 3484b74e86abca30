import ArgumentParser
import Capture
import Decoders
import Report
#if canImport(Glibc)
import Glibc
import Wire
#endif

/// Options every decoding command shares.
struct DecodeOptions: ParsableArguments {
    @Flag(help: "Treat a capture that ends mid-record as an error.")
    var strict = false

    @Flag(help: "Merge all the given captures into one, in timestamp order (e.g. btsnoop_hci.log.last then .log).")
    var merge = false

    @Option(name: .customLong("ltk"), help: ArgumentHelp(
        "A long-term key (32 hex digits, most significant first) to decrypt encrypted link-layer connections in sniffer captures; repeatable.",
        valueName: "hex"))
    var ltks: [String] = []

    @Option(name: .customLong("tk"), help: ArgumentHelp(
        "The temporary key of an LE legacy OOB pairing (32 hex digits, most significant first), to decrypt the link it encrypts; repeatable. Just Works and Passkey Entry TKs are found without it.",
        valueName: "hex"))
    var tks: [String] = []

    @Option(name: .customLong("keys"), help: ArgumentHelp(
        "A keys file (YAML: devices, each with ltk, tk or passkey, which decrypt like --ltk and --tk, or irk and identity, which resolve private addresses); repeatable.",
        valueName: "file"), completion: .file(extensions: ["yaml", "yml"]))
    var keysFiles: [String] = []

    @Option(name: .customLong("keys-from"), help: ArgumentHelp(
        "A capture whose keys decrypt and resolve the others': the LTKs and STKs it reveals (an HCI log of the phone beside an air capture of the same session) and its IRKs; repeatable.",
        valueName: "capture"), completion: .file())
    var keySources: [String] = []

    func validate() throws {
        for k in ltks where LTK(hex: k) == nil { throw ValidationError("--ltk \(k): expected 32 hex digits") }
        for k in tks where LTK(hex: k) == nil { throw ValidationError("--tk \(k): expected 32 hex digits") }
        for path in keySources where access(path, R_OK) != 0 {
            throw ValidationError("--keys-from \(path): cannot read it")
        }
        for path in keysFiles {
            do { _ = try KeysFile.load(path: path) } catch { throw ValidationError("--keys \(error)") }
        }
    }

    var keys: [LTK] { ltks.compactMap { LTK(hex: $0) } }
    /// Checked by `validate`.
    private var files: [KeysFile] { keysFiles.compactMap { try? KeysFile.load(path: $0) } }
    /// TKs share the LTK's form: 128 bits, most significant octet first.
    var temporaryKeys: [LTK] { tks.compactMap { LTK(hex: $0) } + files.flatMap(\.temporaryKeys) }
    /// The keys files' and --keys-from captures' LTKs, new for each capture (they count what they
    /// decrypt).
    var givenKeys: [LinkKey] { files.flatMap(\.linkKeys) + keySources.flatMap { KeySource.load($0).linkKeys() } }
    var privateKeys: [[UInt8]] { files.flatMap(\.privateKeys) }
    /// The keys files' and --keys-from captures' IRKs with their identities.
    var identityKeys: [IdentityKey] { files.flatMap(\.identityKeys) + keySources.flatMap { KeySource.load($0).identityKeys } }

    /// A dissector with every key the options give: LTKs, TKs, the keys files' keys and IRKs.
    func dissector(trackAdvertisers: Bool = false, candidateUUIDs: [BluetoothUUID] = [],
                   maxAdvertisers: Int = Advertisers.defaultMaxTracked, keepEnded: Int = Dissector.maxEndedKept,
                   findsFieldFaults: Bool = true, keepsValues: Bool = true) -> Dissector {
        Dissector(trackAdvertisers: trackAdvertisers, candidateUUIDs: candidateUUIDs, keys: keys, temporaryKeys: temporaryKeys,
                  givenKeys: givenKeys, privateKeys: privateKeys, identityKeys: identityKeys, maxAdvertisers: maxAdvertisers, keepEnded: keepEnded,
                  findsFieldFaults: findsFieldFaults, keepsValues: keepsValues)
    }

    /// The captures to decode as one each: every file alone, or all together with --merge.
    func groups(_ files: [String]) -> [[String]] { merge ? [files] : files.map { [$0] } }

    var input: CaptureInput { CaptureInput(strict: strict) }

    /// Decodes each capture (every file alone, or all together with --merge) with a dissector of
    /// its own, handing each frame to `frame`, then the capture's name and dissector to `report`.
    /// A capture that could not be opened has its one error line, not an empty section too.
    /// Returns whether every capture was read whole.
    func eachCapture(_ files: [String], _ make: () -> Dissector, frame: (Packet, Decoded) -> Void = { _, _ in },
                     report: (String, Dissector) throws -> Void) throws -> Bool {
        var ok = true
        for group in groups(files) {
            let dissector = make()
            var frames = 0
            let read = try input.forEachPacket(group) { p in
                frames += 1
                frame(p, dissector.dissect(p))
            }
            ok = read && ok
            if !read, frames == 0 { continue }
            try report(group.joined(separator: " + "), dissector)
        }
        return ok
    }
}

/// What a command that reports on each capture takes: the captures, text or JSON, and how to decode.
struct CaptureReportOptions: ParsableArguments {
    @Argument(help: "Capture files; - reads standard input.", completion: .file())
    var files: [String]

    @Option(help: "Output format: text or json.")
    var format: FramePrinter.Format = .text

    @OptionGroup var decoding: DecodeOptions

    /// `DecodeOptions.eachCapture` over the files, with a dissector that leaves field faults alone.
    func each(frame: (Packet, Decoded) -> Void = { _, _ in }, report: (String, Dissector) throws -> Void) throws -> Bool {
        try decoding.eachCapture(files, { decoding.dissector(findsFieldFaults: false) }, frame: frame, report: report)
    }
}

/// Reads captures as streams of `Packet`s, reporting bad input the way every command does:
/// a clear message naming the file, frame and byte offset; truncation after good frames is a
/// warning unless `strict`.
struct CaptureInput {
    var strict = false
    /// Show a progress bar on a terminal for files larger than this many bytes.
    var progressThreshold: Int64 = 8 << 20

    enum Failure: Error { case input }

    /// Calls `body` for every frame of every file, in order. Returns false when a file could not be
    /// read to its end (an error was printed). `platform` hears what each file's format says of
    /// the host stack that made it (`containerPlatform`).
    @inline(__always)
    func forEachPacket(_ paths: [String], platform: (PlatformGuess) -> Void = { _ in },
                       _ body: (Packet) throws -> Void) throws -> Bool {
        if paths.count > 1 { return try merged(paths, body) }
        var ok = true
        for path in paths {
            let reader: CaptureReader
            do {
                reader = try CaptureReader(path: path)
            } catch {
                stderr("blesniff: \(error)")
                ok = false
                continue
            }
            let progress = Progress(path: path, threshold: progressThreshold)
            do {
                var first = true
                while let r = try reader.next() {
                    if first, let g = containerPlatform(reader.format, r.linkType, path: path) { platform(g) }
                    first = false
                    let offset = r.fileOffset
                    try body(Packet(consume r))
                    progress?.update(offset)
                }
            } catch let e as CaptureError {
                progress?.finish()
                stderr("blesniff: \(e)")
                ok = false
                continue
            }
            progress?.finish()
            ok = warn(reader.truncation.map { [$0] } ?? []) && ok
        }
        return ok
    }

    /// Several captures read as one, in timestamp order, frames numbered anew.
    private func merged(_ paths: [String], _ body: (Packet) throws -> Void) throws -> Bool {
        var readers: [CaptureReader] = []
        var ok = true
        for path in paths {
            do { readers.append(try CaptureReader(path: path)) } catch {
                stderr("blesniff: \(error)")
                ok = false
            }
        }
        let m = MergedReader(readers)
        while true {
            do {
                guard let r = try m.next() else { break }
                try body(Packet(consume r))
            } catch let e as CaptureError {
                stderr("blesniff: \(e)")
                ok = false
            }
        }
        return warn(m.truncations) && ok
    }

    private func warn(_ truncations: [CaptureError]) -> Bool {
        for t in truncations { stderr("blesniff: warning: \(t)") }
        return truncations.isEmpty || !strict
    }
}

/// A progress bar on standard error, only when it is a terminal and the file is large.
final class Progress {
    let size: Int64
    var shown = -1

    init?(path: String, threshold: Int64) {
        guard path != "-", isatty(2) != 0 else { return nil }
        var st = stat()
        guard stat(path, &st) == 0, Int64(st.st_size) > threshold else { return nil }
        size = Int64(st.st_size)
    }

    func update(_ offset: Int64) {
        let pct = Int(offset * 100 / max(size, 1))
        guard pct != shown else { return }
        shown = pct
        let bar = String(repeating: "#", count: pct / 4) + String(repeating: " ", count: 25 - pct / 4)
        let s = "\r[\(bar)] \(pct)%"
        writeStandardError(s)
    }

    func finish() {
        let s = "\r" + String(repeating: " ", count: 40) + "\r"
        writeStandardError(s)
    }
}

/// The keys one capture reveals, for `--keys-from`: read once per run, however many captures
/// they are given to.
struct KeySource: Sendable {
    struct Key: Sendable {
        let value: LTK
        let ediv: UInt16?, rand: UInt64?
        let origin: String
    }
    let keys: [Key]
    let identityKeys: [IdentityKey]

    /// Fresh link keys (each counts what it decrypts in the capture it is given to).
    func linkKeys() -> [LinkKey] {
        keys.map { LinkKey($0.value, origin: .given($0.origin), ediv: $0.ediv, rand: $0.rand) }
    }

    private final class Cache: @unchecked Sendable {
        let lock = Lock()
        var sources: [String: KeySource] = [:]
    }
    private static let cache = Cache()

    static func load(_ path: String) -> KeySource {
        cache.lock.lock()
        defer { cache.lock.unlock() }
        if let s = cache.sources[path] { return s }
        let s = read(path)
        cache.sources[path] = s
        return s
    }

    /// Decodes the capture to its end; a file that cannot be read gives what was read before the
    /// problem (the message names it).
    private static func read(_ path: String) -> KeySource {
        let dissector = Dissector(findsFieldFaults: false)
        _ = try? CaptureInput().forEachPacket([path]) { _ = dissector.dissect($0) }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        var keys: [Key] = []
        var identities: [IdentityKey] = []
        for k in dissector.revealedKeys {
            switch k.kind {
            case .ltk, .stk:
                guard let value = LTK(msbFirst: k.value), !keys.contains(where: { $0.value == value }) else { continue }
                keys.append(Key(value: value, ediv: k.ediv, rand: k.rand,
                                origin: "from " + name + " (" + k.source + ", frame \(k.frames.first ?? 0))"))
            case .irk:
                guard let irk = Block128(msbFirst: k.value), irk != Block128(repeating: 0), let a = k.identityAddress else { continue }
                identities.append(IdentityKey(irk: irk, identity: IdentityAddress(a, type: k.identityAddressType ?? 0),
                                              source: name + " (" + k.source + ")"))
            case .tk, .csrk:
                continue
            }
        }
        return KeySource(keys: keys, identityKeys: identities)
    }
}
