/// A regular expression matched in time linear in the text (a Thompson NFA run over the text's
/// Unicode scalars, every state at once): no pattern can make a rule hang an agent. The syntax is
/// the common one without what needs backtracking: literals and escapes (`\.`, `\t`, `\xHH`),
/// `.` (any but a newline), classes `[a-z0-9_]`, `[^…]`, `\d \D \w \W \s \S`, groups `( )`,
/// `(?: )`, `(?<name> )`, alternation `|`, quantifiers `* + ? {n} {n,} {n,m}` (a lazy `?` after
/// them is accepted: only whether there is a match counts), anchors `^` (start) and `$` (end).
/// Look-around, back-references, possessive quantifiers, word boundaries and inline flags are
/// refused with the reason and what to write instead.
public struct LinearRegex: Sendable, Equatable {
    public let pattern: String
    let program: [Instruction]
    /// The scalar sets `.scalar(index)` tests, and each one's ASCII members as two 64-bit masks.
    let sets: [ScalarSet]
    let asciiMasks: [UInt64]
    /// The same automaton made deterministic over ASCII (one table step a character), when it has
    /// at most `AsciiDFA.maxStates` states; texts with other characters run the NFA.
    let dfa: AsciiDFA?

    /// A pattern this engine does not take, with where and why.
    public struct Unsupported: Error, Sendable, Equatable, CustomStringConvertible {
        /// Offset of the problem in the pattern, in Unicode scalars.
        public var offset: Int
        public var message: String
        public var description: String { "at \(offset): \(message)" }
    }

    /// Longest text a pattern sees; longer values are matched on their first this many scalars.
    public static let maxTextLength = 16_384
    /// Largest program (about the pattern's length times its repetition counts).
    static let maxInstructions = 20_000
    /// Longest pattern, in Unicode scalars, and deepest nesting of groups: both checked before
    /// the pattern is parsed, so that no pattern can exhaust the parser's stack.
    public static let maxPatternLength = 2_048
    public static let maxGroupDepth = 32

    enum Instruction: Sendable, Equatable {
        /// A scalar of `sets[index]`.
        case scalar(Int)
        case split(Int, Int)
        case jump(Int)
        case atStart
        case atEnd
        case match
    }

    public init(_ pattern: String) throws(Unsupported) {
        self.pattern = pattern
        let scalars = Array(pattern.unicodeScalars)
        try Self.checkSize(scalars)
        var parser = Parser(scalars)
        let node = try parser.parseAlternation()
        if parser.position < parser.scalars.count {
            throw Unsupported(offset: parser.position, message: "unbalanced ')'")
        }
        var compiler = Compiler()
        try compiler.emit(node)
        compiler.program.append(.match)
        program = compiler.program
        sets = compiler.sets
        asciiMasks = compiler.sets.flatMap { set -> [UInt64] in
            var masks: [UInt64] = [0, 0]
            for value in 0..<128 where set.contains(Unicode.Scalar(UInt8(value))) {
                masks[value >> 6] |= 1 << UInt64(value & 63)
            }
            return masks
        }
        dfa = AsciiDFA(program: program, masks: asciiMasks)
    }

    /// Refuses a pattern longer than `maxPatternLength` or with groups nested deeper than
    /// `maxGroupDepth`, by one pass over it (escapes and classes skipped) before any parsing.
    static func checkSize(_ scalars: [Unicode.Scalar]) throws(Unsupported) {
        guard scalars.count <= maxPatternLength else {
            throw Unsupported(
                offset: maxPatternLength, message: "the pattern is longer than \(maxPatternLength) characters")
        }
        var depth = 0
        var index = 0
        var inClass = false
        while index < scalars.count {
            switch scalars[index] {
            case "\\": index += 1
            case "[" where !inClass: inClass = true
            case "]" where inClass: inClass = false
            case "(" where !inClass:
                depth += 1
                if depth > maxGroupDepth {
                    throw Unsupported(offset: index, message: "groups nested deeper than \(maxGroupDepth) levels")
                }
            case ")" where !inClass: depth = max(0, depth - 1)
            default: break
            }
            index += 1
        }
    }

