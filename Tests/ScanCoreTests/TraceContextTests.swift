import ScanCore
import ScanTestTiming
import Testing

/// W3C `traceparent`: the agent's trace of an event is the same on every send, its ids valid;
/// parsing takes the format's valid forms only.
@Suite("trace context", .timed)
struct TraceContextTests {
    @Test("an event's trace is the same on every send, valid, and differs between events; a child keeps the trace")
    func forEvent() throws {
        let first = TraceContext.forEvent("cam-01-mwx6cihv-17.sighting")
        #expect(first == TraceContext.forEvent("cam-01-mwx6cihv-17.sighting"))
        #expect(
            first.traceparent.count == 55 && first.traceparent.hasPrefix("00-") && first.traceparent.hasSuffix("-01"))
        #expect(TraceContext.parse(first.traceparent) == first)
        var traces = Set<String>()
        var spans = Set<String>()
        for n in 0..<2_000 {
            let trace = TraceContext.forEvent("cam-01-mwx6cihv-\(n).sighting")
            traces.insert(trace.traceId)
            spans.insert(trace.spanId)
            #expect(TraceContext.parse(trace.traceparent) == trace)
        }
        #expect(traces.count == 2_000 && spans.count == 2_000)
        let child = first.child("pass-7/r2")
        #expect(child.traceId == first.traceId && child.spanId != first.spanId)
        #expect(child == first.child("pass-7/r2") && child != first.child("pass-7/r3"))
    }

    @Test("parse takes version 00 exactly and later versions' first four fields; anything else is no trace")
    func parsing() throws {
        let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        let trace = try #require(TraceContext.parse(valid))
        #expect(trace.traceId == "4bf92f3577b34da6a3ce929d0e0e4736" && trace.spanId == "00f067aa0ba902b7")
        #expect(trace.flags == 1 && trace.traceparent == valid)
        #expect(TraceContext.parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")?.flags == 0)
        #expect(TraceContext.parse("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future") != nil)
        for bad in [
            "", "00", valid + "-extra", valid.uppercased(), "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
            "00-4bf92f3577b34da6a3ce929d0e0e47\u{1B}6-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\nPUB x",
        ] {
            #expect(TraceContext.parse(bad) == nil, "\(bad)")
        }
        #expect(TraceContext(traceId: String(repeating: "0", count: 32), spanId: "00f067aa0ba902b7") == nil)
    }
}
