import Foundation
import ScanCore
import ScanEvents

/// A site's layout: its lanes, the cameras along each lane in belt order with the expected travel
/// time between neighbours, and its pack stations. The aggregator merges sightings of one item
/// from the cameras of a lane with it. File format: docs/topology.md.
public struct Topology: Sendable, Equatable {
    public var sites: [Site]

    public init(sites: [Site]) { self.sites = sites }

    public struct Site: Sendable, Equatable {
        public var id: String
        /// IANA zone for shifts and reports.
        public var timeZone: String = "UTC"
        public var lanes: [Lane] = []
        public var stations: [Station] = []
        public init(id: String, timeZone: String = "UTC", lanes: [Lane] = [], stations: [Station] = []) {
            self.id = id
            self.timeZone = timeZone
            self.lanes = lanes
            self.stations = stations
        }
    }

    public struct Lane: Sendable, Equatable {
        public var id: String
        /// Cameras in belt order; the first one's offset is zero.
        public var cameras: [LaneCamera]
        /// How far (±) a camera's sighting may be from the expected time and still be the same item.
        public var windowMilliseconds: Int64 = 1_000
        /// How long after the last camera's expected time a pass waits for late sightings.
        public var graceMilliseconds: Int64 = 2_000
        /// The aggregator decides each parcel pass of the lane (nil: it decides none).
        public var decision: LaneDecision?
        /// Expected time from the first camera to the lane's dimensioner or scale (negative:
        /// upstream of it), to match measurements to parcel passes.
        public var measureOffsetMilliseconds: Int64 = 0
        public init(
            id: String, cameras: [LaneCamera], windowMilliseconds: Int64 = 1_000, graceMilliseconds: Int64 = 2_000,
            decision: LaneDecision? = nil, measureOffsetMilliseconds: Int64 = 0
        ) {
            self.measureOffsetMilliseconds = measureOffsetMilliseconds
            self.id = id
            self.cameras = cameras
            self.windowMilliseconds = windowMilliseconds
            self.graceMilliseconds = graceMilliseconds
            self.decision = decision
        }

        /// Expected time from the first camera to `camera`, or nil when it is not on the lane.
        public func offset(of camera: String) -> Int64? { cameras.first { $0.id == camera }?.offsetMilliseconds }
        /// Expected time from the first camera to the last.
        public var span: Int64 { cameras.last?.offsetMilliseconds ?? 0 }
    }

    /// A lane's divert decisions made by the aggregator, once its cameras' parcels are merged
    /// into a parcel pass (docs/topology.md, "decision").
    public struct LaneDecision: Sendable, Equatable {
        /// A decision reaches the gateway at most this long after the last camera's parcel left
        /// its view, or it says `late`.
        public var deadlineMilliseconds: Int64 = 1_500
        /// Reasons that divert; any other reason found is still reported on a `pass`.
        public var divertOn: Set<DecisionReason> = Set(DecisionReason.allCases)
        /// Check each parcel against the orders: the first of its codes that names a known order
        /// is its order (none: `unknown-order`), its other codes are counted against the lines.
        public var checkOrders = false
        /// Belt speed (m/s) and distance from the last camera to the diverter (m) for `divertAt`.
        public var beltSpeed: Double?
        public var divertDistance: Double?

        public init(
            deadlineMilliseconds: Int64 = 1_500, divertOn: Set<DecisionReason> = Set(DecisionReason.allCases),
            checkOrders: Bool = false, beltSpeed: Double? = nil, divertDistance: Double? = nil
        ) {
            self.deadlineMilliseconds = deadlineMilliseconds
            self.divertOn = divertOn
            self.checkOrders = checkOrders
            self.beltSpeed = beltSpeed
            self.divertDistance = divertDistance
        }

        static let keys = ["deadlineSeconds", "divertOn", "checkOrders", "beltSpeed", "divertDistance"]

        /// The lane's `decision` object; every problem by path.
        static func read(_ value: JSONValue, at path: String, reader: inout ConfigReader) -> LaneDecision? {
            guard let members = reader.object(value, at: path, allowed: keys) else { return nil }
            var decision = LaneDecision()
            if let deadline = reader.double(
                members["deadlineSeconds"], at: path + ".deadlineSeconds", range: 0.01...600)
            {
                decision.deadlineMilliseconds = Int64((deadline * 1000).rounded())
            }
            if let reasons = DecisionReason.read(
                members["divertOn"], at: path + ".divertOn", allowed: DecisionReason.allCases, reader: &reader)
            {
                decision.divertOn = reasons
            }
            decision.checkOrders = reader.bool(members["checkOrders"], at: path + ".checkOrders") ?? false
            decision.beltSpeed = reader.double(members["beltSpeed"], at: path + ".beltSpeed", range: 0.01...20)
            decision.divertDistance = reader.double(
                members["divertDistance"], at: path + ".divertDistance", range: 0...1_000)
            return decision
        }

