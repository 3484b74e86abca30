import Wire

/// Attribute Protocol (Core 5.4 Vol 3 Part F): one PDU, decoded without any connection state.
/// `ATTBearer` (GATT.swift) adds what needs state: request pairing, MTU, the GATT database.

/// An ATT opcode (Vol 3 Part F 3.3.1): bits 0–5 method, bit 6 command flag, bit 7
/// authentication signature flag. Any byte is accepted; unknown ones keep their value.
public struct ATTOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ raw: UInt8) { rawValue = raw }

    @inlinable public static var errorResponse: ATTOpcode { ATTOpcode(0x01) }
    @inlinable public static var exchangeMTURequest: ATTOpcode { ATTOpcode(0x02) }
    @inlinable public static var exchangeMTUResponse: ATTOpcode { ATTOpcode(0x03) }
    @inlinable public static var findInformationRequest: ATTOpcode { ATTOpcode(0x04) }
    @inlinable public static var findInformationResponse: ATTOpcode { ATTOpcode(0x05) }
    @inlinable public static var findByTypeValueRequest: ATTOpcode { ATTOpcode(0x06) }
    @inlinable public static var findByTypeValueResponse: ATTOpcode { ATTOpcode(0x07) }
    @inlinable public static var readByTypeRequest: ATTOpcode { ATTOpcode(0x08) }
    @inlinable public static var readByTypeResponse: ATTOpcode { ATTOpcode(0x09) }
    @inlinable public static var readRequest: ATTOpcode { ATTOpcode(0x0A) }
    @inlinable public static var readResponse: ATTOpcode { ATTOpcode(0x0B) }
    @inlinable public static var readBlobRequest: ATTOpcode { ATTOpcode(0x0C) }
    @inlinable public static var readBlobResponse: ATTOpcode { ATTOpcode(0x0D) }
    @inlinable public static var readMultipleRequest: ATTOpcode { ATTOpcode(0x0E) }
    @inlinable public static var readMultipleResponse: ATTOpcode { ATTOpcode(0x0F) }
    @inlinable public static var readByGroupTypeRequest: ATTOpcode { ATTOpcode(0x10) }
    @inlinable public static var readByGroupTypeResponse: ATTOpcode { ATTOpcode(0x11) }
    @inlinable public static var writeRequest: ATTOpcode { ATTOpcode(0x12) }
    @inlinable public static var writeResponse: ATTOpcode { ATTOpcode(0x13) }
    @inlinable public static var prepareWriteRequest: ATTOpcode { ATTOpcode(0x16) }
    @inlinable public static var prepareWriteResponse: ATTOpcode { ATTOpcode(0x17) }
    @inlinable public static var executeWriteRequest: ATTOpcode { ATTOpcode(0x18) }
    @inlinable public static var executeWriteResponse: ATTOpcode { ATTOpcode(0x19) }
    @inlinable public static var handleValueNotification: ATTOpcode { ATTOpcode(0x1B) }
    @inlinable public static var handleValueIndication: ATTOpcode { ATTOpcode(0x1D) }
    @inlinable public static var handleValueConfirmation: ATTOpcode { ATTOpcode(0x1E) }
    @inlinable public static var readMultipleVariableRequest: ATTOpcode { ATTOpcode(0x20) }
    @inlinable public static var readMultipleVariableResponse: ATTOpcode { ATTOpcode(0x21) }
    @inlinable public static var multipleHandleValueNotification: ATTOpcode { ATTOpcode(0x23) }
    @inlinable public static var writeCommand: ATTOpcode { ATTOpcode(0x52) }
    @inlinable public static var signedWriteCommand: ATTOpcode { ATTOpcode(0xD2) }

    /// Bits 0–5.
    @inlinable public var method: UInt8 { rawValue & 0x3F }
    /// Bit 6: a command gets no response.
    @inlinable public var isCommand: Bool { rawValue & 0x40 != 0 }
    /// Bit 7: a 12-byte authentication signature ends the PDU.
    @inlinable public var hasSignature: Bool { rawValue & 0x80 != 0 }

    /// Name of every defined opcode, indexed by the opcode byte: as literals (what a summary
    /// copies) and as Strings.
    static let literals: [StaticString?] = {
        var t = [StaticString?](repeating: nil, count: 256)
        for (op, name) in defined { t[Int(op)] = name }
        return t
    }()
    static let table: [String?] = literals.map { $0.map(\.description) }
    /// `name` as a label: a known opcode's literal, another's text interned.
    public var label: FieldLabel { ATTOpcode.labels[Int(rawValue)] ?? FieldLabel(name) }
    private static let labels = literals.map { $0.map { FieldLabel(stringLiteral: $0) } }

    static let defined: [UInt8: StaticString] = [
        0x01: "Error Response",
        0x02: "Exchange MTU Request", 0x03: "Exchange MTU Response",
        0x04: "Find Information Request", 0x05: "Find Information Response",
        0x06: "Find By Type Value Request", 0x07: "Find By Type Value Response",
        0x08: "Read By Type Request", 0x09: "Read By Type Response",
        0x0A: "Read Request", 0x0B: "Read Response",
        0x0C: "Read Blob Request", 0x0D: "Read Blob Response",
        0x0E: "Read Multiple Request", 0x0F: "Read Multiple Response",
        0x10: "Read By Group Type Request", 0x11: "Read By Group Type Response",
        0x12: "Write Request", 0x13: "Write Response",
        0x16: "Prepare Write Request", 0x17: "Prepare Write Response",
        0x18: "Execute Write Request", 0x19: "Execute Write Response",
        0x1B: "Handle Value Notification",
        0x1D: "Handle Value Indication", 0x1E: "Handle Value Confirmation",
        0x20: "Read Multiple Variable Request", 0x21: "Read Multiple Variable Response",
        0x23: "Multiple Handle Value Notification",
        0x52: "Write Command", 0xD2: "Signed Write Command",
    ]

    public var isKnown: Bool { ATTOpcode.table[Int(rawValue)] != nil }
    public var name: String { ATTOpcode.table[Int(rawValue)] ?? "Unknown Opcode " + Hex.prefixed(rawValue, width: 2) }

    /// Writes `name`.
    public func writeName(to line: inout TextLine) {
        if let s = ATTOpcode.literals[Int(rawValue)] { line += s } else { line.write(name) }
    }

    /// The opcode's role (Vol 3 Part F 3.4.8). Bit masks of literals rather than a table: it is
    /// read for every PDU, and a static table costs a lazy-initialisation check and a call.
    @inlinable @inline(__always) public var kind: ATTKind {
        let r = rawValue
        guard r < 64 else { return r & 0x7F == 0x52 ? .command : .unknown }
        let bit: UInt64 = 1 << r
        if bit & ATTOpcode.requestBits != 0 { return .request }
        if bit & ATTOpcode.responseBits != 0 { return .response }
        if bit & ATTOpcode.notificationBits != 0 { return .notification }
        if r == 0x1D { return .indication }
        return r == 0x1E ? .confirmation : .unknown
    }

    /// Requests: a request's response is the next opcode (Error Response answers any request).
    @usableFromInline static let requestBits: UInt64 = 1 << 0x02 | 1 << 0x04 | 1 << 0x06 | 1 << 0x08 | 1 << 0x0A
        | 1 << 0x0C | 1 << 0x0E | 1 << 0x10 | 1 << 0x12 | 1 << 0x16 | 1 << 0x18 | 1 << 0x20
    @usableFromInline static let responseBits: UInt64 = requestBits << 1 | 1 << 0x01
    @usableFromInline static let notificationBits: UInt64 = 1 << 0x1B | 1 << 0x23

    public var description: String { name }

    /// The response a request expects (Error Response can answer any request).
    public var expectedResponse: ATTOpcode? {
        guard kind == .request else { return nil }
        return ATTOpcode(rawValue &+ 1)
    }
}

