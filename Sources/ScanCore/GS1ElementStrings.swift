/// GS1 element strings (the data of a GS1-128, GS1 DataMatrix or GS1 QR code: application
/// identifiers, each followed by its data, a variable-length field ended by GS) split into their
/// application identifiers, so that a WMS need not parse them itself.
///
/// Only what is certain is given: an unknown AI, a field longer than its AI allows, a non-digit in
/// a numeric field, a wrong check digit (AIs 00, 01, 02, 410–417, 8017, 8018) or an impossible date
/// makes the whole value nil (the value itself is still in the event). Dates (AIs 11–17, 7006)
/// are written `YYYY-MM-DD`, or `YYYY-MM` where the day is 00 (the month only); the century
/// follows the GS1 General Specifications (§ 7.12): within 50 years before and 49 after the
/// reference year.
public enum GS1ElementStrings {
    public struct Element: Sendable, Equatable {
        public var ai: String
        public var value: String

        public init(ai: String, value: String) {
            self.ai = ai
            self.value = value
        }
    }

    /// Whether `key` has the form of an application identifier (2 to 4 digits): what an event's
    /// `gs1Elements` and a rule's `match.ai` may name.
    public static func isApplicationIdentifier(_ key: String) -> Bool {
        (2...4).contains(key.utf8.count) && key.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// What an AI's data may be.
    struct Field {
        /// Fixed length, or (`variable`) the most characters.
        var length: Int
        var variable: Bool
        var numeric: Bool
        var checkDigit = false
        var date = false
    }

    static func fixed(_ length: Int, check: Bool = false, date: Bool = false) -> Field {
        Field(length: length, variable: false, numeric: true, checkDigit: check, date: date)
    }
    static func upTo(_ length: Int, numeric: Bool = false) -> Field {
        Field(length: length, variable: true, numeric: numeric)
    }

    /// The AI at the start of `digits` and its field, or nil for an AI not known here.
    static func field(at digits: ArraySlice<UInt8>) -> (ai: String, field: Field)? {
        func prefix(_ count: Int) -> String? {
            guard digits.count >= count else { return nil }
            let head = digits.prefix(count)
            guard head.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return String(decoding: head, as: UTF8.self)
        }
        guard let two = prefix(2), let first = Int(two) else { return nil }
        switch first {
        case 0: return (two, fixed(18, check: true))
        case 1, 2: return (two, fixed(14, check: true))
        case 3: return (two, fixed(14))
        case 10, 21, 22: return (two, upTo(20))
        case 11, 12, 13, 15, 16, 17: return (two, fixed(6, date: true))
        case 20: return (two, fixed(2))
        case 30, 37: return (two, upTo(8, numeric: true))
        case 90: return (two, upTo(30))
        case 91...99: return (two, upTo(90))
        case 23, 24, 25, 40, 41, 42, 71:
            guard let three = prefix(3), let ai = Int(three) else { return nil }
            let field: Field? =
                switch ai {
                case 235: upTo(28)
                case 240, 241, 250, 251, 400, 401, 403: upTo(30)
                case 242: upTo(6, numeric: true)
                case 243, 254, 420: upTo(20)
                case 253: upTo(30)
                case 255: upTo(25)
                case 402: fixed(17)
                case 410...417: fixed(13, check: true)
                case 421: upTo(12)
                case 422, 424, 426: fixed(3)
                case 423, 425: upTo(15, numeric: true)
                case 427: upTo(3)
                case 710...715: upTo(20)
                default: nil
                }
            return field.map { (three, $0) }
        case 31...36, 39, 70, 72, 80, 81, 82:
            guard let four = prefix(4), let ai = Int(four) else { return nil }
            let field: Field? =
                switch ai {
                case 3100...3699: fixed(6)  // measures, the last digit the decimals
                case 3900...3909, 3920...3929: upTo(15, numeric: true)
                case 3910...3919, 3930...3939: upTo(18, numeric: true)
                case 3940...3943: fixed(4)
                case 3950...3955: fixed(6)
                case 7001: fixed(13)
                case 7002, 8004, 8010: upTo(30)
                case 7003: fixed(10)
                case 7004: upTo(4, numeric: true)
                case 7005, 7007, 8011: upTo(12)
                case 7006: fixed(6, date: true)
                case 7008: upTo(3)
                case 7009, 8019: upTo(10)
                case 7010: upTo(2)
                case 7020...7023, 7240, 8002, 8012: upTo(20)
                case 7040: Field(length: 4, variable: false, numeric: false)
                case 8001: fixed(14)
                case 8003: upTo(30)
                case 8005: fixed(6)
                case 8006, 8026: fixed(18)
                case 8007: upTo(34)
                case 8008: upTo(12, numeric: true)
                case 8009: upTo(50)
                case 8013, 8020: upTo(25)
                case 8017, 8018: fixed(18, check: true)
                case 8110, 8112, 8200: upTo(70)
                case 8111: fixed(4)
                default: nil
                }
            return field.map { (four, $0) }
        default:
            return nil
        }
    }

    /// The group separator (FNC1 in the data).
    static let separator: UInt8 = 0x1D

    /// The element strings of `value` (GS1 data, FNC1 separators as GS), in order; nil unless the
    /// whole value parses. `referenceYear`: the year dates are placed near (the read's).
    public static func parse(_ value: [UInt8], referenceYear: Int) -> [Element]? {
        var elements: [Element] = []
        var index = 0
        while index < value.count {
            if value[index] == separator {
                index += 1
                continue
            }
            guard let (ai, field) = Self.field(at: value[index...]) else { return nil }
            index += ai.count
            var end = index
            if field.variable {
                while end < value.count && value[end] != separator { end += 1 }
                guard end > index, end - index <= field.length else { return nil }
            } else {
                end = index + field.length
                guard end <= value.count else { return nil }
            }
            let data = Array(value[index..<end])
            // Printable ASCII only (GS1's character sets are subsets of it).
            guard data.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
            if field.numeric && !data.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return nil }
            if field.checkDigit && !Symbology.hasValidGS1CheckDigit(data) { return nil }
            var text = String(decoding: data, as: UTF8.self)
            if field.date {
                guard let date = Self.date(text, referenceYear: referenceYear) else { return nil }
                text = date
            }
            guard !elements.contains(where: { $0.ai == ai }) else { return nil }
            elements.append(Element(ai: ai, value: text))
            index = end
        }
        return elements.isEmpty ? nil : elements
    }

    /// `YYMMDD` as `YYYY-MM-DD` (`YYYY-MM` for day 00), the century by GS1's sliding window.
    static func date(_ text: String, referenceYear: Int) -> String? {
        let digits = Array(text.utf8).map { Int($0) - 0x30 }
        guard digits.count == 6 else { return nil }
        let yy = digits[0] * 10 + digits[1]
        let month = digits[2] * 10 + digits[3]
        let day = digits[4] * 10 + digits[5]
        guard (1...12).contains(month) else { return nil }
        var year = referenceYear - referenceYear % 100 + yy
        let difference = year - referenceYear
        if difference >= 51 { year -= 100 } else if difference <= -50 { year += 100 }
        func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        if day == 0 { return "\(year)-\(pad(month))" }
        let days = Timestamp.days(year: year, month: month, day: day)
        let back = Timestamp.civil(days: days)
        guard back.month == month && back.day == day else { return nil }
        return "\(year)-\(pad(month))-\(pad(day))"
    }
}