    /// Whether `scalar` is in set `index`.
    @inline(__always)
    private func test(_ index: Int, _ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 128 ? Self.asciiMember(asciiMasks, index, Int(scalar.value)) : sets[index].contains(scalar)
    }

    /// Whether the ASCII `byte` is in set `index` of `masks` (two 64-bit masks a set).
    @inline(__always)
    static func asciiMember(_ masks: [UInt64], _ index: Int, _ byte: Int) -> Bool {
        masks[index &* 2 &+ byte >> 6] & (1 << UInt64(byte & 63)) != 0
    }

    /// Whether the pattern matches anywhere in `text` (`^`/`$` pin it to the start/end).
    public func matches(_ text: String) -> Bool {
        if let dfa, !text.isEmpty, let outcome = dfa.matches(text.utf8.prefix(Self.maxTextLength)) { return outcome }
        return nfaMatches(text)
    }

    /// `matches` by running the NFA, every state at once.
    package func nfaMatches(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars.prefix(Self.maxTextLength))
        let count = scalars.count
        let anchored = program.first == .atStart
        var current = ThreadList(capacity: program.count)
        var next = ThreadList(capacity: program.count)
        var stack: [Int] = []
        stack.reserveCapacity(program.count)
        for position in 0...count {
            // Unanchored search: a new thread starts at every position (only at 0 after '^').
            if position == 0 || !anchored {
                if add(0, at: position, end: count, to: &current, stack: &stack) { return true }
            }
            if position == count || current.pcs.isEmpty && anchored { break }
            let scalar = scalars[position]
            next.clear()
            for pc in current.pcs {
                if case .scalar(let set) = program[pc], test(set, scalar) {
                    if add(pc + 1, at: position + 1, end: count, to: &next, stack: &stack) { return true }
                }
            }
            swap(&current, &next)
        }
        return false
    }

    /// Adds the thread at `pc` and every thread its jumps, splits and anchors lead to at this
    /// position; true when one of them is the match.
    private func add(_ pc: Int, at position: Int, end: Int, to list: inout ThreadList, stack: inout [Int]) -> Bool {
        stack.removeAll(keepingCapacity: true)
        stack.append(pc)
        while let pc = stack.popLast() {
            guard list.insert(pc) else { continue }
            switch program[pc] {
            case .match: return true
            case .jump(let target): stack.append(target)
            case .split(let first, let second):
                stack.append(second)
                stack.append(first)
            case .atStart: if position == 0 { stack.append(pc + 1) }
            case .atEnd: if position == end { stack.append(pc + 1) }
            case .scalar: break
            }
        }
        return false
    }

    /// The states of one step: a sparse set (O(1) insert and clear).
    struct ThreadList {
        var pcs: [Int] = []
        var seen: [Int]
        var generation = 1

        init(capacity: Int) { seen = Array(repeating: 0, count: capacity) }

        mutating func insert(_ pc: Int) -> Bool {
            guard seen[pc] != generation else { return false }
            seen[pc] = generation
            pcs.append(pc)
            return true
        }

        mutating func clear() {
            pcs.removeAll(keepingCapacity: true)
            generation += 1
        }
    }
}

/// A set of scalars: ranges, possibly negated.
struct ScalarSet: Sendable, Equatable {
    var ranges: [ClosedRange<UInt32>]
    var negated = false

    func contains(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        var inside = false
        for range in ranges where range.contains(value) {
            inside = true
            break
        }
        return inside != negated
    }

    static func single(_ scalar: Unicode.Scalar) -> ScalarSet { ScalarSet(ranges: [scalar.value...scalar.value]) }
    static let digit = ScalarSet(ranges: [48...57])
    static let word = ScalarSet(ranges: [48...57, 65...90, 95...95, 97...122])
    static let space = ScalarSet(ranges: [9...13, 32...32])
    /// `.`: anything but a newline.
    static let dot = ScalarSet(ranges: [10...10], negated: true)
}

