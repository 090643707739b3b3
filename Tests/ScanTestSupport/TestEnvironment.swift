import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where the tests find the repo, the shared corpus and the servers that `make test` starts.
///
/// Servers come from `SCANTRACK_NATS` and `SCANTRACK_PG`. Integration suites are enabled when
/// those are set, and always under CI (`CI=true`), where a missing server is then a failure.
public enum TestEnvironment {
    public static let repoRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // Tests/ScanTestSupport/TestEnvironment.swift
        return url.path
    }()

    private static var environment: [String: String] { ProcessInfo.processInfo.environment }

    public static var isCI: Bool { environment["CI"].map { $0 == "true" || $0 == "1" } ?? false }

    public static var corpusRoot: String { environment["SCANTRACK_CORPUS"] ?? repoRoot + "/../shared/corpus" }

    /// Grayscale PGM copies of the corpus images, made once by `scripts/corpus-gray.sh`.
    public static var grayCorpusRoot: String { repoRoot + "/.cache/corpus-gray" }

    public static var natsURL: String? { nonEmpty("SCANTRACK_NATS") }
    public static var postgresDSN: String? { nonEmpty("SCANTRACK_PG") }

    public static var natsEnabled: Bool { natsURL != nil || isCI }
    public static var postgresEnabled: Bool { postgresDSN != nil || isCI }

    public struct MissingServer: Error, CustomStringConvertible {
        public var variable: String
        public var description: String {
            "\(variable) is not set: run the tests with `make test`, which starts the servers"
        }
    }

    public static func requireNATS() throws -> String {
        guard let natsURL else { throw MissingServer(variable: "SCANTRACK_NATS") }
        return natsURL
    }

    /// The CA of the local PostgreSQL's TLS certificate (scripts/servers.sh writes it): members of
    /// `scantrack_tls_login` log in there with a password over TLS only.
    public static func requirePostgresCA() throws -> String {
        guard let ca = nonEmpty("SCANTRACK_PG_CA") else { throw MissingServer(variable: "SCANTRACK_PG_CA") }
        return ca
    }

    public static func requirePostgres() throws -> String {
        guard let postgresDSN else { throw MissingServer(variable: "SCANTRACK_PG") }
        return postgresDSN
    }

    /// Where SwiftPM put the built executables (beside the test bundle).
    public static var productsDirectory: String {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = bundle.deletingLastPathComponent()
        if directory.path.hasSuffix(".xctest/Contents/MacOS") {
            directory = directory.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        }
        return directory.path
    }

    /// A name no other test run uses, for streams, consumers, tables and databases.
    public static func uniqueName(_ prefix: String) -> String {
        let random = UInt64.random(in: 0..<UInt64.max)
        return prefix + "_" + String(random, radix: 36)
    }

    /// A new directory in this process's temporary folder, named `<prefix>_<unique>`; the caller
    /// removes it (what it leaves goes when the process exits).
    /// The folder every temporary folder of this test process sits in, removed when the process
    /// exits: a test that does not remove its own (a rendered clip's folder) leaves nothing behind.
    static let processFolder: String = {
        let path = NSTemporaryDirectory() + uniqueName("scantrack-tests")
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: TestEnvironment.processFolder) }
        return path
    }()

    public static func temporaryDirectory(_ prefix: String = "scantrack-test") throws -> String {
        let path = processFolder + "/" + uniqueName(prefix)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private static func nonEmpty(_ key: String) -> String? {
        guard let value = environment[key], !value.isEmpty else { return nil }
        return value
    }
}

extension TestEnvironment {
    /// No free port could be had from the kernel.
    public struct NoFreePort: Error {}

    /// A loopback port nobody listens on now (the kernel's pick for port 0).
    public static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else { throw NoFreePort() }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// The status and body of one GET (status 0: nothing answered within 10 s).
    public static func httpGet(_ url: String) -> (status: Int, body: String) {
        let (status, bytes) = httpGetBytes(url)
        return (status, String(decoding: bytes, as: UTF8.self))
    }

    /// `httpGet`'s answer as bytes (a picture).
    public static func httpGetBytes(_ url: String) -> (status: Int, body: [UInt8]) {
        final class Box: @unchecked Sendable { var value: (Int, [UInt8]) = (0, []) }
        let box = Box()
        guard let target = URL(string: url) else { return (0, []) }
        let done = DispatchSemaphore(value: 0)
        var request = URLRequest(url: target)
        request.timeoutInterval = 5
        URLSession.shared.dataTask(with: request) { data, response, _ in
            box.value = ((response as? HTTPURLResponse)?.statusCode ?? 0, [UInt8](data ?? Data()))
            done.signal()
        }.resume()
        _ = done.wait(timeout: .now() + 10)
        return box.value
    }
}
