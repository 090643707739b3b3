import Foundation
import ScanCore
import ScanNATS
import ScanTestSupport
import ScanTestTiming
import Testing

/// Tracing end to end: every event an agent publishes carries a W3C `traceparent` header, the
/// same on every send of the event (nats-py, a client that knows nothing of ScanTrack, reads
/// them from the stream), and the aggregator keeps each one's trace id on its row. A header that
/// is not a traceparent is dropped; the event is stored.
@Suite("tracing", .timed, .enabled(if: TestEnvironment.natsEnabled && TestEnvironment.postgresEnabled))
struct TracingTests {
    typealias H = AgentRunHarness

    @Test(
        "each sighting, no-read and parcel an agent sends carries its traceparent, read by nats-py from the stream; its row keeps the trace id; a malformed header leaves the row's trace id empty",
        arguments: [UInt64(5), 13])
    func tracesFromAgentToRows(seed: UInt64) throws {
        let natsURL = try TestEnvironment.requireNATS()
        let python = TestEnvironment.repoRoot + "/.cache/venv/bin/python"
        try #require(
            FileManager.default.isExecutableFile(atPath: python), "run scripts/install-deps.sh (make test does)")
        let rig = try H.Rig(natsURL: natsURL, database: "st_trace")
        defer { rig.cleanUp() }
        let database = rig.migrated.connection
        // nats-py hears every event the agent publishes, headers and all (the camera's stream is
        // emptied as the aggregator acknowledges, so it listens while the agent runs).
        let heard = rig.dir + "/heard.log"
        let listener = try ProcessRunner.start(
            python,
            [
                "-u", "-c",
                """
                import asyncio, json, sys, time
                import nats
                async def main():
                    nc = await nats.connect(sys.argv[1])
                    last = [time.monotonic(), 0]
                    async def heard(msg):
                        family = msg.subject.split(".")[-3]
                        if family in ("sighting", "noread", "parcel", "decision"):
                            body = json.loads(msg.data)
                            print(json.dumps({"family": family, "eventId": body["eventId"], "traceparent": (msg.headers or {}).get("traceparent")}))
                            last[0], last[1] = time.monotonic(), last[1] + 1
                    await nc.subscribe(f"{sys.argv[2]}.v1.*.dc1.cam-01", cb=heard)
                    await nc.subscribe(f"{sys.argv[2]}.v1.decision.dc1.L1", cb=heard)
                    await nc.flush()
                    print("listening")
                    started = time.monotonic()
                    while time.monotonic() - started < 150 and (last[1] == 0 or time.monotonic() - last[0] < 10):
                        await asyncio.sleep(0.2)
                    await nc.close()
                asyncio.run(main())
                """, natsURL, rig.prefix,
            ], environment: ProcessInfo.processInfo.environment, log: rig.dir + "/listener.log", stdoutFile: heard)
        defer { if listener.isRunning { listener.terminate() } }
        #expect(
            H.eventually(seconds: 30) {
                ((try? String(contentsOfFile: heard, encoding: .utf8)) ?? "").contains("listening")
            }, "nats-py listening")
        // The lane's decisions are the aggregator's (its topology's `decision`).
        try H.tornLabelsRun(
            rig, seed: seed, natsURL: natsURL, lane: #", "decision": {}"#,
            environment: ["SCANTRACK_LOG_LEVEL": "debug", "SCANTRACK_LOG_FORMAT": "json"])
        func count(_ sql: String) throws -> Int { Int(try database.query(sql).rows.first?[0] ?? "0") ?? 0 }
        #expect(
            try H.eventually(seconds: 60) {
                try count("SELECT count(*) FROM sightings") >= 1 && count("SELECT count(*) FROM noreads") >= 1
                    && count("SELECT count(*) FROM parcels") >= 1
            }, "sightings, no-reads and parcels stored")

        // Every row keeps the trace its event was sent with.
        var rows: [String: String?] = [:]
        for table in ["sightings", "noreads", "parcels"] {
            for row in try database.query("SELECT event_id, trace_id FROM \(table)").rows {
                rows[row[0] ?? ""] = row[1]
            }
        }
        #expect(rows.count >= 3)
        for (eventId, traceId) in rows {
            #expect(traceId == TraceContext.forEvent(eventId).traceId, "\(eventId): \(traceId ?? "none")")
        }

        #expect(H.waitForExit(listener, seconds: 160) && listener.terminationStatus == 0)
        let lines = ((try? String(contentsOfFile: heard, encoding: .utf8)) ?? "").split(separator: "\n")
        var headers: [String: String] = [:]
        var decisions: [String: String] = [:]
        for line in lines where line.hasPrefix("{") {
            let message = try JSONValue.parse(String(line))
            let traceparent = message["traceparent"]?.stringValue ?? "none"
            if message["family"] == .string("decision") {
                decisions[message["eventId"]?.stringValue ?? ""] = traceparent
            } else {
                headers[message["eventId"]?.stringValue ?? ""] = traceparent
            }
        }
        #expect(Set(headers.keys) == Set(rows.keys), "the stream's events are the rows'")
        for (eventId, traceparent) in headers {
            #expect(traceparent == TraceContext.forEvent(eventId).traceparent, "\(eventId): \(traceparent)")
        }

        // The aggregator's results continue the trace their events began with, each revision a
        // span of its own: an item pass its first sighting's, a parcel pass (and its divert
        // decision) its first camera's parcel's, a no-read a person keyed the no-read's.
        func continued(_ eventId: String?, as result: String) -> String {
            eventId.flatMap { TraceContext.continuing(TraceContext.forEvent($0).traceId, as: result)?.traceparent }
                ?? "untraced"
        }
        func first(_ sql: String) throws -> String? { try database.query(sql).rows.first?[0] ?? nil }
        let noReadId = try #require(try first("SELECT event_id FROM noreads ORDER BY first_seen, event_id LIMIT 1"))
        let keyed = try ProcessRunner.run(
            TestEnvironment.productsDirectory + "/scanadmin",
            ["noreads", "resolve", noReadId, "--code", "5012345678900", "--by", "tracer"],
            environment: DashboardSecurityTests.environment(dsn: rig.migrated.dsn))
        #expect(keyed.status == 0, "\(keyed.stderr)")
        #expect(
            try H.eventually(seconds: 60) {
                try count("SELECT count(*) FROM noread_codings WHERE published") == 1
                    && count("SELECT count(*) FROM item_passes WHERE published_revision < revision") == 0
                    && count("SELECT count(*) FROM parcel_passes WHERE published_revision < revision") == 0
                    && count("SELECT count(*) FROM decisions WHERE NOT published") == 0
            }, "every result published")
        let traces = rig.dir + "/results.traces"
        let wms = try ProcessRunner.run(
            python,
            [
                TestEnvironment.repoRoot + "/scripts/wms_consumer.py", "--results", "--nats", natsURL, "--prefix",
                rig.prefix, "--idle", "1", "--traces", traces,
            ])
        #expect(wms.status == 0, "\(wms.stdoutText) \(wms.stderr)")
        var families: [String: Int] = [:]
        for line in try String(contentsOfFile: traces, encoding: .utf8).split(separator: "\n") {
            let result = try JSONValue.parse(String(line))
            let eventId = result["eventId"]?.stringValue ?? ""
            let family = (result["subject"]?.stringValue ?? "").split(separator: ".").dropFirst(2).first ?? ""
            families[String(family), default: 0] += 1
            let revisionless = String(eventId.prefix { $0 != "." })
            let expected: String
            switch family {
            case "item":
                expected = continued(
                    try first(
                        "SELECT event_id FROM item_sightings WHERE item_id = '\(revisionless)' ORDER BY first_seen, event_id LIMIT 1"
                    ), as: eventId)
            case "parcelpass":
                expected = continued(
                    try first("SELECT members->0->>'eventId' FROM parcel_passes WHERE pass_id = '\(revisionless)'"),
                    as: eventId)
            case "coded":
                expected = continued(noReadId, as: eventId)
            default:
                expected = "no such result expected"
            }
            #expect((result["traceparent"]?.stringValue ?? "untraced") == expected, "\(result)")
        }
        #expect(families["item", default: 0] >= 1 && families["parcelpass", default: 0] >= 2, "\(families)")
        #expect(families["coded"] == 1, "\(families)")
        #expect(!decisions.isEmpty, "the aggregator's decisions heard")
        for (eventId, traceparent) in decisions {
            let pass = String(eventId.dropLast(".decision".count))
            #expect(
                traceparent
                    == continued(
                        try first("SELECT members->0->>'eventId' FROM parcel_passes WHERE pass_id = '\(pass)'"),
                        as: eventId), "\(eventId)")
        }

        // Log lines name the trace: the agent's line for each event it sent, the aggregator's for
        // each result it published, with the trace id the message carried.
        func logLines(_ file: String, message: String) throws -> [String: String] {
            var traces: [String: String] = [:]
            for line in try String(contentsOfFile: rig.dir + "/" + file, encoding: .utf8).split(separator: "\n")
            where line.hasPrefix("{") {
                let entry = try JSONValue.parse(String(line))
                guard entry["message"] == .string(message), let id = entry["event.id"]?.stringValue else { continue }
                traces[id] = entry["trace_id"]?.stringValue ?? "none"
            }
            return traces
        }
        let sent = try logLines("agent.log", message: "event sent")
        #expect(sent.count >= rows.count, "a line per event sent")
        for eventId in rows.keys {
            #expect(sent[eventId] == TraceContext.forEvent(eventId).traceId, "\(eventId) in the agent's log")
        }
        let published = try logLines("agg.log", message: "result published")
        #expect(published.count >= families.values.reduce(0, +), "a line per result published")
        for line in try String(contentsOfFile: traces, encoding: .utf8).split(separator: "\n") {
            let result = try JSONValue.parse(String(line))
            let eventId = result["eventId"]?.stringValue ?? ""
            let traceId = result["traceparent"]?.stringValue.map { String($0.dropFirst(3).prefix(32)) }
            #expect(published[eventId] == traceId, "\(eventId) in the aggregator's log")
        }

        // A sighting sent by hand with a header that is not a traceparent: stored, no trace id.
        let eventId = "cam-01-hand\(seed)-1.sighting"
        let sighting = """
            {"type": "sighting", "eventId": "\(eventId)", "site": "dc1", "camera": "cam-01",
             "time": "2026-12-07T10:00:00.000Z", "trackId": "cam-01-hand\(seed)-1", "symbology": "EAN-13",
             "value": "4006381333931", "status": "accepted", "firstSeen": "2026-12-07T09:59:59.000Z",
             "lastSeen": "2026-12-07T10:00:00.000Z", "firstFrame": 1, "lastFrame": 9, "frames": 9, "decodes": 9,
             "box": {"first": [[1, 1], [9, 9]], "last": [[1, 1], [9, 9]]}}
            """
        _ = try rig.jetStream.publish(
            subject: try rig.subjects.agent(.sighting, site: "dc1", camera: "cam-01"), bytes: Array(sighting.utf8),
            messageID: eventId, headers: [(TraceContext.header, "00-<script>-zz-01")])
        #expect(
            try H.eventually(seconds: 30) {
                try count("SELECT count(*) FROM sightings WHERE event_id = '\(eventId)' AND trace_id IS NULL") == 1
            }, "stored without a trace id")
        #expect(try count("SELECT count(*) FROM dead_letters") == 0)
    }
}
