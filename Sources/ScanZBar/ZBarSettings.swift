import ScanCore

/// How a zbar scanner is set up. `zbarDefaults` leaves zbar's own configuration untouched
/// (what `zbarimg` does); the agent builds settings from its decoder config instead.
public struct ZBarSettings: Sendable, Equatable {
    /// The symbologies to enable; nil keeps zbar's defaults (almost everything on).
    public var symbologies: Set<Symbology>?
    /// Scan every Nth row and column (zbar's x/y density); 1 scans every line.
    public var density: Int
    /// Ask zbar to retry inverted (light on dark) images.
    public var testInverted: Bool

    public init(symbologies: Set<Symbology>? = nil, density: Int = 1, testInverted: Bool = false) {
        self.symbologies = symbologies
        self.density = density
        self.testInverted = testInverted
    }

    public static let zbarDefaults = ZBarSettings()
}
