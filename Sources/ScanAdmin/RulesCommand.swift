import ArgumentParser
import Foundation
import ScanCore
import ScanNATS
import ScanPostgres
import ScanRules

/// `scanadmin rules list | show ID | add FILE | remove ID | check FILE | test … | history | publish`
struct RulesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rules",
        abstract: "Manage the unwanted-code rules: revisions in PostgreSQL, published to the agents' rules bucket.",
        discussion: """
            Every change (add, remove) stores a new revision of the whole ruleset with who made it and when, and \
            publishes it to the rules key-value bucket (<PREFIX>_RULES, key "ruleset"); running agents pick it up \
            within seconds and report the bucket revision they run. File format: docs/rules.md.

            Exit codes: 0 done (test: accepted), 1 failure or no such rule (test: rejected), 2 a bad ruleset file \
            (every error by JSON path), 3 stored but not published (NATS unreachable; run `rules publish`), 64 bad usage.
            """,
        subcommands: [List.self, Show.self, Add.self, Remove.self, Check.self, Test.self, History.self, Publish.self])

    /// The current ruleset as stored (an empty accept-all ruleset before the first change).
    static func current(_ database: PGConnection) throws -> (
        revision: RuleStore.Revision?, document: JSONValue, ruleset: Ruleset
    ) {
        let revision = try RuleStore(connection: database).current()
        let text = revision?.document ?? #"{"version": 1, "rules": []}"#
        let document = try JSONValue.parse(text)
        let ruleset = try Ruleset.parse(
            Array(text.utf8), file: "revision \(revision?.revision ?? 0)",
            revision: revision.map { String($0.revision) })
        return (revision, document, ruleset)
    }

    /// Reads and validates a ruleset file; a bad one exits 2 naming the file and paths.
    static func load(_ file: String, command: String) throws -> (document: JSONValue, ruleset: Ruleset) {
        let bytes = try readInputFile(file, command: command)
        do {
            let ruleset = try Ruleset.parse(bytes, file: file)
            return (try JSONValue.parse(bytes), ruleset)
        } catch let error as ConfigErrors {
            printError("scanadmin \(command): \(error)")
            throw ExitCode(2)
        }
    }

    /// Publishes a stored revision to the rules bucket; exit 3 (stored, not published) on failure.
    static func publish(
        _ revision: RuleStore.Revision, database: PGConnection, connection: ConnectionOptions, prefix: String
    ) throws {
        let subjects = ContractSubjects(prefix: prefix)
        do {
            let nats = try connection.connectNATS()
            let bucket = try nats.jetStream().keyValue(
                bucket: subjects.rulesBucket, replicas: ConnectionOptions.streamReplicas)
            let kvRevision = try bucket.put(ContractSubjects.rulesKey, Array(revision.document.utf8))
            try RuleStore(connection: database).markPublished(revision: revision.revision, kvRevision: kvRevision)
            print("published revision \(revision.revision) to \(subjects.rulesBucket) as bucket revision \(kvRevision)")
        } catch {
            printError(
                "scanadmin rules: revision \(revision.revision) is stored but not published: \(error); run `scanadmin rules publish` when NATS is back"
            )
            throw ExitCode(3)
        }
    }

    struct PublishOptions: ParsableArguments {
        @Option(help: "Subject prefix (the bucket is <PREFIX>_RULES).") var prefix: String = "scantrack"
        @Option(help: "Who makes the change (default: $USER).") var author: String?
        var who: String { author ?? ProcessInfo.processInfo.environment["USER"] ?? "unknown" }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The current rules in the order they are tried.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "table, csv or json.") var format: ListingFormat = .table

        func run() throws {
            let (revision, document, ruleset) = try withDatabase(connection, command: "rules list") {
                try RulesCommand.current($0)
            }
            var listing = Listing(columns: ["id", "priority", "action", "role", "match", "when", "scope"])
            listing.numeric = ["priority"]
            let objects = RulesetDocument(document).rules
            for rule in ruleset.rules {
                let object = objects.first { $0["id"]?.stringValue == rule.id }
                listing.rows.append([
                    rule.id, String(rule.priority), rule.action.rawValue, rule.role ?? "",
                    object?["match"]?.serialized ?? "",
                    object?["when"]?.serialized ?? "", object?["scope"]?.serialized ?? "",
                ])
            }
            if format == .table {
                print(
                    "revision \(revision.map { "\($0.revision) by \($0.author) at \($0.createdAt)" } ?? "none (accept all)"); default action \(ruleset.defaultAction.rawValue)"
                )
            }
            print(listing.render(format), terminator: "")
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One rule as JSON.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "Rule id.") var id: String

        func run() throws {
            let document = try withDatabase(connection, command: "rules show") { try RulesCommand.current($0).document }
            guard let rule = RulesetDocument(document).rules.first(where: { $0["id"]?.stringValue == id }) else {
                printError("scanadmin rules show: no rule '\(id)' (scanadmin rules list shows them)")
                throw ExitCode.failure
            }
            print(rule.serialized)
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Add the rules of a ruleset file; a rule whose id exists is replaced. Its defaultAction, if given, too."
        )
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var options: PublishOptions
        @Argument(help: "Ruleset file.") var file: String

        func run() throws {
            let (incoming, _) = try RulesCommand.load(file, command: "rules add")
            try withDatabase(connection, command: "rules add") { database in
                let revision: RuleStore.Revision
                do {
                    revision = try RuleStore(connection: database).update(author: options.who) {
                        current throws(ConfigErrors) in
                        var merged = RulesetDocument(current)
                        let result = merged.merge(RulesetDocument(incoming))
                        let serialized = merged.document.serialized
                        _ = try Ruleset.parse(Array(serialized.utf8), file: file)
                        return (
                            serialized, result.description + " (from \(URL(fileURLWithPath: file).lastPathComponent))"
                        )
                    }
                } catch let error as ConfigErrors {
                    printError("scanadmin rules add: the ruleset with \(file)'s rules is not valid: \(error)")
                    throw ExitCode(2)
                }
                print("revision \(revision.revision): \(revision.change)")
                try RulesCommand.publish(revision, database: database, connection: connection, prefix: options.prefix)
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a rule (a new revision without it).")
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var options: PublishOptions
        @Argument(help: "Rule id.") var id: String

        struct NoSuchRule: Error {}

        func run() throws {
            try withDatabase(connection, command: "rules remove") { database in
                let revision: RuleStore.Revision
                do {
                    revision = try RuleStore(connection: database).update(author: options.who) {
                        current throws(NoSuchRule) in
                        var kept = RulesetDocument(current)
                        guard kept.remove(id: id) else { throw NoSuchRule() }
                        return (kept.document.serialized, "removed \(id)")
                    }
                } catch is NoSuchRule {
                    printError("scanadmin rules remove: no rule '\(id)' (scanadmin rules list shows them)")
                    throw ExitCode.failure
                }
                print("revision \(revision.revision): \(revision.change)")
                try RulesCommand.publish(revision, database: database, connection: connection, prefix: options.prefix)
            }
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate a ruleset file without storing it (exit 0 good, 2 bad).")
        @Argument(help: "Ruleset file.") var file: String

        func run() throws {
            let (_, ruleset) = try RulesCommand.load(file, command: "rules check")
            print("\(file): ok, \(ruleset.rules.count) rule(s), default action \(ruleset.defaultAction.rawValue)")
        }
    }

    struct Test: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Explain which rule of the current ruleset decides a code, and why (exit 0 accepted, 1 rejected)."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The code's value.") var code: String
        @Option(help: "Its symbology (EAN-13, CODE-128, QR-Code, …).") var symbology: String
        @Option(help: "Camera id (for scoped rules).") var camera: String = "camera"
        @Option(help: "Site.") var site: String = "default"
        @Option(help: "Lane.") var lane: String?
        @Option(help: "When it is read, RFC 3339 (default: now).") var at: String?
        @Flag(help: "The code carries GS1 data (FNC1).") var gs1 = false

        func validate() throws {
            if Symbology(name: symbology) == nil {
                throw ValidationError(
                    "--symbology '\(symbology)' is not one of \(Symbology.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            if let at, Timestamp(rfc3339: at) == nil { throw ValidationError("--at '\(at)' is not an RFC 3339 time") }
        }

        func run() throws {
            let (revision, _, ruleset) = try withDatabase(connection, command: "rules test") {
                try RulesCommand.current($0)
            }
            let time =
                at.flatMap { Timestamp(rfc3339: $0) }
                ?? Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
            let verdict = ruleset.evaluate(
                RuleSubject(
                    value: code, symbology: Symbology(name: symbology) ?? .code128, gs1: gs1,
                    camera: CameraIdentity(id: camera, site: site, lane: lane), time: time))
            print("ruleset revision \(revision.map { String($0.revision) } ?? "none")")
            for line in verdict.explanation { print("  " + line) }
            let decision = verdict.decision
            print(
                "decision: \(decision.accepted ? "accepted" : "rejected")"
                    + (decision.ruleId.map { " by rule \($0)" } ?? " by the default action")
                    + (decision.role.map { ", role \($0)" } ?? ""))
            if !decision.accepted { throw ExitCode.failure }
        }
    }

    struct History: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every revision: when, who, what changed, and its bucket revision.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "table, csv or json.") var format: ListingFormat = .table

        func run() throws {
            let revisions = try withDatabase(connection, command: "rules history") {
                try RuleStore(connection: $0).history()
            }
            var listing = Listing(columns: ["revision", "at", "author", "rules", "published", "change"])
            listing.numeric = ["revision", "rules"]
            for revision in revisions {
                let count = (try? JSONValue.parse(revision.document)).map { RulesetDocument($0).rules.count } ?? 0
                listing.rows.append([
                    String(revision.revision), revision.createdAt, revision.author, String(count),
                    revision.kvRevision.map { "bucket \($0)" } ?? "no", revision.change,
                ])
            }
            print(listing.render(format), terminator: "")
        }
    }

    struct Publish: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish the current revision to the rules bucket again.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "Subject prefix (the bucket is <PREFIX>_RULES).") var prefix: String = "scantrack"

        func run() throws {
            try withDatabase(connection, command: "rules publish") { database in
                guard let revision = try RuleStore(connection: database).current() else {
                    printError("scanadmin rules publish: no ruleset stored yet (scanadmin rules add FILE)")
                    throw ExitCode.failure
                }
                try RulesCommand.publish(revision, database: database, connection: connection, prefix: prefix)
            }
        }
    }
}
