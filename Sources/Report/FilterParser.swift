import Decoders

/// Parses a display filter into tests and the boolean expression over them.
///
///     expr    := and (("or" | "||") and)*
///     and     := unary (("and" | "&&") unary)*
///     unary   := ("not" | "!") unary | primary
///     primary := "(" expr ")" | field [op value] | field "in" "{" value ([","] value)* "}"
///     op      := == != < <= > >= contains matches   (also eq ne lt le gt ge)
///
/// `field in {a b}` is `field == a or field == b`, as in tshark.
struct FilterParser {
    enum Token: Equatable {
        case word(String)
        case string(String)
        case symbol(String)
        case end
    }

    let expression: String
    private var tokens: [(token: Token, at: Int)] = []
    private var i = 0
    private var tests: [Test] = []

    init(_ expression: String) { self.expression = expression }

    mutating func parse() throws(DisplayFilterError) -> (DisplayFilter.Node, [Test]) {
        tokens = try lex()
        let node = try parseOr()
        guard case .end = tokens[i].token else { throw error(.syntax, "expected an operator, \"and\", \"or\" or the end", at: tokens[i].at) }
        return (node, tests)
    }

    private func error(_ code: DisplayFilterError.Code, _ reason: String, at: Int, suggestions: [String] = []) -> DisplayFilterError {
        DisplayFilterError(code: code, reason: reason, expression: expression, position: at, suggestions: suggestions)
    }

    // MARK: Lexing

    private func lex() throws(DisplayFilterError) -> [(token: Token, at: Int)] {
        let c = Array(expression.unicodeScalars)
        var out: [(token: Token, at: Int)] = []
        var p = 0
        func isWord(_ u: Unicode.Scalar) -> Bool {
            u.properties.isAlphabetic || ("0"..."9").contains(u) || u == "_" || u == "." || u == ":" || u == "-"
        }
        while p < c.count {
            let u = c[p]
            if u == " " || u == "\t" || u == "\n" { p += 1; continue }
            let start = p
            if u == "\"" {
                var s = ""
                p += 1
                while p < c.count, c[p] != "\"" {
                    if c[p] == "\\", p + 1 < c.count { p += 1 }
                    s.unicodeScalars.append(c[p])
                    p += 1
                }
                guard p < c.count else { throw error(.syntax, "unterminated string", at: start) }
                p += 1
                out.append((.string(s), start))
                continue
            }
            if isWord(u) {
                var s = ""
                while p < c.count, isWord(c[p]) { s.unicodeScalars.append(c[p]); p += 1 }
                out.append((.word(s), start))
                continue
            }
            let two = p + 1 < c.count ? String(u) + String(c[p + 1]) : ""
            if ["==", "!=", "<=", ">=", "&&", "||"].contains(two) {
                out.append((.symbol(two), start))
                p += 2
                continue
            }
            if "()<>!{},".unicodeScalars.contains(u) {
                out.append((.symbol(String(u)), start))
                p += 1
                continue
            }
            if u == "=" { throw error(.syntax, "\"=\" is not an operator: use \"==\"", at: start) }
            throw error(.syntax, "unexpected character \"\(u)\"", at: start)
        }
        out.append((.end, c.count))
        return out
    }

    // MARK: Parsing

    private mutating func accept(_ words: [String]) -> Bool {
        switch tokens[i].token {
        case .symbol(let s) where words.contains(s), .word(let s) where words.contains(s.lowercased()):
            i += 1
            return true
        default: return false
        }
    }

    private mutating func parseOr() throws(DisplayFilterError) -> DisplayFilter.Node {
        var n = try parseAnd()
        while accept(["or", "||"]) { n = .or(n, try parseAnd()) }
        return n
    }

    private mutating func parseAnd() throws(DisplayFilterError) -> DisplayFilter.Node {
        var n = try parseUnary()
        while accept(["and", "&&"]) { n = .and(n, try parseUnary()) }
        return n
    }

    private mutating func parseUnary() throws(DisplayFilterError) -> DisplayFilter.Node {
        if accept(["not", "!"]) { return .not(try parseUnary()) }
        return try parsePrimary()
    }

    private static let operators: [String: Test.Op] = [
        "==": .eq, "eq": .eq, "!=": .ne, "ne": .ne, "<": .lt, "lt": .lt, "<=": .le, "le": .le, ">": .gt, "gt": .gt,
        ">=": .ge, "ge": .ge, "contains": .contains, "matches": .matches, "~": .matches,
    ]

    private mutating func parsePrimary() throws(DisplayFilterError) -> DisplayFilter.Node {
        let (tok, at) = tokens[i]
        switch tok {
        case .symbol("("):
            i += 1
            let n = try parseOr()
            guard case .symbol(")") = tokens[i].token else { throw error(.syntax, "expected \")\"", at: tokens[i].at) }
            i += 1
            return n
        case .word(let name) where !["and", "or", "not"].contains(name.lowercased()):
            i += 1
            let targets = try resolveAlias(name, at: at)
            if case .word(let w) = tokens[i].token, w.lowercased() == "in" {
                i += 1
                return try parseSet(targets)
            }
            var op = Test.Op.present
            var literal = Literal()
            let opAt = tokens[i].at
            switch tokens[i].token {
            case .symbol(let s), .word(let s):
                if let o = Self.operators[s.lowercased()] {
                    op = o
                    i += 1
                    literal = try parseValue(op)
                } else if case .word = tokens[i].token, !["and", "or"].contains(s.lowercased()) {
                    throw error(.syntax, "expected an operator (== != < <= > >= contains matches)", at: opAt)
                }
            default: break
            }
            if case .frame(.device) = targets[0], literal.address == nil {
                throw error(.badValue, "device takes an address (== 00:11:22:33:44:55)", at: opAt)
            }
            return try addTests(targets, op, literal, at: at)
        case .end: throw error(.syntax, "expected a field name or \"(\"", at: at)
        default: throw error(.syntax, "expected a field name, \"not\" or \"(\"", at: at)
        }
    }

