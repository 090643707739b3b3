import ArgumentParser
import Foundation
import ScanCore
import ScanNATS
import ScanReconciliation

/// `scanadmin nats config | consumers`: the bus's authorization generated from the topology and
/// a logins file (docs/security.md, "Least privilege on the bus, generated").
struct NATSCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nats",
        abstract: "Generate nats-server's least-privilege authorization from the topology and a logins file.",
        discussion: """
            Logins file format: docs/security.md. Exit codes: 0 done, 1 NATS failure, 2 bad file (every problem \
            by JSON path), 64 bad usage.
            """,
        subcommands: [Config.self, Consumers.self])

    struct Files: ParsableArguments {
        @Option(help: "Topology JSON file (docs/topology.md).") var topology: String
        @Option(help: "Logins JSON file (docs/security.md).") var logins: String
        @Option(help: "Subject prefix.") var prefix: String = "scantrack"
        @Option(
            name: .customLong("camera-stream-mib"),
            help: "The aggregator's --camera-stream-mib (each camera's own stream), for the account's disk cap.")
        var cameraStreamMiB: Int = Int(ContractSubjects.cameraStreamBytes >> 20)
        @Option(
            name: .customLong("images-gib"),
            help: "The aggregator's --images-max-gib (the images bucket), for the account's disk cap.")
        var imagesGiB: Int = Int(ContractSubjects.imagesStreamBytes >> 30)

        func validate() throws {
            guard SubjectToken.isValidSubject(prefix) else {
                throw ValidationError("--prefix: '\(TerminalText.escaped(prefix))' is not a subject prefix")
            }
            guard (8...65_536).contains(cameraStreamMiB) else {
                throw ValidationError("--camera-stream-mib must be 8 to 65536 (MiB), not \(cameraStreamMiB)")
            }
            guard (1...100_000).contains(imagesGiB) else {
                throw ValidationError("--images-gib must be 1 to 100000 (GiB), not \(imagesGiB)")
            }
        }

        func authorization(command: String) throws -> NATSAuthorization {
            do {
                let topology = try Topology.parse(
                    try readInputFile(self.topology, command: command), file: self.topology)
                let logins = try NATSLogins.parse(
                    try readInputFile(self.logins, command: command), file: self.logins, topology: topology)
                var authorization = NATSAuthorization(
                    logins: logins, topology: topology, subjects: ContractSubjects(prefix: prefix))
                authorization.cameraStreamBytes = Int64(cameraStreamMiB) << 20
                authorization.imagesBytes = Int64(imagesGiB) << 30
                return authorization
            } catch let error as ConfigErrors {
                printError("scanadmin \(command): \(error)")
                throw ExitCode(2)
            }
        }
    }

    struct Config: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print (or write) nats-server's configuration: one permission block a login.")
        @OptionGroup var files: Files
        @Option(help: "Write the configuration to this file (mode 0644) instead of printing it.") var out: String?

        func run() throws {
            let authorization = try files.authorization(command: "nats config")
            var command = "scanadmin nats config --topology \(files.topology) --logins \(files.logins)"
            if files.prefix != "scantrack" { command += " --prefix \(files.prefix)" }
            let text = authorization.serverConfig(generatedBy: TerminalText.escaped(command))
            guard let out else {
                print(text, terminator: "")
                return
            }
            do {
                try text.write(toFile: out, atomically: true, encoding: .utf8)
            } catch {
                printError("scanadmin nats config: cannot write \(out): \(error)")
                throw ExitCode(1)
            }
            print("wrote \(out): \(authorization.logins.logins.count) login(s)")
        }
    }

    struct Consumers: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create (or update) the durable consumers the logins read and may not create themselves.")
        @OptionGroup var files: Files
        @OptionGroup var connection: ConnectionOptions

        func run() throws {
            let authorization = try files.authorization(command: "nats consumers")
            do {
                let jetStream = try connection.connectNATS().jetStream()
                let subjects = authorization.subjects
                try jetStream.ensureStream(subjects.resultsStreamSpec(replicas: nil))
                for consumer in authorization.consumers {
                    try jetStream.ensureConsumer(
                        stream: consumer.stream, filter: consumer.filter,
                        consumer: ConsumerSpec(durable: consumer.durable))
                    print("\(consumer.stream)/\(consumer.durable) on \(consumer.filter)")
                }
            } catch {
                printError("scanadmin nats consumers: \(error)")
                throw ExitCode(1)
            }
        }
    }
}
