import Foundation

/// A CA and a server and a client certificate signed by it, made with `openssl` for one test:
/// the server's names are 127.0.0.1 and localhost (what `verify-full` and TLS clients check).
public struct TestCertificates {
    public let folder: String
    public var ca: String { folder + "/ca.pem" }
    public var serverCert: String { folder + "/server.pem" }
    public var serverKey: String { folder + "/server.key" }
    public var clientCert: String { folder + "/client.pem" }
    public var clientKey: String { folder + "/client.key" }

    /// Makes them in `folder` (created); `clientName` is the client certificate's CN (PostgreSQL
    /// maps it to a role with `clientcert=verify-full`).
    public init(in folder: String, clientName: String = "client") throws {
        self.folder = folder
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(
            toFile: folder + "/san.ext", atomically: true, encoding: .utf8)
        try NATSAuthFixtures.openssl([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", folder + "/ca.key", "-out", ca,
            "-days", "2", "-subj", "/CN=ScanTrack test CA",
        ])
        for (name, commonName, extra) in [
            ("server", "localhost", ["-extfile", folder + "/san.ext"]), ("client", clientName, []),
        ] {
            try NATSAuthFixtures.openssl([
                "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(folder)/\(name).key", "-out",
                "\(folder)/\(name).csr", "-subj", "/CN=\(commonName)",
            ])
            try NATSAuthFixtures.openssl(
                [
                    "x509", "-req", "-in", "\(folder)/\(name).csr", "-CA", ca, "-CAkey", folder + "/ca.key",
                    "-CAcreateserial", "-out", "\(folder)/\(name).pem", "-days", "2",
                ] + extra)
        }
        // Private keys readable by their owner only (PostgreSQL refuses a key others can read).
        for key in [serverKey, clientKey] {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        }
    }

    /// nats-server's arguments for TLS with these, client certificates required.
    public var natsServerArguments: [String] {
        ["--tls", "--tlscert", serverCert, "--tlskey", serverKey, "--tlscacert", ca, "--tlsverify"]
    }
}