/// What role a PDU plays in the protocol's transactions (Vol 3 Part F 3.3).
public enum ATTKind: String, Sendable {
    case request, response, command, notification, indication, confirmation, unknown
}

/// ATT error codes (Vol 3 Part F 3.4.1.1), application errors and the common profile and
/// service error codes (Core Specification Supplement Part B 1.2).
public enum ATTError {
    static let names: [String] = [
        "Reserved", "Invalid Handle", "Read Not Permitted", "Write Not Permitted", "Invalid PDU",
        "Insufficient Authentication", "Request Not Supported", "Invalid Offset", "Insufficient Authorization",
        "Prepare Queue Full", "Attribute Not Found", "Attribute Not Long", "Encryption Key Size Too Short",
        "Invalid Attribute Value Length", "Unlikely Error", "Insufficient Encryption", "Unsupported Group Type",
        "Insufficient Resources", "Database Out Of Sync", "Value Not Allowed",
    ]
    static let commonProfile: ByteTable<String> = [
        0xFC: "Write Request Rejected",
        0xFD: "Client Characteristic Configuration Descriptor Improperly Configured",
        0xFE: "Procedure Already in Progress", 0xFF: "Out of Range",
    ]

    /// `name` as a label: a code in the table's, another's text interned.
    static func label(_ code: UInt8) -> FieldLabel {
        Int(code) < nameLabels.count ? nameLabels[Int(code)] : FieldLabel(name(code))
    }
    private static let nameLabels = FieldLabel.table(names)

    public static func name(_ code: UInt8) -> String {
        if Int(code) < names.count { return names[Int(code)] }
        switch code {
        case 0x80...0x9F: return "Application Error " + Hex.prefixed(code, width: 2)
        case 0xE0...0xFF: return commonProfile[code] ?? "Reserved Common Profile Error " + Hex.prefixed(code, width: 2)
        default: return "Reserved " + Hex.prefixed(code, width: 2)
        }
    }
}

/// An inclusive handle range as requests carry it.
public struct ATTHandleRange: Hashable, Sendable {
    public var start: UInt16
    public var end: UInt16
    @inlinable public init(_ start: UInt16, _ end: UInt16) { self.start = start; self.end = end }
    /// Start ≤ end and start ≠ 0 (Vol 3 Part F 3.4.3.1).
    public var isValid: Bool { start != 0 && start <= end }
    public func contains(_ h: UInt16) -> Bool { start <= h && h <= end }
}

