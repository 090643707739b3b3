import ScanCore

/// One row read by column name. A missing column, a NULL where a value is needed or a value of
/// the wrong form is an error naming the column and the value, never a silent default (a bad
/// time read as epoch 0 once hid a broken query).
public struct PGRow: Sendable {
    let columns: [String: Int]
    let values: [String?]
    /// What was queried, for errors (`sightings`, `item passes`).
    let source: String

    /// The column's text, or nil for NULL.
    public func optionalText(_ column: String) throws(PGError) -> String? {
        guard let index = columns[column] else {
            throw PGError(
                code: .unexpectedResult, function: source, input: column,
                message: "the result has no column '\(column)'")
        }
        return values[index]
    }

    /// The column's text; NULL is an error.
    public func text(_ column: String) throws(PGError) -> String {
        guard let value = try optionalText(column) else { throw bad(column, nil, "is NULL") }
        return value
    }

    public func optionalInt(_ column: String) throws(PGError) -> Int? {
        guard let value = try optionalText(column) else { return nil }
        guard let number = Int(value) else { throw bad(column, value, "is not a whole number") }
        return number
    }

    public func int(_ column: String) throws(PGError) -> Int {
        guard let number = try optionalInt(column) else { throw bad(column, nil, "is NULL") }
        return number
    }

    /// `t` or `f`, as PostgreSQL writes booleans in text.
    public func bool(_ column: String) throws(PGError) -> Bool {
        switch try text(column) {
        case "t", "true": return true
        case "f", "false": return false
        case let value: throw bad(column, value, "is not a boolean")
        }
    }

    /// A time given as milliseconds since the epoch (`(extract(epoch FROM t) * 1000)::bigint`).
    public func milliseconds(_ column: String) throws(PGError) -> Timestamp {
        let value = try text(column)
        guard let milliseconds = Int64(value) else { throw bad(column, value, "is not a time in milliseconds") }
        return Timestamp(milliseconds: milliseconds)
    }

    /// One of an enumeration's values, stored as its raw text (a verdict, a state).
    public func value<Value: RawRepresentable>(_ column: String, as type: Value.Type) throws(PGError) -> Value
    where Value.RawValue == String {
        let text = try text(column)
        guard let value = Value(rawValue: text) else { throw bad(column, text, "is not a \(Value.self)") }
        return value
    }

    private func bad(_ column: String, _ value: String?, _ problem: String) -> PGError {
        let shown = value.map { "'\($0.prefix(64))' " } ?? ""
        return PGError(
            code: .unexpectedResult, function: source, input: column, message: "\(column) \(shown)\(problem)")
    }
}

extension PGRows {
    /// The rows, read by column name; `source` names the query in errors.
    public func named(_ source: String) -> [PGRow] {
        var index: [String: Int] = [:]
        for (position, column) in columns.enumerated() where index[column] == nil { index[column] = position }
        return rows.map { PGRow(columns: index, values: $0, source: source) }
    }
}
