import ArgumentParser
import Foundation
import ScanCore
import ScanRules

/// `scan-agent rules check FILE` and `scan-agent rules test FILE --code V --symbology S …`
struct RulesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rules", abstract: "Check a ruleset, or ask which rule decides a code and why.",
        subcommands: [Check.self, Test.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate a ruleset: exit 0 when it is good, 2 with every error listed by JSON path.")
        @Argument(help: "Ruleset file.") var file: String

        func run() throws {
            do {
                let ruleset = try RulesetLoader.load(path: file)
                print("\(file): ok, \(ruleset.rules.count) rules, default action \(ruleset.defaultAction.rawValue)")
                for rule in ruleset.rules {
                    print(
                        "  \(rule.priority)\t\(rule.id)\t\(rule.action.rawValue)\(rule.role.map { "\trole \($0)" } ?? "")"
                    )
                }
            } catch {
                writeStandardError(error.description)
                throw ExitCode(2)
            }
        }
    }

    struct Test: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Explain which rule decides a code (exit 0 accepted, 1 rejected, 2 bad input).")
        @Argument(help: "Ruleset file.") var file: String
        @Option(help: "The code's value.") var code: String
        @Option(help: "Its symbology (EAN-13, CODE-128, QR-Code, …).") var symbology: String
        @Option(help: "When it was read, RFC 3339 (default: now).") var at: String?
        @Option(help: "Camera id.") var camera: String = "camera"
        @Option(help: "Site.") var site: String = "default"
        @Option(help: "Lane.") var lane: String?
        @Flag(help: "The code carries GS1 data (FNC1).") var gs1 = false

        func validate() throws {
            if Symbology(name: symbology) == nil {
                throw ValidationError(
                    "--symbology '\(symbology)' is not a symbology (\(Symbology.allCases.map(\.rawValue).joined(separator: ", ")))"
                )
            }
            if let at, Timestamp(rfc3339: at) == nil {
                throw ValidationError("--at '\(at)' is not an RFC 3339 time (e.g. 2026-11-21T08:00:00+01:00)")
            }
        }

        func run() throws {
            let ruleset: Ruleset
            do {
                ruleset = try RulesetLoader.load(path: file)
            } catch {
                writeStandardError(error.description)
                throw ExitCode(2)
            }
            let time =
                at.flatMap { Timestamp(rfc3339: $0) }
                ?? Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
            let subject = RuleSubject(
                value: code, symbology: Symbology(name: symbology) ?? .code128, gs1: gs1,
                camera: CameraIdentity(id: camera, site: site, lane: lane), time: time)
            let verdict = ruleset.evaluate(subject)
            for line in verdict.explanation { print(line) }
            let decision = verdict.decision
            print(
                "decision: \(decision.accepted ? "accepted" : "rejected")"
                    + (decision.ruleId.map { " by rule \($0)" } ?? " by the default action")
                    + (decision.role.map { ", role \($0)" } ?? ""))
            if !decision.accepted { throw ExitCode(1) }
        }
    }
}
