import ScanCore

/// `noread`: a code-like region the camera followed for at least `noread.minFrames` frames that
/// left the view without a confirmed decode (docs/integration.md). Carries the region's picture
/// from its sharpest frame as a PNG (base64), and the file name the agent kept it under.
public struct NoReadEvent: Sendable, Equatable {
    public var envelope: EventEnvelope
    public var trackId: String
    public var firstSeen: Timestamp
    public var lastSeen: Timestamp
    public var firstFrame: Int
    public var lastFrame: Int
    public var frames: Int
    /// Corners of the region where it was first and last seen.
    public var firstBox: [Point]
    public var lastBox: [Point]
    /// `linear` or `matrix`, when the region's edges said so.
    public var family: String?
    /// Why it was not read (`NoReadReason`'s raw values); absent from agents before it existed.
    public var reason: String?
    public var lane: String?
    public var station: String?
    public var sessionId: String?
    /// Mean contrast between neighbouring pixels in the picture (low: blurred).
    public var sharpness: Double?
    /// Estimates from the picture's frame (`LabelQuality`): the narrowest element's width in
    /// pixels, and the contrast between bars and paper (0–255).
    public var pixelsPerModule: Double?
    public var contrast: Double?
    /// The picture's file name in the agent's image folder.
    public var image: String?
    /// The picture: PNG bytes.
    public var imagePNG: [UInt8]?
    /// The picture as JPEG in the images bucket, when the agent's `images.keep` kept one.
    public var imageObject: ImageObject?

    public var eventId: String { envelope.eventId }
    public var site: String { envelope.site }
    public var camera: String { envelope.camera }
    public var time: Timestamp { envelope.time }

    /// The file name its picture is kept under: the track id, with anything but letters,
    /// digits, `-`, `_` and `.` made `_`.
    public var imageFileName: String {
        String(trackId.map { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) ? $0 : "_" }) + ".png"
    }

    public var json: [UInt8] {
        var writer = envelope.writer()
        writer.field("trackId", trackId)
        writer.field("firstSeen", firstSeen.description)
        writer.field("lastSeen", lastSeen.description)
        writer.field("firstFrame", firstFrame)
        writer.field("lastFrame", lastFrame)
        writer.field("frames", frames)
        writer.raw("box", EventFields.boxesJSON(first: firstBox, last: lastBox))
        writer.field("family", family)
        writer.field("reason", reason)
        writer.field("lane", lane)
        writer.field("station", station)
        writer.field("sessionId", sessionId)
        if let sharpness { writer.field("sharpness", sharpness, decimals: 1) }
        if let pixelsPerModule { writer.field("pixelsPerModule", pixelsPerModule, decimals: 1) }
        if let contrast { writer.field("contrast", contrast, decimals: 0) }
        writer.field("image", image)
        if let imagePNG { writer.field("imagePng", Base64.encode(imagePNG)) }
        if let imageObject { writer.raw("imageObject", imageObject.json) }
        return writer.finished()
    }

    public var agentEvent: AgentEvent { AgentEvent(kind: .noread, eventId: eventId, time: time, json: json) }

    /// PNG files start with these bytes.
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    /// Largest picture accepted, in bytes of PNG.
    public static let maxImageBytes = 1 << 20

    /// A no-read read from its JSON; a breach of the contract is a dead letter naming the field.
    public static func parse(_ event: JSONValue) throws(DeadLetter) -> NoReadEvent {
        let fields = EventFields(event)
        let envelope = try fields.envelope(type: ["noread"])
        guard let boxes = try fields.boxes(required: true) else { throw DeadLetter(.missingField, "box") }
        let family = try fields.optionalString("family", maxLength: 16)
        if let family, CodeFamily(rawValue: family) == nil {
            throw DeadLetter(.badValue, "family '\(family)' is not linear or matrix")
        }
        let reason = try fields.optionalString("reason", maxLength: 32)
        if let reason, NoReadReason(rawValue: reason) == nil {
            throw DeadLetter(
                .badValue,
                "reason '\(reason)' is not one of \(NoReadReason.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var png: [UInt8]?
        if let text = try fields.optionalString("imagePng", maxLength: (maxImageBytes + 2) / 3 * 4) {
            guard let bytes = Base64.decode(text), bytes.starts(with: pngSignature) else {
                throw DeadLetter(.badValue, "imagePng is not a base64 PNG")
            }
            png = bytes
        }
        var noRead = NoReadEvent(
            envelope: envelope, trackId: try fields.string("trackId", maxLength: 256),
            firstSeen: try fields.time("firstSeen"), lastSeen: try fields.time("lastSeen"),
            firstFrame: try fields.int("firstFrame"), lastFrame: try fields.int("lastFrame"),
            frames: try fields.int("frames"), firstBox: boxes.first, lastBox: boxes.last)
        noRead.family = family
        noRead.reason = reason
        noRead.lane = try fields.optionalToken("lane")
        noRead.station = try fields.optionalToken("station")
        noRead.sessionId = try fields.optionalString("sessionId")
        noRead.sharpness = try fields.optionalDouble("sharpness")
        noRead.pixelsPerModule = try fields.optionalDouble("pixelsPerModule")
        noRead.contrast = try fields.optionalDouble("contrast")
        if let value = noRead.pixelsPerModule, !(value >= 0 && value <= 10_000) {
            throw DeadLetter(.badValue, "pixelsPerModule \(value) is not between 0 and 10000")
        }
        if let value = noRead.contrast, !(value >= 0 && value <= 255) {
            throw DeadLetter(.badValue, "contrast \(value) is not between 0 and 255")
        }
        noRead.image = try fields.optionalString("image", maxLength: 512)
        noRead.imagePNG = png
        noRead.imageObject = try ImageObject.parse(
            event["imageObject"], site: envelope.site, camera: envelope.camera, kind: .noread)
        guard noRead.lastSeen >= noRead.firstSeen, noRead.lastFrame >= noRead.firstFrame, noRead.frames >= 1 else {
            throw DeadLetter(.badValue, "lastSeen/lastFrame before firstSeen/firstFrame, or frames < 1")
        }
        return noRead
    }

    public init(
        envelope: EventEnvelope, trackId: String, firstSeen: Timestamp, lastSeen: Timestamp, firstFrame: Int,
        lastFrame: Int, frames: Int, firstBox: [Point], lastBox: [Point]
    ) {
        self.envelope = envelope
        self.trackId = trackId
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.firstFrame = firstFrame
        self.lastFrame = lastFrame
        self.frames = frames
        self.firstBox = firstBox
        self.lastBox = lastBox
    }
}
