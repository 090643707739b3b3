import ScanAgentConfig
import ScanCore

/// The picture of each open parcel the agent may keep (`images.keep`): the crop, `margin` pixels
/// around its codes, of the frame where most of its codes were in view (of two such frames, the
/// one where they spread widest: nearest the middle of the view). A crop is copied only when a
/// frame beats the one kept, so a parcel costs a few copies over its pass, not one a frame.
public struct ParcelPictures: Sendable {
    /// Pixels added around the codes' outline on each side (clamped to the frame).
    public let margin: Int
    /// The policy (`images.keep`): which parcels' pictures are certain to be kept.
    public let keep: ImagesConfig.Keep
    private var best: [String: (codes: Int, area: Int, picture: GrayImage)] = [:]

    public init(margin: Int, keep: ImagesConfig.Keep = .all) {
        self.margin = max(0, margin)
        self.keep = keep
    }

    /// Whether the open parcel `id` will be handed out with a picture the policy keeps whatever
    /// the parcel's end: one has been taken, and the policy keeps this parcel's in any case.
    public func promises(_ id: String) -> Bool { best[id] != nil && keep.keepsParcelWhateverItsEnd(id: id) }

    /// The frame's outlines (`ParcelGrouper.outlines`) over `image`, the frame they are in.
    public mutating func update(_ outlines: [(id: String, box: Box, codes: Int)], image: GrayImage) {
        for outline in outlines {
            guard let box = outline.box.widened(by: margin).clamped(to: image.bounds) else { continue }
            let area = box.width * box.height
            if let kept = best[outline.id], (kept.codes, kept.area) >= (outline.codes, area) { continue }
            best[outline.id] = (outline.codes, area, image.cropped(to: box))
        }
    }

    /// The closed parcel's picture, forgotten here; nil when none of its codes was seen in a frame
    /// with a picture (a parcel of no-reads only: its no-reads carry theirs).
    public mutating func take(_ id: String) -> GrayImage? { best.removeValue(forKey: id)?.picture }

    /// Open parcels with a picture kept (tests).
    public var count: Int { best.count }
}
