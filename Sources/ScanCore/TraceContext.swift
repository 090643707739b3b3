/// A W3C Trace Context (`traceparent: 00-<trace id>-<parent id>-<flags>`) carried in a NATS
/// header on every event an agent publishes and on every result the aggregator publishes, so a
/// sighting, its row and the WMS result it became share one trace id (docs/integration.md,
/// "Tracing").
///
/// An agent's event gets a trace derived from its event id (`forEvent`): the same event sent
/// again after a reconnect, or replayed from the spool, carries the same trace, as it carries the
/// same `Nats-Msg-Id`. The ids are 128 and 64 bits of two FNV-1a hashes of the id, mixed
/// (SplitMix64's finaliser): not secret, and unique as far as event ids are.
public struct TraceContext: Sendable, Equatable, Hashable {
    /// 32 lowercase hex digits, not all zero.
    public let traceId: String
    /// 16 lowercase hex digits, not all zero: the span that sent the message.
    public let spanId: String
    /// Bit 0: sampled.
    public let flags: UInt8

    /// The NATS header that carries it.
    public static let header = "traceparent"

    /// `00-<traceId>-<spanId>-<flags>`.
    public var traceparent: String {
        "00-\(traceId)-\(spanId)-\(Self.hex(UInt64(flags), digits: 2))"
    }

    /// Checked: `traceId` 32 and `spanId` 16 lowercase hex digits, neither all zero.
    public init?(traceId: String, spanId: String, flags: UInt8 = 1) {
        guard Self.isHex(traceId, count: 32), Self.isHex(spanId, count: 16) else { return nil }
        self.traceId = traceId
        self.spanId = spanId
        self.flags = flags
    }

    /// The trace of the event `eventId`: the same for every send of that event. (The lowest bit
    /// of each id is set, so neither is ever all zero.)
    public static func forEvent(_ eventId: String) -> TraceContext {
        let high = mixed(fnv1a(eventId, basis: 0xcbf2_9ce4_8422_2325))
        let low = mixed(fnv1a(eventId, basis: 0x8422_2325_cbf2_9ce4)) | 1
        let span = mixed(high ^ low ^ 0x9E37_79B9_7F4A_7C15) | 1
        return TraceContext(checkedTrace: hex(high, digits: 16) + hex(low, digits: 16), span: hex(span, digits: 16))
    }

    /// A new span of this trace, named by `key` (a result's id and revision): the trace id kept,
    /// the span id derived from the trace and the key.
    public func child(_ key: String) -> TraceContext {
        let span = Self.mixed(Self.fnv1a(traceId + "/" + key, basis: 0xcbf2_9ce4_8422_2325)) | 1
        return TraceContext(checkedTrace: traceId, span: Self.hex(span, digits: 16), flags: flags)
    }

    /// The span that sends result `key` (its event id) in the trace `traceId` (a stored row's,
    /// checked again here): nil when `traceId` is not 32 lowercase hex digits, not all zero.
    public static func continuing(_ traceId: String, as key: String) -> TraceContext? {
        guard isHex(traceId, count: 32) else { return nil }
        return TraceContext(checkedTrace: traceId, span: "0000000000000001").child(key)
    }

    private init(checkedTrace: String, span: String, flags: UInt8 = 1) {
        traceId = checkedTrace
        spanId = span
        self.flags = flags
    }

    /// A `traceparent` header's value as the W3C format has it (version 00; a later version's
    /// first four fields are read as 00's, as the specification asks); nil for anything else,
    /// including all-zero ids and uppercase hex.
    public static func parse(_ text: String) -> TraceContext? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 4, isHex(parts[0], count: 2, allowZero: true), parts[0] != "ff",
            parts[0] != "00" || parts.count == 4, isHex(parts[3], count: 2, allowZero: true),
            let flags = UInt8(parts[3], radix: 16)
        else { return nil }
        return TraceContext(traceId: parts[1], spanId: parts[2], flags: flags)
    }

    static func isHex(_ text: String, count: Int, allowZero: Bool = false) -> Bool {
        let utf8 = text.utf8
        guard utf8.count == count, utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            return false
        }
        return allowZero || utf8.contains { $0 != 48 }
    }

    static func fnv1a(_ text: String, basis: UInt64) -> UInt64 {
        var hash = basis
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    /// SplitMix64's finaliser: every input bit moves every output bit.
    static func mixed(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
