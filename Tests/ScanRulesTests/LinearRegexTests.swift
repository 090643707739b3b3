import Foundation
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanCore
@testable import ScanRules

@Suite("linear-time regular expressions", .timed)
struct LinearRegexTests {
    /// Patterns of the kinds rules use, and the syntax's corners.
    static let patterns = [
        "^ORD-[0-9]+$", "^40", "0$", "^(40|41)[0-9]{11}$", "LANE-", "^[A-Z]{3}-\\d{4,6}$", "a|b|", "(ab)*c",
        "^(a+)+$", "^a{2,3}b?$", "x{0,}y", "[^0-9]", "\\w+@\\w+\\.com", "^$", "(?:ab|a)(?:bc|c)$", "\\.", "[.-]",
        "^\\s*$", "a.c", "(?<lot>L[0-9]{2})$", "[\\d-]{3}", "b{2}", "^(?:(a|b)c)+$", "a*?b", "[a-c-]", "\\x41",
    ]

    @Test("every pattern matches exactly the texts Swift's backtracking Regex matches (2,000 seeded texts each)")
    func agreesWithSwiftRegex() throws {
        var random = SeededGenerator(seed: 2026_11_25)
        let alphabet = Array("abcxy0149ORDLANE-.@ \né€".unicodeScalars)
        var texts = ["", "ORD-1", "ORD-", "4006381333931", "4106381333931", "LANE-07", "ABC-12345", "aaaa", "abc"]
        for _ in 0..<2_000 {
            var text = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...14, using: &random) {
                text.append(alphabet[Int.random(in: 0..<alphabet.count, using: &random)])
            }
            texts.append(String(text))
        }
        var disagreements: [String] = []
        var matched = 0
        for pattern in Self.patterns {
            let linear = try LinearRegex(pattern)
            let reference = try Regex(pattern)
            for text in texts {
                let expected = (try? reference.firstMatch(in: text)) != nil
                // The ASCII table (when the pattern has one) and the NFA both.
                if linear.matches(text) != expected || linear.nfaMatches(text) != expected {
                    disagreements.append("/\(pattern)/ on \(text.debugDescription): expected \(expected)")
                }
                if expected { matched += 1 }
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(10))")
        #expect(matched > 2_000, "the texts exercise matches, not only misses: \(matched)")
        #expect(try LinearRegex("^ORD-[0-9]+$").dfa != nil)
        #expect(try LinearRegex("(a|b)*a(a|b){12}").dfa == nil, "over AsciiDFA.maxStates states: the NFA runs")
    }

    @Test("^(a+)+$ on 10,000 characters decides at once, matching or not (Swift Regex ran for over 30 s on 31)")
    func pathological() throws {
        let regex = try LinearRegex("^(a+)+$")
        let clock = ContinuousClock()
        var outcome = (match: false, miss: true)
        let elapsed = clock.measure {
            outcome.match = regex.matches(String(repeating: "a", count: 10_000))
            outcome.miss = regex.matches(String(repeating: "a", count: 10_000) + "b")
        }
        #expect(outcome.match)
        #expect(!outcome.miss)
        #expect(regex.nfaMatches(String(repeating: "a", count: 10_000)))
        #expect(!regex.nfaMatches(String(repeating: "a", count: 10_000) + "b"))
        print("^(a+)+$ on 10,000 + 10,001 characters: \(elapsed) (this build)")
        // Longer values are matched on their first maxTextLength characters.
        #expect(try LinearRegex("^a+$").matches(String(repeating: "a", count: 20_000) + "b"))
        #expect(try LinearRegex("(x+x+)+y").matches(String(repeating: "x", count: 5_000) + "y"))
    }

