import Foundation

/// A nats-server of a test's own, with extra arguments (users, a token, TLS), on a random
/// loopback port or a given one (a server started again where clients reconnect); `stop` ends it.
/// A JetStream server given no store folder (`-sd`) gets one of its own, removed when it stops:
/// nats-server's default, `$TMPDIR/nats/jetstream`, would be shared by every server the suite
/// runs at once, each recovering (and writing beside) the others' streams.
/// A JetStream server given no config file (`-c`) gets one that sets only its store limit (1 TB,
/// as scripts/servers.sh does): the default, 75 % of the disk free at its start, can be less than
/// the images bucket's 20 GiB reservation on a busy disk, and streams would be refused by the day.
public final class NATSServerProcess {
    public let process: Process
    public let port: String
    public let log: String
    /// The store folder made for this server, if it was given none.
    let ownStore: String?

    public struct NotStarted: Error, CustomStringConvertible {
        public var description: String
    }

    public init(_ arguments: [String], environment: [String: String] = [:], port wanted: String = "-1") throws {
        guard let server = ProcessRunner.which("nats-server") else { throw NotStarted(description: "no nats-server") }
        log = NSTemporaryDirectory() + TestEnvironment.uniqueName("natsproc") + ".log"
        let jetStream = arguments.contains("-js") || arguments.contains("--jetstream")
        let storeGiven = arguments.contains("-sd") || arguments.contains("--store_dir")
        ownStore = jetStream && !storeGiven ? log + ".js" : nil
        var limits: [String] = []
        if jetStream && !arguments.contains("-c") && !arguments.contains("--config") {
            let file = log + ".limits.conf"
            try "jetstream { max_file_store: 1TB }\n".write(toFile: file, atomically: true, encoding: .utf8)
            limits = ["-c", file]
        }
        process = try ProcessRunner.start(
            server,
            limits + arguments + ["-a", "127.0.0.1", "-p", wanted, "-l", log] + (ownStore.map { ["-sd", $0] } ?? []),
            environment: environment,
            log: log + ".err")
        var found: String?
        // Up to a minute: so long that only a server that cannot start misses it (a busy machine
        // may take seconds).
        for _ in 0..<1_200 where found == nil {
            usleep(50_000)
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: {
                $0.contains("Listening for client connections on")
            }) {
                found = line.split(separator: ":").last.map { String($0).trimmingCharacters(in: .whitespaces) }
            }
        }
        guard let found else {
            process.terminate()
            if let ownStore { try? FileManager.default.removeItem(atPath: ownStore) }
            throw NotStarted(
                description:
                    "nats-server did not start: \((try? String(contentsOfFile: log + ".err", encoding: .utf8)) ?? "")"
                    + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? ""))
        }
        port = found
    }

    public func stop() {
        process.terminate()
        process.waitUntilExit()
        if let ownStore { try? FileManager.default.removeItem(atPath: ownStore) }
    }

    deinit { if process.isRunning { stop() } }
}
