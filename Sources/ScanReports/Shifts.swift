import Foundation
import ScanCore

/// Work shifts of a site: named daily time windows in the site's time zone. A shift that ends at
/// or before its start time (night, 22:00–06:00) runs into the next day and belongs to the day it
/// starts. Instants come from the zone's rules, so a shift across a DST change is an hour longer
/// or shorter.
public struct ShiftPlan: Sendable, Equatable {
    public struct Shift: Sendable, Equatable {
        public var name: String
        /// Minutes after local midnight.
        public var start: Int
        public var end: Int
        public init(name: String, start: Int, end: Int) {
            self.name = name
            self.start = start
            self.end = end
        }
    }

    /// One shift on one day.
    public struct Instance: Sendable, Equatable {
        public var name: String
        /// The local date the shift starts on (`2026-11-23`).
        public var date: String
        public var start: Date
        public var end: Date
        public var label: String { "\(date)/\(name)" }
        public init(name: String, date: String, start: Date, end: Date) {
            self.name = name
            self.date = date
            self.start = start
            self.end = end
        }
    }

    public var shifts: [Shift]
    public var timeZone: TimeZone

    public init(shifts: [Shift], timeZone: TimeZone) {
        self.shifts = shifts
        self.timeZone = timeZone
    }

    /// early 06–14, late 14–22, night 22–06.
    public static let defaultSpec = "early=06:00-14:00,late=14:00-22:00,night=22:00-06:00"

    /// Parses `name=HH:MM-HH:MM,…`.
    public static func parse(_ spec: String, timeZone: TimeZone) throws(ConfigErrors) -> ShiftPlan {
        var shifts: [Shift] = []
        var issues: [ConfigIssue] = []
        for (index, part) in spec.split(separator: ",").enumerated() {
            let pieces = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            let times = pieces.count == 2 ? pieces[1].split(separator: "-").map(String.init) : []
            guard pieces.count == 2, !pieces[0].isEmpty, times.count == 2, let start = minutes(times[0]),
                let end = minutes(times[1])
            else {
                issues.append(ConfigIssue(path: "shift \(index + 1)", message: "'\(part)' is not name=HH:MM-HH:MM"))
                continue
            }
            if start == end {
                issues.append(ConfigIssue(path: "shift \(index + 1)", message: "'\(part)' starts when it ends"))
            }
            if shifts.contains(where: { $0.name == pieces[0] }) {
                issues.append(ConfigIssue(path: "shift \(index + 1)", message: "'\(pieces[0])' appears twice"))
            }
            shifts.append(Shift(name: pieces[0], start: start, end: end))
        }
        if shifts.isEmpty && issues.isEmpty { issues.append(ConfigIssue(path: "shifts", message: "no shift given")) }
        if !issues.isEmpty { throw ConfigErrors(file: "shifts", issues: issues) }
        return ShiftPlan(shifts: shifts.sorted { $0.start < $1.start }, timeZone: timeZone)
    }

