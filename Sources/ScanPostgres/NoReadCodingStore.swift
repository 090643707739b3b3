import ScanCore
import ScanEvents

/// No-reads resolved by a person (`noread_codings`, migration 0021): `scanadmin noreads resolve`
/// writes one, once; the aggregator's outbox publishes it as a `coded` result.
public struct NoReadCodingStore {
    public let connection: PGConnection

    public init(connection: PGConnection) { self.connection = connection }

    /// What a person said of a no-read.
    public struct Resolution: Sendable, Equatable {
        public var outcome: NoReadResolution
        /// Set exactly when `outcome` is `keyed`.
        public var code: KeyedCode?
        /// The name they gave (`--by`).
        public var by: String

        public init(outcome: NoReadResolution, code: KeyedCode?, by: String) {
            self.outcome = outcome
            self.code = code
            self.by = by
        }
    }

    /// Why a no-read could not be resolved.
    public enum ResolveError: Error, Sendable, Equatable, CustomStringConvertible {
        case noSuchNoRead(String)
        /// Cameras of the sites that sent a no-read with this id: name one.
        case ambiguous(String, cameras: [String])
        /// The no-read's camera is on no lane, so no lane's WMS subject can carry the coding.
        case noLane(String, camera: String)
        case alreadyResolved(String, outcome: String, by: String, at: String)
        case database(PGError)

        public var description: String {
            switch self {
            case .noSuchNoRead(let id): "no no-read with id '\(TerminalText.escaped(id))'"
            case .ambiguous(let id, let cameras):
                "no-read id '\(TerminalText.escaped(id))' was sent by "
                    + cameras.map(TerminalText.escaped).joined(separator: ", ") + "; name one with --camera SITE/CAMERA"
            case .noLane(let id, let camera):
                "no-read '\(TerminalText.escaped(id))' is from camera '\(TerminalText.escaped(camera))', which is on no "
                    + "lane: its coding would have no lane subject to go out on (scanadmin topology)"
            case .alreadyResolved(let id, let outcome, let by, let at):
                "no-read '\(TerminalText.escaped(id))' was already resolved (\(outcome)) by "
                    + "'\(TerminalText.escaped(by))' at \(at)"
            case .database(let error): "\(error)"
            }
        }
    }

    /// Stores `resolution` for no-read `id` (of `camera`, `SITE/CAMERA`, when several sent that
    /// id) and returns the `coded` event the aggregator will publish. Refused when the no-read is
    /// unknown, on no lane, or already resolved: a coding is written once.
    public func resolve(id: String, camera: String? = nil, _ resolution: Resolution) throws(ResolveError)
        -> CodedEvent
    {
        precondition((resolution.outcome == .keyed) == (resolution.code != nil), "a keyed resolution has a code")
        let result: Result<CodedEvent, ResolveError>
        do {
            result = try connection.transaction { () throws(PGError) in
                try resolving(id: id, camera: camera, resolution)
            }
        } catch {
            throw .database(error)
        }
        return try result.get()
    }

    private func resolving(id: String, camera: String?, _ resolution: Resolution) throws(PGError)
        -> Result<CodedEvent, ResolveError>
    {
        let noReads = try connection.query(
            """
            SELECT t.site, t.camera, t.track_id, t.item_id,
                   coalesce(t.lane, (SELECT lc.lane FROM lane_cameras lc
                                     WHERE lc.site = t.site AND lc.camera = t.camera ORDER BY lc.lane LIMIT 1)) AS lane,
                   floor(extract(epoch FROM t.first_seen) * 1000)::bigint AS first_seen
            FROM noreads t WHERE t.event_id = $1 AND ($2::text IS NULL OR t.site || '/' || t.camera = $2)
            ORDER BY t.site, t.camera
            """, [.text(id), .optionalText(camera)]
        ).named("no-read to resolve")
        guard let row = noReads.first else { return .failure(.noSuchNoRead(id)) }
        guard noReads.count == 1 else {
            var cameras: [String] = []
            for row in noReads { cameras.append(try row.text("site") + "/" + row.text("camera")) }
            return .failure(.ambiguous(id, cameras: cameras))
        }
        let (site, cameraId) = (try row.text("site"), try row.text("camera"))
        guard let lane = try row.optionalText("lane") else { return .failure(.noLane(id, camera: cameraId)) }
        // The parcel pass holding it: the camera's parcel that names the no-read, in the pass whose
        // members hold that parcel (the newest, should a parcel have been merged twice).
        let parcelPass = try connection.query(
            """
            SELECT pp.pass_id FROM parcels p
            JOIN parcel_passes pp ON pp.site = p.site AND pp.lane = $4
                 AND pp.members @> jsonb_build_array(jsonb_build_object('eventId', p.event_id, 'camera', p.camera))
            WHERE p.site = $1 AND p.camera = $2 AND p.body->'noReads' ? $3
            ORDER BY pp.first_seen DESC, pp.pass_id LIMIT 1
            """, [.text(site), .text(cameraId), .text(id), .text(lane)]
        ).named("the no-read's parcel pass").first.map { row throws(PGError) in try row.text("pass_id") }
        let code = resolution.code
        let inserted = try connection.query(
            """
            INSERT INTO noread_codings (site, camera, noread_id, lane, noread_first_seen, outcome, code, symbology, gs1,
                                        item_id, parcel_pass_id, keyed_by)
            VALUES ($1, $2, $3, $4, to_timestamp($5::bigint / 1000.0), $6, $7, $8, $9, $10, $11, $12)
            ON CONFLICT DO NOTHING
            RETURNING floor(extract(epoch FROM keyed_at) * 1000)::bigint AS keyed_at
            """,
            [
                .text(site), .text(cameraId), .text(id), .text(lane), .int(try row.int("first_seen")),
                .text(resolution.outcome.rawValue), .optionalText(code?.value),
                .optionalText(code?.symbology?.rawValue), .text(code?.gs1 == true ? "true" : "false"),
                .optionalText(try row.optionalText("item_id")), .optionalText(parcelPass), .text(resolution.by),
            ]
        ).named("no-read coding")
        guard let stored = inserted.first else {
            let earlier = try connection.query(
                """
                SELECT outcome, keyed_by, \(SQLText.utc("keyed_at")) AS keyed_at FROM noread_codings
                WHERE site = $1 AND camera = $2 AND noread_id = $3
                """, [.text(site), .text(cameraId), .text(id)]
            ).named("earlier coding")
            guard let earlier = earlier.first else { return .failure(.noSuchNoRead(id)) }
            return .failure(
                .alreadyResolved(
                    id, outcome: try earlier.text("outcome"), by: try earlier.text("keyed_by"),
                    at: try earlier.text("keyed_at")))
        }
        let keyedAt = try stored.milliseconds("keyed_at")
        return .success(
            CodedEvent(
                noReadId: id, site: site, lane: lane, camera: cameraId, outcome: resolution.outcome,
                code: code.map { Self.eventCode($0, year: keyedAt.utcYear) }, keyedBy: resolution.by, keyedAt: keyedAt,
                noReadFirstSeen: try row.milliseconds("first_seen"), itemId: try row.optionalText("item_id"),
                parcelPassId: parcelPass))
    }

