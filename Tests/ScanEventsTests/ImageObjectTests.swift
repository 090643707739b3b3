import ScanCore
import ScanEvents
import ScanTestTiming
import Testing

/// The images bucket's names and descriptions (`ImageObject`): NATS's object-store layout, names
/// built from checked tokens, and an event's object held to its sender.
@Suite("image objects", .timed)
struct ImageObjectTests {
    static let digest = Array(repeating: UInt8(0xAB), count: 32)

    static func object(id: String = "cam-01-r1-p3", size: Int = 200_000) throws -> ImageObject {
        try ImageObject(kind: .parcel, site: "dc1", camera: "cam-01", id: id, size: size, sha256: digest)
    }

    @Test("names, subjects and the description are those nats.go and nats-py use")
    func layout() throws {
        let object = try Self.object()
        #expect(object.name == "dc1/cam-01/parcel/cam-01-r1-p3.jpg")
        #expect(object.nuid == "dc1.cam-01.cam-01-r1-p3")
        #expect(object.chunkSubject == "$O.SCANTRACK_IMAGES.C.dc1.cam-01.cam-01-r1-p3")
        // Python's base64.urlsafe_b64encode(name): padded, - and _ for + and /.
        #expect(object.metaSubject == "$O.SCANTRACK_IMAGES.M.ZGMxL2NhbS0wMS9wYXJjZWwvY2FtLTAxLXIxLXAzLmpwZw==")
        #expect(object.chunks == 2, "200,000 bytes in 128 KiB chunks")
        #expect(object.digest == "SHA-256=q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=")
        let meta = try JSONValue.parse(object.metaJSON(modified: Timestamp(milliseconds: 1_800_000_000_000)))
        #expect(meta["bucket"] == .string("SCANTRACK_IMAGES") && meta["nuid"] == .string(object.nuid))
        #expect(meta["size"]?.intValue == 200_000 && meta["chunks"]?.intValue == 2)
        #expect(meta["options"]?["max_chunk_size"]?.intValue == 131_072)
        #expect(meta["mtime"]?.stringValue.flatMap(Timestamp.init(rfc3339:)) != nil)
    }