extension LinearRegex {
    indirect enum Node {
        case empty
        case set(ScalarSet)
        case atStart
        case atEnd
        case concat([Node])
        case alternation([Node])
        case repeated(Node, min: Int, max: Int?)
    }

    struct Parser {
        let scalars: [Unicode.Scalar]
        var position = 0

        init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

        var peek: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

        func fail(_ message: String, at offset: Int? = nil) -> Unsupported {
            Unsupported(offset: offset ?? position, message: message)
        }

        mutating func parseAlternation() throws(Unsupported) -> Node {
            var branches = [try parseConcatenation()]
            while peek == "|" {
                position += 1
                branches.append(try parseConcatenation())
            }
            return branches.count == 1 ? branches[0] : .alternation(branches)
        }

        mutating func parseConcatenation() throws(Unsupported) -> Node {
            var items: [Node] = []
            while let scalar = peek, scalar != "|", scalar != ")" {
                let start = position
                var atom = try parseAtom()
                atom = try parseQuantifiers(atom, atomStart: start)
                items.append(atom)
            }
            return items.count == 1 ? items[0] : .concat(items)
        }

        mutating func parseQuantifiers(_ atom: Node, atomStart: Int) throws(Unsupported) -> Node {
            var node = atom
            var stacked = 0
            while let scalar = peek {
                let bounds: (Int, Int?)
                switch scalar {
                case "*": bounds = (0, nil)
                case "+": bounds = (1, nil)
                case "?": bounds = (0, 1)
                case "{":
                    guard let counted = try parseCount() else { return node }
                    bounds = counted
                default: return node
                }
                if case .atStart = node { throw fail("a quantifier after '^' repeats nothing") }
                if case .atEnd = node { throw fail("a quantifier after '$' repeats nothing") }
                if scalar != "{" { position += 1 }
                if peek == "?" {
                    position += 1  // lazy: the same set of texts matches
                } else if peek == "+" {
                    throw fail(
                        "possessive quantifiers ('\(scalar)+') need backtracking control; write the pattern without the '+'"
                    )
                }
                node = .repeated(node, min: bounds.0, max: bounds.1)
                stacked += 1
                // Each quantifier nests the node once more (and the compiler recurses once more).
                if stacked > 3 { throw fail("more than 3 quantifiers in a row on one item", at: atomStart) }
            }
            return node
        }

        /// `{n}`, `{n,}`, `{n,m}` at the position (consumed), or nil when `{` is a literal.
        mutating func parseCount() throws(Unsupported) -> (Int, Int?)? {
            let start = position
            var index = position + 1
            func number() -> Int? {
                var digits = ""
                while index < scalars.count, ("0"..."9").contains(scalars[index]) {
                    digits.unicodeScalars.append(scalars[index])
                    index += 1
                }
                return digits.isEmpty ? nil : Int(digits.prefix(6))
            }
            guard let low = number() else { return nil }
            var high: Int? = low
            if index < scalars.count, scalars[index] == "," {
                index += 1
                high = number()
            }
            guard index < scalars.count, scalars[index] == "}" else { return nil }
            position = index + 1
            if let high, high < low { throw fail("{\(low),\(high)}: the upper count is below the lower", at: start) }
            if max(low, high ?? 0) > 1_000 { throw fail("repetition counts above 1000 are not supported", at: start) }
            return (low, high)
        }

