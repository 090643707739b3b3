import Foundation
import ScanCore

extension Ruleset {
    static let topKeys = ["version", "defaultAction", "rules"]
    static let ruleKeys = ["id", "priority", "action", "match", "when", "scope", "role", "description"]
    static let matchKeys = [
        "symbologies", "prefix", "suffix", "regex", "notPrefix", "notRegex", "minLength", "maxLength", "checkDigit",
        "gs1", "ai",
    ]
    static let whenKeys = ["days", "from", "to", "timeZone"]
    /// The budget of a whole ruleset's patterns, in NFA instructions (a pattern alone may have
    /// 20,000): what every agent compiles at every revision and runs on every code. Each pattern's
    /// DFA is bounded on its own (`AsciiDFA.maxWork`), so a ruleset within this compiles in
    /// milliseconds per pattern.
    public static let maxRegexInstructions = 100_000
    static let scopeKeys = ["sites", "lanes", "cameras"]

    /// Parses and validates a ruleset; a broken one is refused whole, with every error listed by
    /// JSON path, the bad value and what is allowed.
    public static func parse(_ bytes: [UInt8], file: String, revision: String? = nil) throws(ConfigErrors) -> Ruleset {
        let document = try ConfigReader.document(bytes, file: file)
        var reader = ConfigReader()
        guard let top = reader.object(document, at: "$", allowed: topKeys) else {
            throw ConfigErrors(file: file, issues: reader.issues)
        }
        let version = reader.int(top["version"], at: "version", range: 1...1) ?? 1
        if top["version"] == nil { reader.fail("version", "required: 1") }
        var defaultAction = RuleAction.accept
        if let action = reader.choice(
            top["defaultAction"], at: "defaultAction", allowed: RuleAction.allCases.map(\.rawValue))
        {
            defaultAction = RuleAction(rawValue: action) ?? .accept
        }
        var rules: [Rule] = []
        var seen: Set<String> = []
        var instructions = 0
        var overBudget = false
        for (index, element) in (reader.array(top["rules"], at: "rules") ?? []).enumerated() {
            let path = "rules[\(index)]"
            guard let fields = reader.object(element, at: path, allowed: ruleKeys) else { continue }
            let id = reader.string(fields["id"], at: path + ".id")
            if fields["id"] == nil { reader.fail(path + ".id", "required: a unique name for the rule") }
            if let id {
                if seen.contains(id) { reader.fail(path + ".id", "'\(id)' is used by an earlier rule") }
                seen.insert(id)
            }
            let actionText = reader.choice(
                fields["action"], at: path + ".action", allowed: RuleAction.allCases.map(\.rawValue))
            if fields["action"] == nil { reader.fail(path + ".action", "required: accept or reject") }
            let priority = reader.int(fields["priority"], at: path + ".priority", range: -1_000_000...1_000_000) ?? 100
            _ = reader.string(fields["description"], at: path + ".description", allowEmpty: true)
            let role = reader.string(fields["role"], at: path + ".role")
            let match = parseMatch(fields["match"], at: path + ".match", reader: &reader)
            for (key, regex) in [("regex", match.regex), ("notRegex", match.notRegex)] {
                guard let regex else { continue }
                instructions += regex.regex.program.count
                if instructions > maxRegexInstructions && !overBudget {
                    reader.fail(
                        path + ".match." + key,
                        "rule '\(id ?? "?")': the ruleset's patterns together come to \(instructions) steps, over \(maxRegexInstructions) (every agent compiles and runs them all on every code): shorten the repetitions or split the ruleset"
                    )
                    overBudget = true  // one message, at the rule that crossed the budget
                }
            }
            let when = parseWhen(fields["when"], at: path + ".when", reader: &reader)
            let scope = parseScope(fields["scope"], at: path + ".scope", reader: &reader)
            if match.isEmpty && when == nil && scope == nil {
                reader.fail(path, "a rule needs at least one condition in match, when or scope")
            }
            if let id, let actionText, let action = RuleAction(rawValue: actionText) {
                rules.append(
                    Rule(id: id, priority: priority, action: action, match: match, when: when, scope: scope, role: role)
                )
            }
        }
        guard reader.issues.isEmpty else { throw ConfigErrors(file: file, issues: reader.issues) }
        return Ruleset(version: version, defaultAction: defaultAction, rules: rules, revision: revision ?? file)
    }

    private static func strings(_ value: JSONValue?, at path: String, reader: inout ConfigReader) -> [String]? {
        guard let elements = reader.array(value, at: path) else { return nil }
        return elements.enumerated().compactMap { index, element in reader.string(element, at: "\(path)[\(index)]") }
    }