    /// One test per target: one field, or the fields a tshark name stands for, any of which
    /// may match (`!=`: one is present and none is equal, as for a repeated field).
    private mutating func addTests(_ targets: [Test.Target], _ op: Test.Op, _ literal: Literal, at: Int) throws(DisplayFilterError) -> DisplayFilter.Node {
        guard tests.count + targets.count <= DisplayFilter.maxTests else {
            throw error(.tooManyTests, "more than \(DisplayFilter.maxTests) tests in one filter", at: at)
        }
        for t in targets { tests.append(Test(target: t, op: op, literal: literal)) }
        return targets.count == 1 ? .test(tests.count - 1) : .anyOf(Array((tests.count - targets.count)..<tests.count))
    }

    /// The members of `{…}` (spaces or commas between them), each an `==` test, joined by "or".
    private mutating func parseSet(_ targets: [Test.Target]) throws(DisplayFilterError) -> DisplayFilter.Node {
        guard case .symbol("{") = tokens[i].token else { throw error(.syntax, "expected \"{\" after \"in\"", at: tokens[i].at) }
        i += 1
        var node: DisplayFilter.Node?
        while true {
            if case .symbol("}") = tokens[i].token, node != nil { i += 1; break }
            if case .symbol(",") = tokens[i].token, node != nil { i += 1; continue }
            let at = tokens[i].at
            let literal = try parseValue(.eq)
            if case .frame(.device) = targets[0], literal.address == nil {
                throw error(.badValue, "device takes an address (== 00:11:22:33:44:55)", at: at)
            }
            let test = try addTests(targets, .eq, literal, at: at)
            node = node.map { .or($0, test) } ?? test
        }
        return node!
    }

    private mutating func parseValue(_ op: Test.Op) throws(DisplayFilterError) -> Literal {
        let (tok, at) = tokens[i]
        var lit: Literal
        switch tok {
        case .word(let s): lit = Literal(s, quoted: false)
        case .string(let s): lit = Literal(s, quoted: true)
        default: throw error(.syntax, "expected a value: a number, an address, a UUID or a \"string\"", at: at)
        }
        i += 1
        if op == .matches {
            do { lit.regex = try Regex(lit.text) } catch {
                throw self.error(.badValue, "not a regular expression: \(error)", at: at)
            }
        }
        if [.lt, .le, .gt, .ge].contains(op), lit.number == nil, case .word = tok {
            throw error(.badValue, "\"\(lit.text)\" is not a number", at: at)
        }
        return lit
    }

    /// The targets of a field name: ours, or the fields of ours a tshark name stands for
    /// (`FieldAliases`), which are looked up as if written.
    private func resolveAlias(_ name: String, at: Int) throws(DisplayFilterError) -> [Test.Target] {
        guard let fields = FieldAliases.fields(for: name) else { return [try resolve(name, at: at)] }
        var out: [Test.Target] = []
        for f in fields { out.append(try resolve(f, at: at)) }
        return out
    }

    /// The test's target for a field name, or an error naming the nearest known fields.
    private func resolve(_ name: String, at: Int) throws(DisplayFilterError) -> Test.Target {
        if let f = Test.FrameField(rawValue: name) { return .frame(f) }
        let keys = name.split(separator: ".", omittingEmptySubsequences: false).map { Test.Key(String($0)) }
        if keys.contains(where: { $0.text.isEmpty }) { throw error(.syntax, "empty name between dots", at: at) }
        let layer = keys[0], path = Array(keys.dropFirst())
        if path.count == 1, path[0].text == "uuid", FieldCatalog.hasUUIDs(layer: layer.text) { return .anyUUID(layer) }
        if FieldCatalog.typeOfAnyInstance(name) != nil { return .layer(layer, anyInstance(path, layer), part: nil) }
        if let last = path.last, let part = Test.Part(rawValue: last.text),
           let type = FieldCatalog.typeOfAnyInstance(keys.dropLast().map(\.text).joined(separator: ".")),
           FieldCatalog.parts(of: type).contains(part) {
            return .layer(layer, anyInstance(path.dropLast(), layer) + [path.last!], part: part)
        }
        throw error(.unknownField, "unknown field \"\(name)\"", at: at, suggestions: FieldCatalog.nearest(to: name))
    }

    /// The path with each key that names a numbered field without its number (`hci_event.report`
    /// for `report_1`, `report_2`, …) matching every instance: tshark's `bthci_evt.rssi` is any
    /// report's RSSI, and so is `hci_event.report.rssi`.
    private func anyInstance(_ path: some Collection<Test.Key>, _ layer: Test.Key) -> [Test.Key] {
        var prefix = layer.text
        return path.map { key in
            var key = key
            prefix = FieldCatalog.unnumbered(prefix + "." + key.text)
            key.anyInstance = FieldCatalog.numbered.contains(prefix) && FieldCatalog.withoutNumber(Substring(key.text)) == nil
            return key
        }
    }
}