/// The parameters of one PDU. Values and lists are spans of the PDU's `bytes` (indices into
/// it), read on demand by the accessors of `ATTPDU`: the parameters hold no reference of their
/// own, so a PDU is copied and dropped with one retain and one release.
public enum ATTParameters: Sendable {
    /// Write Response, Execute Write Response, Handle Value Confirmation.
    case none
    case error(request: ATTOpcode, handle: UInt16, code: UInt8)
    /// Exchange MTU Request (client Rx MTU) / Response (server Rx MTU).
    case mtu(UInt16)
    /// Find Information Request.
    case range(ATTHandleRange)
    /// Find Information Response: format 1 (16-bit UUIDs) or 2 (128-bit), whole entries only.
    case information(format: UInt8, list: ATTSpan)
    case findByTypeValue(ATTHandleRange, type: UInt16, value: ATTSpan)
    /// Find By Type Value Response: 4-byte (found handle, group end handle) entries.
    case handlesInformation(list: ATTSpan)
    /// Read By Type / Read By Group Type Request.
    case typedRange(ATTHandleRange, type: BluetoothUUID)
    /// Read By Type (handle + value) / Read By Group Type (handle, end, value) Response.
    case attributeData(length: UInt8, list: ATTSpan)
    /// Read Request.
    case handle(UInt16)
    /// Read, Read Blob and Read Multiple Response.
    case value(ATTSpan)
    case readBlob(handle: UInt16, offset: UInt16)
    /// Read Multiple (Variable) Request: 2-byte handles.
    case handles(list: ATTSpan)
    /// Read Multiple Variable Response: (2-byte length, value) tuples.
    case lengthValues(list: ATTSpan)
    /// Write Request, Write Command, Handle Value Notification and Indication.
    case handleValue(handle: UInt16, value: ATTSpan)
    case signedWrite(handle: UInt16, value: ATTSpan, signature: ATTSpan)
    /// Prepare Write Request and Response.
    case prepareWrite(handle: UInt16, offset: UInt16, value: ATTSpan)
    case executeWrite(flags: UInt8)
    /// Multiple Handle Value Notification: (handle, 2-byte length, value) tuples.
    case handleLengthValues(list: ATTSpan)
    /// Unknown opcode, or a PDU too short for its fixed fields: the parameter bytes.
    case raw(ATTSpan)
}

/// Where in a PDU's `bytes` a value or list lies (indices of `bytes`, as its slices use).
public typealias ATTSpan = Range<Int>

/// Why a PDU breaks the specification: what is wrong and the numbers its text needs, made into
/// text only when shown, so a PDU carries no string.
public struct ATTFault: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: UInt8, Sendable {
        case emptyPDU, mtuBelowMinimum, trailingBytes, invalidFormat, attributeTypeWidth, attributeDataLength
        case fewerThanTwoHandles, shortSignature, reservedFlags, emptyList, leftOver, tupleTruncated, truncated, invalid
    }
    public let kind: Kind
    let a: Int, b: Int, c: Int

    init(_ kind: Kind, _ a: Int = 0, _ b: Int = 0, _ c: Int = 0) {
        self.kind = kind
        self.a = a
        self.b = b
        self.c = c
    }

    public var description: String {
        switch kind {
        case .emptyPDU: return "empty ATT PDU"
        case .mtuBelowMinimum: return "ATT_MTU \(a) below the LE minimum of 23"
        case .trailingBytes: return "\(a) unexpected trailing byte\(a == 1 ? "" : "s")"
        case .invalidFormat: return "invalid format \(a)"
        case .attributeTypeWidth: return "attribute type of \(a) bytes (must be 2 or 16)"
        case .attributeDataLength: return "attribute data length \(a)"
        case .fewerThanTwoHandles: return "fewer than two handles"
        case .shortSignature: return "authentication signature shorter than 12 bytes"
        case .reservedFlags: return "reserved flags " + Hex.prefixed(UInt8(truncatingIfNeeded: a), width: 2)
        case .emptyList: return "empty list"
        case .leftOver: return "\(a) bytes left over after \(b) entries of \(c)"
        case .tupleTruncated: return "tuple truncated at offset \(a)"
        case .truncated: return "truncated: needed \(a) bytes, \(b) left"
        case .invalid: return "invalid parameters"
        }
    }
}

/// One ATT PDU. Decoding never fails: a PDU that breaks the specification keeps what could be
/// read and says why in `fault`.
public struct ATTPDU: Sendable {
    /// The whole PDU, opcode first.
    public let bytes: Bytes
    /// What was read from `bytes`: plain values, so the bearer passes them without retaining the bytes.
    public let layout: ATTLayout

    public init(_ pdu: Bytes) {
        bytes = pdu
        layout = ATTLayout(pdu)
    }

    public init(_ bytes: Bytes, _ layout: ATTLayout) {
        self.bytes = bytes
        self.layout = layout
    }

    @inlinable public var opcode: ATTOpcode { layout.opcode }
    @inlinable public var parameters: ATTParameters { layout.parameters }
    /// Why the PDU breaks the specification, when it does.
    @inlinable public var fault: ATTFault? { layout.fault }

    /// Why the PDU breaks the specification, as text.
    public var malformed: String? { fault?.description }

    /// `kind` of the opcode: request, response, command, ...
    public var kind: ATTKind { layout.kind }

    /// The bytes a span of the parameters covers.
    @inlinable public subscript(span: ATTSpan) -> Bytes { bytes[span] }
}

