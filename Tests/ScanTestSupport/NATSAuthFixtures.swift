import Foundation

/// NKeys and a decentralised-auth (operator → account → user JWT) setup made in a test with
/// `openssl` alone (no nk or nsc here): Ed25519 keys from `openssl genpkey`, encoded as NATS
/// does (base32 of a type prefix, the 32-byte key and a CRC-16), and JWTs signed with
/// `openssl pkeyutl -rawin`.
public enum NATSAuthFixtures {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The first byte of an encoded key names its kind.
    public enum Kind: UInt8, Sendable {
        case `operator` = 112  // 14 << 3: 'O'
        case account = 0  // 'A'
        case user = 160  // 20 << 3: 'U'
    }

    /// One Ed25519 key pair: its DER file (for signing), its seed (`S…`) and public key, and a
    /// seed file holding both, one a line, as `nk -gen user -pubout` writes them.
    public struct KeyPair: Sendable {
        public let derFile: String
        public let seed: String
        public let publicKey: String
        public let seedFile: String
    }

    /// nats-server's config for users that log in with these NKeys.
    public static func nkeyServerConfig(_ users: [KeyPair]) -> String {
        "authorization { users = [ " + users.map { "{ nkey: \($0.publicKey) }" }.joined(separator: ", ") + " ] }\n"
    }

    public static func keyPair(_ kind: Kind, in folder: String, name: String) throws -> KeyPair {
        let der = "\(folder)/\(name).der"
        try openssl(["genpkey", "-algorithm", "ed25519", "-outform", "DER", "-out", der])
        let privateDER = try Data(contentsOf: URL(fileURLWithPath: der))
        let publicDER = try openssl(["pkey", "-inform", "DER", "-in", der, "-pubout", "-outform", "DER"])
        guard privateDER.count >= 32, publicDER.count >= 32 else {
            throw Failure(description: "openssl wrote no Ed25519 key to \(der)")
        }
        let seedPrefix: [UInt8] = [144 | (kind.rawValue >> 5), (kind.rawValue & 31) << 3]  // 18 << 3: 'S'
        let seed = encode(seedPrefix + Array(privateDER.suffix(32)))
        let publicKey = encode([kind.rawValue] + Array(publicDER.suffix(32)))
        let seedFile = "\(folder)/\(name).nk"
        try "\(seed)\n\(publicKey)\n".write(toFile: seedFile, atomically: true, encoding: .utf8)
        return KeyPair(derFile: der, seed: seed, publicKey: publicKey, seedFile: seedFile)
    }

    /// A JWT with `claims` (plus iss, iat and jti), signed by `issuer`.
    public static func jwt(issuer: KeyPair, subject: String, name: String, nats: [String: Any]) throws -> String {
        var claims: [String: Any] = [
            "iss": issuer.publicKey, "sub": subject, "name": name, "iat": Int(Date().timeIntervalSince1970),
            "nats": nats,
        ]
        claims["jti"] = UUID().uuidString.replacingOccurrences(of: "-", with: "")
        let header = base64URL(Data(#"{"typ":"JWT","alg":"ed25519-nkey"}"#.utf8))
        let body = base64URL(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
        let signed = header + "." + body
        let message = NSTemporaryDirectory() + UUID().uuidString + ".jwt-body"
        try signed.write(toFile: message, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: message) }
        let signature = try openssl([
            "pkeyutl", "-sign", "-inkey", issuer.derFile, "-keyform", "DER", "-rawin", "-in", message,
        ])
        return signed + "." + base64URL(signature)
    }

    /// An operator, its system account, an account with JetStream and a user in it: the server's config lines and
    /// the user's `.creds` file.
    public struct Operator {
        public let serverConfig: String
        public let credsFile: String
        public let user: KeyPair
    }

    /// Writes the operator's JWT and the user's `.creds` into `folder`; `permissions` (the user
    /// JWT's `pub`/`sub`) default to none, which allows everything.
    public static func operatorSetup(in folder: String, userPermissions: [String: Any] = [:]) throws -> Operator {
        let op = try keyPair(.operator, in: folder, name: "operator")
        let account = try keyPair(.account, in: folder, name: "account")
        let user = try keyPair(.user, in: folder, name: "user")
        let system = try keyPair(.account, in: folder, name: "system")
        let operatorJWT = try jwt(
            issuer: op, subject: op.publicKey, name: "scantrack-test", nats: ["type": "operator", "version": 2])
        let unlimited: [String: Any] = [
            "subs": -1, "conn": -1, "leaf": -1, "imports": -1, "exports": -1, "wildcards": true, "data": -1,
            "payload": -1, "mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1,
        ]
        let accountJWT = try jwt(
            issuer: op, subject: account.publicKey, name: "warehouse",
            nats: ["type": "account", "version": 2, "limits": unlimited])
        let systemJWT = try jwt(
            issuer: op, subject: system.publicKey, name: "SYS",
            nats: [
                "type": "account", "version": 2,
                "limits": unlimited.filter {
                    !$0.key.hasSuffix("storage") && $0.key != "streams" && $0.key != "consumer"
                },
            ])
        var userClaims: [String: Any] = ["type": "user", "version": 2, "subs": -1, "data": -1, "payload": -1]
        userClaims.merge(userPermissions) { _, new in new }
        let userJWT = try jwt(issuer: account, subject: user.publicKey, name: "camera", nats: userClaims)
        try operatorJWT.write(toFile: folder + "/operator.jwt", atomically: true, encoding: .utf8)
        let creds = folder + "/camera.creds"
        try """
        -----BEGIN NATS USER JWT-----
        \(userJWT)
        ------END NATS USER JWT------

        -----BEGIN USER NKEY SEED-----
        \(user.seed)
        ------END USER NKEY SEED------

        """.write(toFile: creds, atomically: true, encoding: .utf8)
        let config = """
            operator: "\(folder)/operator.jwt"
            system_account: \(system.publicKey)
            resolver: MEMORY
            resolver_preload: {
              \(account.publicKey): "\(accountJWT)"
              \(system.publicKey): "\(systemJWT)"
            }

            """
        return Operator(serverConfig: config, credsFile: creds, user: user)
    }

    /// RFC 4648 base32 without padding, of the bytes and their CRC-16 (little-endian).
    static func encode(_ bytes: [UInt8]) -> String {
        let crc = crc16(bytes)
        let all = bytes + [UInt8(crc & 0xff), UInt8(crc >> 8)]
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var text = ""
        var buffer = 0
        var bits = 0
        for byte in all {
            buffer = (buffer << 8) | Int(byte)
            bits += 8
            while bits >= 5 {
                text.append(alphabet[(buffer >> (bits - 5)) & 31])
                bits -= 5
            }
        }
        if bits > 0 { text.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return text
    }

    /// CRC-16/XMODEM (polynomial 0x1021, start 0), as NKeys check their encoding.
    static func crc16(_ bytes: [UInt8]) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        }
        return crc
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @discardableResult
    public static func openssl(_ arguments: [String]) throws -> Data {
        guard let openssl = ProcessRunner.which("openssl") else { throw Failure(description: "no openssl") }
        let result = try ProcessRunner.run(openssl, arguments)
        guard result.status == 0 else {
            throw Failure(description: "openssl \(arguments.first ?? ""): \(result.stderr)")
        }
        return Data(result.stdout)
    }
}
