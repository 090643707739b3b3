import Foundation
import ScanNATS
import ScanTestSupport
import ScanTestTiming
import Testing
import ScanCore
import ScanEvents

@testable import ScanAdmin

@Suite("scanadmin tail and agent", .timed, .enabled(if: TestEnvironment.natsEnabled))
struct TailCommandTests {
    static var scanadmin: String { TestEnvironment.productsDirectory + "/scanadmin" }

    @Test("tail prints live events of the asked type, one a line, and stops after --count")
    func tail() throws {
        let natsURL = try TestEnvironment.requireNATS()
        let prefix = TestEnvironment.uniqueName("st")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.scanadmin)
        process.arguments = [
            "tail", "--nats", natsURL, "--prefix", prefix, "--type", "sighting", "--count", "2", "--seconds", "20",
        ]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try ProcessRunner.withSignalsUnblocked { try process.run() }
        let connection = try NATSConnection(url: natsURL)
        let sighting =
            #"{"type":"sighting","eventId":"e1","site":"dc1","camera":"cam-2","time":"2026-11-21T08:00:01.250Z","symbology":"EAN-13","value":"4006381333931","status":"accepted","trackId":"cam-2-r-1"}"#
        // Publish until the subscriber is surely listening (core NATS keeps nothing for late subscribers).
        var sent = 0
        while process.isRunning && sent < 100 {
            try connection.publish(
                subject: "\(prefix).v1.track.dc1.cam-2", bytes: Array(#"{"type":"track.added"}"#.utf8))
            try connection.publish(subject: "\(prefix).v1.sighting.dc1.cam-2", bytes: Array(sighting.utf8))
            try connection.flush()
            sent += 1
            usleep(100_000)
        }
        process.waitUntilExit()
        let lines = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(
            separator: "\n")
        #expect(process.terminationStatus == 0)
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0 == "08:00:01.250 dc1/cam-2 sighting EAN-13 4006381333931 accepted cam-2-r-1" })
    }

    @Test(
        "tail --format json writes each event again on one line with ESC, DEL, C1 and bidi controls as \\u escapes (the same value to a JSON reader); what is not JSON is said, not printed"
    )
    func jsonEscaped() throws {
        let natsURL = try TestEnvironment.requireNATS()
        let prefix = TestEnvironment.uniqueName("st")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.scanadmin)
        process.arguments = ["tail", "--nats", natsURL, "--prefix", prefix, "--format", "json", "--count", "2"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try ProcessRunner.withSignalsUnblocked { try process.run() }
        let connection = try NATSConnection(url: natsURL)
        // A camera's value with a colour escape, DEL, the C1 CSI, a right-to-left override and a
        // line separator; then a message that is no JSON at all, with an escape in it.
        let hostile = "40\u{1B}[2J06\u{7F}\u{9B}31m\u{202E}1333\u{2028}931"
        var event = JSONWriter()
        event.field("type", "sighting")
        event.field("value", hostile)
        let bytes = event.finished()
        let junk = Array("\u{1B}]0;owned\u{07}not json".utf8)
        var sent = 0
        while process.isRunning && sent < 100 {
            try connection.publish(subject: "\(prefix).v1.sighting.dc1.cam-2", bytes: bytes)
            try connection.publish(subject: "\(prefix).v1.sighting.dc1.cam-2", bytes: junk)
            try connection.flush()
            sent += 1
            usleep(100_000)
        }
        process.waitUntilExit()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0)
        #expect(
            !text.unicodeScalars.contains { $0 != "\n" && TerminalText.needsEscape($0) }, "\(text.debugDescription)")
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(lines)")
        let parsed = lines.compactMap { try? JSONValue.parse($0) }
        #expect(parsed.count == 1 && parsed.first?["value"] == .string(hostile), "\(lines)")
        #expect(lines.contains("(not JSON, \(junk.count) bytes)"), "\(lines)")
        #expect(text.contains("\\u001b[2J06\\u007f\\u009b31m\\u202e1333\\u2028931"), "\(text)")
    }

    @Test("parcels, decisions, belt speeds and reading events get a line of their fields, escaped")
    func parcelLines() throws {
        let parcel = try JSONValue.parse(
            Array(
                #"""
                {"type": "parcel", "eventId": "p1.parcel", "site": "dc1", "camera": "cam-1", "time": "2026-11-26T08:00:01.250Z",
                 "parcelId": "p1", "lane": "L1", "firstSeen": "2026-11-26T08:00:00.000Z", "lastSeen": "2026-11-26T08:00:01.000Z",
                 "outline": [[0, 0], [9, 0], [9, 9], [0, 9]],
                 "codes": [{"trackId": "t1", "symbology": "EAN-13", "value": "4006381333931\u001b[2J", "status": "accepted"}],
                 "missing": ["GS1-128"], "noReads": []}
                """#.utf8))
        #expect(
            TailCommand.line(subject: "scantrack.v1.parcel.dc1.cam-1", event: parcel)
                == "08:00:01.250 dc1/cam-1 parcel incomplete codes=4006381333931\\x1B[2J missing=GS1-128 p1")
        let decision = try JSONValue.parse(
            Array(
                #"""
                {"type": "decision", "eventId": "p1.decision", "site": "dc1", "camera": "cam-1", "time": "2026-11-26T08:00:01.250Z",
                 "lane": "L1", "parcelId": "p1", "action": "divert", "reasons": ["no-read", "missing-required"], "codes": [],
                 "lastSeen": "2026-11-26T08:00:01.000Z", "closedAt": "2026-11-26T08:00:01.250Z",
                 "deadline": "2026-11-26T08:00:01.450Z", "late": true, "decidedBy": "agent"}
                """#.utf8))
        #expect(
            TailCommand.line(subject: "scantrack.v1.decision.dc1.L1", event: decision)
                == "08:00:01.250 dc1/L1 decision divert no-read,missing-required LATE p1")
        let belt = BeltReading(site: "dc1", lane: "L1", time: Timestamp(milliseconds: 1_795_680_001_250), speed: 2.4)
        #expect(
            TailCommand.line(subject: "scantrack.v1.belt.dc1.L1", event: try JSONValue.parse(belt.json))
                == "08:00:01.250 dc1/L1 belt 2.40 m/s")
        #expect(
            TailCommand.line(subject: "scantrack.v1.decision.dc1.L1", event: .object([("type", .string("decision"))]))
                .hasSuffix("decision (not a valid decision)"))
        let measurement = MeasureEvent(
            eventId: "m1", site: "dc1", lane: "L1", device: "dim-1", time: Timestamp(milliseconds: 1_795_680_001_250),
            length: 412.4, width: 305, height: 220, weight: 3.421)
        #expect(
            TailCommand.line(subject: "scantrack.v1.measure.dc1.L1", event: try JSONValue.parse(measurement.json))
                == "08:00:01.250 dc1/L1 measure dim-1 412x305x220 mm 3.42 kg")
        let scale = MeasureEvent(
            eventId: "m2", site: "dc1", lane: "L1", device: "scale", time: Timestamp(milliseconds: 1_795_680_001_250),
            weight: 0.5)
        #expect(
            TailCommand.line(subject: "scantrack.v1.measure.dc1.L1", event: try JSONValue.parse(scale.json))
                == "08:00:01.250 dc1/L1 measure scale 0.50 kg")
    }

    @Test("NATS_URL is the server when neither --nats nor SCANTRACK_NATS is given; SCANTRACK_NATS wins over it")
    func natsURLVariable() throws {
        let url = try TestEnvironment.requireNATS()
        /// The lines `tail --count 1` prints while a sighting is published on the test's server.
        func tail(_ environment: [String: String]) throws -> [Substring] {
            let prefix = TestEnvironment.uniqueName("st")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.scanadmin)
            process.arguments = ["tail", "--prefix", prefix, "--count", "1", "--seconds", "4"]
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try ProcessRunner.withSignalsUnblocked { try process.run() }
            let connection = try NATSConnection(url: url)
            while process.isRunning {
                try connection.publish(
                    subject: "\(prefix).v1.sighting.dc1.cam-2",
                    bytes: Array(#"{"type":"sighting","site":"dc1","camera":"cam-2","value":"A"}"#.utf8))
                try connection.flush()
                usleep(100_000)
            }
            return String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(
                separator: "\n")
        }
        #expect(try tail(["SCANTRACK_NATS": "", "NATS_URL": url]).count == 1)
        #expect(try tail(["SCANTRACK_NATS": url, "NATS_URL": "nats://127.0.0.1:1"]).count == 1)
        #expect(try tail(["SCANTRACK_NATS": "", "NATS_URL": "nats://127.0.0.1:1"]).isEmpty, "another server")
    }

    @Test("NATS away is a failure (exit 1) naming the server, not \"no agent answered\" (3)")
    func natsAway() throws {
        let result = try ProcessRunner.run(
            Self.scanadmin, ["agent", "status", "--camera", "c1", "--timeout", "0.5"],
            environment: ["SCANTRACK_NATS": "nats://scanadmin:secret@127.0.0.1:1"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("cannot reach NATS at nats://***@127.0.0.1:1"), "\(result.stderr)")
        #expect(!result.stderr.contains("secret"))
    }

    @Test(
        "bad usage exits 64 naming the option; no agent answering exits 3",
        arguments: [
            (["tail", "--type", "pallet"], Int32(64), "--type 'pallet'"),
            (["tail", "--camera", "cam.1"], Int32(64), "--camera 'cam.1'"),
            (["agent", "reboot", "--camera", "c1"], Int32(64), "unknown verb 'reboot'"),
            (["agent", "pause", "--camera", "c1", "--order-id", "x"], Int32(64), "--order-id"),
            (["agent", "session.start", "--camera", "c1", "--order-id", ""], Int32(64), "--order-id must be 1 to 128"),
            (
                ["agent", "session.start", "--camera", "c1", "--order-id", String(repeating: "9", count: 129)],
                Int32(64), "--order-id must be 1 to 128"
            ),
            (
                ["agent", "session.start", "--camera", "c1", "--order-id", "ORD\u{1B}[2J"], Int32(64),
                "holds a control character"
            ),
            (["agent", "status", "--camera", "nobody-here", "--timeout", "0.5"], Int32(3), "no reply"),
        ])
    func badUsage(arguments: [String], status: Int32, message: String) throws {
        let result = try ProcessRunner.run(
            Self.scanadmin, arguments, environment: ["SCANTRACK_NATS": try TestEnvironment.requireNATS()])
        #expect(result.status == status)
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }
}
