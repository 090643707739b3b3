import Foundation
import ScanAgentRuntime
import ScanCore
import ScanServices

/// Commands a test sends; their replies are kept.
public final class ScriptedCommands: CommandFeed, @unchecked Sendable {
    // @unchecked: guarded by `condition`.
    private let condition = NSCondition()
    private var waiting: [IncomingCommand] = []
    private var answers: [String: [UInt8]] = [:]
    private var unavailable = false

    public init() {}

    /// Sends `verb` with `body`; `tag` names its reply.
    public func send(_ verb: String, body: String = "", tag: String) {
        let command = IncomingCommand(subject: "cmd.\(verb)", verb: verb, body: Array(body.utf8)) { [self] bytes in
            condition.withLock {
                answers[tag] = bytes
                condition.broadcast()
            }
        }
        condition.withLock {
            waiting.append(command)
            condition.broadcast()
        }
    }

    /// The reply to `tag`, when it has come.
    public func reply(_ tag: String) -> JSONValue? {
        condition.withLock { answers[tag] }.flatMap { try? JSONValue.parse($0) }
    }

    /// While set, `next` fails as a feed without a server does.
    public func setUnavailable(_ value: Bool) { condition.withLock { unavailable = value } }

    public struct Unavailable: Error {}

    public func next(timeout: Duration) throws -> IncomingCommand? {
        try condition.withLock {
            if unavailable { throw Unavailable() }
            if waiting.isEmpty { _ = condition.wait(until: Date(timeIntervalSinceNow: min(timeout.seconds, 0.02))) }
            return waiting.isEmpty ? nil : waiting.removeFirst()
        }
    }
}

/// A rules bucket a test publishes to.
public final class ScriptedRules: RulesFeed, @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var rules: PublishedRules?
    private var reads = 0

    public init() {}

    public func publish(_ json: String, revision: UInt64) {
        lock.withLock { rules = PublishedRules(bytes: Array(json.utf8), revision: revision) }
    }

    public var readCount: Int { lock.withLock { reads } }

    public func current() throws -> PublishedRules? {
        lock.withLock {
            reads += 1
            return rules
        }
    }
}
