/// One token of a NATS subject built from data (a site, camera, lane or station id, a reason): the
/// only characters a subject token may hold here are ASCII letters, digits, `-` and `_`, at most
/// `maxLength` of them. Anything else — a dot or wildcard that would move a message to another
/// subject, a space, CR or LF that would end the protocol line cnats writes — is refused where
/// the value enters (config, topology, events, flags) and again where a subject is built.
public struct SubjectToken: Sendable, Hashable, CustomStringConvertible {
    /// Longest token (site and camera ids, lanes, stations).
    public static let maxLength = 64

    public let text: String
    public var description: String { text }

    /// `field` names the value in the error (`camera.station`, `--site`, `lane`).
    public init(_ text: String, field: String) throws(SubjectTokenError) {
        guard Self.isValid(text) else { throw SubjectTokenError(field: field, value: text) }
        self.text = text
    }

    public static func isValid(_ text: String) -> Bool {
        let bytes = text.utf8
        return !bytes.isEmpty && bytes.count <= maxLength
            && bytes.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2D || byte == 0x5F
            }
    }

    /// A subject of several tokens separated by dots (a prefix such as `scantrack`, an inbox
    /// prefix `_INBOX.dc1.cam-01`, a command verb `session.start`): each token as above.
    public static func isValidSubject(_ text: String, maxLength: Int = 255) -> Bool {
        text.utf8.count <= maxLength
            && text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { isValid(String($0)) }
    }

    /// Checks a dotted subject part; returns it unchanged.
    @discardableResult
    public static func subject(_ text: String, field: String) throws(SubjectTokenError) -> String {
        guard isValidSubject(text) else { throw SubjectTokenError(field: field, value: text, dotted: true) }
        return text
    }
}

/// A value that cannot be part of a NATS subject; the value is shown with control characters escaped.
public struct SubjectTokenError: Error, Sendable, Equatable, CustomStringConvertible {
    public var field: String
    public var value: String
    public var dotted = false

    public init(field: String, value: String, dotted: Bool = false) {
        self.field = field
        self.value = value
        self.dotted = dotted
    }

    public var description: String { "\(field): \(reason)" }

    /// What is wrong, without the field's name.
    public var reason: String {
        let shown = TerminalText.escaped(value.count > 80 ? String(value.prefix(80)) + "…" : value)
        return dotted
            ? "'\(shown)' is not a subject without wildcards: tokens of letters, digits, '-' and '_' (at most \(SubjectToken.maxLength) each) separated by dots"
            : "'\(shown)' may hold only letters, digits, '-' and '_' (1 to \(SubjectToken.maxLength); it becomes part of a NATS subject)"
    }
}
