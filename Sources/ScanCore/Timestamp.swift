/// A UTC instant in milliseconds since the Unix epoch, formatted as the contract's RFC 3339.
/// Civil-date arithmetic is done here (Howard Hinnant's days-from-civil algorithm), so events are
/// stamped without Foundation formatters.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.milliseconds < rhs.milliseconds }

    /// This instant moved by `delta`, held at the ends of Int64 instead of overflowing (a delta
    /// made from outside numbers never traps here).
    public func adding(milliseconds delta: Int64) -> Timestamp {
        let (sum, overflow) = milliseconds.addingReportingOverflow(delta)
        return Timestamp(milliseconds: overflow ? (delta > 0 ? .max : .min) : sum)
    }

    /// `seconds` (a travel time worked out from a belt speed, a distance, a PLC's count) in whole
    /// milliseconds, or nil when it is not a finite number within ±`limit` milliseconds (a day by
    /// default): an outside number, however large, small or not a number, never traps a conversion.
    public static func milliseconds(seconds: Double, limit: Int64 = 86_400_000) -> Int64? {
        let milliseconds = (seconds * 1000).rounded()
        guard milliseconds.isFinite, abs(milliseconds) <= Double(limit) else { return nil }
        return Int64(exactly: milliseconds)
    }

    /// Days since 1970-01-01 for a proleptic Gregorian date.
    public static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// (year, month, day) for days since 1970-01-01.
    public static func civil(days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Days since 1970-01-01 and milliseconds into that UTC day (both rounded down).
    var utcDay: (days: Int, millisecond: Int) {
        let (dayCount, msOfDay) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        return (Int(msOfDay < 0 ? dayCount - 1 : dayCount), Int(msOfDay < 0 ? msOfDay + 86_400_000 : msOfDay))
    }

    /// The UTC calendar year of this instant.
    public var utcYear: Int { Self.civil(days: utcDay.days).year }

    /// "2026-11-22T10:15:30.250Z"
    public var description: String {
        let (days, ms) = utcDay
        let (year, month, day) = Self.civil(days: days)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(ms / 3_600_000, 2)):\(pad(ms / 60_000 % 60, 2))"
            + ":\(pad(ms / 1000 % 60, 2)).\(pad(ms % 1000, 3))Z"
    }

    /// Parses RFC 3339 ("2026-11-21T23:30:00Z", "2026-11-21T23:30:00.5+01:00"); nil when malformed.
    public init?(rfc3339 text: String) {
        let chars = Array(text.utf8)
        var index = 0
        func number(_ count: Int) -> Int? {
            guard index + count <= chars.count else { return nil }
            var value = 0
            for byte in chars[index..<index + count] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }
        func expect(_ options: String) -> Bool {
            guard index < chars.count, options.utf8.contains(chars[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            expect("Tt "), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
            let second = number(2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var millis = 0
        if expect(".") {
            var digits = 0
            while index < chars.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(chars[index]) {
                if digits < 3 { millis = millis * 10 + Int(chars[index] - UInt8(ascii: "0")) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            // Digits past milliseconds are dropped (a range digits..<3 would trap for them).
            if digits < 3 { for _ in digits..<3 { millis *= 10 } }
        }
        var offsetMinutes = 0
        if expect("Zz") {
        } else if index < chars.count, chars[index] == UInt8(ascii: "+") || chars[index] == UInt8(ascii: "-") {
            let sign = chars[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let offsetHours = number(2), expect(":"), let offsetMins = number(2) else { return nil }
            offsetMinutes = sign * (offsetHours * 60 + offsetMins)
        } else {
            return nil
        }
        guard index == chars.count else { return nil }
        let days = Self.days(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetMinutes * 60)
        self.milliseconds = seconds * 1000 + Int64(millis)
    }
}

extension Duration {
    /// The duration in seconds, for the APIs that take a `Double`.
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }

    /// The duration in whole milliseconds (rounded), as event times count.
    public var wholeMilliseconds: Int64 {
        components.seconds * 1000 + Int64((Double(components.attoseconds) / 1e15).rounded())
    }
}