        /// As `read` takes it (how the store keeps it).
        public var json: [UInt8] {
            var writer = JSONWriter()
            writer.field("deadlineSeconds", Double(deadlineMilliseconds) / 1000, decimals: 3)
            writer.strings("divertOn", DecisionReason.allCases.filter(divertOn.contains).map(\.rawValue))
            writer.field("checkOrders", checkOrders)
            if let beltSpeed { writer.field("beltSpeed", beltSpeed, decimals: 3) }
            if let divertDistance { writer.field("divertDistance", divertDistance, decimals: 3) }
            return writer.finished()
        }

        /// Reads what `json` wrote (a stored lane's decision); nil when it is not that.
        public init?(stored bytes: [UInt8]) {
            guard let value = try? JSONValue.parse(bytes) else { return nil }
            var reader = ConfigReader()
            guard let decision = Self.read(value, at: "decision", reader: &reader), reader.issues.isEmpty else {
                return nil
            }
            self = decision
        }
    }

    public struct LaneCamera: Sendable, Equatable {
        public var id: String
        /// Expected travel time from the first camera of the lane (sum of the travel times).
        public var offsetMilliseconds: Int64
        public init(id: String, offsetMilliseconds: Int64) {
            self.id = id
            self.offsetMilliseconds = offsetMilliseconds
        }
    }

    public struct Station: Sendable, Equatable {
        public var id: String
        public var cameras: [String]
        public init(id: String, cameras: [String]) {
            self.id = id
            self.cameras = cameras
        }
    }

    /// The lane a camera belongs to.
    public func lane(site: String, camera: String) -> Lane? {
        sites.first { $0.id == site }?.lanes.first { $0.offset(of: camera) != nil }
    }

    /// The pack station a camera belongs to.
    public func station(site: String, camera: String) -> Station? {
        sites.first { $0.id == site }?.stations.first { $0.cameras.contains(camera) }
    }

    public func site(_ id: String) -> Site? { sites.first { $0.id == id } }

    public func lane(site: String, id: String) -> Lane? {
        sites.first { $0.id == site }?.lanes.first { $0.id == id }
    }

    /// Reads a topology file, listing every problem by JSON path.
    public static func parse(_ bytes: [UInt8], file: String) throws(ConfigErrors) -> Topology {
        let document = try ConfigReader.document(bytes, file: file)
        var reader = ConfigReader()
        var sites: [Site] = []
        let root = reader.object(document, at: "$", allowed: ["version", "sites"])
        if let version = reader.int(root?["version"], at: "version", range: 1...1000), version != 1 {
            reader.fail("version", "version \(version) is not supported (1)")
        }
        if root != nil && root?["sites"] == nil { reader.fail("sites", "required: a list of sites") }
        for (s, element) in (reader.array(root?["sites"], at: "sites") ?? []).enumerated() {
            let path = "sites[\(s)]"
            guard let members = reader.object(element, at: path, allowed: ["id", "timeZone", "lanes", "stations"])
            else { continue }
            let id = token(&reader, members["id"], at: path + ".id") ?? ""
            if sites.contains(where: { $0.id == id }) { reader.fail(path + ".id", "site '\(id)' appears twice") }
            var site = Site(id: id)
            if let zone = reader.string(members["timeZone"], at: path + ".timeZone") {
                if TimeZone(identifier: zone) == nil {
                    reader.fail(path + ".timeZone", "'\(zone)' is not an IANA time zone (e.g. Europe/Zurich)")
                } else {
                    site.timeZone = zone
                }
            }
            var seenCameras: Set<String> = []
            for (l, laneElement) in (reader.array(members["lanes"], at: path + ".lanes") ?? []).enumerated() {
                let lanePath = "\(path).lanes[\(l)]"
                if let lane = parseLane(&reader, laneElement, at: lanePath, seen: &seenCameras) {
                    if site.lanes.contains(where: { $0.id == lane.id }) {
                        reader.fail(lanePath + ".id", "lane '\(lane.id)' appears twice")
                    }
                    site.lanes.append(lane)
                }
            }
            for (t, stationElement) in (reader.array(members["stations"], at: path + ".stations") ?? []).enumerated() {
                let stationPath = "\(path).stations[\(t)]"
                guard let station = reader.object(stationElement, at: stationPath, allowed: ["id", "cameras"]) else {
                    continue
                }
                let stationId = token(&reader, station["id"], at: stationPath + ".id") ?? ""
                var cameras: [String] = []
                for (c, camera) in (reader.array(station["cameras"], at: stationPath + ".cameras") ?? []).enumerated() {
                    if let id = token(&reader, camera, at: "\(stationPath).cameras[\(c)]") { cameras.append(id) }
                }
                site.stations.append(Station(id: stationId, cameras: cameras))
            }
            sites.append(site)
        }
        if !reader.issues.isEmpty { throw ConfigErrors(file: file, issues: reader.issues) }
        return Topology(sites: sites)
    }

