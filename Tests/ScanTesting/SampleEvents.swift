import ScanCore

/// Agent events as an agent writes them, for the aggregator's tests.
public enum SampleEvents {
    /// A sighting of `dc1`'s camera `camera`: event `<camera>-run-<n>.sighting`, first seen
    /// `firstSeen` (default 1_795_800_000_000 + n × 100 ms), an EAN-13 value unless given (`gs1`:
    /// the value is GS1 data).
    public static func sighting(
        _ n: Int, value: String? = nil, camera: String = "cam-1", firstSeen: Timestamp? = nil,
        status: String = "accepted", symbology: String = "EAN-13", gs1: Bool = false
    ) -> [UInt8] {
        var writer = JSONWriter()
        let start = firstSeen ?? Timestamp(milliseconds: 1_795_800_000_000 + Int64(n) * 100)
        writer.field("type", "sighting")
        writer.field("eventId", "\(camera)-run-\(n).sighting")
        writer.field("site", "dc1")
        writer.field("camera", camera)
        writer.field("time", start.adding(milliseconds: 400).description)
        writer.field("trackId", "\(camera)-run-\(n)")
        writer.field("symbology", symbology)
        writer.field("value", value ?? "400638133\(String(1000 + n % 9000))")
        if gs1 { writer.field("gs1", true) }
        writer.field("status", status)
        if status == "rejected" { writer.field("ruleId", "reject-test") }
        writer.field("firstSeen", start.description)
        writer.field("lastSeen", start.adding(milliseconds: 300).description)
        writer.field("firstFrame", n * 3)
        writer.field("lastFrame", n * 3 + 9)
        writer.field("frames", 10)
        writer.field("decodes", 8)
        writer.raw("box", Array(#"{"first":[[0,0],[9,0],[9,9],[0,9]],"last":[[5,0],[14,0],[14,9],[5,9]]}"#.utf8))
        return writer.finished()
    }

    /// `camera`'s parcel `id` of `dc1`'s lane L1, first seen `firstSeen`, last seen `lastAfter` ms
    /// later, sent `timeAfter` ms after it, with its codes (track id, value, status; EAN-13 each)
    /// and the required symbologies it lacks.
    public static func parcel(
        _ id: String, camera: String, firstSeen: Timestamp, codes: [(track: String, value: String, status: String)],
        missing: [String] = [], noReads: [String] = [], timeAfter: Int64 = 300, lastAfter: Int64 = 200
    ) -> [UInt8] {
        let list = codes.map { code in
            var writer = JSONWriter()
            writer.field("trackId", code.track)
            writer.field("symbology", "EAN-13")
            writer.field("value", code.value)
            writer.field("status", code.status)
            return writer.finished()
        }
        var writer = JSONWriter()
        writer.field("type", "parcel")
        writer.field("eventId", id + ".parcel")
        writer.field("site", "dc1")
        writer.field("camera", camera)
        writer.field("time", firstSeen.adding(milliseconds: timeAfter).description)
        writer.field("parcelId", id)
        writer.field("lane", "L1")
        writer.field("firstSeen", firstSeen.description)
        writer.field("lastSeen", firstSeen.adding(milliseconds: lastAfter).description)
        writer.raw("outline", Array("[[0, 0], [9, 0], [9, 9], [0, 9]]".utf8))
        writer.raw("codes", JSONWriter.array(list))
        writer.strings("missing", missing)
        writer.strings("noReads", noReads)
        return writer.finished()
    }
}
