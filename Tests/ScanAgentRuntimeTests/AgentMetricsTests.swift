import ScanCore
@testable import ScanEvents
import ScanTestTiming
import Testing

@testable import ScanAgentRuntime

/// The capture-to-publish histogram reads each published event's time without parsing it.
@Suite("agent metrics", .timed)
struct AgentMetricsTests {
    @Test(
        "an event's envelope time found in its bytes, as a parse would find it; a quote escaped inside a value is not taken for it"
    )
    func envelopeTime() throws {
        let time = Timestamp(milliseconds: 1_795_800_123_456)
        let status = EventEnvelope(
            type: "status", eventId: #"cam-1 "time":"1999-01-01T00:00:00.000Z""#, site: "dc1", camera: "cam-1",
            time: time)
        var writer = status.writer()
        writer.field("note", #""time":"2001-01-01T00:00:00.000Z""#)
        let payload = writer.finished()
        let parsed = try JSONValue.parse(payload)["time"]?.stringValue.flatMap(Timestamp.init(rfc3339:))
        #expect(parsed == time)
        #expect(AgentMetrics.envelopeTime(payload) == time, "\(String(decoding: payload, as: UTF8.self))")
        #expect(AgentMetrics.envelopeTime(Array(#"{"type":"status"}"#.utf8)) == nil)
        #expect(AgentMetrics.envelopeTime(Array(#"{"time":"not a time"}"#.utf8)) == nil)
        #expect(AgentMetrics.envelopeTime(Array(#"{"time":""#.utf8)) == nil)
        #expect(AgentMetrics.envelopeTime([]) == nil)
    }
}
