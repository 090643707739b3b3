import Foundation
import ScanCore
import ScanVision

/// Unwanted-code rules (docs/rules.md): the first matching rule by
/// priority decides whether a code is accepted or rejected, and may give it a role.
///
/// Priority: lower numbers are tried first; rules of equal priority in file order. The file's
/// `defaultAction` decides when no rule matches (accept unless it says otherwise).
public struct Ruleset: Sendable {
    public var version: Int
    public var defaultAction: RuleAction
    /// Sorted: the order in which they are tried.
    public private(set) var rules: [Rule]
    /// Where this ruleset came from (a revision in the rules bucket, or a file).
    public var revision: String

    public init(version: Int = 1, defaultAction: RuleAction = .accept, rules: [Rule], revision: String = "local") {
        self.version = version
        self.defaultAction = defaultAction
        self.rules = rules.enumerated().sorted { a, b in
            a.element.priority != b.element.priority ? a.element.priority < b.element.priority : a.offset < b.offset
        }.map(\.element)
        self.revision = revision
    }

    /// Accepts everything: the default when no ruleset is configured.
    public static let acceptAll = Ruleset(rules: [], revision: "none")
}

public enum RuleAction: String, Sendable, CaseIterable {
    case accept, reject
}

public struct Rule: Sendable {
    public var id: String
    public var priority: Int
    public var action: RuleAction
    public var match: RuleMatch
    public var when: RuleSchedule?
    public var scope: RuleScope?
    public var role: String?
}

/// What a code must look like; every condition given must hold.
public struct RuleMatch: Sendable {
    public var symbologies: Set<Symbology>?
    public var prefix: String?
    public var suffix: String?
    public var regex: RuleRegex?
    /// The value must not start with this.
    public var notPrefix: String?
    /// The value must not contain a match of this.
    public var notRegex: RuleRegex?
    public var minLength: Int?
    public var maxLength: Int?
    /// "valid" or "invalid": the GS1 mod-10 check digit, for symbologies that carry one.
    public var checkDigitValid: Bool?
    public var gs1: Bool?
    /// GS1 application identifiers the value must hold, each with a pattern its data must match
    /// (dates as `YYYY-MM-DD`, as `GS1ElementStrings` gives them).
    public var ai: [(ai: String, regex: RuleRegex)]?

    public var isEmpty: Bool {
        symbologies == nil && prefix == nil && suffix == nil && regex == nil && notPrefix == nil && notRegex == nil
            && minLength == nil && maxLength == nil && checkDigitValid == nil && gs1 == nil && ai == nil
    }
}

/// A rule's regular expression: matched by `LinearRegex` (linear time in the value, whatever the
/// pattern) in the agent, `scanadmin rules test` and everywhere else rules are applied.
public struct RuleRegex: Sendable {
    public let pattern: String
    let regex: LinearRegex

    public init(_ pattern: String) throws(LinearRegex.Unsupported) {
        self.pattern = pattern
        self.regex = try LinearRegex(pattern)
    }

    /// Whether the value contains a match (its first `LinearRegex.maxTextLength` characters).
    public func matches(_ text: String) -> Bool { regex.matches(text) }
}

/// Days and a daily time window in a time zone. A window whose end is before its start crosses
/// midnight and belongs to the day it starts on ("sat 22:00–06:00" covers Saturday night).
public struct RuleSchedule: Sendable {
    /// 1 = Monday … 7 = Sunday (ISO 8601).
    public var days: Set<Int>?
    /// Minutes after local midnight, 0…1440.
    public var from: Int
    public var to: Int
    public var timeZone: TimeZone

    public static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    /// Whether `instant` falls inside the schedule, and the local time it was judged at.
    public func contains(_ instant: Timestamp) -> (inside: Bool, local: String) {
        let date = Date(timeIntervalSince1970: Double(instant.milliseconds) / 1000)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.weekday, .hour, .minute], from: date)
        let isoDay = ((parts.weekday ?? 1) + 5) % 7 + 1  // Foundation: 1 = Sunday
        let minute = (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
        let previousDay = (isoDay + 5) % 7 + 1
        let local = "\(Self.dayNames[isoDay - 1]) \(Self.clock(minute)) \(timeZone.identifier)"
        func dayAllowed(_ day: Int) -> Bool { days?.contains(day) ?? true }
        if from <= to {
            return (dayAllowed(isoDay) && minute >= from && minute < to, local)
        }
        // Crosses midnight: the evening part belongs to today, the early part to yesterday.
        if minute >= from { return (dayAllowed(isoDay), local) }
        if minute < to { return (dayAllowed(previousDay), local) }
        return (false, local)
    }

    static func clock(_ minute: Int) -> String {
        let h = minute / 60
        let m = minute % 60
        return (h < 10 ? "0" : "") + String(h) + ":" + (m < 10 ? "0" : "") + String(m)
    }
}

