import ScanCore
import ScanEvents
import ScanReconciliation

/// Parcel passes in PostgreSQL (migration 0014): the camera parcels waiting to be merged, where
/// their codes' sightings stand, and the passes with their members as JSON.
public struct ParcelPassStore {
    public let connection: PGConnection

    public init(connection: PGConnection) { self.connection = connection }

    /// Camera parcels not merged yet, oldest stored first; a stored body that no longer parses is
    /// set aside (merged) rather than blocking the queue.
    public func unmergedParcels(limit: Int) throws(PGError) -> [UnmergedParcel] {
        var parcels: [UnmergedParcel] = []
        var unreadable: [String] = []
        for row in try connection.query(
            """
            SELECT event_id, body::text AS body, floor(extract(epoch FROM received_at) * 1000)::bigint AS received
            FROM parcels WHERE NOT merged ORDER BY received_at, event_id LIMIT $1
            """, [.int(limit)]
        ).named("parcels to merge") {
            let eventId = try row.text("event_id")
            guard let value = try? JSONValue.parse(Array(try row.text("body").utf8)),
                let event = try? ParcelEvent.parse(value)
            else {
                unreadable.append(eventId)
                continue
            }
            parcels.append(UnmergedParcel(event, received: try row.milliseconds("received")))
        }
        try markParcelsMerged(eventIds: unreadable)
        return parcels
    }

    /// Where each track's sighting stands: reconciled, accepted, its item pass.
    public func sightingStates(trackIds: [String]) throws(PGError) -> [String: SightingState] {
        guard !trackIds.isEmpty else { return [:] }
        var states: [String: SightingState] = [:]
        for row in try connection.query(
            """
            SELECT s.track_id, s.reconciled, s.status = 'accepted' AS accepted, i.item_id,
                   EXISTS (SELECT 1 FROM item_sightings o WHERE o.item_id = i.item_id AND o.camera <> s.camera)
                       AS read_elsewhere
            FROM sightings s LEFT JOIN item_sightings i ON i.event_id = s.event_id
            WHERE s.event_id = ANY($1::text[])
            """, [.text(SiteStore.arrayLiteral(trackIds.map { $0 + ".sighting" }))]
        ).named("sighting states") {
            states[try row.text("track_id")] = SightingState(
                reconciled: try row.bool("reconciled"), accepted: try row.bool("accepted"),
                itemId: try row.optionalText("item_id"), readElsewhere: try row.bool("read_elsewhere"))
        }
        return states
    }

    /// Open passes, those first seen between `from` and `to`, and those of `ids`, with when each
    /// was changed.
    public func parcelPasses(from: Timestamp, to: Timestamp, ids: [String] = []) throws(PGError) -> (
        passes: [ParcelPass], updatedAt: [String: Timestamp]
    ) {
        var passes: [ParcelPass] = []
        var updatedAt: [String: Timestamp] = [:]
        for row in try connection.query(
            """
            SELECT pass_id, site, lane, members::text AS members, measurement::text AS measurement,
                   codings::text AS codings, revision, closed_at IS NOT NULL AS closed,
                   floor(extract(epoch FROM updated_at) * 1000)::bigint AS updated
            FROM parcel_passes
            WHERE closed_at IS NULL OR (first_seen >= $1::timestamptz AND first_seen <= $2::timestamptz)
                  OR pass_id = ANY($3::text[])
            ORDER BY pass_id
            """, [.text(from.description), .text(to.description), .text(SiteStore.arrayLiteral(ids))]
        ).named("parcel passes") {
            var pass = try Self.pass(row)
            pass.closed = try row.bool("closed")
            passes.append(pass)
            updatedAt[pass.passId] = try row.milliseconds("updated")
        }
        return (passes, updatedAt)
    }

