import Logging
import ScanCore
import ScanServices
import ScanEvents

/// Turns a no-read's picture into the event's PNG and file name, through the agent's image
/// store. A picture that cannot be kept does not hold the event back: it goes without it, and
/// the reason is logged.
public enum NoReadPictures {
    public static func save(_ unsaved: AgentEvent.UnsavedNoRead, into images: (any NoReadImages)?, logger: Logger)
        -> AgentEvent
    {
        saved(unsaved, into: images, logger: logger).agentEvent
    }

    /// `save`'s event before it is rendered (the images bucket may name its picture too).
    public static func saved(_ unsaved: AgentEvent.UnsavedNoRead, into images: (any NoReadImages)?, logger: Logger)
        -> NoReadEvent
    {
        let event = unsaved.event
        guard let images, let picture = unsaved.picture else { return event }
        do {
            let kept = try images.keep(picture, name: unsaved.event.imageFileName)
            var withPicture = unsaved.event
            withPicture.imagePNG = kept.png
            withPicture.image = kept.file
            return withPicture
        } catch {
            logger.warning(
                "no-read picture not kept",
                metadata: LogKey.about(agentEvent: unsaved.event.eventId).merging([
                    "trackId": "\(unsaved.event.trackId)", LogKey.error: "\(error)",
                ]) { $1 })
            return event
        }
    }
}
