import ScanCore

/// `order`: an expected order as the WMS sends it on `<prefix>.v1.order.<site>`
/// (docs/schema/order.schema.json). `scanadmin orders import` checks its CSV orders with the same
/// rules (`OrderMessage.check`).
public struct OrderMessage: Sendable, Equatable {
    public enum Action: String, Sendable, CaseIterable {
        /// A new order, or a newer revision of one (the same as `replace`).
        case create
        /// The order's lines replaced by these, when the revision is newer than the stored one.
        case replace
        /// The order cancelled (no lines): a pack checked against it finds no order.
        case cancel
    }

    public struct Line: Sendable, Equatable {
        public var line: Int
        public var code: String
        public var quantity: Int
        public init(line: Int, code: String, quantity: Int) {
            self.line = line
            self.code = code
            self.quantity = quantity
        }
    }

    public var action: Action
    public var orderId: String
    /// Higher replaces lower; equal or lower changes nothing (a redelivery, an old message).
    public var revision: Int
    public var site: String
    public var time: Timestamp
    public var lines: [Line]

    public init(
        action: Action, orderId: String, revision: Int, site: String, time: Timestamp, lines: [Line]
    ) {
        self.action = action
        self.orderId = orderId
        self.revision = revision
        self.site = site
        self.time = time
        self.lines = lines
    }

    /// Limits: an order id and a code are printable text without control characters, at most
    /// 128 and 256 bytes; 1 to 10,000 lines, numbered 1 to 1,000,000 without repeats; a quantity
    /// 1 to 1,000,000; a revision 1 to 2,147,483,647.
    public static let maxOrderIdBytes = 128
    public static let maxCodeBytes = 256
    public static let maxLines = 10_000
    public static let maxQuantity = 1_000_000
    public static let maxRevision = Int(Int32.max)
    /// The largest order message (10,000 lines fit).
    public static let maxBytes = 1 << 20

    public var json: [UInt8] {
        var writer = JSONWriter()
        writer.field("type", "order")
        writer.field("action", action.rawValue)
        writer.field("orderId", orderId)
        writer.field("revision", revision)
        writer.field("site", site)
        writer.field("time", time.description)
        if action != .cancel {
            writer.raw(
                "lines",
                JSONWriter.array(
                    lines.map { line in
                        var entry = JSONWriter()
                        entry.field("line", line.line)
                        entry.field("code", line.code)
                        entry.field("quantity", line.quantity)
                        return entry.finished()
                    }))
        }
        return writer.finished()
    }

    /// Reads an order, or says what is wrong with it and where (`lines[2].quantity`).
    public static func parse(_ event: JSONValue) throws(OrderRejection) -> OrderMessage {
        let fields = EventFields(event)
        try OrderRejection.at("type") { () throws(DeadLetter) in try fields.type("order") }
        let actionName = try OrderRejection.at("action") { () throws(DeadLetter) in
            try fields.string("action", maxLength: 16)
        }
        guard let action = Action(rawValue: actionName) else {
            throw OrderRejection(
                .badValue, path: "action",
                "action '\(TerminalText.escaped(actionName))' is not create, replace or cancel")
        }
        let orderId = try OrderRejection.at("orderId") { () throws(DeadLetter) in
            try fields.string("orderId", maxLength: maxOrderIdBytes)
        }
        let revision = try OrderRejection.at("revision") { () throws(DeadLetter) in try fields.int("revision") }
        let site = try OrderRejection.at("site") { () throws(DeadLetter) in try fields.token("site") }
        let time = try OrderRejection.at("time") { () throws(DeadLetter) in try fields.time("time") }
        var lines: [Line] = []
        if action == .cancel {
            guard event["lines"] == nil || event["lines"] == .null else {
                throw OrderRejection(.badValue, path: "lines", "a cancel carries no lines")
            }
        } else {
            let entries = try OrderRejection.at("lines") { () throws(DeadLetter) in try fields.objects("lines") }
            for (index, entry) in entries.enumerated() {
                let path = "lines[\(index)]"
                lines.append(
                    Line(
                        line: try OrderRejection.at(path + ".line") { () throws(DeadLetter) in try entry.int("line") },
                        code: try OrderRejection.at(path + ".code") { () throws(DeadLetter) in
                            try entry.string("code", maxLength: maxCodeBytes)
                        },
                        quantity: try OrderRejection.at(path + ".quantity") { () throws(DeadLetter) in
                            try entry.int("quantity")
                        }))
            }
        }
        let order = OrderMessage(
            action: action, orderId: orderId, revision: revision, site: site, time: time, lines: lines)
        try check(orderId: order.orderId, revision: order.revision, lines: order.lines, cancel: action == .cancel)
        return order
    }

    /// The rules every order meets, from NATS or from a CSV file (`revision` nil: the next one).
    public static func check(orderId: String, revision: Int?, lines: [Line], cancel: Bool) throws(OrderRejection) {
        try checkText(orderId, path: "orderId", maxBytes: maxOrderIdBytes)
        if let revision, !(1...maxRevision).contains(revision) {
            throw OrderRejection(.badValue, path: "revision", "revision \(revision) is not 1 to \(maxRevision)")
        }
        guard !cancel else { return }
        guard (1...maxLines).contains(lines.count) else {
            throw OrderRejection(.badValue, path: "lines", "\(lines.count) lines (an order has 1 to \(maxLines))")
        }
        var numbers: Set<Int> = []
        for (index, line) in lines.enumerated() {
            let path = "lines[\(index)]"
            guard (1...maxQuantity).contains(line.line) else {
                throw OrderRejection(.badValue, path: path + ".line", "line \(line.line) is not 1 to \(maxQuantity)")
            }
            guard numbers.insert(line.line).inserted else {
                throw OrderRejection(.badValue, path: path + ".line", "line \(line.line) appears twice")
            }
            try checkText(line.code, path: path + ".code", maxBytes: maxCodeBytes)
            guard (1...maxQuantity).contains(line.quantity) else {
                throw OrderRejection(
                    .badValue, path: path + ".quantity", "quantity \(line.quantity) is not 1 to \(maxQuantity)")
            }
        }
    }