    private static func parseLane(
        _ reader: inout ConfigReader, _ element: JSONValue, at path: String, seen: inout Set<String>
    ) -> Lane? {
        guard
            let members = reader.object(
                element, at: path,
                allowed: ["id", "cameras", "windowSeconds", "graceSeconds", "decision", "measureOffsetSeconds"])
        else {
            return nil
        }
        let id = token(&reader, members["id"], at: path + ".id") ?? ""
        var cameras: [LaneCamera] = []
        var offset: Int64 = 0
        let list = reader.array(members["cameras"], at: path + ".cameras") ?? []
        if list.isEmpty { reader.fail(path + ".cameras", "a lane needs at least one camera") }
        for (c, cameraElement) in list.enumerated() {
            let cameraPath = "\(path).cameras[\(c)]"
            guard let camera = reader.object(cameraElement, at: cameraPath, allowed: ["id", "travelSeconds"]) else {
                continue
            }
            guard let cameraId = token(&reader, camera["id"], at: cameraPath + ".id") else { continue }
            if !seen.insert(cameraId).inserted {
                reader.fail(cameraPath + ".id", "camera '\(cameraId)' is on more than one lane")
            }
            if let travel = reader.double(camera["travelSeconds"], at: cameraPath + ".travelSeconds", range: 0...3600) {
                if c == 0 && travel != 0 {
                    reader.fail(cameraPath + ".travelSeconds", "the first camera of a lane has no travel time")
                }
                offset += Int64((travel * 1000).rounded())
            } else if c > 0 && camera["travelSeconds"] == nil {
                reader.fail(
                    cameraPath + ".travelSeconds", "required after the first camera: seconds from the previous camera")
            }
            cameras.append(LaneCamera(id: cameraId, offsetMilliseconds: offset))
        }
        var lane = Lane(id: id, cameras: cameras)
        if let window = reader.double(members["windowSeconds"], at: path + ".windowSeconds", range: 0.01...600) {
            lane.windowMilliseconds = Int64((window * 1000).rounded())
        }
        if let grace = reader.double(members["graceSeconds"], at: path + ".graceSeconds", range: 0...3600) {
            lane.graceMilliseconds = Int64((grace * 1000).rounded())
        }
        if let offset = reader.double(
            members["measureOffsetSeconds"], at: path + ".measureOffsetSeconds", range: -3600...3600)
        {
            lane.measureOffsetMilliseconds = Int64((offset * 1000).rounded())
        }
        if let decision = members["decision"] {
            lane.decision = LaneDecision.read(decision, at: path + ".decision", reader: &reader)
        }
        return lane
    }

    private static func token(_ reader: inout ConfigReader, _ value: JSONValue?, at path: String) -> String? {
        guard let value else {
            reader.fail(path, "required")
            return nil
        }
        return reader.token(value, at: path)
    }
}

extension EventValidator {
    /// The lane and station an event names must be the topology's for its camera: a camera cannot
    /// move its reads into another lane's figures or its sessions to another station. A site the
    /// topology does not describe has nothing to check against (its events make no item passes;
    /// its sessions keep the station they name).
    public static func checkPlace(site: String, camera: String, lane: String?, station: String?, topology: Topology)
        throws(DeadLetter)
    {
        guard topology.site(site) != nil else { return }
        let places: [(named: String?, expected: String?, reason: DeadLetterReason, kind: String, on: String)] = [
            (lane, topology.lane(site: site, camera: camera)?.id, .laneMismatch, "lane", "on"),
            (station, topology.station(site: site, camera: camera)?.id, .stationMismatch, "station", "at"),
        ]
        for place in places {
            guard let named = place.named, named != place.expected else { continue }
            throw DeadLetter(
                place.reason,
                "the event names \(place.kind) '\(named)' but camera '\(camera)' is "
                    + (place.expected.map { "\(place.on) \(place.kind) '\($0)'" } ?? "\(place.on) no \(place.kind)")
                    + " of site '\(site)' in the topology")
        }
    }
}

extension Topology {
    /// Every camera of every site, lanes' and stations', once each, in topology order.
    public var cameraSenders: [(site: String, camera: String)] {
        var seen = Set<[String]>()
        var senders: [(site: String, camera: String)] = []
        for site in sites {
            let cameras = site.lanes.flatMap { $0.cameras.map(\.id) } + site.stations.flatMap(\.cameras)
            for camera in cameras where seen.insert([site.id, camera]).inserted { senders.append((site.id, camera)) }
        }
        return senders
    }

    public var laneSenders: [(site: String, lane: String)] {
        sites.flatMap { site in site.lanes.map { (site.id, $0.id) } }
    }
}
