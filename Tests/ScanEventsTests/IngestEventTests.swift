import ScanCore
import ScanEvents
import ScanTestTiming
import Testing

/// The events ingest stores as one type: the family from the subject, the event parsed as that
/// family, its sender for the checks.
@Suite("ingest events", .timed)
struct IngestEventTests {
    static let sighting = #"""
        {"type": "sighting", "eventId": "cam-1-run-1.sighting", "site": "dc1", "camera": "cam-1",
         "time": "2026-11-28T10:00:00.400Z", "trackId": "cam-1-run-1", "symbology": "EAN-13",
         "value": "4006381333931", "status": "accepted", "firstSeen": "2026-11-28T10:00:00.000Z",
         "lastSeen": "2026-11-28T10:00:00.300Z", "firstFrame": 1, "lastFrame": 9, "frames": 9, "decodes": 7,
         "lane": "L1"}
        """#

    @Test("the family of an event subject; anything else is none")
    func families() {
        #expect(SubjectFamily(subject: "scantrack.v1.sighting.dc1.cam-1", prefix: "scantrack") == .sighting)
        #expect(SubjectFamily(subject: "scantrack.v1.noread.dc1.cam-1", prefix: "scantrack") == .noread)
        #expect(SubjectFamily(subject: "scantrack.v1.measure.dc1.L1", prefix: "scantrack") == .measure)
        #expect(SubjectFamily(subject: "other.v1.sighting.dc1.cam-1", prefix: "scantrack") == nil)
        #expect(SubjectFamily(subject: "scantrack.v2.sighting.dc1.cam-1", prefix: "scantrack") == nil)
        #expect(SubjectFamily(subject: "scantrack.v1.sightings.dc1.cam-1", prefix: "scantrack") == nil)
        #expect(SubjectFamily(subject: "scantrack.v1.", prefix: "scantrack") == nil)
    }

    @Test(
        "an event is parsed as its subject's family: a sighting on a no-read subject is refused, a family ingest does not store is refused"
    )
    func parsedAsItsFamily() throws {
        let value = try JSONValue.parse(Array(Self.sighting.utf8))
        let event = try IngestEvent.parse(value, family: .sighting)
        #expect(event.family == .sighting && event.eventId == "cam-1-run-1.sighting")
        #expect(event.camera?.site == "dc1" && event.camera?.camera == "cam-1" && event.camera?.lane == "L1")
        #expect(throws: DeadLetter.self) { try IngestEvent.parse(value, family: .noread) }
        let refused = #expect(throws: DeadLetter.self) { try IngestEvent.parse(value, family: .track) }
        #expect(refused?.reason == .unknownType)
        #expect(
            IngestEvent.families.allSatisfy {
                SubjectFamily.durable.contains($0) || SubjectFamily.agentStreamOnly.contains($0)
            })
        #expect(IngestEvent.families.count == SubjectFamily.durable.count + SubjectFamily.agentStreamOnly.count)
    }
}