/// An ATT PDU's opcode, parameters (as spans of its bytes) and fault, read from its bytes but not
/// holding them.
public struct ATTLayout: Sendable {
    public let opcode: ATTOpcode
    public let parameters: ATTParameters
    /// Why the PDU breaks the specification, when it does.
    public let fault: ATTFault?

    public init(_ pdu: borrowing Bytes) {
        guard let op = pdu.first else {
            opcode = ATTOpcode(0)
            parameters = .raw(pdu.indices)
            fault = ATTFault(.emptyPDU)
            return
        }
        opcode = ATTOpcode(op)
        // The PDUs of a stream of values, read where they lie: a reader over a slice of the rest
        // cost a retain and a release of the bytes for each. The same as `parse` gives.
        let s = pdu.startIndex
        switch opcode {
        case .handleValueNotification, .handleValueIndication, .writeRequest, .writeCommand:
            guard let h = pdu.le16(1) else { break }
            (parameters, fault) = (.handleValue(handle: h, value: (s &+ 3)..<pdu.endIndex), nil)
            return
        case .readRequest:
            guard pdu.count == 3, let h = pdu.le16(1) else { break }
            (parameters, fault) = (.handle(h), nil)
            return
        case .readResponse, .readBlobResponse, .readMultipleResponse:
            (parameters, fault) = (.value((s &+ 1)..<pdu.endIndex), nil)
            return
        default: break
        }
        (parameters, fault) = ATTLayout.parse(opcode, pdu[(s + 1)...])
    }

    /// `kind` of the opcode: request, response, command, ...
    public var kind: ATTKind { opcode.kind }

    // MARK: Parsing

    private static func parse(_ op: ATTOpcode, _ p: Bytes) -> (ATTParameters, ATTFault?) {
        var r = ByteReader(p)
        do throws(DecodeError) {
            let params: ATTParameters
            switch op {
            case .errorResponse:
                params = .error(request: ATTOpcode(try r.u8()), handle: try r.u16(), code: try r.u8())
            case .exchangeMTURequest, .exchangeMTUResponse:
                let mtu = try r.u16()
                params = .mtu(mtu)
                if mtu < 23 { return (params, extra(r) ?? ATTFault(.mtuBelowMinimum, Int(mtu))) }
            case .findInformationRequest:
                params = .range(ATTHandleRange(try r.u16(), try r.u16()))
            case .findInformationResponse:
                let format = try r.u8()
                let width = format == 1 ? 4 : format == 2 ? 18 : 0
                guard width > 0 else { return (.information(format: format, list: r.index..<p.endIndex), ATTFault(.invalidFormat, Int(format))) }
                return list(r, width) { .information(format: format, list: $0) }
            case .findByTypeValueRequest:
                params = .findByTypeValue(ATTHandleRange(try r.u16(), try r.u16()), type: try r.u16(), value: r.index..<p.endIndex)
                r.index = p.endIndex
            case .findByTypeValueResponse:
                return list(r, 4) { .handlesInformation(list: $0) }
            case .readByTypeRequest, .readByGroupTypeRequest:
                let range = ATTHandleRange(try r.u16(), try r.u16())
                let width = r.remaining
                guard width == 2 || width == 16, let type = BluetoothUUID(littleEndian: r.rest()) else {
                    return (.raw(p.indices), ATTFault(.attributeTypeWidth, width))
                }
                params = .typedRange(range, type: type)
            case .readByTypeResponse, .readByGroupTypeResponse:
                let length = try r.u8()
                let minimum = op == .readByTypeResponse ? 2 : 4
                guard Int(length) >= minimum else {
                    return (.attributeData(length: length, list: p.endIndex..<p.endIndex), ATTFault(.attributeDataLength, Int(length)))
                }
                return list(r, Int(length)) { .attributeData(length: length, list: $0) }
            case .readRequest:
                params = .handle(try r.u16())
            case .readResponse, .readBlobResponse, .readMultipleResponse:
                return (.value(p.indices), nil)
            case .readBlobRequest:
                params = .readBlob(handle: try r.u16(), offset: try r.u16())
            case .readMultipleRequest, .readMultipleVariableRequest:
                let (params, why) = list(r, 2) { .handles(list: $0) }
                if why == nil, p.count < 4 { return (params, ATTFault(.fewerThanTwoHandles)) }
                return (params, why)
            case .readMultipleVariableResponse:
                return tuples(r, header: 0) { .lengthValues(list: $0) }
            case .writeRequest, .writeCommand, .handleValueNotification, .handleValueIndication:
                return (.handleValue(handle: try r.u16(), value: r.index..<p.endIndex), nil)
            case .signedWriteCommand:
                let handle = try r.u16()
                guard r.remaining >= 12 else { return (.raw(p.indices), ATTFault(.shortSignature)) }
                let signature = p.endIndex - 12
                return (.signedWrite(handle: handle, value: r.index..<signature, signature: signature..<p.endIndex), nil)
            case .prepareWriteRequest, .prepareWriteResponse:
                return (.prepareWrite(handle: try r.u16(), offset: try r.u16(), value: r.index..<p.endIndex), nil)
            case .executeWriteRequest:
                let flags = try r.u8()
                params = .executeWrite(flags: flags)
                if flags > 1 { return (params, extra(r) ?? ATTFault(.reservedFlags, Int(flags))) }
            case .writeResponse, .executeWriteResponse, .handleValueConfirmation:
                params = .none
            case .multipleHandleValueNotification:
                return tuples(r, header: 2) { .handleLengthValues(list: $0) }
            default:
                return (.raw(p.indices), nil)
            }
            return (params, extra(r))
        } catch {
            return (.raw(p.indices), ATTLayout.fault(error))
        }
    }