    static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let hours = Int(parts[0]), let minutes = Int(parts[1]), (0...24).contains(hours),
            (0..<60).contains(minutes),
            hours * 60 + minutes <= 24 * 60
        else { return nil }
        return hours * 60 + minutes
    }

    private var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }

    /// The local date of an instant, `YYYY-MM-DD`.
    public func localDate(_ instant: Date) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: instant)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }

    /// `shift` on the local date `date` (`YYYY-MM-DD`).
    public func instance(_ shift: Shift, on date: String) -> Instance? {
        let parts = date.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        let day = DateComponents(year: parts[0], month: parts[1], day: parts[2])
        func at(_ minutes: Int, dayOffset: Int) -> Date? {
            var components = day
            components.day = parts[2] + dayOffset
            components.hour = minutes / 60
            components.minute = minutes % 60
            return calendar.date(from: components)
        }
        guard let start = at(shift.start, dayOffset: 0),
            let end = at(shift.end, dayOffset: shift.end <= shift.start ? 1 : 0)
        else {
            return nil
        }
        return Instance(name: shift.name, date: date, start: start, end: end)
    }

    /// Local date `days` after `date`.
    public func date(_ date: String, plus days: Int) -> String {
        let parts = date.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3,
            let noon = calendar.date(
                from: DateComponents(year: parts[0], month: parts[1], day: parts[2] + days, hour: 12))
        else { return date }
        return localDate(noon)
    }

    public enum Selection: Sendable, Equatable {
        case today, yesterday, current, previous
        case named(String)
        case dated(date: String, name: String)
    }

    public static func selection(_ text: String) -> Selection {
        switch text {
        case "today": return .today
        case "yesterday": return .yesterday
        case "current": return .current
        case "previous": return .previous
        default:
            if let slash = text.firstIndex(of: "/") {
                return .dated(date: String(text[..<slash]), name: String(text[text.index(after: slash)...]))
            }
            return .named(text)
        }
    }

    public struct SelectionError: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// The shift instances a selection means at `now`. `today` is the current production day:
    /// the local date on which the latest shift that has started began (so at 02:00, while the
    /// night shift that began at 22:00 runs, it is yesterday's date), with its shifts that have
    /// started; `yesterday` every shift of the production day before; `current` the one running
    /// now, `previous` the one before it, a name the latest of that shift that has started, and
    /// `DATE/NAME` that one.
    public func resolve(_ selection: Selection, now: Date) throws(SelectionError) -> [Instance] {
        let calendarDay = localDate(now)
        func all(on day: String) -> [Instance] { shifts.compactMap { instance($0, on: day) } }
        let recent =
            (all(on: date(calendarDay, plus: -2)) + all(on: date(calendarDay, plus: -1)) + all(on: calendarDay))
            .filter { $0.start <= now }.sorted { $0.start < $1.start }
        let productionDay = recent.last?.date ?? calendarDay
        switch selection {
        case .today:
            return all(on: productionDay).filter { $0.start <= now }
        case .yesterday:
            return all(on: date(productionDay, plus: -1))
        case .current:
            guard let current = recent.last(where: { $0.end > now }) else {
                throw SelectionError(description: "no shift is running at \(localTime(now))")
            }
            return [current]
        case .previous:
            let current = recent.last(where: { $0.end > now })
            guard let previous = recent.last(where: { $0.end <= (current?.start ?? now) }) else {
                throw SelectionError(description: "no earlier shift")
            }
            return [previous]
        case .named(let name):
            guard let shift = shifts.first(where: { $0.name == name }) else {
                throw SelectionError(
                    description:
                        "no shift named '\(name)' (shifts: \(shifts.map(\.name).joined(separator: ", ")); or today, yesterday, current, previous, DATE/NAME)"
                )
            }
            guard let latest = recent.last(where: { $0.name == shift.name }) else {
                throw SelectionError(description: "'\(name)' has not started yet")
            }
            return [latest]
        case .dated(let day, let name):
            guard let shift = shifts.first(where: { $0.name == name }) else {
                throw SelectionError(
                    description: "no shift named '\(name)' (shifts: \(shifts.map(\.name).joined(separator: ", ")))")
            }
            guard Self.isDate(day), let instance = instance(shift, on: day) else {
                throw SelectionError(description: "'\(day)' is not a date (YYYY-MM-DD)")
            }
            return [instance]
        }
    }

    static func isDate(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        return parts.count == 3 && parts[0].count == 4 && parts[1].count == 2 && parts[2].count == 2
            && parts.allSatisfy { Int($0) != nil }
    }

    /// `2026-11-23 14:00 CET` in the plan's zone.
    public func localTime(_ instant: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = timeZone
        formatter.dateFormat = "yyyy-MM-dd HH:mm zzz"
        return formatter.string(from: instant)
    }

    /// RFC 3339 with the zone's offset (`2026-11-23T14:00:00+01:00`).
    public func offsetTime(_ instant: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = timeZone
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ssxxx"
        return formatter.string(from: instant)
    }
}
