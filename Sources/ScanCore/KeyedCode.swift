/// A code an operator keyed in from a no-read's picture ("video coding"), checked before it is
/// stored: a keyed code goes to the WMS as if a camera had read it, so a typo must be caught
/// where a scanner would have caught it, by the symbology's own check characters.
///
/// `value` is the code as a camera would have sent it: for GS1 data keyed in its human-readable
/// form, `(01)09506000134352(10)ABC`, the application identifiers and their data with a group
/// separator (GS) after each variable-length field but the last.
public struct KeyedCode: Sendable, Equatable {
    public var value: String
    /// nil: keyed without a symbology (checked for what every code must be, and a GTIN's check
    /// digit where it looks like one).
    public var symbology: Symbology?
    /// The value is GS1 data (GS1-128, or a GS1 element string keyed in brackets).
    public var gs1: Bool

    /// The most bytes a keyed code may have (a DataMatrix holds up to 2,335 characters; a code
    /// keyed by hand is far shorter).
    public static let maxBytes = 512

    /// A code as it was stored after `check` passed it.
    public init(value: String, symbology: Symbology?, gs1: Bool) {
        self.value = value
        self.symbology = symbology
        self.gs1 = gs1
    }

    /// Checks `text` as a code of `symbology` (`GS1-128` for Code 128 with GS1 data).
    public static func check(_ text: String, symbology name: String?, referenceYear: Int) throws(KeyedCodeError)
        -> KeyedCode
    {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw KeyedCodeError("the code is empty") }
        guard bytes.count <= maxBytes else {
            throw KeyedCodeError("the code has \(bytes.count) bytes; at most \(maxBytes) may be keyed")
        }
        if let bad = text.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            throw KeyedCodeError(
                "the code holds the control character U+\(String(bad.value, radix: 16, uppercase: true)); "
                    + "key GS1 data in brackets, (01)…(10)…")
        }
        guard let name else { return try unnamed(bytes, text: text, referenceYear: referenceYear) }
        if name == "GS1-128" {
            return KeyedCode(value: try gs1Data(text, referenceYear: referenceYear), symbology: .code128, gs1: true)
        }
        guard let symbology = Symbology(rawValue: name) else {
            throw KeyedCodeError(
                "'\(TerminalText.escaped(name))' is not a symbology ("
                    + (Symbology.allCases.map(\.rawValue) + ["GS1-128"]).joined(separator: ", ") + ")")
        }
        return try check(bytes, text: text, as: symbology, referenceYear: referenceYear)
    }

    private static func check(_ bytes: [UInt8], text: String, as symbology: Symbology, referenceYear: Int)
        throws(KeyedCodeError) -> KeyedCode
    {
        let code = KeyedCode(value: text, symbology: symbology, gs1: false)
        let digits = bytes.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
        func gtin(_ lengths: Set<Int>, _ what: String) throws(KeyedCodeError) {
            guard digits, lengths.contains(bytes.count) else {
                throw KeyedCodeError("\(symbology.rawValue) is \(what); '\(TerminalText.escaped(text))' is not")
            }
            guard Symbology.hasValidGS1CheckDigit(bytes) else { throw checkDigitError(bytes, symbology) }
        }
        switch symbology {
        case .ean13: try gtin([13], "13 digits")
        case .ean8: try gtin([8], "8 digits")
        case .upcA: try gtin([12], "12 digits")
        case .isbn13:
            try gtin([13], "13 digits")
            guard text.hasPrefix("978") || text.hasPrefix("979") else {
                throw KeyedCodeError("an ISBN-13 begins with 978 or 979")
            }
        case .upcE:
            guard digits, bytes.count == 8, bytes[0] == 0x30 || bytes[0] == 0x31 else {
                throw KeyedCodeError("UPC-E is 8 digits beginning with 0 or 1; '\(TerminalText.escaped(text))' is not")
            }
            guard Symbology.hasValidGS1CheckDigit(upcAOf(upcE: bytes)) else { throw checkDigitError(bytes, symbology) }
        case .isbn10:
            let body = bytes.dropLast()
            guard bytes.count == 10, body.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let last = bytes.last, (0x30...0x39).contains(last) || last == 0x58
            else { throw KeyedCodeError("ISBN-10 is 9 digits and a check digit or X") }
            let sum = body.enumerated().reduce(0) { $0 + Int($1.element - 0x30) * (10 - $1.offset) }
            let check = last == 0x58 ? 10 : Int(last - 0x30)
            guard (sum + check) % 11 == 0 else { throw KeyedCodeError("the ISBN-10's check digit does not hold") }
        case .ean2, .ean5:
            throw KeyedCodeError("an \(symbology.rawValue) add-on is keyed with its EAN/UPC code, not alone")
        case .interleaved2of5:
            guard digits, bytes.count % 2 == 0 else { throw KeyedCodeError("I2/5 is an even number of digits") }
        case .dataBar, .dataBarLimited:
            let gtin14 = text.hasPrefix("(01)") ? Array(bytes.dropFirst(4)) : bytes
            guard gtin14.count == 14, gtin14.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                throw KeyedCodeError("\(symbology.rawValue) holds a GTIN: 14 digits, or (01) and 14 digits")
            }
            guard Symbology.hasValidGS1CheckDigit(gtin14) else { throw checkDigitError(gtin14, symbology) }
            return KeyedCode(value: "01" + String(decoding: gtin14, as: UTF8.self), symbology: symbology, gs1: true)
        case .dataBarExpanded:
            return KeyedCode(value: try gs1Data(text, referenceYear: referenceYear), symbology: symbology, gs1: true)
        case .code39:
            let allowed = Set("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-. $/+%".utf8)
            guard bytes.allSatisfy(allowed.contains) else {
                throw KeyedCodeError("Code 39 holds 0-9, A-Z, space and - . $ / + % only")
            }
        case .codabar:
            let allowed = Set("0123456789-$:/.+ABCD".utf8)
            guard bytes.allSatisfy(allowed.contains) else {
                throw KeyedCodeError("Codabar holds 0-9 and - $ : / . + only")
            }
        case .code128, .code93:
            guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
                throw KeyedCodeError("\(symbology.rawValue) is keyed in printable ASCII; key GS1 data as GS1-128")
            }
            if text.hasPrefix("(") && symbology == .code128 {
                return KeyedCode(value: try gs1Data(text, referenceYear: referenceYear), symbology: .code128, gs1: true)
            }
        case .qrCode, .sqCode, .pdf417, .dataMatrix, .aztec, .maxiCode:
            if text.hasPrefix("(") && GS1ElementStrings.humanReadable(text) != nil {
                return KeyedCode(
                    value: try gs1Data(text, referenceYear: referenceYear), symbology: symbology, gs1: true)
            }
        }
        return code
    }

    /// A code keyed without a symbology: GS1 data in brackets is checked as GS1, a value of 8,
    /// 12, 13 or 14 digits as the GTIN it looks like (its check digit); anything else as it is.
    private static func unnamed(_ bytes: [UInt8], text: String, referenceYear: Int) throws(KeyedCodeError)
        -> KeyedCode
    {
        if text.hasPrefix("(") {
            return KeyedCode(value: try gs1Data(text, referenceYear: referenceYear), symbology: nil, gs1: true)
        }
        if [8, 12, 13, 14].contains(bytes.count), bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            !Symbology.hasValidGS1CheckDigit(bytes)
        {
            throw KeyedCodeError(
                "\(bytes.count) digits look like a GTIN, whose check digit should be "
                    + "\(Symbology.gs1CheckDigit(bytes.dropLast().map { Int($0 - 0x30) })); "
                    + "give --symbology to key another kind of code")
        }
        return KeyedCode(value: text, symbology: nil, gs1: false)
    }

    /// GS1 data keyed in brackets, as the code holds it; each element checked.
    private static func gs1Data(_ text: String, referenceYear: Int) throws(KeyedCodeError) -> String {
        guard let data = GS1ElementStrings.humanReadable(text) else {
            throw KeyedCodeError(
                "'\(TerminalText.escaped(text))' is not GS1 data in brackets, (AI)data(AI)data…, of known AIs")
        }
        guard GS1ElementStrings.parse(data, referenceYear: referenceYear) != nil else {
            throw KeyedCodeError(
                "'\(TerminalText.escaped(text))' is not valid GS1 data: a field's length, characters, date or "
                    + "check digit is wrong")
        }
        return String(decoding: data, as: UTF8.self)
    }

    private static func checkDigitError(_ bytes: [UInt8], _ symbology: Symbology) -> KeyedCodeError {
        let body = symbology == .upcE ? Array(upcAOf(upcE: bytes).dropLast()) : Array(bytes.dropLast())
        let expected = Symbology.gs1CheckDigit(body.map { Int($0 - 0x30) })
        return KeyedCodeError(
            "the \(symbology.rawValue)'s check digit is \(Character(UnicodeScalar(bytes.last ?? 0x30))), "
                + "it should be \(expected): a digit is mistyped")
    }

    /// The UPC-A a UPC-E stands for (number system, zero-suppressed digits, check digit).
    static func upcAOf(upcE bytes: [UInt8]) -> [UInt8] {
        let d = bytes.map { $0 - 0x30 }
        let (ns, m, check) = (d[0], Array(d[1...6]), d[7])
        let body: [UInt8] =
            switch m[5] {
            case 0, 1, 2: [m[0], m[1], m[5], 0, 0, 0, 0, m[2], m[3], m[4]]
            case 3: [m[0], m[1], m[2], 0, 0, 0, 0, 0, m[3], m[4]]
            case 4: [m[0], m[1], m[2], m[3], 0, 0, 0, 0, 0, m[4]]
            default: [m[0], m[1], m[2], m[3], m[4], 0, 0, 0, 0, m[5]]
            }
        return ([ns] + body + [check]).map { $0 + 0x30 }
    }
}

