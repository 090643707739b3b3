import ArgumentParser
import Foundation
import ScanCore
import ScanNATS
import ScanAgentConfig

/// `scanadmin agent VERB --camera C`: a command to one running agent, the reply printed as JSON.
struct AgentControlCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Send a command to a running agent and print its reply.",
        discussion: """
            Verbs: \(AgentCommand.verbs.joined(separator: ", ")). The request goes to \
            <prefix>.v1.cmd.<site>.<camera>.<verb>; the agent answers with one JSON object.

            snapshot writes the camera's latest frame with every tracked code's box drawn on it to --out \
            (JPEG, at most --max-width pixels wide; green read, red rejected by a rule, amber not confirmed \
            yet, magenta a no-read candidate) and prints the boxes (state, track, symbology, value, rule, \
            box in the frame's pixels).

            preview takes a viewer's lease (5 s, 640 pixels, 4 pictures a second): the agent then \
            publishes its annotated frame on <prefix>.v1.preview.<site>.<camera> until the lease ends. \
            The dashboard's live pages take and renew it themselves.

            Exit codes: 0 the agent said ok; 1 it refused (the reply says why), NATS cannot be \
            reached or --out cannot be written; 3 no agent answered; 64 bad usage.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The verb.") var verb: String
    @Option(help: "The camera's id.") var camera: String
    @Option(help: "The camera's site.") var site: String = "default"
    @Option(help: "Order id for session.start.") var orderId: String?
    @Option(
        help: ArgumentHelp(
            "For set-controls: a JSON object of exposureMicroseconds, gainDecibels, frameRate, focus, region, features.",
            valueName: "JSON"))
    var controls: String?
    @Option(help: ArgumentHelp("For snapshot: the JPEG file to write.", valueName: "FILE")) var out: String?
    @Option(help: "For snapshot: the picture's largest width in pixels (160 to 3840).")
    var maxWidth: Int?
    @Option(help: "Subject prefix.") var prefix: String = "scantrack"
    @Option(help: "Seconds to wait for the reply.") var timeout: Double = 5

    func validate() throws {
        guard AgentCommand.verbs.contains(verb) else {
            throw ValidationError("unknown verb '\(verb)'; known: \(AgentCommand.verbs.joined(separator: ", "))")
        }
        if orderId != nil && verb != "session.start" {
            throw ValidationError("--order-id goes with session.start only")
        }
        if let orderId, let problem = AgentCommand.orderIdProblem(orderId) {
            throw ValidationError("--order-id \(problem)")
        }
        if (controls != nil) != (verb == "set-controls") {
            throw ValidationError("set-controls takes --controls '{\"exposureMicroseconds\": 80}', and only it does")
        }
        if (out != nil) != (verb == "snapshot") {
            throw ValidationError("snapshot takes --out FILE.jpg, and only it does")
        }
        if let maxWidth {
            guard verb == "snapshot", AgentCommand.snapshotWidths.contains(maxWidth) else {
                throw ValidationError(
                    "--max-width goes with snapshot, from \(AgentCommand.snapshotWidths.lowerBound) to \(AgentCommand.snapshotWidths.upperBound)"
                )
            }
        }
        try checkSubjectFlags([("--camera", camera), ("--site", site)], prefix: prefix)
        guard timeout > 0 && timeout <= 3600 else {
            throw ValidationError("--timeout: from more than 0 to 3600 seconds")
        }
    }

    func run() throws {
        var body: [UInt8] = controls.map { Array($0.utf8) } ?? []
        if let orderId {
            var writer = JSONWriter()
            writer.field("orderId", orderId)
            body = writer.finished()
        }
        if let maxWidth {
            var writer = JSONWriter()
            writer.field("maxWidth", maxWidth)
            body = writer.finished()
        }
        let subject = try ContractSubjects(prefix: prefix).command(site: site, camera: camera, verb: verb)
        // NATS away is a failure (1); no agent answering is 3.
        let nats: NATSConnection
        do {
            nats = try connection.connectNATS()
        } catch {
            printError("scanadmin agent: cannot reach NATS at \(redactedURL(connection.natsURL)): \(error)")
            throw ExitCode.failure
        }
        let reply: NATSMessage
        do {
            reply = try nats.request(subject: subject, bytes: body, timeoutMilliseconds: Int64(timeout * 1000))
        } catch {
            printError("scanadmin agent: no reply on \(subject): \(error)")
            throw ExitCode(3)
        }
        // The agent's reply (a camera's strings in it) is written again with every control escaped;
        // what is not JSON is said, not printed.
        var parsed = try? JSONValue.parse(reply.bytes)
        if let out, parsed?["ok"] == .bool(true), case .object(var fields)? = parsed {
            guard let text = parsed?["jpeg"]?.stringValue, let jpeg = Base64.decode(text) else {
                printError("scanadmin agent: the snapshot reply holds no picture")
                throw ExitCode.failure
            }
            guard FileManager.default.createFile(atPath: out, contents: Data(jpeg)) else {
                printError("scanadmin agent: cannot write \(out)")
                throw ExitCode.failure
            }
            fields =
                fields.filter { $0.0 != "jpeg" } + [("out", .string(out)), ("jpegBytes", .number(Double(jpeg.count)))]
            parsed = .object(fields)
        }
        print(parsed?.terminalSafeLine() ?? "(not JSON, \(reply.bytes.count) bytes)")
        if parsed?["ok"] != .bool(true) { throw ExitCode.failure }
    }
}
