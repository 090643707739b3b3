import Crypto
import Logging
import ScanAgentConfig
import ScanCore
import ScanEvents
import ScanServices

/// Encodes a kept picture (`images`): a grey JPEG in the agent. Called on the decoding thread.
public protocol ImageEncoder: Sendable {
    func jpeg(_ image: GrayImage, quality: Int) throws -> [UInt8]
}

/// Keeps pictures in the images bucket (`ImageObject`): each as a grey JPEG, its chunks put in
/// the sink (the spool) ahead of the event that names it, so JetStream has them by the time the
/// aggregator reads the event. In the spool a chunk is base64 text (a spool record is one line);
/// the publisher sends its bytes (`SpoolPublisher.outgoing`).
public final class ImageBucketWriter: @unchecked Sendable {
    // @unchecked: used by the decoding thread only; the counters are read by the heartbeat on it too.
    public let config: ImagesConfig
    let camera: CameraIdentity
    let encoder: any ImageEncoder
    let sink: any DurableSink
    let logger: Logger
    let metrics: AgentMetrics?
    /// Pictures kept, and their bytes, since the start.
    public private(set) var kept = 0
    public private(set) var keptBytes = 0
    /// Time spent keeping them on the decoding thread (shrinking, JPEG, digest, chunks into the
    /// spool): the agent's last log line gives it a picture (`make bench`, "Images").
    public private(set) var keepTime: Duration = .zero

    /// `<pictures> kept, <bytes> bytes, <ms> ms a picture` (the agent's last log line).
    public var summary: String {
        let each = kept == 0 ? 0 : keepTime.seconds * 1_000 / Double(kept)
        return "\(kept) kept, \(keptBytes) bytes, \(JSONWriter.format(each, decimals: 2)) ms a picture"
    }

    public init(
        config: ImagesConfig, camera: CameraIdentity, encoder: any ImageEncoder, sink: any DurableSink,
        metrics: AgentMetrics? = nil, logger: Logger
    ) {
        self.metrics = metrics
        self.config = config
        self.camera = camera
        self.encoder = encoder
        self.sink = sink
        self.logger = logger
    }

    /// The chunk subjects of this camera's pictures start with this (`$O.SCANTRACK_IMAGES.C.<site>.<camera>.`).
    public static func chunkPrefix(_ camera: CameraIdentity) -> String {
        "\(ImageObject.chunkPrefix).\(camera.site).\(camera.id)."
    }

    /// Keeps `picture` (halved until at most `maxWidth` wide) as the object of `kind` and `id`;
    /// nil when it could not be (logged: the event goes without it).
    public func keep(_ picture: GrayImage, kind: ImageObject.Kind, id: String) -> ImageObject? {
        let started = ContinuousClock.now
        defer { keepTime += ContinuousClock.now - started }
        var image = picture
        while image.width > config.maxWidth && image.width >= 2 && image.height >= 2 { image = image.halved() }
        do {
            let jpeg = try encoder.jpeg(image, quality: config.quality)
            guard jpeg.count <= ImageObject.maxBytes else {
                throw DescribedError("\(jpeg.count) bytes of JPEG, over \(ImageObject.maxBytes)")
            }
            let object = try ImageObject(
                kind: kind, site: camera.site, camera: camera.id, id: id, size: jpeg.count,
                sha256: Array(SHA256.hash(data: jpeg)))
            for index in 0..<object.chunks {
                let start = index * ImageObject.chunkSize
                let chunk = jpeg[start..<min(jpeg.count, start + ImageObject.chunkSize)]
                guard
                    sink.append(
                        subject: object.chunkSubject, eventId: "\(object.id)-\(index)",
                        payload: Array(Base64.encode(Array(chunk)).utf8))
                else { throw DescribedError("the spool is full") }
            }
            kept += 1
            keptBytes += jpeg.count
            metrics?.imagesKept.increment()
            metrics?.imageBytes.increment(by: Int64(jpeg.count))
            return object
        } catch {
            logger.warning(
                "picture not kept in the images bucket",
                metadata: ["kind": "\(kind.rawValue)", "id": "\(TerminalText.escaped(id))", LogKey.error: "\(error)"])
            return nil
        }
    }

    /// A parcel's event with its picture named, when the policy keeps it (`unsaved.diverted`: its
    /// decision diverts it); the event as it was otherwise.
    public func parcel(_ unsaved: AgentEvent.UnsavedParcel) -> AgentEvent {
        let event = unsaved.event
        let divertedOrIncomplete = unsaved.diverted || !event.missing.isEmpty
        guard config.keep.keepsParcel(id: event.parcelId, noRead: event.noRead, diverted: divertedOrIncomplete),
            let object = keep(unsaved.picture, kind: .parcel, id: event.parcelId)
        else { return event.agentEvent }
        var named = event
        named.imageObject = object
        return named.agentEvent
    }

    /// A no-read's event (its PNG already added, `NoReadPictures`) with the same picture kept as
    /// JPEG in the bucket, when the policy keeps no-reads.
    public func noRead(_ event: NoReadEvent, picture: GrayImage?) -> AgentEvent {
        guard config.keep.keepsNoReads, let picture, let object = keep(picture, kind: .noread, id: event.trackId)
        else { return event.agentEvent }
        var named = event
        named.imageObject = object
        return named.agentEvent
    }
}
