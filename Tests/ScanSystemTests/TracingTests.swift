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
                        if family in ("sighting", "noread", "parcel"):
                            body = json.loads(msg.data)
                            print(json.dumps({"eventId": body["eventId"], "traceparent": (msg.headers or {}).get("traceparent")}))
                            last[0], last[1] = time.monotonic(), last[1] + 1
                    await nc.subscribe(f"{sys.argv[2]}.v1.*.dc1.cam-01", cb=heard)
                    await nc.flush()
                    print("listening")
                    started = time.monotonic()
                    while time.monotonic() - started < 150 and (last[1] == 0 or time.monotonic() - last[0] < 5):
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
        try H.tornLabelsRun(rig, seed: seed, natsURL: natsURL)
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
        for line in lines where line.hasPrefix("{") {
            let message = try JSONValue.parse(String(line))
            headers[message["eventId"]?.stringValue ?? ""] = message["traceparent"]?.stringValue ?? "none"
        }
        #expect(Set(headers.keys) == Set(rows.keys), "the stream's events are the rows'")
        for (eventId, traceparent) in headers {
            #expect(traceparent == TraceContext.forEvent(eventId).traceparent, "\(eventId): \(traceparent)")
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