    private static func extra(_ r: ByteReader) -> ATTFault? {
        r.remaining > 0 ? ATTFault(.trailingBytes, r.remaining) : nil
    }

    /// Whole fixed-width entries from the reader's position; a partial last entry is reported and left out.
    private static func list(_ r: ByteReader, _ width: Int, _ make: (ATTSpan) -> ATTParameters) -> (ATTParameters, ATTFault?) {
        let count = r.remaining
        let whole = count / width * width
        let params = make(r.index..<(r.index + whole))
        if count == 0 { return (params, ATTFault(.emptyList)) }
        if whole != count { return (params, ATTFault(.leftOver, count - whole, whole / width, width)) }
        return (params, nil)
    }

    /// (header, 2-byte length, value) tuples from the reader's position; a tuple running past the
    /// end is reported and left out.
    private static func tuples(_ r: ByteReader, header: Int, _ make: (ATTSpan) -> ATTParameters) -> (ATTParameters, ATTFault?) {
        let b = r.bytes[r.index...]
        var offset = 0
        while let len = b.le16(offset + header) {
            let next = offset + header + 2 + Int(len)
            if next > b.count { break }
            offset = next
        }
        let params = make(r.index..<(r.index + offset))
        if offset != b.count { return (params, ATTFault(.tupleTruncated, offset)) }
        return (params, nil)
    }

    /// `fault(e)` as text, or the reason an invalid field gave.
    static func describe(_ e: DecodeError) -> String {
        if case .invalid(let why) = e { return why }
        return fault(e).description
    }

    static func fault(_ e: DecodeError) -> ATTFault {
        switch e {
        case .truncated(let needed, let available): return ATTFault(.truncated, needed, available)
        case .invalid: return ATTFault(.invalid)
        }
    }
}

// MARK: Typed accessors

/// A handle and the value that goes with it.
public struct ATTHandleValue: Sendable, ATTListEntry {
    public let handle: UInt16
    public let value: Bytes

    init(handle: UInt16, value: Bytes) {
        self.handle = handle
        self.value = value
    }

    /// A Read By Type Response entry: handle, then value.
    public init(_ list: Bytes, at o: Int, width: Int) {
        handle = list.le16(at: o)
        value = list[list.startIndex &+ o &+ 2 ..< list.startIndex &+ o &+ width]
    }
}

/// One group of a Read By Group Type Response or Find By Type Value Response.
public struct ATTGroup: Sendable, ATTListEntry {
    public let start: UInt16
    public let end: UInt16
    public let value: Bytes

    /// Start and end handles, then the value (none in a Find By Type Value Response).
    public init(_ list: Bytes, at o: Int, width: Int) {
        start = list.le16(at: o)
        end = list.le16(at: o &+ 2)
        value = list[list.startIndex &+ o &+ 4 ..< list.startIndex &+ o &+ width]
    }
}

/// One Find Information Response entry: a handle and its type.
public struct ATTInformation: Sendable, ATTListEntry {
    public let handle: UInt16
    public let uuid: BluetoothUUID

    public init(_ list: Bytes, at o: Int, width: Int) {
        handle = list.le16(at: o)
        let from = list.startIndex &+ o &+ 2
        uuid = BluetoothUUID(littleEndian: list[from ..< from &+ width &- 2]) ?? BluetoothUUID(uuid16: 0)
    }
}

/// An entry of a list of equal-width entries in a PDU, read from its offset in the list.
public protocol ATTListEntry: Sendable {
    init(_ list: Bytes, at offset: Int, width: Int)
}

/// A PDU's list of equal-width entries, each read where it lies when asked for: walking a
/// discovery response makes no array.
public struct ATTList<Entry: ATTListEntry>: RandomAccessCollection, Sendable {
    let list: Bytes
    let width: Int

    init(_ list: Bytes, width: Int) {
        self.list = list
        self.width = width
    }

    static var empty: ATTList { ATTList(Bytes(), width: 1) }

    public var startIndex: Int { 0 }
    public var endIndex: Int { list.count / width }
    public subscript(i: Int) -> Entry { Entry(list, at: i &* width, width: width) }
}

/// The fixed fields, read from the parameters alone: they hold no reference, so reading them
/// copies nothing that counts.
extension ATTParameters {
    /// The handle the PDU is about (Read, Write, Blob, Prepare, Notification, Indication, Error).
    public var handle: UInt16? {
        switch self {
        case .error(_, let h, _), .handle(let h), .readBlob(let h, _), .handleValue(let h, _),
             .signedWrite(let h, _, _), .prepareWrite(let h, _, _): return h
        default: return nil
        }
    }

    /// The range a Find Information, Find By Type Value, Read By (Group) Type Request covers.
    public var range: ATTHandleRange? {
        switch self {
        case .range(let r), .findByTypeValue(let r, _, _), .typedRange(let r, _): return r
        default: return nil
        }
    }

