import CYaml

/// A YAML document as a tree of scalars, sequences and mappings, each with the line it starts on,
/// composed from libyaml's events (anchors and aliases resolved). Enough for configuration files:
/// values stay strings, their meaning is the reader's business.
final class YAMLNode {
    enum Kind {
        case scalar(String)
        case sequence([YAMLNode])
        /// In document order; a key may repeat.
        case mapping([(YAMLNode, YAMLNode)])
    }

    let kind: Kind
    /// Where the node starts, counted from 1.
    let mark: YAMLMark?
    /// A plain, untagged "=" scalar or one tagged `!!value`: YAML's default-value key.
    let isValueKey: Bool

    init(kind: Kind, mark: YAMLMark?, isValueKey: Bool = false) {
        self.kind = kind
        self.mark = mark
        self.isValueKey = isValueKey
    }

    /// The text of a scalar; of a mapping, the value of its default-value key ("=") if it has one.
    var string: String? {
        switch kind {
        case .scalar(let s): return s
        case .mapping(let pairs):
            for (k, v) in pairs where k.isValueKey { return v.string }
            return nil
        case .sequence: return nil
        }
    }

    var sequence: [YAMLNode]? {
        if case .sequence(let items) = kind { return items }
        return nil
    }

    var mapping: [(YAMLNode, YAMLNode)]? {
        if case .mapping(let pairs) = kind { return pairs }
        return nil
    }
}

/// A position in the text, line and column counted from 1 (the column in Unicode scalars).
struct YAMLMark: CustomStringConvertible {
    var line: Int
    var column: Int

    init(_ m: yaml_mark_t) {
        line = Int(m.line) + 1
        column = Int(m.column) + 1
    }

    init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    var description: String { String(line) + ":" + String(column) }
}

/// Text that is not valid YAML: libyaml's stage, problem and position, described with the
/// offending line and a caret under the column.
struct YAMLError: Error, CustomStringConvertible {
    var description: String
}

enum YAML {
    /// The single document in `text`, or nil for an empty stream.
    static func compose(_ text: String) throws(YAMLError) -> YAMLNode? {
        var bytes = Array(text.utf8)
        let count = bytes.count
        bytes.append(0)
        return try bytes.withUnsafeMutableBufferPointer { (buf) throws(YAMLError) -> YAMLNode? in
            var composer = Composer(text: text)
            yaml_parser_initialize(&composer.parser)
            defer { yaml_parser_delete(&composer.parser) }
            yaml_parser_set_encoding(&composer.parser, YAML_UTF8_ENCODING)
            yaml_parser_set_input_string(&composer.parser, buf.baseAddress, count)
            return try composer.singleRoot()
        }
    }

