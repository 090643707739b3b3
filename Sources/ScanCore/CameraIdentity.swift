/// Who is speaking in an event: the camera and where it is.
public struct CameraIdentity: Sendable, Equatable {
    public var id: String
    public var site: String
    public var lane: String?
    public var station: String?

    public init(id: String, site: String = "default", lane: String? = nil, station: String? = nil) {
        self.id = id
        self.site = site
        self.lane = lane
        self.station = station
    }
}