    /// The attribute type of a Read By (Group) Type or Find By Type Value Request.
    public var attributeType: BluetoothUUID? {
        switch self {
        case .typedRange(_, let t): return t
        case .findByTypeValue(_, let t, _): return BluetoothUUID(uuid16: t)
        default: return nil
        }
    }

    /// Where the value lies in the PDU (Read/Blob/Multiple Response, writes, notifications, indications).
    public var valueSpan: ATTSpan? {
        switch self {
        case .value(let v), .handleValue(_, let v), .signedWrite(_, let v, _), .prepareWrite(_, _, let v),
             .findByTypeValue(_, _, let v): return v
        default: return nil
        }
    }

    /// Value offset of a Read Blob or Prepare Write PDU.
    public var offset: UInt16? {
        switch self {
        case .readBlob(_, let o), .prepareWrite(_, let o, _): return o
        default: return nil
        }
    }
}

/// Handles laid end to end, little-endian, read where they lie: a request's list is walked for
/// every Read Multiple without an array made for it.
public struct ATTHandleList: RandomAccessCollection, Sendable {
    let bytes: Bytes
    public var startIndex: Int { 0 }
    public var endIndex: Int { bytes.count / 2 }
    public subscript(i: Int) -> UInt16 { bytes.le16(at: 2 * i) }
}

extension ATTPDU {
    /// The handle the PDU is about (Read, Write, Blob, Prepare, Notification, Indication, Error).
    public var handle: UInt16? { parameters.handle }

    /// The Set Of Handles of a Read Multiple (Variable) Request, read in place (empty for
    /// other PDUs). An odd last byte is no handle.
    public var handleList: ATTHandleList {
        if case .handles(let span) = parameters { return ATTHandleList(bytes: bytes[span]) }
        return ATTHandleList(bytes: [])
    }

    /// Every handle the PDU names.
    public var handles: [UInt16] {
        switch parameters {
        case .handles: return Array(handleList)
        case .handleLengthValues: return handleValues.map(\.handle)
        case .information: return information.map(\.handle)
        case .attributeData: return attributeData.map(\.handle)
        default: return handle.map { [$0] } ?? []
        }
    }

    /// The range a Find Information, Find By Type Value, Read By (Group) Type Request covers.
    public var range: ATTHandleRange? { parameters.range }

    /// The attribute type of a Read By (Group) Type or Find By Type Value Request.
    public var attributeType: BluetoothUUID? { parameters.attributeType }

    /// The value the PDU carries (Read/Blob/Multiple Response, writes, notifications, indications).
    public var value: Bytes? { parameters.valueSpan.map { bytes[$0] } }

    /// Value offset of a Read Blob or Prepare Write PDU.
    public var offset: UInt16? { parameters.offset }

    public var mtu: UInt16? {
        if case .mtu(let m) = parameters { return m }
        return nil
    }

    /// (request opcode, handle, error code) of an Error Response.
    public var error: (request: ATTOpcode, handle: UInt16, code: UInt8)? {
        if case .error(let op, let h, let c) = parameters { return (op, h, c) }
        return nil
    }

    /// Find Information Response entries.
    public var information: ATTList<ATTInformation> {
        guard case .information(let format, let span) = parameters else { return .empty }
        return ATTList(bytes[span], width: format == 1 ? 4 : 18)
    }

    /// Read By Type Response (handle, value) entries.
    public var attributeData: ATTList<ATTHandleValue> {
        guard case .attributeData(let len, let span) = parameters, opcode == .readByTypeResponse, len >= 2 else { return .empty }
        return ATTList(bytes[span], width: Int(len))
    }

    /// Read By Group Type Response groups, or Find By Type Value Response handle ranges (empty values).
    public var groups: ATTList<ATTGroup> {
        switch parameters {
        case .attributeData(let len, let span) where opcode == .readByGroupTypeResponse && len >= 4:
            return ATTList(bytes[span], width: Int(len))
        case .handlesInformation(let span):
            return ATTList(bytes[span], width: 4)
        default: return .empty
        }
    }

    /// Multiple Handle Value Notification tuples; Write/Notification/Indication as one entry.
    public var handleValues: [ATTHandleValue] {
        switch parameters {
        case .handleLengthValues(let span):
            let l = bytes[span]
            var out: [ATTHandleValue] = []
            var o = 0
            while let h = l.le16(o), let n = l.le16(o + 2) {
                out.append(ATTHandleValue(handle: h, value: l.from(o + 4).prefix(Int(n))))
                o += 4 + Int(n)
            }
            return out
        case .handleValue(let h, let v), .signedWrite(let h, let v, _), .prepareWrite(let h, _, let v):
            return [ATTHandleValue(handle: h, value: bytes[v])]
        default: return []
        }
    }

    /// Read Multiple Variable Response values, in request order.
    public var lengthValues: [Bytes] {
        guard case .lengthValues(let span) = parameters else { return [] }
        let l = bytes[span]
        var out: [Bytes] = []
        var o = 0
        while let n = l.le16(o) {
            out.append(l.from(o + 2).prefix(Int(n)))
            o += 2 + Int(n)
        }
        return out
    }
}

// MARK: Presentation

