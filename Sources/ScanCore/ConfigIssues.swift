/// One problem in a configuration or ruleset file, located by its JSON path.
public struct ConfigIssue: Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var message: String
    public var description: String { "\(path): \(message)" }

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }
}

/// Every problem of one file: a file is refused as a whole, listing all of them.
public struct ConfigErrors: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var issues: [ConfigIssue]

    public init(file: String, issues: [ConfigIssue]) {
        self.file = file
        self.issues = issues
    }
    /// One line a problem; values quoted from the file have their control characters escaped.
    public var description: String {
        issues.map { TerminalText.escaped("\(file): \($0)") }.joined(separator: "\n")
    }
}

/// Reads typed values out of a JSON document, collecting issues instead of stopping at the first.
public struct ConfigReader: Sendable {
    public private(set) var issues: [ConfigIssue] = []

    public init() {}

    /// Parses a whole file, or refuses it naming where the JSON breaks.
    public static func document(_ bytes: [UInt8], file: String) throws(ConfigErrors) -> JSONValue {
        do {
            return try JSONValue.parse(bytes)
        } catch {
            throw ConfigErrors(file: file, issues: [ConfigIssue(path: "$", message: "not valid JSON: \(error)")])
        }
    }

    public mutating func fail(_ path: String, _ message: String) {
        issues.append(ConfigIssue(path: path, message: message))
    }

    /// The members of an object, complaining about keys outside `allowed`.
    public mutating func object(_ value: JSONValue?, at path: String, allowed: [String]) -> [String: JSONValue]? {
        guard let value else { return nil }
        guard case .object(let members) = value else {
            fail(path, "expected an object, found \(value.typeName)")
            return nil
        }
        var result: [String: JSONValue] = [:]
        for (key, member) in members {
            if allowed.contains(key) {
                result[key] = member
            } else {
                fail(path == "$" ? key : path + "." + key, "unknown key (allowed: \(allowed.joined(separator: ", ")))")
            }
        }
        return result
    }

    public mutating func string(_ value: JSONValue?, at path: String, allowEmpty: Bool = false) -> String? {
        guard let value else { return nil }
        guard case .string(let text) = value else {
            fail(path, "expected a string, found \(value.typeName)")
            return nil
        }
        if !allowEmpty && text.isEmpty {
            fail(path, "must not be empty")
            return nil
        }
        return text
    }

    /// A value that becomes one NATS subject token (an id): `SubjectToken`.
    public mutating func token(_ value: JSONValue?, at path: String) -> String? {
        guard let text = string(value, at: path) else { return nil }
        guard SubjectToken.isValid(text) else {
            fail(path, SubjectTokenError(field: path, value: text).reason)
            return nil
        }
        return text
    }

    /// A value that becomes several subject tokens separated by dots (a prefix).
    public mutating func subject(_ value: JSONValue?, at path: String) -> String? {
        guard let text = string(value, at: path) else { return nil }
        guard SubjectToken.isValidSubject(text) else {
            fail(path, SubjectTokenError(field: path, value: text, dotted: true).reason)
            return nil
        }
        return text
    }

    public mutating func choice(_ value: JSONValue?, at path: String, allowed: [String]) -> String? {
        guard let text = string(value, at: path) else { return nil }
        guard allowed.contains(text) else {
            fail(path, "'\(text)' is not one of \(allowed.joined(separator: ", "))")
            return nil
        }
        return text
    }

    public mutating func int(_ value: JSONValue?, at path: String, range: ClosedRange<Int>) -> Int? {
        guard let value else { return nil }
        guard let number = value.intValue else {
            fail(path, "expected a whole number, found \(value.typeName == "a number" ? "a fraction" : value.typeName)")
            return nil
        }
        guard range.contains(number) else {
            fail(path, "\(number) is out of range (\(range.lowerBound)…\(range.upperBound))")
            return nil
        }
        return number
    }

    public mutating func double(_ value: JSONValue?, at path: String, range: ClosedRange<Double>) -> Double? {
        guard let value else { return nil }
        guard let number = value.doubleValue else {
            fail(path, "expected a number, found \(value.typeName)")
            return nil
        }
        guard range.contains(number) else {
            fail(path, "\(number) is out of range (\(range.lowerBound)…\(range.upperBound))")
            return nil
        }
        return number
    }

    public mutating func bool(_ value: JSONValue?, at path: String) -> Bool? {
        guard let value else { return nil }
        guard let flag = value.boolValue else {
            fail(path, "expected true or false, found \(value.typeName)")
            return nil
        }
        return flag
    }

    public mutating func array(_ value: JSONValue?, at path: String) -> [JSONValue]? {
        guard let value else { return nil }
        guard case .array(let elements) = value else {
            fail(path, "expected an array, found \(value.typeName)")
            return nil
        }
        return elements
    }

    public mutating func symbologies(_ value: JSONValue?, at path: String) -> [Symbology]? {
        guard let elements = array(value, at: path) else { return nil }
        var result: [Symbology] = []
        for (index, element) in elements.enumerated() {
            guard let name = string(element, at: "\(path)[\(index)]") else { continue }
            if let symbology = Symbology(name: name) {
                result.append(symbology)
            } else {
                fail(
                    "\(path)[\(index)]",
                    "'\(name)' is not a symbology (\(Symbology.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
        }
        return result
    }
}