        mutating func parseAtom() throws(Unsupported) -> Node {
            let start = position
            guard let scalar = peek else { return .empty }
            position += 1
            switch scalar {
            case "^": return .atStart
            case "$": return .atEnd
            case ".": return .set(.dot)
            case "[": return .set(try parseClass(start: start))
            case "*", "+", "?": throw fail("'\(scalar)' repeats nothing", at: start)
            case "(":
                if peek == "?" {
                    position += 1
                    guard let kind = peek else { throw fail("unterminated group", at: start) }
                    let after = position + 1 < scalars.count ? scalars[position + 1] : nil
                    switch kind {
                    case ":": position += 1
                    case "<" where after != "=" && after != "!":
                        // A named group: the name is read and ignored.
                        while let next = peek, next != ">" { position += 1 }
                        guard peek == ">" else { throw fail("unterminated group name", at: start) }
                        position += 1
                    case "=", "!":
                        throw fail(
                            "look-ahead '(?\(kind)…)' is not supported (rules are matched in linear time); for \"does not start with\" use notPrefix, for \"does not match\" notRegex",
                            at: start)
                    case "<":
                        throw fail(
                            "look-behind '(?<\(after.map(String.init) ?? "")…)' is not supported (rules are matched in linear time); use suffix, notRegex or a second rule",
                            at: start)
                    default:
                        throw fail(
                            "'(?\(kind)' (inline flags, atomic groups, conditionals) is not supported", at: start)
                    }
                }
                let inner = try parseAlternation()
                guard peek == ")" else { throw fail("unbalanced '(': no ')'", at: start) }
                position += 1
                return inner
            case ")": throw fail("unbalanced ')'", at: start)
            case "\\": return .set(try parseEscape(start: start))
            default: return .set(.single(scalar))
            }
        }

        /// The escape after a backslash (consumed): a set of scalars.
        mutating func parseEscape(start: Int) throws(Unsupported) -> ScalarSet {
            guard let scalar = peek else { throw fail("a pattern cannot end with '\\'", at: start) }
            position += 1
            switch scalar {
            case "d": return .digit
            case "D": return ScalarSet(ranges: ScalarSet.digit.ranges, negated: true)
            case "w": return .word
            case "W": return ScalarSet(ranges: ScalarSet.word.ranges, negated: true)
            case "s": return .space
            case "S": return ScalarSet(ranges: ScalarSet.space.ranges, negated: true)
            case "t": return .single("\t")
            case "n": return .single("\n")
            case "r": return .single("\r")
            case "f": return .single("\u{0C}")
            case "v": return .single("\u{0B}")
            case "0": return .single("\u{00}")
            case "x":
                guard position + 2 <= scalars.count,
                    let value = UInt32(String(String.UnicodeScalarView(scalars[position..<position + 2])), radix: 16),
                    let hex = Unicode.Scalar(value)
                else { throw fail("\\x takes two hexadecimal digits", at: start) }
                position += 2
                return .single(hex)
            case "1"..."9":
                throw fail(
                    "back-references (\\\(scalar)) are not supported (rules are matched in linear time)", at: start)
            case "b", "B", "A", "z", "Z", "G":
                throw fail(
                    "the assertion \\\(scalar) is not supported; use ^ and $ for the start and end of the value",
                    at: start)
            default:
                guard !scalar.properties.isAlphabetic else {
                    throw fail("unknown escape \\\(scalar)", at: start)
                }
                return .single(scalar)  // an escaped punctuation mark is itself
            }
        }

