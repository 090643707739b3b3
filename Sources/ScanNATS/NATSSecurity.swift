internal import CNATS
import ScanCore
import Foundation

/// How a program proves who it is to NATS and checks the server, beyond a user and password or a
/// token in the URL (`tls://user:password@host:4222`, `nats://token@host:4222`): a `.creds` file
/// (decentralised JWT auth), an NKey seed file, and TLS with a CA, and a client certificate for
/// mutual TLS. Files only: secrets never travel in argv, logs or heartbeats.
public struct NATSSecurity: Sendable, Equatable {
    /// A `.creds` file (the user's JWT and NKey seed).
    public var credsFile: String?
    /// A file with the user's NKey seed (`SU…`) and public key (`U…`), one a line, as
    /// `nk -gen user -pubout` writes them.
    public var nkeySeedFile: String?
    /// The CA that signed the server's certificate (TLS with server verification).
    public var caFile: String?
    /// The client certificate and key (mutual TLS).
    public var certFile: String?
    public var keyFile: String?
    /// Where replies to this program's requests arrive (JetStream acknowledgements among them):
    /// `PREFIX.<unique>.<n>` instead of `_INBOX.…`, so that a server may let each user subscribe
    /// to its own replies only (`_INBOX.dc1.cam-01.>`) and none read another's.
    public var inboxPrefix: String?
    /// A user name, and its password or a token from a file (a mounted secret), so that neither
    /// needs to be in the URL (and so in argv or a process listing).
    public var user: String?
    public var passwordFile: String?
    public var tokenFile: String?
    /// A password or token straight from the environment (SCANTRACK_NATS_PASSWORD, _TOKEN); never
    /// shown.
    public var password: String?
    public var token: String?

    public init(
        credsFile: String? = nil, nkeySeedFile: String? = nil, caFile: String? = nil, certFile: String? = nil,
        keyFile: String? = nil, inboxPrefix: String? = nil, user: String? = nil, passwordFile: String? = nil,
        tokenFile: String? = nil, password: String? = nil, token: String? = nil
    ) {
        self.credsFile = credsFile
        self.nkeySeedFile = nkeySeedFile
        self.caFile = caFile
        self.certFile = certFile
        self.keyFile = keyFile
        self.inboxPrefix = inboxPrefix
        self.user = user
        self.passwordFile = passwordFile
        self.tokenFile = tokenFile
        self.password = password
        self.token = token
    }

    /// The environment variables every program reads.
    public static let variables = (
        creds: "SCANTRACK_NATS_CREDS", nkey: "SCANTRACK_NATS_NKEY", ca: "SCANTRACK_NATS_CA",
        cert: "SCANTRACK_NATS_CERT", key: "SCANTRACK_NATS_KEY", inboxPrefix: "SCANTRACK_NATS_INBOX_PREFIX",
        user: "SCANTRACK_NATS_USER", passwordFile: "SCANTRACK_NATS_PASSWORD_FILE",
        tokenFile: "SCANTRACK_NATS_TOKEN_FILE",
        password: "SCANTRACK_NATS_PASSWORD", token: "SCANTRACK_NATS_TOKEN"
    )

    /// The nats CLI's own variables, read where the ScanTrack one is not set: a machine set up for
    /// `nats` (NATS_URL and these) needs nothing more for ScanTrack's programs.
    public static let natsCLIVariables = (
        creds: "NATS_CREDS", nkey: "NATS_NKEY", ca: "NATS_CA", cert: "NATS_CERT", key: "NATS_KEY",
        user: "NATS_USER", password: "NATS_PASSWORD"
    )

    /// From SCANTRACK_NATS_CREDS, _NKEY, _CA, _CERT, _KEY, _INBOX_PREFIX, _USER, _PASSWORD(_FILE) and
    /// _TOKEN(_FILE), else the nats CLI's NATS_CREDS, NATS_NKEY, NATS_CA, NATS_CERT, NATS_KEY,
    /// NATS_USER and NATS_PASSWORD (empty ones ignored), of the environment a program hands over
    /// (the adapter reads none of its own).
    public static func fromEnvironment(_ environment: [String: String]) -> NATSSecurity {
        func value(_ name: String, or cli: String? = nil) -> String? {
            for variable in [name] + (cli.map { [$0] } ?? []) {
                if let value = environment[variable], !value.isEmpty { return value }
            }
            return nil
        }
        let cli = natsCLIVariables
        return NATSSecurity(
            credsFile: value(variables.creds, or: cli.creds), nkeySeedFile: value(variables.nkey, or: cli.nkey),
            caFile: value(variables.ca, or: cli.ca), certFile: value(variables.cert, or: cli.cert),
            keyFile: value(variables.key, or: cli.key), inboxPrefix: value(variables.inboxPrefix),
            user: value(variables.user, or: cli.user), passwordFile: value(variables.passwordFile),
            tokenFile: value(variables.tokenFile), password: value(variables.password, or: cli.password),
            token: value(variables.token))
    }

