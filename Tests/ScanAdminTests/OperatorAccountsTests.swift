import Foundation
import Hummingbird
import ScanTestTiming
import Testing

@testable import ScanAdmin

/// The coding desk's operators and sessions: the file's lines, password checks, lock-out and
/// session ends, and the form fields a POST carries.
@Suite("coding desk: operators and sessions", .timed)
struct OperatorAccountsTests {
    /// The fewest rounds a file may name (the tests' accounts; the command writes 600,000).
    static let rounds = 210_000

    @Test("an account written by the command reads back and checks its own password only; an unknown name is refused")
    func roundTrip() throws {
        let maria = OperatorAccounts.account(name: "maria", password: "correct horse battery", rounds: Self.rounds)
        let joe = OperatorAccounts.account(name: "joe.k-2", password: "correct horse battery", rounds: Self.rounds)
        #expect(maria.salt != joe.salt, "a salt of its own")
        #expect(maria.hash != joe.hash, "the same password, another hash")
        let accounts = try OperatorAccounts.parse(
            "# operators\n\n" + maria.line + "\n" + joe.line + "\n", path: "operators")
        #expect(accounts.accounts == ["maria": maria, "joe.k-2": joe])
        #expect(accounts.verify(name: "maria", password: "correct horse battery"))
        #expect(!accounts.verify(name: "maria", password: "correct horse batterY"))
        #expect(!accounts.verify(name: "joe.k-2", password: "wrong horse battery"))
        #expect(!accounts.verify(name: "nobody", password: "correct horse battery"))
    }

    @Test(
        "a file that is not one names the file and line: no colon, a bad name, another scheme, too few rounds, a short salt, a name twice, no operator",
        arguments: [
            ("maria", "operators:1: not NAME:"),
            (
                "ma ria:pbkdf2-sha256$210000$AAAAAAAAAAAAAAAAAAAAAA==$" + String(repeating: "A", count: 43) + "=",
                "is not an operator name"
            ),
            ("maria:sha1$1$x$y", "operators:1: operator maria's entry"),
            (
                "maria:pbkdf2-sha256$1000$AAAAAAAAAAAAAAAAAAAAAA==$" + String(repeating: "A", count: 43) + "=",
                "at least 210000 rounds"
            ),
            ("maria:pbkdf2-sha256$210000$AAAA$" + String(repeating: "A", count: 43) + "=", "operator maria's entry"),
            (
                "\n# x\nmaria:pbkdf2-sha256$210000$AAAAAAAAAAAAAAAAAAAAAA==$" + String(repeating: "A", count: 43)
                    + "=\nmaria:pbkdf2-sha256$210000$AAAAAAAAAAAAAAAAAAAAAA==$" + String(repeating: "A", count: 43)
                    + "=",
                "operators:4: operator maria is listed twice"
            ),
            ("# nobody yet\n", "operators: lists no operator"),
        ])
    func badFiles(text: String, expected: String) {
        #expect {
            _ = try OperatorAccounts.parse(text, path: "operators")
        } throws: { error in
            "\(error)".contains(expected)
        }
    }

    @Test("names are what the audit keeps: letters, digits, . _ -, 1 to 64; markup and spaces are not names")
    func names() {
        for name in ["maria", "J.Doe_2-b", String(repeating: "a", count: 64)] { #expect(OperatorAccounts.isName(name)) }
        for name in ["", "a b", "<b>", "maria\n", "mä", String(repeating: "a", count: 65), "x:y"] {
            #expect(!OperatorAccounts.isName(name), "\(name)")
        }
    }

    @Test("five wrong passwords lock a name for five minutes (others not); a sign-in clears its failures")
    func lockOut() {
        let sessions = OperatorSessions()
        let start = ContinuousClock.now
        for second in 0..<5 {
            #expect(sessions.mayTry("maria", now: start + .seconds(second)))
            sessions.failed("maria", now: start + .seconds(second))
        }
        #expect(!sessions.mayTry("maria", now: start + .seconds(10)))
        #expect(sessions.mayTry("joe", now: start + .seconds(10)))
        #expect(!sessions.mayTry("maria", now: start + .seconds(299)), "the first failure is 299 s old")
        #expect(sessions.mayTry("maria", now: start + .seconds(305)))
        sessions.failed("joe", now: start)
        _ = sessions.start(name: "joe", now: start + .seconds(1))
        for second in 2..<6 { sessions.failed("joe", now: start + .seconds(second)) }
        #expect(sessions.mayTry("joe", now: start + .seconds(7)), "four failures since the sign-in")
    }

    @Test("a session ends after 30 idle minutes or 12 hours, or on sign-out; ids and tokens are 256 random bits")
    func sessionEnds() throws {
        let sessions = OperatorSessions()
        let start = ContinuousClock.now
        let first = sessions.start(name: "maria", now: start)
        let second = sessions.start(name: "maria", now: start)
        #expect(first.id.count == 64 && first.formToken.count == 64 && first.id != second.id)
        #expect(first.formToken != second.formToken && first.id != first.formToken)
        // Used every 20 minutes: alive, until the 12 hours are up (the last use 20 minutes before).
        var now = start
        while now - start + .seconds(20 * 60) < .seconds(12 * 3600) {
            now += .seconds(20 * 60)
            #expect(sessions.session(first.id, now: now)?.name == "maria")
        }
        #expect(sessions.session(first.id, now: start + .seconds(12 * 3600 + 1)) == nil)
        #expect(sessions.session(first.id, now: now) == nil, "ended for good")
        #expect(sessions.session(second.id, now: start + .seconds(31 * 60)) == nil, "30 minutes idle")
        let third = sessions.start(name: "joe", now: start)
        sessions.setNotice(third.id, "Resolved x.")
        #expect(sessions.takeNotice(third.id) == "Resolved x." && sessions.takeNotice(third.id) == nil, "shown once")
        sessions.end(third.id)
        #expect(sessions.session(third.id, now: start) == nil)
        #expect(sessions.session("not-a-session", now: start) == nil)
    }

    @Test("form fields: + and percent escapes decoded, a field without = is empty, the last of a name wins")
    func formFields() {
        let fields = CodingDesk.form(
            ByteBuffer(string: "code=%2800%29340+12&symbology=GS1-128&empty&id=a%26b%3Dc&id=last&bad=%ZZ"))
        #expect(fields["code"] == "(00)340 12")
        #expect(fields["symbology"] == "GS1-128")
        #expect(fields["empty"] == "")
        #expect(fields["id"] == "last")
        #expect(fields["bad"] == "", "a broken escape is no value")
    }
}
