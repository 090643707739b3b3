import Foundation
import Logging
import ScanCore
import ScanEvents
import ScanNATS
import ScanPostgres
import ScanReconciliation
import ScanTestSupport
import ScanTestTiming
import ScanTesting
import Synchronization
import Testing

@testable import ScanAggregator

/// docs/security.md, "One sender cannot starve the others" (#45 row 3), against the real
/// nats-server and PostgreSQL: every camera and lane of the topology has a stream of its own.
@Suite(
    "one sender cannot starve the others", .timed,
    .enabled(if: TestEnvironment.natsEnabled && TestEnvironment.postgresEnabled))
struct SenderIsolationTests {
    typealias W = IngestTests

    static let topology = #"""
        {"version": 1, "sites": [{"id": "dc1",
          "lanes": [{"id": "L1", "cameras": [{"id": "cam-1"}]},
                    {"id": "L2", "cameras": [{"id": "cam-2"}, {"id": "cam_3", "travelSeconds": 1}]}],
          "stations": [{"id": "pack-1", "cameras": ["cam-9"]}]}]}
        """#

    /// How long the flood lasts (the issue's minute).
    static let floodSeconds = 60.0

    @Test(
        "a camera and a lane's gateway flooding at full speed for a minute leave every other camera's and lane's events stored"
    )
    func floodIsolated() throws {
        var world = try W.world()
        world.settings.cameraStreamBytes = 32 << 20
        let settings = world.settings
        let subjects = settings.subjects
        defer { world.drop() }
        try SiteStore(connection: world.database).load(Self.parsed)
        // The aggregator makes the senders' streams from the topology, and stops; nothing is
        // consumed while the flood lasts (the worst case: every stream only fills).
        do {
            let ingestor = try Ingestor(settings: settings, logger: Logger(label: "test"))
            ingestor.close()
        }
        let facts = try world.jetStream.streamFacts(subjects.agentStream)
        #expect(facts.subjects == [subjects.retiredAgentStreamSubject])
        let own = try subjects.cameraStream(site: "dc1", camera: "cam-1")
        #expect(try world.jetStream.streamFacts(own).maxBytes == 32 << 20)
        #expect(own != (try subjects.cameraStream(site: "dc1_cam", camera: "1")))

        let stop = Atomic<Bool>(false)
        let flooded = Atomic<Int>(0)
        let group = DispatchGroup()
        // The flooding camera: junk as large as the stream takes on each of its families, and
        // the flooding gateway: junk readings on its lane, on core NATS as fast as they go.
        for (subject, size) in [
            // (the test server keeps nats-server's 1 MB max_payload)
            ("\(settings.prefix).v1.noread.dc1.cam-1", 1_000_000 - 1_024),
            ("\(settings.prefix).v1.sighting.dc1.cam-1", EventValidator.maxBytes),
            ("\(settings.prefix).v1.measure.dc1.L1", EventValidator.maxBytes),
        ] {
            let connection = try NATSConnection(url: settings.natsURL)
            group.enter()
            DispatchQueue.global().async {
                defer { group.leave() }
                let junk = [UInt8](repeating: UInt8(ascii: "x"), count: size)
                while !stop.load(ordering: .relaxed) {
                    var sent = 0
                    for _ in 0..<16 where (try? connection.publish(subject: subject, bytes: junk)) != nil { sent += 1 }
                    if (try? connection.flush(timeoutMilliseconds: 5_000)) != nil {
                        flooded.add(sent * size, ordering: .relaxed)
                    }
                }
            }
        }
        // The others send as they do, acknowledged by JetStream, all through the minute.
        let sender = try NATSConnection(url: settings.natsURL).jetStream()
        var sent = 0
        var refused: [String] = []
        let start = ContinuousClock.now
        while (ContinuousClock.now - start).seconds < Self.floodSeconds {
            for camera in ["cam-2", "cam_3", "cam-9"] {
                do {
                    _ = try sender.publish(
                        subject: try subjects.agent(.sighting, site: "dc1", camera: camera),
                        bytes: W.sighting(sent, camera: camera), messageID: "\(camera)-\(sent)")
                } catch {
                    refused.append("\(camera): \(error)")
                }
            }
            let reading = MeasureEvent(
                eventId: "w\(sent)", site: "dc1", lane: "L2", device: "scale-1",
                time: Timestamp(milliseconds: 1_795_800_000_000 + Int64(sent) * 100), weight: 1.5)
            do {
                _ = try sender.publish(
                    subject: try subjects.measure(site: "dc1", lane: "L2"), bytes: reading.json, messageID: "w\(sent)")
            } catch {
                refused.append("L2: \(error)")
            }
            sent += 1
            Thread.sleep(forTimeInterval: 0.05)
        }
        stop.store(true, ordering: .relaxed)
        group.wait()
        #expect(refused.isEmpty, "\(refused.prefix(3))")
        #expect(sent > 100)
        // The flood filled its own streams only, to their limits.
        // More than the one stream all cameras shared held (4 GiB): it would have refused the others.
        print("flooded \(flooded.load(ordering: .relaxed) >> 20) MiB in \(Self.floodSeconds) s")
        #expect(flooded.load(ordering: .relaxed) > 4 << 30)
        let camera = try world.jetStream.streamFacts(own)
        #expect(camera.bytes > 30 << 20 && camera.bytes <= 32 << 20)
        let lane = try world.jetStream.streamFacts(try subjects.laneStream(site: "dc1", lane: "L1"))
        #expect(lane.bytes > (ContractSubjects.laneStreamBytes * 9) / 10)
        #expect(lane.bytes <= ContractSubjects.laneStreamBytes)

        // The aggregator stores every one of the others' events (and dead-letters the junk).
        let ingestor = try Ingestor(settings: settings, logger: Logger(label: "test"))
        defer { ingestor.close() }
        for _ in 0..<2_000 {
            try ingestor.runOnce()
            let stored = try W.count(world.database, "SELECT count(*) FROM sightings WHERE camera <> 'cam-1'")
            let readings = try W.count(world.database, "SELECT count(*) FROM measurements")
            if stored == 3 * sent && readings == sent { break }
        }
        #expect(try W.count(world.database, "SELECT count(*) FROM sightings WHERE camera <> 'cam-1'") == 3 * sent)
        #expect(try W.count(world.database, "SELECT count(*) FROM measurements") == sent)
    }

    @Test("an agent whose camera has no stream of its own keeps its events; one added to the topology gets its stream")
    func cameraAddedLater() throws {
        let world = try W.world()
        let subjects = world.settings.subjects
        defer { world.drop() }
        // Before any topology: the agents' stream takes every camera's events.
        _ = try world.jetStream.publish(
            subject: try subjects.agent(.sighting, site: "dc1", camera: "cam-4"), bytes: W.sighting(1, camera: "cam-4"),
            messageID: "before")
        try SiteStore(connection: world.database).load(Self.parsed)
        let ingestor = try Ingestor(settings: world.settings, logger: Logger(label: "test"))
        defer { ingestor.close() }
        // What the agents' stream held is still read after it let go of the senders' subjects.
        try W.drain(ingestor) { try W.count(world.database, "SELECT count(*) FROM sightings") == 1 }
        #expect(try world.jetStream.streamFacts(subjects.agentStream).subjects == [subjects.retiredAgentStreamSubject])
        // cam-4 is in no stream's subjects now: JetStream does not take its events.
        #expect(throws: NATSError.self) {
            _ = try world.jetStream.publish(
                subject: try subjects.agent(.sighting, site: "dc1", camera: "cam-4"),
                bytes: W.sighting(2, camera: "cam-4"), messageID: "refused")
        }
        var grown = Self.parsed
        grown.sites[0].lanes.append(
            Topology.Lane(id: "L3", cameras: [Topology.LaneCamera(id: "cam-4", offsetMilliseconds: 0)]))
        try SiteStore(connection: world.database).load(grown)
        var stored = false
        let deadline = ContinuousClock.now + .seconds(60)
        while !stored && ContinuousClock.now < deadline {
            try ingestor.runOnce()
            if (try? world.jetStream.streamFacts(try subjects.cameraStream(site: "dc1", camera: "cam-4"))) != nil,
                (try? world.jetStream.publish(
                    subject: try subjects.agent(.sighting, site: "dc1", camera: "cam-4"),
                    bytes: W.sighting(3, camera: "cam-4"), messageID: "after")) != nil
            {
                try W.drain(ingestor) { try W.count(world.database, "SELECT count(*) FROM sightings") == 2 }
                stored = try W.count(world.database, "SELECT count(*) FROM sightings") == 2
            }
        }
        #expect(stored)
    }

    static var parsed: Topology {
        // The topology above is valid; a failure here is the test's own.
        (try? Topology.parse(Array(topology.utf8), file: "topology.json")) ?? Topology(sites: [])
    }
}
