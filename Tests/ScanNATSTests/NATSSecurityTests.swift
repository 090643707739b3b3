import Foundation
import ScanTestSupport
import Testing

@testable import ScanNATS

/// NATS authentication and TLS against real nats-server processes of the test's own, started with
/// users, a token, and TLS certificates made here with openssl.
@Suite("NATS authentication and TLS", .enabled(if: TestEnvironment.natsEnabled))
struct NATSSecurityTests {
    typealias Server = NATSServerProcess

    static func roundTrip(_ connection: NATSConnection) throws -> Bool {
        let subscription = try connection.subscribe(subject: "check.security")
        try connection.flush()
        try connection.publish(subject: "check.security", bytes: Array("hello".utf8))
        return try subscription.next(timeoutMilliseconds: 2_000)?.bytes == Array("hello".utf8)
    }

    static func once() -> NATSConnection.Options {
        var options = NATSConnection.Options()
        options.security = NATSSecurity()
        options.reconnectForever = false
        return options
    }

    @Test(
        "user and password or a token in the URL: accepted; a wrong one is an authorization error, at once, without the secret"
    )
    func userPasswordAndToken() throws {
        let users = try Server(["--user", "camera01", "--pass", "s3cret-pass"])
        defer { users.stop() }
        let connected = try NATSConnection(
            url: "nats://camera01:s3cret-pass@127.0.0.1:\(users.port)", options: Self.once())
        #expect(try Self.roundTrip(connected))
        let started = Date()
        do {
            _ = try NATSConnection(url: "nats://camera01:wrong-pass@127.0.0.1:\(users.port)", options: Self.once())
            Issue.record("a wrong password was accepted")
        } catch {
            #expect(error.code == .authorization, "\(error)")
            #expect(!error.description.contains("wrong-pass"), "\(error)")
            #expect(error.description.contains("Authorization Violation"), "\(error)")
        }
        #expect(Date().timeIntervalSince(started) < 5, "refused, not retried")

        let tokens = try Server(["--auth", "t0ken-abc"])
        defer { tokens.stop() }
        #expect(
            try Self.roundTrip(
                try NATSConnection(url: "nats://t0ken-abc@127.0.0.1:\(tokens.port)", options: Self.once())))
        #expect(throws: NATSError.self) {
            try NATSConnection(url: "nats://127.0.0.1:\(tokens.port)", options: Self.once())
        }
    }

    @Test("TLS: the server verified against a CA, and mutual TLS with a client certificate; without them no connection")
    func mutualTLS() throws {
        let folder = NSTemporaryDirectory() + TestEnvironment.uniqueName("natstls")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let openssl = try #require(ProcessRunner.which("openssl"))
        func run(_ arguments: [String]) throws {
            let result = try ProcessRunner.run(openssl, arguments)
            #expect(result.status == 0, "openssl \(arguments.first ?? ""): \(result.stderr)")
        }
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(
            toFile: folder + "/san.ext", atomically: true, encoding: .utf8)
        try run([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", folder + "/ca.key", "-out", folder + "/ca.pem",
            "-days", "2", "-subj", "/CN=ScanTrack test CA",
        ])
        for (name, extra) in [("server", ["-extfile", folder + "/san.ext"]), ("client", [])] {
            try run([
                "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(folder)/\(name).key", "-out",
                "\(folder)/\(name).csr",
                "-subj", "/CN=\(name)",
            ])
            try run(
                [
                    "x509", "-req", "-in", "\(folder)/\(name).csr", "-CA", folder + "/ca.pem", "-CAkey",
                    folder + "/ca.key",
                    "-CAcreateserial", "-out", "\(folder)/\(name).pem", "-days", "2",
                ] + extra)
        }
        let server = try Server([
            "--tls", "--tlscert", folder + "/server.pem", "--tlskey", folder + "/server.key", "--tlscacert",
            folder + "/ca.pem", "--tlsverify",
        ])
        defer { server.stop() }
        let url = "tls://127.0.0.1:\(server.port)"
        var options = Self.once()
        options.security = NATSSecurity.fromEnvironment([
            "SCANTRACK_NATS_CA": folder + "/ca.pem", "SCANTRACK_NATS_CERT": folder + "/client.pem",
            "SCANTRACK_NATS_KEY": folder + "/client.key",
        ])
        #expect(try Self.roundTrip(try NATSConnection(url: url, options: options)))
        var noClientCertificate = Self.once()
        noClientCertificate.security = NATSSecurity(caFile: folder + "/ca.pem")
        #expect(throws: NATSError.self) { try NATSConnection(url: url, options: noClientCertificate) }
        var unknownServer = Self.once()
        unknownServer.security = NATSSecurity(certFile: folder + "/client.pem", keyFile: folder + "/client.key")
        #expect(throws: NATSError.self) { try NATSConnection(url: url, options: unknownServer) }
        var halfPair = Self.once()
        halfPair.security = NATSSecurity(caFile: folder + "/ca.pem", certFile: folder + "/client.pem")
        #expect(throws: NATSError.self) { try NATSConnection(url: url, options: halfPair) }
    }

    @Test("an NKey seed file must hold the public key too; its errors name the file, never the seed")
    func nkeySeedFile() throws {
        let folder = NSTemporaryDirectory() + TestEnvironment.uniqueName("nkey")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let seedOnly = folder + "/seed-only.nk"
        try "SUAEXAMPLESEEDNOTREAL\n".write(toFile: seedOnly, atomically: true, encoding: .utf8)
        do {
            _ = try NATSSecurity.nkeyPublicKey(seedOnly)
            Issue.record("a seed without its public key was accepted")
        } catch {
            #expect(error.description.contains(seedOnly) && error.description.contains("nk -gen user -pubout"))
            #expect(!error.description.contains("SUAEXAMPLE"))
        }
        let both = folder + "/both.nk"
        let publicKey = "U" + String(repeating: "A", count: 55)
        try "SUAEXAMPLESEEDNOTREAL\n\(publicKey)\n".write(toFile: both, atomically: true, encoding: .utf8)
        #expect(try NATSSecurity.nkeyPublicKey(both) == publicKey)
        #expect(throws: NATSError.self) { try NATSSecurity.nkeyPublicKey(folder + "/missing.nk") }
        #expect(
            NATSSecurity.fromEnvironment(["SCANTRACK_NATS_CREDS": "/etc/scantrack/cam.creds", "SCANTRACK_NATS_CA": ""])
                == NATSSecurity(credsFile: "/etc/scantrack/cam.creds"))
    }
}