    private static func parseMatch(_ value: JSONValue?, at path: String, reader: inout ConfigReader) -> RuleMatch {
        var match = RuleMatch()
        guard let fields = reader.object(value, at: path, allowed: matchKeys) else { return match }
        if let symbologies = reader.symbologies(fields["symbologies"], at: path + ".symbologies") {
            match.symbologies = Set(symbologies)
        }
        match.prefix = reader.string(fields["prefix"], at: path + ".prefix")
        match.suffix = reader.string(fields["suffix"], at: path + ".suffix")
        match.notPrefix = reader.string(fields["notPrefix"], at: path + ".notPrefix")
        for key in ["regex", "notRegex"] {
            guard let pattern = reader.string(fields[key], at: path + "." + key) else { continue }
            do {
                let regex = try RuleRegex(pattern)
                if key == "regex" { match.regex = regex } else { match.notRegex = regex }
            } catch {
                reader.fail(path + "." + key, "'\(pattern)' is not supported \(error)")
            }
        }
        match.minLength = reader.int(fields["minLength"], at: path + ".minLength", range: 0...10_000)
        match.maxLength = reader.int(fields["maxLength"], at: path + ".maxLength", range: 0...10_000)
        if let min = match.minLength, let max = match.maxLength, min > max {
            reader.fail(path + ".maxLength", "\(max) is below minLength \(min)")
        }
        if let check = reader.choice(fields["checkDigit"], at: path + ".checkDigit", allowed: ["valid", "invalid"]) {
            match.checkDigitValid = check == "valid"
        }
        match.gs1 = reader.bool(fields["gs1"], at: path + ".gs1")
        if let ai = fields["ai"] {
            // Application identifiers to a pattern each: `{"17": "^2026-", "10": "^LOT"}`.
            if case .object(let members) = ai, !members.isEmpty {
                var patterns: [(ai: String, regex: RuleRegex)] = []
                for (key, value) in members {
                    let at = path + ".ai." + key
                    guard GS1ElementStrings.isApplicationIdentifier(key) else {
                        reader.fail(at, "'\(key)' is not a GS1 application identifier (2 to 4 digits)")
                        continue
                    }
                    guard let pattern = reader.string(value, at: at) else { continue }
                    do {
                        patterns.append((key, try RuleRegex(pattern)))
                    } catch {
                        reader.fail(at, "'\(pattern)' is not supported \(error)")
                    }
                }
                match.ai = patterns
            } else {
                reader.fail(
                    path + ".ai", "expected an object of application identifiers to patterns, e.g. {\"17\": \"^2027-\"}"
                )
            }
        }
        return match
    }

    private static func parseWhen(_ value: JSONValue?, at path: String, reader: inout ConfigReader) -> RuleSchedule? {
        guard let fields = reader.object(value, at: path, allowed: whenKeys) else { return nil }
        var days: Set<Int>?
        if let names = strings(fields["days"], at: path + ".days", reader: &reader) {
            var set: Set<Int> = []
            for (index, name) in names.enumerated() {
                if let day = RuleSchedule.dayNames.firstIndex(of: name.lowercased()) {
                    set.insert(day + 1)
                } else {
                    reader.fail("\(path).days[\(index)]", "'\(name)' is not a day (mon, tue, wed, thu, fri, sat, sun)")
                }
            }
            if names.isEmpty { reader.fail(path + ".days", "list at least one day, or leave the key out") }
            days = set
        }
        func minutes(_ key: String, default fallback: Int) -> Int {
            guard let text = reader.string(fields[key], at: "\(path).\(key)") else { return fallback }
            let parts = text.split(separator: ":")
            if parts.count == 2, let h = Int(parts[0]), let m = Int(parts[1]), parts[1].count == 2,
                (0...24).contains(h),
                (0...59).contains(m), h * 60 + m <= 1440
            {
                return h * 60 + m
            }
            reader.fail("\(path).\(key)", "'\(text)' is not a time of day (HH:MM, 00:00…24:00)")
            return fallback
        }
        let from = minutes("from", default: 0)
        let to = minutes("to", default: 1440)
        var zone = TimeZone.gmt
        if let name = reader.string(fields["timeZone"], at: path + ".timeZone") {
            if let found = TimeZone(identifier: name) {
                zone = found
            } else {
                reader.fail(path + ".timeZone", "'\(name)' is not an IANA time zone (e.g. Europe/Zurich, UTC)")
            }
        }
        if from == to {
            reader.fail(path, "from and to are equal: the window is empty (use 00:00 to 24:00 for all day)")
        }
        return RuleSchedule(days: days, from: from, to: to, timeZone: zone)
    }

    private static func parseScope(_ value: JSONValue?, at path: String, reader: inout ConfigReader) -> RuleScope? {
        guard let fields = reader.object(value, at: path, allowed: scopeKeys) else { return nil }
        let scope = RuleScope(
            sites: strings(fields["sites"], at: path + ".sites", reader: &reader).map(Set.init),
            lanes: strings(fields["lanes"], at: path + ".lanes", reader: &reader).map(Set.init),
            cameras: strings(fields["cameras"], at: path + ".cameras", reader: &reader).map(Set.init))
        return scope.sites == nil && scope.lanes == nil && scope.cameras == nil ? nil : scope
    }
}
