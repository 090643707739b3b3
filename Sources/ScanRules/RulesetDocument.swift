import ScanCore

/// A ruleset as the JSON document that is stored and published, changed rule by rule: what
/// `scanadmin rules add` and `rules remove` do to the current revision. Rules are matched by
/// `id`; the other keys of the document (version, description, …) are kept as they are.
public struct RulesetDocument: Sendable, Equatable {
    public private(set) var document: JSONValue

    /// The document of an empty, accept-all ruleset (before the first change).
    public static let empty = RulesetDocument(.object([("version", .number(1)), ("rules", .array([]))]))

    public init(_ document: JSONValue) { self.document = document }

    /// The rules, in file order.
    public var rules: [JSONValue] {
        if case .array(let items)? = document["rules"] { return items }
        return []
    }

    /// What a merge did, by rule id.
    public struct MergeResult: Sendable, Equatable {
        public var added: [String] = []
        public var replaced: [String] = []
        public var defaultAction: String?

        /// "added a, b; replaced c; default action reject".
        public var description: String {
            var parts: [String] = []
            if !added.isEmpty { parts.append("added " + added.joined(separator: ", ")) }
            if !replaced.isEmpty { parts.append("replaced " + replaced.joined(separator: ", ")) }
            if let defaultAction { parts.append("default action \(defaultAction)") }
            return parts.joined(separator: "; ")
        }
    }

    /// Adds the rules of `incoming`: a rule whose id exists replaces it in place, a new one is
    /// appended; `incoming`'s `defaultAction`, when it has one, replaces this one's.
    public mutating func merge(_ incoming: RulesetDocument) -> MergeResult {
        var rules = self.rules
        var result = MergeResult()
        for rule in incoming.rules {
            let id = rule["id"]?.stringValue ?? ""
            if let index = rules.firstIndex(where: { $0["id"]?.stringValue == id }) {
                rules[index] = rule
                result.replaced.append(id)
            } else {
                rules.append(rule)
                result.added.append(id)
            }
        }
        let defaultAction = incoming.document["defaultAction"]
        result.defaultAction = defaultAction.map { $0.stringValue ?? "\($0)" }
        replaceRules(with: rules, defaultAction: defaultAction)
        return result
    }

    /// Removes the rule `id`; false (and no change) when there is none.
    public mutating func remove(id: String) -> Bool {
        let kept = rules.filter { $0["id"]?.stringValue != id }
        guard kept.count < rules.count else { return false }
        replaceRules(with: kept, defaultAction: nil)
        return true
    }

    private mutating func replaceRules(with rules: [JSONValue], defaultAction: JSONValue?) {
        guard case .object(var members) = document else { return }
        members.removeAll { $0.0 == "rules" || ($0.0 == "defaultAction" && defaultAction != nil) }
        if let defaultAction { members.append(("defaultAction", defaultAction)) }
        members.append(("rules", .array(rules)))
        document = .object(members)
    }
}
