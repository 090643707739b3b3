import Crypto
import CryptoExtras
import Foundation
import ScanCore
import Synchronization

/// The coding desk's operators: a file of `NAME:pbkdf2-sha256$ROUNDS$SALT$HASH` lines (salt and
/// hash in base64; `scanadmin operators set` writes them), so the file holds no password and a
/// stolen copy costs a guess per PBKDF2 run. A name is what the audit trail keeps as `keyed_by`.
struct OperatorAccounts: Sendable {
    struct Account: Sendable, Equatable {
        var name: String
        var rounds: Int
        var salt: [UInt8]
        var hash: [UInt8]

        var line: String {
            "\(name):pbkdf2-sha256$\(rounds)$\(Data(salt).base64EncodedString())$\(Data(hash).base64EncodedString())"
        }
    }

    /// Why a file of operators was refused, naming the file and line (never a secret).
    struct FileError: Error, CustomStringConvertible {
        var description: String
    }

    /// OWASP's figure for PBKDF2-HMAC-SHA256 (2023).
    static let rounds = 600_000
    static let minimumPasswordLength = 12

    var accounts: [String: Account]

    /// A name as the audit keeps it: letters, digits, `.`, `_`, `-`, 1 to 64.
    static func isName(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2E || byte == 0x5F || byte == 0x2D
            }
    }

    /// The accounts in `text` (the file at `path`); blank lines and `#` comments skipped.
    static func parse(_ text: String, path: String) throws(FileError) -> OperatorAccounts {
        var accounts: [String: Account] = [:]
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let at = "\(path):\(index + 1)"
            guard let colon = line.firstIndex(of: ":") else {
                throw FileError(description: "\(at): not NAME:pbkdf2-sha256$ROUNDS$SALT$HASH")
            }
            let name = String(line[..<colon])
            guard isName(name) else {
                throw FileError(
                    description:
                        "\(at): '\(TerminalText.escaped(name))' is not an operator name (letters, digits, . _ -)")
            }
            let parts = line[line.index(after: colon)...].split(separator: "$", omittingEmptySubsequences: false)
            guard parts.count == 4, parts[0] == "pbkdf2-sha256", let rounds = Int(parts[1]), rounds >= 210_000,
                let salt = Data(base64Encoded: String(parts[2])), salt.count >= 16,
                let hash = Data(base64Encoded: String(parts[3])), hash.count == 32
            else {
                throw FileError(
                    description:
                        "\(at): operator \(name)'s entry is not pbkdf2-sha256$ROUNDS$SALT$HASH (at least 210000 rounds; write it with scanadmin operators set)"
                )
            }
            guard accounts[name] == nil else { throw FileError(description: "\(at): operator \(name) is listed twice") }
            accounts[name] = Account(name: name, rounds: rounds, salt: Array(salt), hash: Array(hash))
        }
        guard !accounts.isEmpty else { throw FileError(description: "\(path): lists no operator") }
        return OperatorAccounts(accounts: accounts)
    }

    static func load(path: String) throws(FileError) -> OperatorAccounts {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FileError(description: "\(path): cannot read the file")
        }
        return try parse(String(decoding: data, as: UTF8.self), path: path)
    }

    static func derive(_ password: String, salt: [UInt8], rounds: Int) -> [UInt8] {
        let key = try? KDF.Insecure.PBKDF2.deriveKey(
            from: Array(password.utf8), salt: salt, using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: rounds)
        return key?.withUnsafeBytes { Array($0) } ?? []
    }

    /// A new account for `name` with a fresh salt.
    static func account(name: String, password: String, rounds: Int = Self.rounds) -> Account {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Account(name: name, rounds: rounds, salt: salt, hash: derive(password, salt: salt, rounds: rounds))
    }

    /// Whether `password` is `name`'s. An unknown name costs the same work as a known one.
    func verify(name: String, password: String) -> Bool {
        let account = accounts[name]
        let derived = Self.derive(
            password, salt: account?.salt ?? Array(repeating: 0, count: 16), rounds: account?.rounds ?? Self.rounds)
        guard let account else { return false }
        return constantTimeEqual(derived, account.hash)
    }
}

/// Signed-in operators: a random session id (the cookie) names the operator and the form token
/// every POST must carry. Sessions end after `idle` without a request or `lifetime` in all, or
/// on sign-out; they live in this process only (a restart signs everyone out). A name with
/// `maxFailures` wrong passwords within `lockout` is refused for `lockout`.
final class OperatorSessions: Sendable {
    struct Session: Sendable, Equatable {
        var id: String
        var name: String
        /// The token the desk's forms carry (a synchronizer token: a page on another site cannot
        /// read it, so it cannot forge the POST).
        var formToken: String
        var created: ContinuousClock.Instant
        var lastUsed: ContinuousClock.Instant
        /// What the last POST did, shown once on the next page.
        var notice: String?
    }

    let idle: Duration
    let lifetime: Duration
    let maxFailures = 5
    let lockout: Duration = .seconds(300)
    private let state = Mutex<(sessions: [String: Session], failures: [String: [ContinuousClock.Instant]])>(
        ([:], [:]))

    init(idle: Duration = .seconds(30 * 60), lifetime: Duration = .seconds(12 * 3600)) {
        self.idle = idle
        self.lifetime = lifetime
    }

    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// Whether `name` may try a password now (not locked out by recent failures).
    func mayTry(_ name: String, now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            let recent = (state.failures[name] ?? []).filter { now - $0 < lockout }
            state.failures[name] = recent
            return recent.count < maxFailures
        }
    }

    func failed(_ name: String, now: ContinuousClock.Instant = .now) {
        state.withLock { state in state.failures[name, default: []].append(now) }
    }

    func start(name: String, now: ContinuousClock.Instant = .now) -> Session {
        let session = Session(
            id: Self.randomToken(), name: name, formToken: Self.randomToken(), created: now, lastUsed: now)
        state.withLock { state in
            state.failures[name] = nil
            state.sessions = state.sessions.filter {
                now - $0.value.lastUsed < idle && now - $0.value.created < lifetime
            }
            state.sessions[session.id] = session
        }
        return session
    }

    /// The live session `id` names, its use recorded; nil: none, or it ended.
    func session(_ id: String, now: ContinuousClock.Instant = .now) -> Session? {
        state.withLock { state in
            guard var session = state.sessions[id] else { return nil }
            guard now - session.lastUsed < idle, now - session.created < lifetime else {
                state.sessions[id] = nil
                return nil
            }
            session.lastUsed = now
            state.sessions[id] = session
            return session
        }
    }

    /// Sets the notice the next page shows (nil: takes it).
    func setNotice(_ id: String, _ notice: String?) {
        state.withLock { state in state.sessions[id]?.notice = notice }
    }

    func takeNotice(_ id: String) -> String? {
        state.withLock { state in
            defer { state.sessions[id]?.notice = nil }
            return state.sessions[id]?.notice
        }
    }

    func end(_ id: String) { state.withLock { state in state.sessions[id] = nil } }
}