/// Where a rule applies; empty lists mean everywhere.
public struct RuleScope: Sendable {
    public var sites: Set<String>?
    public var lanes: Set<String>?
    public var cameras: Set<String>?

    public func contains(_ camera: CameraIdentity) -> Bool {
        if let sites, !sites.contains(camera.site) { return false }
        if let lanes, !lanes.contains(camera.lane ?? "") { return false }
        if let cameras, !cameras.contains(camera.id) { return false }
        return true
    }
}

/// The code a rule is asked about.
public struct RuleSubject: Sendable {
    public var value: String
    public var symbology: Symbology
    public var gs1: Bool
    public var camera: CameraIdentity
    public var time: Timestamp

    public init(value: String, symbology: Symbology, gs1: Bool = false, camera: CameraIdentity, time: Timestamp) {
        self.value = value
        self.symbology = symbology
        self.gs1 = gs1
        self.camera = camera
        self.time = time
    }
}

/// A decision with its reasons: which rule decided, and why each rule before it did not.
public struct RuleVerdict: Sendable, Equatable {
    public var decision: TrackDecision
    /// One line per rule tried, in order: "weekend-41: no match (prefix '41' ≠ '40…')".
    public var explanation: [String]
}

extension Rule {
    /// Nil when the rule applies, else the first condition that failed.
    func mismatch(_ subject: RuleSubject) -> String? {
        if let scope, !scope.contains(subject.camera) {
            return
                "scope: camera \(subject.camera.id) (site \(subject.camera.site), lane \(subject.camera.lane ?? "none")) is outside it"
        }
        if let symbologies = match.symbologies, !symbologies.contains(subject.symbology) {
            return
                "symbology \(subject.symbology.rawValue) is not one of \(symbologies.map(\.rawValue).sorted().joined(separator: ", "))"
        }
        if let prefix = match.prefix, !subject.value.hasPrefix(prefix) { return "does not start with '\(prefix)'" }
        if let suffix = match.suffix, !subject.value.hasSuffix(suffix) { return "does not end with '\(suffix)'" }
        let length = subject.value.count
        if let minLength = match.minLength, length < minLength { return "length \(length) is below \(minLength)" }
        if let maxLength = match.maxLength, length > maxLength { return "length \(length) is above \(maxLength)" }
        if let regex = match.regex, !regex.matches(subject.value) { return "does not match /\(regex.pattern)/" }
        if let notPrefix = match.notPrefix, subject.value.hasPrefix(notPrefix) { return "starts with '\(notPrefix)'" }
        if let notRegex = match.notRegex, notRegex.matches(subject.value) { return "matches /\(notRegex.pattern)/" }
        if let wanted = match.checkDigitValid {
            guard subject.symbology.hasGS1CheckDigit || subject.symbology == .interleaved2of5 else {
                return "\(subject.symbology.rawValue) has no check digit to judge"
            }
            let valid = Symbology.hasValidGS1CheckDigit(Array(subject.value.utf8))
            if valid != wanted { return "check digit is \(valid ? "valid" : "invalid")" }
        }
        if let gs1 = match.gs1, gs1 != subject.gs1 { return gs1 ? "not GS1 data" : "is GS1 data" }
        if let wanted = match.ai {
            guard subject.gs1,
                let elements = GS1ElementStrings.parse(Array(subject.value.utf8), referenceYear: subject.time.utcYear)
            else { return "no GS1 element strings to read AIs from" }
            for (ai, regex) in wanted {
                guard let element = elements.first(where: { $0.ai == ai }) else { return "no AI (\(ai))" }
                if !regex.matches(element.value) {
                    return "AI (\(ai)) '\(element.value)' does not match /\(regex.pattern)/"
                }
            }
        }
        if let when {
            let (inside, local) = when.contains(subject.time)
            if !inside { return "outside its schedule at \(local)" }
        }
        return nil
    }
}

extension Ruleset {
    /// The first rule by priority that matches decides; the default action otherwise.
    public func evaluate(_ subject: RuleSubject) -> RuleVerdict {
        var explanation: [String] = []
        for rule in rules {
            if let reason = rule.mismatch(subject) {
                explanation.append("\(rule.id) (priority \(rule.priority)): no match, \(reason)")
                continue
            }
            explanation.append("\(rule.id) (priority \(rule.priority)): matches → \(rule.action.rawValue)")
            return RuleVerdict(
                decision: TrackDecision(accepted: rule.action == .accept, ruleId: rule.id, role: rule.role),
                explanation: explanation)
        }
        explanation.append("no rule matched → default action \(defaultAction.rawValue)")
        return RuleVerdict(decision: TrackDecision(accepted: defaultAction == .accept), explanation: explanation)
    }

    public func decide(_ subject: RuleSubject) -> TrackDecision { evaluate(subject).decision }
}