        /// A bracket class after `[` (consumed through `]`).
        mutating func parseClass(start: Int) throws(Unsupported) -> ScalarSet {
            var set = ScalarSet(ranges: [])
            if peek == "^" {
                set.negated = true
                position += 1
            }
            var first = true
            while true {
                guard let scalar = peek else { throw fail("unterminated '[': no ']'", at: start) }
                if scalar == "]" && !first {
                    position += 1
                    return set
                }
                first = false
                if scalar == "[" && position + 1 < scalars.count && [":", "=", "."].contains(scalars[position + 1]) {
                    throw fail("POSIX classes ([:alpha:]) are not supported; write the ranges, e.g. [A-Za-z]")
                }
                let low = try classMember()
                guard case .single(let lowScalar) = low else {
                    if case .set(let inner) = low {
                        guard !inner.negated else {
                            throw fail("a negated class escape (\\D, \\W, \\S) inside [ ] is not supported")
                        }
                        set.ranges += inner.ranges
                    }
                    continue
                }
                if peek == "-", position + 1 < scalars.count, scalars[position + 1] != "]" {
                    position += 1
                    let rangeStart = position
                    guard case .single(let highScalar) = try classMember() else {
                        throw fail("a range ends with a class", at: rangeStart)
                    }
                    guard lowScalar.value <= highScalar.value else {
                        throw fail("range \(lowScalar)-\(highScalar) is reversed", at: rangeStart)
                    }
                    set.ranges.append(lowScalar.value...highScalar.value)
                } else {
                    set.ranges.append(lowScalar.value...lowScalar.value)
                }
            }
        }

        enum ClassMember {
            case single(Unicode.Scalar)
            case set(ScalarSet)
        }

        mutating func classMember() throws(Unsupported) -> ClassMember {
            let start = position
            guard let scalar = peek else { throw fail("unterminated '['", at: start) }
            position += 1
            guard scalar == "\\" else { return .single(scalar) }
            let set = try parseEscape(start: start)
            if !set.negated, set.ranges.count == 1, let range = set.ranges.first, range.count == 1,
                let only = Unicode.Scalar(range.lowerBound)
            {
                return .single(only)
            }
            return .set(set)
        }
    }

    struct Compiler {
        var program: [Instruction] = []
        var sets: [ScalarSet] = []

        mutating func append(_ instruction: Instruction) throws(Unsupported) {
            guard program.count < LinearRegex.maxInstructions else {
                throw Unsupported(
                    offset: 0,
                    message:
                        "the pattern is too large once its repetitions are counted out (over \(LinearRegex.maxInstructions) steps)"
                )
            }
            program.append(instruction)
        }

        mutating func emit(_ node: Node) throws(Unsupported) {
            switch node {
            case .empty: break
            case .set(let set):
                try append(.scalar(sets.count))
                sets.append(set)
            case .atStart: try append(.atStart)
            case .atEnd: try append(.atEnd)
            case .concat(let items): for item in items { try emit(item) }
            case .alternation(let branches):
                var jumps: [Int] = []
                for (index, branch) in branches.enumerated() {
                    if index < branches.count - 1 {
                        let split = program.count
                        try append(.split(split + 1, -1))
                        try emit(branch)
                        jumps.append(program.count)
                        try append(.jump(-1))
                        program[split] = .split(split + 1, program.count)
                    } else {
                        try emit(branch)
                    }
                }
                for jump in jumps { program[jump] = .jump(program.count) }
            case .repeated(let inner, let min, let max):
                for _ in 0..<min { try emit(inner) }
                if let max {
                    // Each optional copy may be skipped to the end.
                    var splits: [Int] = []
                    for _ in min..<max {
                        splits.append(program.count)
                        try append(.split(program.count + 1, -1))
                        try emit(inner)
                    }
                    for split in splits { program[split] = .split(split + 1, program.count) }
                } else {
                    let loop = program.count
                    try append(.split(loop + 1, -1))
                    try emit(inner)
                    try append(.jump(loop))
                    program[loop] = .split(loop + 1, program.count)
                }
            }
        }
    }
}

/// A regex's NFA made deterministic over ASCII by subset construction at compile time: matching
/// is one table lookup a character. States hold the NFA positions reached (assertions that could
/// not be passed yet included); a state that reached the match accepts at once (a search).
struct AsciiDFA: Sendable, Equatable {
    static let maxStates = 512
    /// NFA positions visited while building, at most: a pattern within every limit could make 512
    /// states of thousands of positions each, seconds of CPU on every agent at every ruleset
    /// revision. Past this (about ten times what the largest pattern of the docs and tests needs,
    /// 12,000, and milliseconds of work) the pattern runs on the NFA alone, linear in the text all
    /// the same.
    static let maxWork = 200_000
    /// `state * 128 + byte` → next state.
    let table: [Int32]
    let accepting: [Bool]
    /// Whether the text may end in this state (a `$` passed at the end).
    let acceptsAtEnd: [Bool]
    /// No NFA position is left (anchored patterns): no match can follow.
    let dead: [Bool]