    @Test("an id with dots, wildcards, spaces or CR LF becomes a token; a site or camera that is none is refused")
    func checkedTokens() throws {
        let object = try Self.object(id: "a.b *>\r\nPUB x")
        #expect(object.id == "a_b____PUB_x" && SubjectToken.isValidSubject(object.nuid))
        #expect(try Self.object(id: String(repeating: "x", count: 300)).id.count == SubjectToken.maxLength)
        #expect(throws: SubjectTokenError.self) {
            try ImageObject(kind: .noread, site: "dc1.>", camera: "cam-01", id: "x", size: 1, sha256: Self.digest)
        }
        #expect(ImageObject.parts(ofName: "dc1/cam-01/noread/t-1.jpg")?.id == "t-1")
        for hostile in [
            "dc1/cam-01/parcel/x.png", "dc1/cam-01/other/x.jpg", "dc1/cam.01/parcel/x.jpg", "dc1/cam-01/parcel/x y.jpg",
            "dc1/cam-01/parcel/../x.jpg", "dc1/cam-01/parcel/x.jpg\r\nPUB y", "dc1/cam-01/parcel/.jpg",
        ] {
            #expect(ImageObject.parts(ofName: hostile) == nil, "\(hostile)")
        }
    }

    static func parcelEvent(site: String = "dc1", camera: String = "cam-01", imageObject: String) -> String {
        """
        {"type": "parcel", "eventId": "cam-01-r1-p3.parcel", "site": "\(site)", "camera": "\(camera)",
         "time": "2026-12-07T10:00:00.000Z", "parcelId": "cam-01-r1-p3", "firstSeen": "2026-12-07T09:59:59.000Z",
         "lastSeen": "2026-12-07T10:00:00.000Z", "outline": [[10, 10], [90, 10], [90, 60], [10, 60]], "codes": [], "missing": [], "noReads": [],
         "imageObject": \(imageObject)}
        """
    }

    @Test("a parcel event's object survives its JSON; one that is not the sender's, or lies about its size, is refused")
    func heldToTheSender() throws {
        var event = try ParcelEvent.parse(
            try JSONValue.parse(Array(Self.parcelEvent(imageObject: "null").utf8)))
        #expect(event.imageObject == nil)
        event.imageObject = try Self.object()
        let again = try ParcelEvent.parse(try JSONValue.parse(event.json))
        #expect(again.imageObject == event.imageObject)

        let own = String(decoding: try Self.object().json, as: UTF8.self)
        func refused(_ body: String, site: String = "dc1", camera: String = "cam-01") -> DeadLetter? {
            return #expect(throws: DeadLetter.self) {
                _ = try ParcelEvent.parse(
                    try JSONValue.parse(Array(Self.parcelEvent(site: site, camera: camera, imageObject: body).utf8)))
            }
        }
        // Another camera's object, named by this one.
        #expect(refused(own, camera: "cam-02")?.reason == .subjectMismatch)
        #expect(
            refused(own.replacingOccurrences(of: "dc1.cam-01.", with: "dc1.cam-01.x.y."))?.reason == .subjectMismatch)
        #expect(refused(own.replacingOccurrences(of: "\"chunks\":2", with: "\"chunks\":1")) != nil)
        #expect(refused(own.replacingOccurrences(of: "\"size\":200000", with: "\"size\":99999999")) != nil)
        #expect(refused(own.replacingOccurrences(of: "SHA-256=", with: "MD5=")) != nil)
        #expect(refused(own.replacingOccurrences(of: "/parcel/", with: "/noread/")) != nil)
        #expect(refused(#""dc1/cam-01/parcel/x.jpg""#)?.reason == .wrongType)
    }

    @Test("a sighting's parcelImage must be the sender's own picture of the parcel it names")
    func sightingNamesItsParcelsPicture() throws {
        func sighting(camera: String = "cam-01", parcel: String?, image: String?) -> String {
            var extra = ""
            if let parcel { extra += ", \"parcelId\": \"\(parcel)\"" }
            if let image { extra += ", \"parcelImage\": \"\(image)\"" }
            return """
                {"type": "sighting", "eventId": "cam-01-r1-3.sighting", "site": "dc1", "camera": "\(camera)",
                 "time": "2026-12-07T10:00:00.000Z", "trackId": "cam-01-r1-3", "symbology": "EAN-13",
                 "value": "4006381333931", "status": "accepted", "firstSeen": "2026-12-07T09:59:59.000Z",
                 "lastSeen": "2026-12-07T10:00:00.000Z", "firstFrame": 1, "lastFrame": 9, "frames": 9, "decodes": 9\(extra)}
                """
        }
        func parse(_ text: String) throws -> SightingEvent {
            try SightingEvent.parse(try JSONValue.parse(Array(text.utf8)))
        }
        let named = try parse(sighting(parcel: "cam-01-r1-p3", image: "dc1/cam-01/parcel/cam-01-r1-p3.jpg"))
        #expect(named.parcelId == "cam-01-r1-p3" && named.parcelImage == "dc1/cam-01/parcel/cam-01-r1-p3.jpg")
        #expect(try parse(String(decoding: named.json, as: UTF8.self)) == named)
        #expect(try parse(sighting(parcel: "cam-01-r1-p3", image: nil)).parcelImage == nil)
        for (camera, parcel, image) in [
            ("cam-02", "cam-01-r1-p3", "dc1/cam-01/parcel/cam-01-r1-p3.jpg"),  // another camera's
            ("cam-01", nil, "dc1/cam-01/parcel/cam-01-r1-p3.jpg"),  // no parcel named
            ("cam-01", "cam-01-r1-p4", "dc1/cam-01/parcel/cam-01-r1-p3.jpg"),  // another parcel's
            ("cam-01", "cam-01-r1-p3", "dc1/cam-01/noread/cam-01-r1-p3.jpg"),  // not a parcel's
            ("cam-01", "cam-01-r1-p3", "dc1/cam-01/parcel/cam-01-r1-p3.jpg\\r\\nPUB x"),
        ] {
            let refused = #expect(throws: DeadLetter.self) {
                _ = try parse(sighting(camera: camera, parcel: parcel, image: image))
            }
            #expect(refused?.reason == .subjectMismatch, "\(camera) \(parcel ?? "-") \(image)")
        }
    }
}