/// "Primary Service (0x2800)", or the bare UUID when the SIG tables do not name it.
func attUUIDName(_ u: BluetoothUUID) -> String { TextLine.make { writeATTUUIDName(u, to: &$0) } }

func writeATTUUIDName(_ u: BluetoothUUID, to line: inout TextLine) {
    if let n = AssignedNumbers.name(u) {
        line.write(plain: n)
        line += " ("
        line.write(u)
        line.write(byte: UInt8(ascii: ")"))
    } else {
        line.write(u)
    }
}

/// Hex of a value for a summary line, cut after 32 bytes.
func attValueHex(_ v: Bytes) -> String { TextLine.make { writeATTValueHex(v, to: &$0) } }

func writeATTValueHex(_ v: Bytes, to line: inout TextLine) {
    line.write(hexBytes: v.prefix(32))
    if v.count > 32 { line += "…" }
}

extension ATTPDU: Dissectable {
    public var summary: String { TextLine.make(writeSummary) }

    public func writeSummary(to s: inout TextLine) {
        // Handles as tshark writes them in its Info column: lower-case hex, "0x000e".
        func handle(_ label: StaticString, _ h: UInt16) { s += label; s.write(lowerHex: UInt64(h), width: 4) }
        func range(_ r: ATTHandleRange) { handle(", Handles: ", r.start); handle("..", r.end) }
        // Inlined: left to the optimizer it was sometimes outlined (56 instructions a frame on
        // notify-gatt's read).
        @inline(__always) func value(_ label: StaticString, _ v: Bytes) { s += label; writeATTValueHex(v, to: &s) }
        opcode.writeName(to: &s)
        switch parameters {
        case .none: break
        case .error(let op, let h, let code):
            s += " - "
            s.write(ATTError.name(code))
            handle(", Handle: ", h)
            s += ", Request: "
            s.write(op.name)
        case .mtu(let m):
            s += opcode == .exchangeMTURequest ? ", Client Rx MTU: " : ", Server Rx MTU: "
            s.write(m)
        case .range(let r):
            range(r)
        case .information:
            for i in information {
                handle(", Handle: ", i.handle)
                s.write(byte: 32)
                writeATTUUIDName(i.uuid, to: &s)
            }
        case .findByTypeValue(let r, let t, let v):
            range(r)
            s += ", UUID: "
            writeATTUUIDName(BluetoothUUID(uuid16: t), to: &s)
            value(", Value: ", bytes[v])
        case .handlesInformation:
            for g in groups { handle(", Handles: ", g.start); handle("..", g.end) }
        case .typedRange(let r, let t):
            range(r)
            s += ", UUID: "
            writeATTUUIDName(t, to: &s)
        case .attributeData(let len, _):
            s += ", Attribute List Length: "
            s.write(opcode == .readByTypeResponse ? attributeData.count : groups.count)
            s += ", Length: "
            s.write(len)
        case .handle(let h):
            handle(", Handle: ", h)
        case .value(let v):
            value(", Value: ", bytes[v])
        case .readBlob(let h, let o):
            handle(", Handle: ", h)
            s += ", Offset: "
            s.write(o)
        case .handles:
            let list = handleList
            for (i, h) in list.enumerated() { handle(i == 0 ? ", Handles: " : ", ", h) }
            if list.isEmpty { s += ", Handles: " }
        case .lengthValues:
            let values = lengthValues
            if values.isEmpty { s += ", Values: " }
            for (i, v) in values.enumerated() { value(i == 0 ? ", Values: " : ", ", v) }
        case .handleValue(let h, let v), .signedWrite(let h, let v, _):
            handle(", Handle: ", h)
            value(", Value: ", bytes[v])
        case .prepareWrite(let h, let o, let v):
            handle(", Handle: ", h)
            s += ", Offset: "
            s.write(o)
            value(", Value: ", bytes[v])
        case .executeWrite(let f):
            s += ", Flags: "
            s.write(ATTPDU.executeFlagName(f))
        case .handleLengthValues:
            for hv in handleValues {
                handle(", Handle: ", hv.handle)
                value(", Value: ", hv.value)
            }
        case .raw(let b):
            if !b.isEmpty { value(", Data: ", bytes[b]) }
        }
        if let m = malformed { s += " [Malformed: "; s.write(m); s.write(byte: UInt8(ascii: "]")) }
    }

    static func executeFlagName(_ f: UInt8) -> String {
        switch f {
        case 0: return "Cancel all prepared writes (0x00)"
        case 1: return "Immediately write all pending values (0x01)"
        default: return "Reserved (" + Hex.prefixed(f, width: 2) + ")"
        }
    }

    public var fields: [Field] { FieldList.build(writeFields) }

