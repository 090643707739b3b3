import ScanCore
import ScanTestTiming
import Testing
import ScanAgentConfig
import ScanEvents
import ScanPipeline

@Suite("agent commands, subjects and status (pure)", .timed)
struct AgentCommandParsingTests {
    @Test("each verb parses; session.start takes an optional order id")
    func verbs() throws {
        #expect(try AgentCommand.parse(verb: "session.start", body: []).get() == .sessionStart(orderId: nil))
        #expect(
            try AgentCommand.parse(verb: "session.start", body: Array(#"{"orderId": "SO-9"}"#.utf8)).get()
                == .sessionStart(orderId: "SO-9"))
        #expect(try AgentCommand.parse(verb: "session.stop", body: Array("  \n".utf8)).get() == .sessionStop)
        #expect(try AgentCommand.parse(verb: "pause", body: Array("{}".utf8)).get() == .pause)
        #expect(try AgentCommand.parse(verb: "resume", body: []).get() == .resume)
        #expect(try AgentCommand.parse(verb: "status", body: []).get() == .status)
        #expect(try AgentCommand.parse(verb: "snapshot", body: []).get() == .snapshot(maxWidth: 960))
        #expect(
            try AgentCommand.parse(verb: "snapshot", body: Array(#"{"maxWidth": 160}"#.utf8)).get()
                == .snapshot(maxWidth: 160))
        #expect(try AgentCommand.parse(verb: "preview", body: []).get() == .preview(PreviewLease()))
        #expect(
            try AgentCommand.parse(verb: "preview", body: Array(#"{"seconds": 30, "maxWidth": 320, "rate": 10}"#.utf8))
                .get() == .preview(PreviewLease(seconds: 30, maxWidth: 320, rate: 10)))
    }

    @Test(
        "bad requests are errors that say what is wrong",
        arguments: [
            ("reboot", "", "unknown verb 'reboot'"),
            ("session.start", "{\"orderId\": ", "not JSON"),
            ("session.start", "[1]", "must be a JSON object"),
            ("session.start", "{\"orderId\": 42}", "orderId must be a string"),
            ("session.start", "{\"orderId\": \"\"}", "orderId must be 1 to 128 bytes"),
            ("session.start", "{\"orderId\": \"SO\\u001b[2J\"}", "holds a control character"),
            ("session.start", "{\"order\": \"x\"}", "unknown key 'order'"),
            ("pause", "{\"now\": true}", "it takes none"),
            ("status", "\u{0}\u{1}", "not JSON"),
            ("snapshot", "{\"maxWidth\": 159}", "maxWidth must be a whole number of pixels from 160 to 3840"),
            ("snapshot", "{\"maxWidth\": 640.5}", "maxWidth must be"),
            ("snapshot", "{\"maxWidth\": \"640\"}", "maxWidth must be"),
            ("snapshot", "{\"quality\": 9}", "it takes: maxWidth"),
            ("preview", "{\"seconds\": 0}", "seconds must be a whole number of seconds from 1 to 30"),
            ("preview", "{\"seconds\": 31}", "seconds must be"),
            ("preview", "{\"rate\": 11}", "rate must be a whole number of pictures a second from 1 to 10"),
            ("preview", "{\"maxWidth\": 4000}", "maxWidth must be"),
            ("preview", "{\"quality\": 9}", "it takes: maxWidth, rate, seconds"),
        ])
    func errors(verb: String, body: String, message: String) {
        switch AgentCommand.parse(verb: verb, body: Array(body.utf8)) {
        case .success(let command): Issue.record("\(verb) \(body) parsed as \(command)")
        case .failure(let error):
            #expect(error.message.contains(message), "\(error.message)")
            let reply = try? JSONValue.parse(error.reply(camera: CameraIdentity(id: "c1")))
            #expect(reply?["ok"] == .bool(false))
            #expect(reply?["error"]?.stringValue == error.message)
        }
    }

    @Test("command subjects carry verbs with dots; other cameras' subjects are not ours")
    func subjects() throws {
        let subjects = ContractSubjects(prefix: "scantrack")
        #expect(try subjects.commands(site: "dc1", camera: "cam-07") == "scantrack.v1.cmd.dc1.cam-07.>")
        let subject = try subjects.command(site: "dc1", camera: "cam-07", verb: "session.start")
        #expect(subject == "scantrack.v1.cmd.dc1.cam-07.session.start")
        #expect(subjects.verb(ofCommandSubject: subject, site: "dc1", camera: "cam-07") == "session.start")
        #expect(subjects.verb(ofCommandSubject: subject, site: "dc1", camera: "cam-0") == nil)
        #expect(try subjects.agent(.sighting, site: "dc1", camera: "cam-07") == "scantrack.v1.sighting.dc1.cam-07")
        #expect(ContractSubjects(prefix: "acme.scan").agentStream == "ACME_SCAN_AGENT")
        #expect(ContractSubjects(prefix: "acme.scan").rulesBucket == "ACME_SCAN_RULES")
    }

    @Test("the heartbeat carries what the issue lists, as one JSON object")
    func heartbeat() throws {
        var status = AgentStatus()
        status.runId = "r1"
        status.fpsIn = 29.96
        status.framesDropped = 3
        status.spoolDepth = 12
        status.nats = "disconnected"
        status.rulesRevision = "7"
        status.rulesSource = "cache"
        status.sessionId = "cam-r1-s2"
        let event = EventFactory(camera: CameraIdentity(id: "cam", site: "dc1", lane: "L2"))
            .status(status, time: Timestamp(milliseconds: 0), sequence: 4)
        let json = try JSONValue.parse(event.json)
        #expect(event.kind == .status)
        #expect(json["eventId"] == .string("cam-r1.status.4"))
        #expect(json["fpsIn"]?.doubleValue == 30.0)
        #expect(json["framesDropped"]?.intValue == 3)
        #expect(json["spool"]?["depth"]?.intValue == 12)
        #expect(json["nats"] == .string("disconnected"))
        #expect(json["rules"]?["revision"] == .string("7"))
        #expect(json["rules"]?["source"] == .string("cache"))
        #expect(json["lane"] == .string("L2"))
        #expect(json["sessionId"] == .string("cam-r1-s2"))
        #expect(json["decodeMs"]?["avg"] != nil)
        #expect(json["liveTracks"]?.intValue == 0)
    }

    @Test(
        "set-controls takes exposure, gain, frame rate, region and features (light, strobe), and refuses the rest by name"
    )
    func setControls() {
        guard
            case .success(.setControls(let controls)) = AgentCommand.parse(
                verb: "set-controls",
                body: Array(#"{"exposureMicroseconds": 80, "region": {"width": 640, "height": 200}}"#.utf8))
        else {
            Issue.record("not parsed")
            return
        }
        #expect(controls.exposureMicroseconds == 80 && controls.region?.height == 200)
        // Light and strobe: GenICam features by name, in order; one that resets, reflashes or
        // writes the camera's files is refused (a command cannot allow it: only the config can).
        guard
            case .success(.setControls(let light)) = AgentCommand.parse(
                verb: "set-controls",
                body: Array(
                    #"{"features": {"LineSelector": "Line2", "LineSource": "ExposureActive", "StrobeDuration": 500}}"#
                        .utf8))
        else {
            Issue.record("features not parsed")
            return
        }
        #expect(light.features.map(\.name) == ["LineSelector", "LineSource", "StrobeDuration"])
        for (body, words) in [
            (#"{"features": {"DeviceReset": "Execute"}}"#, "controls.features.DeviceReset"),
            (
                #"{"features": {"UserSetSave": 1}, "allowDangerousFeatures": ["UserSetSave"]}"#,
                "unknown key 'allowDangerousFeatures'"
            ),
            ("{}", "name at least one"), (#"{"pixelFormat": "Mono8"}"#, "unknown key 'pixelFormat'"),
            (#"{"gainDecibels": "high"}"#, "controls.gainDecibels"),
        ] {
            guard case .failure(let error) = AgentCommand.parse(verb: "set-controls", body: Array(body.utf8)) else {
                Issue.record("\(body) accepted")
                continue
            }
            #expect(error.message.contains(words), "\(body): \(error.message)")
        }
    }

    @Test("trigger takes no arguments; focus is a live control")
    func trigger() {
        guard case .success(.trigger) = AgentCommand.parse(verb: "trigger", body: []) else {
            Issue.record("trigger not parsed")
            return
        }
        guard case .failure(let error) = AgentCommand.parse(verb: "trigger", body: Array(#"{"count": 2}"#.utf8)) else {
            Issue.record("an argument accepted")
            return
        }
        #expect(error.message.contains("unknown key 'count'"), "\(error.message)")
        guard
            case .success(.setControls(let controls)) = AgentCommand.parse(
                verb: "set-controls", body: Array(#"{"focus": 120}"#.utf8))
        else {
            Issue.record("focus not parsed")
            return
        }
        #expect(controls.focus == 120)
    }
}