/// Why a keyed code was refused: said to the operator as it is.
public struct KeyedCodeError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension GS1ElementStrings {
    /// GS1 data from its human-readable form, `(01)09506000134352(17)270101(10)ABC`: each
    /// application identifier in brackets followed by its data, joined as a code holds them (a
    /// GS after a variable-length field that is not the last). Nil when an AI is unknown or a
    /// bracket is misplaced; the data itself is checked by `parse`.
    public static func humanReadable(_ text: String) -> [UInt8]? {
        var bytes = Array(text.utf8)[...]
        var data: [UInt8] = []
        var variableOpen = false
        while let first = bytes.first {
            guard first == UInt8(ascii: "("), let close = bytes.firstIndex(of: UInt8(ascii: ")")) else { return nil }
            let ai = Array(bytes[bytes.index(after: bytes.startIndex)..<close])
            guard let (known, field) = field(at: ai[...]), known.utf8.count == ai.count else { return nil }
            bytes = bytes[bytes.index(after: close)...]
            let end = bytes.firstIndex(of: UInt8(ascii: "(")) ?? bytes.endIndex
            let value = bytes[..<end]
            guard !value.isEmpty, !value.contains(UInt8(ascii: ")")) else { return nil }
            if variableOpen { data.append(separator) }
            data += ai + value
            variableOpen = field.variable
            bytes = bytes[end...]
        }
        return data.isEmpty ? nil : data
    }
}