    public func writeFields(to out: FieldSink) {
        out.begin("Opcode", .named(UInt64(opcode.rawValue), hex: 2, opcode.label))
        out.add("Authentication Signature Flag", .bool(opcode.hasSignature))
        out.add("Command Flag", .bool(opcode.isCommand))
        out.add("Method", .uint(UInt64(opcode.method), hex: 2))
        out.end()
        func handle(_ label: FieldLabel, _ h: UInt16) { out.add(label, .uint(UInt64(h), hex: 4)) }
        func range(_ r: ATTHandleRange) {
            handle("Starting Handle", r.start)
            handle("Ending Handle", r.end)
            if !r.isValid { out.add("Handle Range", .error(.reason("starting handle is 0 or after the ending handle"))) }
        }
        /// A value that may be a UUID (a service declaration's), shown as one when it has a UUID's size.
        func valueWithUUID(_ label: FieldLabel, _ v: Bytes) {
            out.begin(label, .bytes(v))
            if let u = BluetoothUUID(littleEndian: v) { writeUUIDField(u, to: out) }
            out.end()
        }
        switch parameters {
        case .none: break
        case .error(let op, let h, let code):
            out.add("Request Opcode in Error", .named(UInt64(op.rawValue), hex: 2, op.label))
            handle("Attribute Handle in Error", h)
            out.add("Error Code", .named(UInt64(code), hex: 2, ATTError.label(code)))
        case .mtu(let m):
            out.add(opcode == .exchangeMTURequest ? "Client Rx MTU" : "Server Rx MTU", .uint(UInt64(m), hex: 0))
        case .range(let r):
            range(r)
        case .information(let format, _):
            out.add("Format", .named(UInt64(format), hex: 2, format == 1 ? "16-bit UUIDs" : format == 2 ? "128-bit UUIDs" : "Reserved"))
            for e in information {
                out.begin("Handle", .uint(UInt64(e.handle), hex: 4))
                writeUUIDField(e.uuid, to: out)
                out.end()
            }
        case .findByTypeValue(let r, let t, let v):
            range(r)
            writeUUIDField(BluetoothUUID(uuid16: t), label: "Attribute Type", to: out)
            valueWithUUID("Attribute Value", bytes[v])
        case .handlesInformation:
            for g in groups {
                out.begin("Handles Information", .none)
                handle("Found Attribute Handle", g.start)
                handle("Group End Handle", g.end)
                out.end()
            }
        case .typedRange(let r, let t):
            range(r)
            writeUUIDField(t, label: opcode == .readByGroupTypeRequest ? "Attribute Group Type" : "Attribute Type", to: out)
        case .attributeData(let len, _):
            out.add("Length", .uint(UInt64(len), hex: 0))
            if opcode == .readByTypeResponse {
                for e in attributeData {
                    out.begin("Attribute Data", .none)
                    handle("Handle", e.handle)
                    out.add("Value", .bytes(e.value))
                    out.end()
                }
            } else {
                for g in groups {
                    out.begin("Attribute Data", .none)
                    handle("Handle", g.start)
                    handle("End Group Handle", g.end)
                    valueWithUUID("Value", g.value)
                    out.end()
                }
            }
        case .handle(let h):
            handle("Handle", h)
        case .value(let v):
            out.add(opcode == .readMultipleResponse ? "Set Of Values" : "Value", .bytes(bytes[v]))
        case .readBlob(let h, let o):
            handle("Handle", h)
            out.add("Value Offset", .uint(UInt64(o), hex: 0))
        case .handles:
            out.begin("Set Of Handles", .none)
            for h in handleList { handle("Handle", h) }
            out.end()
        case .lengthValues:
            for v in lengthValues {
                out.begin("Length Value Tuple", .none)
                out.add("Value Length", .uint(UInt64(v.count), hex: 0))
                out.add("Value", .bytes(v))
                out.end()
            }
        case .handleValue(let h, let v):
            handle("Handle", h)
            out.add("Value", .bytes(bytes[v]))
        case .signedWrite(let h, let v, let span):
            let sig = bytes[span]
            handle("Handle", h)
            out.add("Value", .bytes(bytes[v]))
            out.begin("Authentication Signature", .bytes(sig))
            out.add("Sign Counter", .uint(UInt64(sig.le16(0) ?? 0) | UInt64(sig.le16(2) ?? 0) << 16, hex: 0))
            out.add("MAC", .bytes(sig.from(4)))
            out.end()
        case .prepareWrite(let h, let o, let v):
            handle("Handle", h)
            out.add("Value Offset", .uint(UInt64(o), hex: 0))
            out.add("Part Attribute Value", .bytes(bytes[v]))
        case .executeWrite(let f):
            out.add("Flags", .named(UInt64(f), hex: 2, FieldLabel(ATTPDU.executeFlagName(f))))
        case .handleLengthValues:
            for hv in handleValues {
                out.begin("Handle Length Value Tuple", .none)
                handle("Handle", hv.handle)
                out.add("Value Length", .uint(UInt64(hv.value.count), hex: 0))
                out.add("Value", .bytes(hv.value))
                out.end()
            }
        case .raw(let b):
            if !b.isEmpty { out.add(opcode.isKnown ? "Parameters" : "Data", .bytes(bytes[b])) }
        }
        if let m = malformed { out.malformed(m) }
    }
}

/// A UUID field with its SIG name as children: "UUID: 0x2A37", "Name: Heart Rate Measurement".
func uuidField(_ u: BluetoothUUID, label: FieldLabel = "UUID") -> Field {
    Field(label, .uuid(u), AssignedNumbers.name(u).map { [Field("Name", .text($0))] } ?? [])
}

func writeUUIDField(_ u: BluetoothUUID, label: FieldLabel = "UUID", to out: FieldSink) {
    out.begin(label, .uuid(u))
    if let name = AssignedNumbers.name(u) { out.add("Name", .text(name)) }
    out.end()
}