    @Test(
        "a pattern within every documented limit whose DFA would cost far more than a budget stops building at the budget and runs on the NFA, matching the same"
    )
    func compileBudget() throws {
        // 133 characters: 62 alternatives, then up to 900 of anything. The subset construction
        // would take over ten times the budget (about 0.3 s a compile here, seconds on a small
        // PC, on every agent at every ruleset revision).
        let letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".map(String.init)
        let pattern = "(" + letters.joined(separator: "|") + ").{0,900}"
        #expect(pattern.count == 133)
        let regex = try LinearRegex(pattern)
        #expect(regex.dfa == nil, "the NFA runs")
        let unbounded = AsciiDFA.work(program: regex.program, masks: regex.asciiMasks, budget: .max)
        let bounded = AsciiDFA.work(program: regex.program, masks: regex.asciiMasks)
        #expect(unbounded > 10 * AsciiDFA.maxWork, "\(unbounded)")
        // The budget is checked after each class of bytes: at most one state's classes more.
        #expect(bounded <= AsciiDFA.maxWork + 128 * regex.program.count, "\(bounded)")
        #expect(regex.matches("x!") && regex.matches("--Q") && !regex.matches("!!-"))
        // The rules of the docs and tests stay well inside it, and keep their DFA.
        for ordinary in [
            "^ORD-[0-9]+$", "LOT[0-9A-Z]{4,12}", "(a|b)*a(a|b){7}", "^(01)[0-9]{14}(17)[0-9]{6}(10)[A-Za-z0-9]{1,20}$",
        ] {
            let compiled = try LinearRegex(ordinary)
            #expect(compiled.dfa != nil, "\(ordinary)")
            #expect(AsciiDFA.work(program: compiled.program, masks: compiled.asciiMasks) < AsciiDFA.maxWork / 4)
        }
    }

    @Test("what needs backtracking is refused, saying why and what to write instead")
    func refused() {
        for (pattern, says) in [
            ("^(?!40)", "notPrefix"), ("(?=a)b", "notRegex"), ("(?<=a)b", "look-behind"), ("(a)\\1", "back-references"),
            ("\\bword", "\\b"), ("(?i)abc", "inline flags"), ("[[:alpha:]]", "[A-Za-z]"), ("a{2000}", "1000"),
            ("a++", "possessive"), ("(ab", "unbalanced"), ("ab)", "unbalanced"), ("[ab", "unterminated"),
            ("*a", "repeats nothing"), ("a{3,2}", "below"), ("[z-a]", "reversed"), ("\\q", "unknown escape"),
            ("(x{1000}){1000}", "too large"),
        ] {
            do {
                _ = try LinearRegex(pattern)
                Issue.record("/\(pattern)/ was accepted")
            } catch {
                #expect(error.description.contains(says), "/\(pattern)/: \(error)")
            }
        }
    }

    @Test("the rules in docs/ behave as before: notPrefix says what ^(?!40) said; every regex there agrees")
    func docsRules() throws {
        let codes = ["4006381333931", "4106381333931", "5012345678900", "40", "4", "", "LANE-3", "ORD-1001"]
        for (old, prefix) in [("^(?!40)", "40"), ("^(?!41)", "41")] {
            let lookahead = try Regex(old)
            var match = RuleMatch()
            match.notPrefix = prefix
            let rule = Rule(id: "r", priority: 1, action: .reject, match: match)
            for code in codes {
                let subject = RuleSubject(
                    value: code, symbology: .ean13, gs1: false, camera: CameraIdentity(id: "c"),
                    time: Timestamp(milliseconds: 0))
                #expect(
                    (rule.mismatch(subject) == nil) == ((try? lookahead.firstMatch(in: code)) != nil), "\(old) \(code)")
            }
        }
        let folder = TestEnvironment.repoRoot + "/docs/examples"
        var patterns = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name.hasSuffix(".json") {
            let text = try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
            guard text.contains("\"rules\"") else { continue }
            let ruleset = try Ruleset.parse(Array(text.utf8), file: name)
            for rule in ruleset.rules {
                for regex in [rule.match.regex, rule.match.notRegex].compactMap({ $0 }) {
                    let reference = try Regex(regex.pattern)
                    for code in codes {
                        #expect(regex.matches(code) == ((try? reference.firstMatch(in: code)) != nil))
                    }
                    patterns += 1
                }
            }
        }
        #expect(patterns >= 1)
    }
}