    fileprivate struct Composer {
        let text: String
        var parser = yaml_parser_t()
        var anchors: [String: YAMLNode] = [:]

        init(text: String) { self.text = text }

        mutating func singleRoot() throws(YAMLError) -> YAMLNode? {
            var streamStart = try next()
            yaml_event_delete(&streamStart)
            var documentStart = try next()
            defer { yaml_event_delete(&documentStart) }
            if documentStart.type == YAML_STREAM_END_EVENT { return nil }
            var rootStart = try next()
            let root = try load(&rootStart)
            var documentEnd = try next()
            yaml_event_delete(&documentEnd)
            var after = try next()
            defer { yaml_event_delete(&after) }
            if after.type != YAML_STREAM_END_EVENT {
                let context = "expected a single document in the stream in line 1, column 1\n"
                throw error("composer", context + "but found another document", YAMLMark(after.start_mark))
            }
            return root
        }

        mutating func next() throws(YAMLError) -> yaml_event_t {
            var event = yaml_event_t()
            guard yaml_parser_parse(&parser, &event) == 1 else { throw parserError() }
            return event
        }

        /// The node `event` starts; deletes `event`.
        mutating func load(_ event: inout yaml_event_t) throws(YAMLError) -> YAMLNode {
            defer { yaml_event_delete(&event) }
            let mark = YAMLMark(event.start_mark)
            switch event.type {
            case YAML_ALIAS_EVENT:
                let name = Self.string(event.data.alias.anchor) ?? ""
                guard let node = anchors[name] else {
                    throw error("composer", "found undefined alias", mark)
                }
                return node
            case YAML_SCALAR_EVENT:
                let s = event.data.scalar
                let value = Self.string(s.value) ?? ""
                let tag = Self.string(s.tag)
                let isValueKey = tag == "tag:yaml.org,2002:value"
                    || (tag == nil && s.plain_implicit != 0 && s.style == YAML_PLAIN_SCALAR_STYLE && value == "=")
                let node = YAMLNode(kind: .scalar(value), mark: mark, isValueKey: isValueKey)
                if let a = Self.string(s.anchor) { anchors[a] = node }
                return node
            case YAML_SEQUENCE_START_EVENT:
                let anchor = Self.string(event.data.sequence_start.anchor)
                var items: [YAMLNode] = []
                while true {
                    var e = try next()
                    if e.type == YAML_SEQUENCE_END_EVENT { yaml_event_delete(&e); break }
                    items.append(try load(&e))
                }
                let node = YAMLNode(kind: .sequence(items), mark: mark)
                if let anchor { anchors[anchor] = node }
                return node
            case YAML_MAPPING_START_EVENT:
                let anchor = Self.string(event.data.mapping_start.anchor)
                var pairs: [(YAMLNode, YAMLNode)] = []
                while true {
                    var e = try next()
                    if e.type == YAML_MAPPING_END_EVENT { yaml_event_delete(&e); break }
                    let key = try load(&e)
                    var v = try next()
                    pairs.append((key, try load(&v)))
                }
                let node = YAMLNode(kind: .mapping(pairs), mark: mark)
                if let anchor { anchors[anchor] = node }
                return node
            default:
                throw error("composer", "unexpected event", mark)
            }
        }

        static func string(_ p: UnsafeMutablePointer<yaml_char_t>?) -> String? {
            p.map { String(cString: UnsafePointer($0)) }
        }

        func parserError() -> YAMLError {
            let problem = parser.problem.map { String(cString: $0) } ?? ""
            let context = parser.context.map {
                String(cString: $0) + " in line " + String(parser.context_mark.line + 1)
                    + ", column " + String(parser.context_mark.column + 1) + "\n"
            } ?? ""
            let mark = YAMLMark(parser.problem_mark)
            switch parser.error {
            case YAML_MEMORY_ERROR:
                return YAMLError(description: "Memory error")
            case YAML_READER_ERROR:
                return readerError(problem)
            case YAML_SCANNER_ERROR:
                return error("scanner", context + problem, mark)
            case YAML_PARSER_ERROR:
                return error("parser", context + problem, mark)
            default:
                return error("composer", context + problem, mark)
            }
        }

        func error(_ stage: String, _ message: String, _ mark: YAMLMark) -> YAMLError {
            YAMLError(description: mark.description + ": error: " + stage + ": " + message + ":\n" + snippet(mark))
        }

        /// The line `mark` is on, then a caret under its column.
        func snippet(_ mark: YAMLMark) -> String {
            // Past the last line (an error at the end of the text): the last line.
            let lines = Self.lines(text)
            let line = lines.isEmpty ? Substring("") : lines[min(max(mark.line - 1, 0), lines.count - 1)]
            var column = 0
            var scalars = 0
            for u in line.unicodeScalars where scalars < mark.column - 1 {
                scalars += 1
                column += u.utf16.count
            }
            return Self.endingWithNewline(line) + String(repeating: " ", count: column) + "^"
        }

        /// A reader error (bytes that are not allowed in YAML): its position is a byte offset.
        func readerError(_ problem: String) -> YAMLError {
            let offset = parser.problem_offset
            var seen = 0
            for (i, l) in Self.lines(text).enumerated() {
                let n = l.utf8.count
                if offset < seen + n {
                    let target = text.utf8.index(l.startIndex, offsetBy: offset - seen)
                    let column = text.utf16.distance(from: l.startIndex, to: target)
                    return YAMLError(description: YAMLMark(line: i + 1, column: column + 1).description
                                     + ": error: reader: " + problem + ":\n" + Self.endingWithNewline(l)
                                     + String(repeating: " ", count: column) + "^")
                }
                seen += n
            }
            return YAMLError(description: problem + " at offset: " + String(offset) + ", value: " + String(parser.problem_value))
        }

        /// The text's lines, each with its line terminator (LF, CR, CRLF, NEL, LS or PS).
        static func lines(_ text: String) -> [Substring] {
            var out: [Substring] = []
            let u = text.unicodeScalars
            var start = u.startIndex
            var i = u.startIndex
            while i < u.endIndex {
                let c = u[i]
                var next = u.index(after: i)
                if c == "\r" || c == "\n" || c == "\u{85}" || c == "\u{2028}" || c == "\u{2029}" {
                    if c == "\r", next < u.endIndex, u[next] == "\n" { next = u.index(after: next) }
                    out.append(text[start..<next])
                    start = next
                }
                i = next
            }
            if start < u.endIndex { out.append(text[start...]) }
            return out
        }

        static func endingWithNewline(_ s: Substring) -> String {
            if let last = s.unicodeScalars.last, ("\u{0A}"..."\u{0D}").contains(last) || last == "\u{85}"
                || last == "\u{2028}" || last == "\u{2029}" {
                return String(s)
            }
            return String(s) + "\n"
        }
    }
}