    /// Codings not published yet, oldest first.
    public func unpublished(limit: Int) throws(PGError) -> [CodedEvent] {
        try codings(where: "NOT published", limit: limit, named: "codings to publish")
    }

    /// Codings naming a parcel pass not given to it yet, oldest first (a round's `codings`).
    public func unapplied(limit: Int) throws(PGError) -> [CodedEvent] {
        try codings(where: "NOT applied AND parcel_pass_id IS NOT NULL", limit: limit, named: "codings to apply")
    }

    /// Marks codings given to their parcel passes.
    public func markApplied(_ codings: [CodedEvent]) throws(PGError) {
        for coding in codings {
            try connection.query(
                "UPDATE noread_codings SET applied = true WHERE site = $1 AND camera = $2 AND noread_id = $3",
                [.text(coding.site), .text(coding.camera), .text(coding.noReadId)])
        }
    }

    /// `condition` is one of this type's constants, never built from input.
    private func codings(where condition: StaticString, limit: Int, named name: String) throws(PGError)
        -> [CodedEvent]
    {
        var events: [CodedEvent] = []
        for row in try connection.query(
            """
            SELECT site, camera, noread_id, lane, outcome, code, symbology, gs1, item_id, parcel_pass_id, keyed_by,
                   floor(extract(epoch FROM keyed_at) * 1000)::bigint AS keyed_at,
                   floor(extract(epoch FROM noread_first_seen) * 1000)::bigint AS first_seen,
                   (SELECT n.trace_id FROM noreads n
                    WHERE n.site = noread_codings.site AND n.camera = noread_codings.camera
                      AND n.event_id = noread_codings.noread_id
                    ORDER BY n.first_seen LIMIT 1) AS trace_id
            FROM noread_codings WHERE \(condition.description) ORDER BY keyed_at, site, camera, noread_id LIMIT $1
            """, [.int(limit)]
        ).named(name) {
            let keyedAt = try row.milliseconds("keyed_at")
            let code = try row.optionalText("code").map { value throws(PGError) in
                Self.eventCode(
                    KeyedCode(
                        value: value, symbology: try row.optionalText("symbology").flatMap(Symbology.init(rawValue:)),
                        gs1: try row.bool("gs1")),
                    year: keyedAt.utcYear)
            }
            var event = CodedEvent(
                noReadId: try row.text("noread_id"), site: try row.text("site"), lane: try row.text("lane"),
                camera: try row.text("camera"), outcome: try row.value("outcome", as: NoReadResolution.self),
                code: code, keyedBy: try row.text("keyed_by"), keyedAt: keyedAt,
                noReadFirstSeen: try row.milliseconds("first_seen"), itemId: try row.optionalText("item_id"),
                parcelPassId: try row.optionalText("parcel_pass_id"))
            event.traceId = try row.optionalText("trace_id")
            events.append(event)
        }
        return events
    }

    public func markPublished(_ coding: CodedEvent) throws(PGError) {
        try connection.query(
            "UPDATE noread_codings SET published = true WHERE site = $1 AND camera = $2 AND noread_id = $3",
            [.text(coding.site), .text(coding.camera), .text(coding.noReadId)])
    }

    /// A keyed code as the `coded` event carries it (with its GS1 elements where it is GS1 data).
    public static func eventCode(_ code: KeyedCode, year: Int) -> CodedEvent.Code {
        CodedEvent.Code(
            symbology: code.symbology?.rawValue, value: code.value, gs1: code.gs1,
            gs1Elements: code.gs1 ? GS1ElementStrings.parse(Array(code.value.utf8), referenceYear: year) : nil)
    }
}