    /// Inserts or updates each pass; a closed pass keeps its first closing time.
    public func saveParcelPasses(_ rows: [ParcelPassRow]) throws(PGError) {
        for row in rows {
            let pass = row.pass
            try connection.query(
                """
                INSERT INTO parcel_passes (pass_id, site, lane, first_seen, last_seen, cameras_expected, members, codes,
                                           complete, no_read, revision, closed_at, measurement, codings)
                VALUES ($1, $2, $3, $4::timestamptz, $5::timestamptz, $6::integer, $7::jsonb, $8::integer, $9::boolean,
                        $10::boolean, $11::integer, CASE WHEN $12::boolean THEN now() END, $13::jsonb, $14::jsonb)
                ON CONFLICT (pass_id) DO UPDATE SET
                    first_seen = EXCLUDED.first_seen, last_seen = EXCLUDED.last_seen,
                    cameras_expected = EXCLUDED.cameras_expected, members = EXCLUDED.members, codes = EXCLUDED.codes,
                    complete = EXCLUDED.complete, no_read = EXCLUDED.no_read, revision = EXCLUDED.revision,
                    closed_at = coalesce(parcel_passes.closed_at, EXCLUDED.closed_at), measurement = EXCLUDED.measurement,
                    codings = EXCLUDED.codings, updated_at = now()
                """,
                [
                    .text(pass.passId), .text(pass.site), .text(pass.lane), .text(pass.firstSeen.description),
                    .text(pass.lastSeen.description), .int(row.camerasExpected),
                    .text(String(decoding: JSONWriter.array(pass.members.map(\.json)), as: UTF8.self)),
                    .int(pass.codes.count), .text(pass.complete ? "true" : "false"),
                    .text(pass.noRead ? "true" : "false"), .int(pass.revision), .text(pass.closed ? "true" : "false"),
                    .optionalText(pass.measurement.map { String(decoding: $0.json, as: UTF8.self) }),
                    .text(String(decoding: JSONWriter.array(pass.codings.map(\.json)), as: UTF8.self)),
                ])
        }
    }

    public func markParcelsMerged(eventIds: [String]) throws(PGError) {
        guard !eventIds.isEmpty else { return }
        try connection.query(
            "UPDATE parcels SET merged = true WHERE event_id = ANY($1::text[])",
            [.text(SiteStore.arrayLiteral(eventIds))])
    }

    /// Closed passes whose revision was not published yet, oldest first, as the `parcelpass`
    /// results they become.
    public func unpublishedParcelPasses(limit: Int) throws(PGError) -> [ParcelPassEvent] {
        var events: [ParcelPassEvent] = []
        for row in try connection.query(
            """
            SELECT pass_id, site, lane, members::text AS members, measurement::text AS measurement,
                   codings::text AS codings, revision, cameras_expected, \(Self.passTrace("parcel_passes")) AS trace_id
            FROM parcel_passes
            WHERE closed_at IS NOT NULL AND published_revision < revision ORDER BY last_seen, pass_id LIMIT $1
            """, [.int(limit)]
        ).named("parcel passes to publish") {
            var event = try Self.pass(row).event(camerasExpected: try row.int("cameras_expected"))
            event.traceId = try row.optionalText("trace_id")
            events.append(event)
        }
        return events
    }

    /// The trace a parcel pass continues, as an SQL expression over the pass's row `pass` (a
    /// table name or alias written here, never input): the trace id of its members' first parcel
    /// (by first seen) that came with one; NULL when none did.
    static func passTrace(_ pass: StaticString) -> String {
        """
        (SELECT x.trace_id FROM jsonb_array_elements(\(pass).members) m(member)
         JOIN parcels x ON x.site = \(pass).site AND x.camera = m.member->>'camera'
                       AND x.event_id = m.member->>'eventId'
         WHERE x.trace_id IS NOT NULL ORDER BY x.first_seen, x.event_id LIMIT 1)
        """
    }

    /// A stored pass from its row (`pass_id`, `site`, `lane`, `members`, `measurement` and
    /// `codings` as text, `revision`).
    private static func pass(_ row: PGRow) throws(PGError) -> ParcelPass {
        var pass = ParcelPass(passId: try row.text("pass_id"), site: try row.text("site"), lane: try row.text("lane"))
        if case .array(let members)? = try? JSONValue.parse(Array(try row.text("members").utf8)) {
            pass.members = members.compactMap(LaneParcel.init(stored:))
        }
        pass.measurement = try row.optionalText("measurement").flatMap { text in
            (try? JSONValue.parse(Array(text.utf8))).flatMap(MeasureEvent.init(stored:))
        }
        if case .array(let codings)? = try? JSONValue.parse(Array(try row.text("codings").utf8)) {
            pass.codings = codings.compactMap(ParcelPassEvent.Coding.init(stored:))
        }
        pass.revision = try row.int("revision")
        return pass
    }

