import ArgumentParser
import Foundation
import ScanCore
import ScanNATS
import ScanEvents

/// `scanadmin tail`: live events from NATS (sightings, sessions, tracks, heartbeats) until
/// interrupted, or until --count events or --seconds pass.
struct TailCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Print live agent and aggregator events from NATS until interrupted.",
        discussion: """
            Subscribes to <prefix>.v1.<family>.<site>.<camera> (core NATS: what is published from \
            now on). --type takes a family (sighting, session, track, noread, status; item and pack from \
            the aggregator, whose last token is the lane or station, matched by --camera) or an \
            event type (track.added, session.completed …). Text output is one line an event; --format json \
            prints each event's JSON unchanged, one a line.

            Exit codes: 0 done (count reached, time up or interrupted), 1 NATS unreachable, 64 bad usage.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Subject prefix.") var prefix: String = "scantrack"
    @Option(help: "Only this site.") var site: String?
    @Option(help: "Only this camera.") var camera: String?
    @Option(help: "Only this family or event type.") var type: String?
    @Option(help: "text or json.") var format: String = "text"
    @Option(help: "Stop after this many events.") var count: Int?
    @Option(help: "Stop after this many seconds.") var seconds: Double?

    /// What it can follow: the agents' families, decisions, measurements and belt speeds (whose
    /// last subject token is the lane: `--camera` then names a lane), and the aggregator's results.
    static let families = (SubjectFamily.agent + [.decision, .measure, .belt] + SubjectFamily.resultsStream).map(
        \.rawValue)

    func validate() throws {
        if let type {
            let family = String(type.split(separator: ".").first ?? "")
            guard Self.families.contains(family) else {
                throw ValidationError(
                    "--type '\(type)': use a family (\(Self.families.joined(separator: ", "))) or an event type such as track.added"
                )
            }
        }
        guard ["text", "json"].contains(format) else { throw ValidationError("--format '\(format)': use text or json") }
        try checkSubjectFlags([("--site", site), ("--camera", camera)], prefix: prefix)
    }

    var subject: String {
        get throws {
            try ContractSubjects(prefix: prefix).watch(
                family: type.map { String($0.split(separator: ".")[0]) }, site: site, camera: camera)
        }
    }

    func run() throws {
        let nats: NATSConnection
        let subscription: NATSSubscription
        do {
            nats = try connection.connectNATS()
            subscription = try nats.subscribe(subject: try subject)
            // A round trip to the server: once it returns, the server routes every later event here.
            try nats.flush()
        } catch {
            printError("scanadmin tail: \(error)")
            throw ExitCode.failure
        }
        // On standard error, so that the events on standard output stay one per line; a script
        // (or a test) that publishes after reading it knows nothing will be missed.
        printError("scanadmin tail: watching \(TerminalText.escaped((try? subject) ?? "?"))")
        let deadline = seconds.map { Date(timeIntervalSinceNow: $0) }
        var printed = 0
        while count.map({ printed < $0 }) ?? true {
            if let deadline, Date() >= deadline { break }
            guard let message = try? subscription.next(timeoutMilliseconds: 200) else { continue }
            let bytes = message.bytes
            let event = try? JSONValue.parse(bytes)
            if let type, type.contains("."), event?["type"]?.stringValue != type { continue }
            // One write a line, unbuffered: a pipe (grep, a log file) sees each event as it comes.
            let text =
                format == "json"
                ? Self.jsonLine(event, bytes: bytes.count) : Self.line(subject: message.subject, event: event)
            FileHandle.standardOutput.write(Data((text + "\n").utf8))
            printed += 1
        }
    }

    /// An event for `--format json`: parsed and written again on one line with every control
    /// escaped, so that what a sender put in a string cannot act on the terminal; what is not JSON
    /// is said, not printed.
    static func jsonLine(_ event: JSONValue?, bytes: Int) -> String {
        event?.terminalSafeLine() ?? "(not JSON, \(bytes) bytes)"
    }

    /// `08:00:01.250 dc1/cam-07 sighting EAN-13 4006381333931 accepted cam-07-x-3`.
    static func line(subject: String, event: JSONValue?) -> String {
        guard let event, case .object = event else { return "\(TerminalText.escaped(subject)) (not a JSON object)" }
        let time = event["time"]?.stringValue.map { String($0.dropFirst(11).prefix(12)) } ?? "?"
        let type = event["type"]?.stringValue ?? "?"
        let placeKey =
            [
                "item": "lane", "parcelpass": "lane", "decision": "lane", "measure": "lane", "belt": "lane",
                "pack": "station",
            ][type]
            ?? "camera"
        let place = event[placeKey]?.stringValue ?? "?"
        let who = "\(event["site"]?.stringValue ?? "?")/\(place)"
        var parts = [time, who, type]
        switch type {
        case "item":
            guard let pass = try? ItemPassEvent.parse(event) else {
                parts.append("(not a valid item result)")
                break
            }
            parts += [
                pass.symbology, pass.value, "cameras=\(pass.cameras.count)/\(pass.camerasExpected)",
                "rev=\(pass.revision)", pass.itemId,
            ]
        case "pack":
            guard let pack = try? PackRecordEvent.parse(event) else {
                parts.append("(not a valid pack record)")
                break
            }
            parts += [pack.orderId ?? "(no order)", pack.verdict.rawValue, "items=\(pack.items)", pack.sessionId]
        case "status":
            let fps = event["fpsProcessed"]?.doubleValue.map { String(format: "%.1f", $0) } ?? "?"
            parts += [
                "fps=\(fps)", "dropped=\(event["framesDropped"]?.intValue ?? 0)",
                "tracks=\(event["liveTracks"]?.intValue ?? 0)",
                "spool=\(event["spool"]?["depth"]?.intValue ?? 0)", "nats=\(event["nats"]?.stringValue ?? "?")",
                "rules=\(event["rules"]?["revision"]?.stringValue ?? "?")",
            ]
        case "parcel":
            guard let parcel = try? ParcelEvent.parse(event) else {
                parts.append("(not a valid parcel)")
                break
            }
            let state = parcel.noRead ? "no-read" : parcel.complete ? "complete" : "incomplete"
            parts += [state, "codes=" + parcel.codes.map(\.value).joined(separator: ",")]
            if !parcel.missing.isEmpty { parts.append("missing=" + parcel.missing.joined(separator: ",")) }
            parts.append(parcel.parcelId)
        case "parcelpass":
            guard let pass = try? ParcelPassEvent.parse(event) else {
                parts.append("(not a valid parcel pass)")
                break
            }
            let state = pass.noRead ? "no-read" : pass.complete ? "complete" : "incomplete"
            parts += [
                state, "codes=" + pass.codes.map(\.value).joined(separator: ","),
                "cameras=\(pass.cameras.count)/\(pass.camerasExpected)", "rev=\(pass.revision)", pass.passId,
            ]
            if let measurement = pass.measurement { parts.append(Self.measured(measurement)) }
        case "decision":
            guard let decision = try? DecisionEvent.parse(event) else {
                parts.append("(not a valid decision)")
                break
            }
            parts.append(decision.action.rawValue)
            if !decision.reasons.isEmpty { parts.append(decision.reasons.map(\.rawValue).joined(separator: ",")) }
            if decision.late { parts.append("LATE") }
            parts.append(decision.parcelId)
        case "measure":
            guard let measurement = try? MeasureEvent.parse(event) else {
                parts.append("(not a valid measurement)")
                break
            }
            parts += [measurement.device, Self.measured(measurement)]
        case "belt":
            let speed = event["speed"]?.doubleValue.map { String(format: "%.2f m/s", $0) }
            parts.append(speed ?? event["pulses"]?.intValue.map { "pulses=\($0)" } ?? "")
        case "reading.paused", "reading.resumed":
            parts += [event["reason"]?.stringValue ?? "", event["detail"]?.stringValue ?? ""]
        case let kind where kind.hasPrefix("session."):
            parts += [
                event["sessionId"]?.stringValue ?? "",
                event["reason"]?.stringValue ?? event["orderId"]?.stringValue ?? "",
            ]
            if let codes = event["codes"], case .array(let list) = codes { parts.append("codes=\(list.count)") }
        default:
            parts += [
                event["symbology"]?.stringValue ?? "", event["value"]?.stringValue ?? "",
                event["status"]?.stringValue ?? "",
                event["trackId"]?.stringValue ?? "",
            ]
        }
        // A value or id from a label or a camera may hold control characters: shown escaped.
        return TerminalText.escaped(parts.filter { !$0.isEmpty }.joined(separator: " "))
    }

    /// `412x305x220 mm 3.42 kg`, what was measured of it.
    static func measured(_ measurement: MeasureEvent) -> String {
        let sizes = [measurement.length, measurement.width, measurement.height]
        var text =
            sizes.contains { $0 != nil }
            ? sizes.map { $0.map { String(format: "%.0f", $0) } ?? "?" }.joined(separator: "x") + " mm" : ""
        if let weight = measurement.weight { text += (text.isEmpty ? "" : " ") + String(format: "%.2f kg", weight) }
        return text
    }
}
