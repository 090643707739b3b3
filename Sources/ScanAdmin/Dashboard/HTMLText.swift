/// Markup for the dashboard, built only from literals and interpolations: every interpolated
/// value (a String, a number, anything printable) is escaped for an element or a quoted attribute,
/// and only another `HTMLText` goes in as markup. So no value from a camera, a label or the
/// database can reach a page unescaped: there is no other way to put text into one.
struct HTMLText: ExpressibleByStringInterpolation, Sendable, Equatable {
    private(set) var markup: String

    init() { markup = "" }

    /// A literal of the program's own: markup as written.
    init(stringLiteral literal: String) { markup = literal }

    init(stringInterpolation: Interpolation) { markup = stringInterpolation.markup }

    struct Interpolation: StringInterpolationProtocol {
        var markup = ""

        init(literalCapacity: Int, interpolationCount: Int) { markup.reserveCapacity(literalCapacity * 2) }

        mutating func appendLiteral(_ literal: String) { markup += literal }

        /// Markup built the same way: as it is.
        mutating func appendInterpolation(_ fragment: HTMLText) { markup += fragment.markup }

        /// Any value: escaped.
        mutating func appendInterpolation(_ value: some CustomStringConvertible) {
            markup += HTML.escape(value.description)
        }
    }

    static func += (lhs: inout HTMLText, rhs: HTMLText) { lhs.markup += rhs.markup }

    static func + (lhs: HTMLText, rhs: HTMLText) -> HTMLText {
        var joined = lhs
        joined += rhs
        return joined
    }
}

extension Sequence where Element == HTMLText {
    func joined() -> HTMLText { reduce(into: HTMLText()) { $0 += $1 } }
}