    private static func checkText(_ text: String, path: String, maxBytes: Int) throws(OrderRejection) {
        guard !text.isEmpty, text.utf8.count <= maxBytes else {
            throw OrderRejection(.badValue, path: path, "\(path) is empty or longer than \(maxBytes) bytes")
        }
        guard !text.unicodeScalars.contains(where: TerminalText.needsEscape) else {
            throw OrderRejection(
                .badValue, path: path, "\(path) '\(TerminalText.escaped(text))' holds a control character")
        }
    }
}

/// Why an order was refused, and where in it.
public struct OrderRejection: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: DeadLetterReason
    /// The field, as a JSON path without the `$.` (`lines[2].quantity`); empty for the whole message.
    public var path: String
    public var detail: String

    public init(_ reason: DeadLetterReason, path: String, _ detail: String) {
        self.reason = reason
        self.path = path
        self.detail = detail
    }

    public init(_ letter: DeadLetter, path: String = "") {
        self.init(letter.reason, path: path, letter.detail)
    }

    public var description: String { path.isEmpty ? detail : "\(path): \(detail)" }

    /// Runs a field read, naming `path` in what it throws.
    static func at<T>(_ path: String, _ read: () throws(DeadLetter) -> T) throws(OrderRejection) -> T {
        do {
            return try read()
        } catch {
            throw OrderRejection(error, path: path)
        }
    }
}

/// `orderack`: the aggregator's answer to one order message, on `<prefix>.v1.orderack.<site>` in
/// the results stream (docs/schema/orderack.schema.json).
public struct OrderAckEvent: Sendable, Equatable {
    public enum Status: String, Sendable, CaseIterable {
        /// Stored: the order now has this revision.
        case accepted
        /// Nothing changed: the stored revision is this one (a redelivery) or newer.
        case unchanged
        /// Refused, with the reason and the field; also in the dead letters.
        case rejected
    }

    /// The order message's sequence in the orders stream (one answer per message).
    public var sequence: UInt64
    public var site: String
    public var orderId: String?
    public var revision: Int?
    public var status: Status
    /// The revision stored after this message (accepted, unchanged).
    public var storedRevision: Int?
    /// `rejected`: a dead-letter reason (`bad-value`, `missing-field`, …).
    public var reason: String?
    public var path: String?
    public var detail: String?
    public var time: Timestamp

    public init(
        sequence: UInt64, site: String, orderId: String?, revision: Int?, status: Status, storedRevision: Int?,
        reason: String? = nil, path: String? = nil, detail: String? = nil, time: Timestamp
    ) {
        self.sequence = sequence
        self.site = site
        self.orderId = orderId
        self.revision = revision
        self.status = status
        self.storedRevision = storedRevision
        self.reason = reason
        self.path = path
        self.detail = detail
        self.time = time
    }

    public var eventId: String { "orderack-\(sequence)" }

    public var json: [UInt8] {
        var writer = JSONWriter()
        writer.field("type", "orderack")
        writer.field("eventId", eventId)
        writer.field("site", site)
        writer.field("time", time.description)
        writer.field("sequence", Int(clamping: sequence))
        writer.field("status", status.rawValue)
        if let orderId { writer.field("orderId", orderId) }
        if let revision { writer.field("revision", revision) }
        if let storedRevision { writer.field("storedRevision", storedRevision) }
        if let reason { writer.field("reason", reason) }
        if let path { writer.field("path", path) }
        if let detail { writer.field("detail", String(detail.prefix(2000))) }
        return writer.finished()
    }

    public static func parse(_ event: JSONValue) throws(DeadLetter) -> OrderAckEvent {
        let fields = EventFields(event)
        try fields.type("orderack")
        let statusName = try fields.string("status", maxLength: 16)
        guard let status = Status(rawValue: statusName) else {
            throw DeadLetter(.badValue, "status '\(TerminalText.escaped(statusName))' is not an order answer")
        }
        func optionalInt(_ key: String) throws(DeadLetter) -> Int? {
            guard let field = event[key], field != .null else { return nil }
            return try fields.int(key)
        }
        let parsed = OrderAckEvent(
            sequence: UInt64(try fields.int("sequence")), site: try fields.token("site"),
            orderId: try fields.optionalString("orderId", maxLength: OrderMessage.maxOrderIdBytes),
            revision: try optionalInt("revision"), status: status, storedRevision: try optionalInt("storedRevision"),
            reason: try fields.optionalString("reason", maxLength: 64),
            path: try fields.optionalString("path", maxLength: 256),
            detail: try fields.optionalString("detail", maxLength: 4096), time: try fields.time("time"))
        guard try fields.string("eventId", maxLength: 64) == parsed.eventId else {
            throw DeadLetter(.badValue, "eventId is not orderack-SEQUENCE")
        }
        return parsed
    }
}
