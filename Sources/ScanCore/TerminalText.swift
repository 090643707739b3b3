/// Text from a label, a camera or a file made safe for a terminal line, a table cell or a log:
/// control characters (C0 but tab, DEL, C1 — ESC among them), and the bidirectional overrides and
/// isolates that reorder what a person reads, are shown as `\xHH` or `\u{HHHH}` instead of acting.
/// JSON output is never passed through this: it stays exact, with JSON's own escapes.
public enum TerminalText {
    /// Whether `scalar` must be shown escaped.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09: false
        case 0x00...0x1F, 0x7F...0x9F: true
        // Bidi embeddings and overrides (LRE, RLE, PDF, LRO, RLO), isolates (LRI, RLI, FSI, PDI),
        // the marks (LRM, RLM, ALM) and line/paragraph separators.
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C, 0x2028, 0x2029: true
        default: false
        }
    }

    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            if !needsEscape(scalar) {
                out.unicodeScalars.append(scalar)
            } else if scalar.value < 0x100 {
                out += "\\x" + hex(scalar.value, width: 2)
            } else {
                out += "\\u{" + hex(scalar.value, width: 4) + "}"
            }
        }
        return out
    }

    /// Several lines, each escaped (the line breaks between them kept).
    public static func escapedLines(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { escaped(String($0)) }
            .joined(separator: "\n")
    }

    private static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

/// A CSV cell for a spreadsheet: text starting with `=`, `+`, `-`, `@`, tab or CR would be taken as a
/// formula, so it gets a leading `'` (OWASP's advice); plain numbers are left alone. Control
/// characters are escaped as on a terminal; quoting follows RFC 4180.
public enum SpreadsheetCell {
    public static func csv(_ text: String) -> String {
        var cell = TerminalText.escaped(text)
        if let first = text.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first), !isPlainNumber(text) {
            cell = "'" + cell
        }
        guard cell.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return cell }
        var quoted = "\""
        for character in cell { quoted += character == "\"" ? "\"\"" : String(character) }
        return quoted + "\""
    }

    /// `-12`, `3.5`, `-0.25`: digits with an optional leading minus and one decimal point.
    static func isPlainNumber(_ text: String) -> Bool {
        var body = Substring(text)
        if body.first == "-" { body = body.dropFirst() }
        guard !body.isEmpty, body.first != ".", body.last != "." else { return false }
        var points = 0
        for character in body {
            if character == "." {
                points += 1
            } else if !("0"..."9").contains(character) {
                return false
            }
        }
        return points <= 1
    }
}
