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
    /// Spacing of the horizontal scan lines (zbar's y density) and of the vertical ones (its x
    /// density), when they differ from `density`; 0 turns that direction off.
    public var rowStep: Int?
    public var columnStep: Int?

    public init(
        symbologies: Set<Symbology>? = nil, density: Int = 1, testInverted: Bool = false, rowStep: Int? = nil,
        columnStep: Int? = nil
    ) {
        self.symbologies = symbologies
        self.density = density
        self.testInverted = testInverted
        self.rowStep = rowStep
        self.columnStep = columnStep
    }

    public static let zbarDefaults = ZBarSettings()
}