    /// These settings with `other`'s where it has one (a config file's over the environment's).
    public func overridden(by other: NATSSecurity) -> NATSSecurity {
        NATSSecurity(
            credsFile: other.credsFile ?? credsFile, nkeySeedFile: other.nkeySeedFile ?? nkeySeedFile,
            caFile: other.caFile ?? caFile, certFile: other.certFile ?? certFile, keyFile: other.keyFile ?? keyFile,
            inboxPrefix: other.inboxPrefix ?? inboxPrefix, user: other.user ?? user,
            passwordFile: other.passwordFile ?? passwordFile, tokenFile: other.tokenFile ?? tokenFile,
            password: other.password ?? password, token: other.token ?? token)
    }

    var usesTLS: Bool { caFile != nil || certFile != nil || keyFile != nil }

    /// Sets these on cnats options; `url` (already redacted) names the connection in errors.
    /// Whether the login signs the server's nonce (an NKey seed or a `.creds` file).
    var signsNonce: Bool { nkeySeedFile != nil || credsFile != nil }

    func apply(to options: OpaquePointer, url: String) throws(NATSError) {
        if usesTLS || url.lowercased().hasPrefix("tls://") {
            try NATSError.check("natsOptions_SetSecure", url, natsOptions_SetSecure(options, true))
        }
        if let caFile {
            try NATSError.check(
                "natsOptions_LoadCATrustedCertificates", caFile, natsOptions_LoadCATrustedCertificates(options, caFile))
        }
        switch (certFile, keyFile) {
        case (let cert?, let key?):
            try NATSError.check(
                "natsOptions_LoadCertificatesChain", cert, natsOptions_LoadCertificatesChain(options, cert, key))
        case (nil, nil): break
        default:
            throw NATSError(
                function: "client certificate", input: certFile ?? keyFile ?? "",
                message:
                    "\(Self.variables.cert) and \(Self.variables.key) (or nats.tls.cert and nats.tls.key) go together")
        }
        if let credsFile {
            try NATSError.check(
                "natsOptions_SetUserCredentialsFromFiles", credsFile,
                natsOptions_SetUserCredentialsFromFiles(options, credsFile, nil))
        }
        if let inboxPrefix {
            guard SubjectToken.isValidSubject(inboxPrefix) else {
                throw NATSError(
                    function: "inbox prefix", input: TerminalText.escaped(inboxPrefix),
                    message: "not a subject of tokens (letters, digits, '-' and '_') separated by dots")
            }
            try NATSError.check(
                "natsOptions_SetCustomInboxPrefix", inboxPrefix, natsOptions_SetCustomInboxPrefix(options, inboxPrefix))
        }
        if let user {
            guard
                let secret = try passwordFile.map({ path throws(NATSError) in try Self.secret(path, "password") })
                    ?? password
            else {
                throw NATSError(
                    function: "NATS user", input: user,
                    message: "a user needs its password: \(Self.variables.passwordFile) (or nats.passwordFile)")
            }
            try NATSError.check("natsOptions_SetUserInfo", user, natsOptions_SetUserInfo(options, user, secret))
        }
        if let secret = try tokenFile.map({ path throws(NATSError) in try Self.secret(path, "token") }) ?? token {
            try NATSError.check("natsOptions_SetToken", url, natsOptions_SetToken(options, secret))
        }
        if let nkeySeedFile {
            let publicKey = try Self.nkeyPublicKey(nkeySeedFile)
            try NATSError.check(
                "natsOptions_SetNKeyFromSeed", nkeySeedFile,
                natsOptions_SetNKeyFromSeed(options, publicKey, nkeySeedFile))
        }
    }

    /// The first line of a secret file (a password or token); the file is named in errors, its
    /// content never.
    static func secret(_ path: String, _ what: String) throws(NATSError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw NATSError(function: "read \(what) file", input: path, message: "cannot read the file")
        }
        guard let line = SecretText.firstLine(data) else {
            throw NATSError(function: "read \(what) file", input: path, message: "the file is empty")
        }
        return line
    }

    /// The public key (`U…`, 56 characters) in an NKey seed file.
    static func nkeyPublicKey(_ path: String) throws(NATSError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw NATSError(function: "read NKey seed file", input: path, message: "cannot read the file")
        }
        let lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard lines.contains(where: { $0.hasPrefix("SU") }) else {
            throw NATSError(function: "read NKey seed file", input: path, message: "no user seed (a line starting SU)")
        }
        guard let key = lines.first(where: { $0.hasPrefix("U") && $0.count == 56 }) else {
            throw NATSError(
                function: "read NKey seed file", input: path,
                message:
                    "the file must also hold the user's public key (a line starting U; nk -gen user -pubout writes both)"
            )
        }
        return key
    }
}