    public func markParcelPassPublished(passId: String, revision: Int) throws(PGError) {
        try connection.query(
            "UPDATE parcel_passes SET published_revision = greatest(published_revision, $2::integer) WHERE pass_id = $1",
            [.text(passId), .int(revision)])
    }

    // MARK: the aggregator's decisions

    /// Stores a decision the aggregator made for a parcel pass, not published yet.
    public func insertDecision(_ decision: DecisionEvent) throws(PGError) {
        _ = try EventStore(connection: connection).insertDecisions(
            [(decision, String(decoding: decision.json, as: UTF8.self))], published: false)
    }

    /// The aggregator's decisions not published yet, oldest first.
    public func unpublishedDecisions(limit: Int) throws(PGError) -> [DecisionEvent] {
        var decisions: [DecisionEvent] = []
        // The aggregator's decision continues its parcel pass's trace (its parcel id is the pass's).
        for row in try connection.query(
            """
            SELECT d.body::text AS body, \(Self.passTrace("pp")) AS trace_id
            FROM decisions d LEFT JOIN parcel_passes pp ON pp.pass_id = d.parcel_id AND pp.site = d.site
            WHERE NOT d.published ORDER BY d.closed_at, d.event_id LIMIT $1
            """, [.int(limit)]
        ).named("unpublished decisions") {
            let body = try row.text("body")
            guard let value = try? JSONValue.parse(Array(body.utf8)), let decision = try? DecisionEvent.parse(value)
            else {
                throw PGError(
                    code: .unexpectedResult, function: "unpublished decisions", input: "body",
                    message: "a stored decision is not one")
            }
            var traced = decision
            traced.traceId = try row.optionalText("trace_id")
            decisions.append(traced)
        }
        return decisions
    }

    /// Marks a decision published, stored as it was sent.
    public func markDecisionPublished(_ decision: DecisionEvent) throws(PGError) {
        try connection.query(
            """
            UPDATE decisions SET published = true, late = $3::boolean, body = $4::jsonb
            WHERE event_id = $1 AND closed_at = $2::timestamptz
            """,
            [
                .text(decision.eventId), .text(decision.closedAt.description), .text(decision.late ? "true" : "false"),
                .text(String(decoding: decision.json, as: UTF8.self)),
            ])
    }

    // MARK: measurements

    /// Measurements not attached to a parcel pass yet (nor given up on), oldest stored first.
    public func unsettledMeasurements(limit: Int) throws(PGError) -> [UnsettledMeasurement] {
        var measurements: [UnsettledMeasurement] = []
        for row in try connection.query(
            """
            SELECT body::text AS body, floor(extract(epoch FROM received_at) * 1000)::bigint AS received
            FROM measurements WHERE NOT settled ORDER BY received_at, event_id LIMIT $1
            """, [.int(limit)]
        ).named("unsettled measurements") {
            guard let value = try? JSONValue.parse(Array(try row.text("body").utf8)),
                let measurement = MeasureEvent(stored: value)
            else {
                throw PGError(
                    code: .unexpectedResult, function: "unsettled measurements", input: "body",
                    message: "a stored measurement is not one")
            }
            measurements.append(UnsettledMeasurement(measurement, received: try row.milliseconds("received")))
        }
        return measurements
    }

    /// Marks a measurement attached to `passId`, or (nil) given up on.
    public func settleMeasurement(_ measurement: MeasureEvent, passId: String?) throws(PGError) {
        try connection.query(
            """
            UPDATE measurements SET settled = true, pass_id = $3
            WHERE event_id = $1 AND measured_at = $2::timestamptz
            """, [.text(measurement.eventId), .text(measurement.time.description), .optionalText(passId)])
    }
}