    init?(program: [LinearRegex.Instruction], masks: [UInt64], budget: Int = maxWork) {
        var work = 0
        self.init(program: program, masks: masks, budget: budget, work: &work)
    }

    /// The work building the DFA took (or took until it gave up), within `budget`.
    static func work(program: [LinearRegex.Instruction], masks: [UInt64], budget: Int = maxWork) -> Int {
        var work = 0
        _ = AsciiDFA(program: program, masks: masks, budget: budget, work: &work)
        return work
    }

    private init?(program: [LinearRegex.Instruction], masks: [UInt64], budget: Int, work: inout Int) {
        let anchored = program.first == .atStart
        func closure(_ seeds: [Int], atStart: Bool, atEnd: Bool) -> (pcs: [Int], match: Bool) {
            var seen = Set<Int>()
            var stack = seeds
            var match = false
            while let pc = stack.popLast() {
                work += 1
                guard seen.insert(pc).inserted else { continue }
                switch program[pc] {
                case .match: match = true
                case .jump(let target): stack.append(target)
                case .split(let first, let second): stack += [second, first]
                case .atStart: if atStart { stack.append(pc + 1) }
                case .atEnd: if atEnd { stack.append(pc + 1) }
                case .scalar: break
                }
            }
            return (seen.sorted(), match)
        }
        var states: [[Int]] = []
        var index: [[Int]: Int32] = [:]
        var table: [Int32] = []
        var accepting: [Bool] = []
        func intern(_ state: (pcs: [Int], match: Bool)) -> Int32? {
            if let known = index[state.pcs] { return known }
            guard states.count < Self.maxStates else { return nil }
            let id = Int32(states.count)
            index[state.pcs] = id
            states.append(state.pcs)
            accepting.append(state.match)
            table += Array(repeating: -1, count: 128)
            return id
        }
        // Bytes every set treats alike share their transitions: one closure per class and state.
        let setCount = masks.count / 2
        var classOf: [[Bool]: [Int]] = [:]
        for byte in 0..<128 {
            let signature = (0..<setCount).map { LinearRegex.asciiMember(masks, $0, byte) }
            classOf[signature, default: []].append(byte)
        }
        let classes = Array(classOf.values)
        guard intern(closure([0], atStart: true, atEnd: false)) != nil else { return nil }
        var next = 0
        while next < states.count {
            let pcs = states[next]
            for bytes in classes {
                let byte = bytes[0]
                var seeds = anchored ? [] : [0]
                work += pcs.count
                for pc in pcs {
                    if case .scalar(let set) = program[pc], LinearRegex.asciiMember(masks, set, byte) {
                        seeds.append(pc + 1)
                    }
                }
                guard let target = intern(closure(seeds, atStart: false, atEnd: false)) else { return nil }
                for byte in bytes { table[next * 128 + byte] = target }
                if work > budget { return nil }
            }
            next += 1
        }
        self.table = table
        self.accepting = accepting
        acceptsAtEnd = states.enumerated().map { id, pcs in
            accepting[id] || closure(pcs, atStart: false, atEnd: true).match
        }
        dead = states.map(\.isEmpty)
    }

    /// The outcome for an ASCII text (non-empty); nil when it holds another character.
    func matches<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Bool? {
        var state = 0
        if accepting[0] { return true }
        for byte in bytes {
            guard byte < 128 else { return nil }
            state = Int(table[state &* 128 &+ Int(byte)])
            if accepting[state] { return true }
            if dead[state] { return false }
        }
        return acceptsAtEnd[state]
    }
}
