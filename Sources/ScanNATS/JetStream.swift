internal import CNATS

/// What a stream should look like; `ensureStream` creates it or updates it to match.
public struct StreamSpec: Sendable, Equatable {
    public var name: String
    public var subjects: [String]
    /// Window in which a repeated `Nats-Msg-Id` is dropped as a duplicate, in seconds.
    public var duplicateWindowSeconds: Int64 = 120
    /// Oldest messages are removed past this age (0: keep until other limits).
    public var maxAgeSeconds: Int64 = 7 * 24 * 3600
    public var maxBytes: Int64 = -1
    /// Largest message the stream takes (-1: the server's max_payload).
    public var maxMessageSize: Int32 = -1
    /// When the stream is full: refuse new messages (publishers keep them: the agents' spool,
    /// the results outbox) rather than drop the oldest.
    public var refuseWhenFull = false
    /// Copies kept by a JetStream cluster. nil: 1 when the stream is created, and an existing
    /// stream keeps what it has (so a program started without the setting never shrinks it).
    public var replicas: Int64?
    public var memoryStorage: Bool = false
    /// A work queue: a message is removed once its consumer acknowledges it, so the stream's
    /// bytes are what is still to be read (a sender's own stream), not a history. Set when the
    /// stream is created; the server does not change it afterwards.
    public var workQueue = false
    /// `Nats-Rollup` headers are honoured, and messages can be read from any replica (direct
    /// get): what an object store's stream has.
    public var allowRollup = false
    public var allowDirect = false

    public init(name: String, subjects: [String]) {
        self.name = name
        self.subjects = subjects
    }
}

/// A durable pull consumer's settings.
public struct ConsumerSpec: Sendable, Equatable {
    public var durable: String
    /// A message not acknowledged within this time is delivered again, in milliseconds.
    public var ackWaitMilliseconds: Int64 = 30_000
    /// Deliveries before the server gives up on a message (-1: never).
    public var maxDeliver: Int64 = -1
    public var maxAckPending: Int64 = 20_000

    public init(durable: String) { self.durable = durable }
}

/// What JetStream said about a stored message.
public struct PublishAck: Sendable, Equatable {
    public var stream: String
    public var sequence: UInt64
    /// True when the server already held a message with this `Nats-Msg-Id` and dropped this one.
    public var duplicate: Bool
}

/// Owns one `jsCtx`.
public final class JetStream: @unchecked Sendable {
    // @unchecked: a jsCtx is safe to share between threads (cnats docs); everything else is immutable.
    let handle: OpaquePointer
    public let connection: NATSConnection
    private let timeoutMilliseconds: Int64

    init(connection: NATSConnection, timeoutMilliseconds: Int64) throws(NATSError) {
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = timeoutMilliseconds
        var context: OpaquePointer?
        try NATSError.check(
            "natsConnection_JetStream", redactedURL(connection.url),
            natsConnection_JetStream(&context, connection.handle, &options))
        guard let context else {
            throw NATSError(function: "natsConnection_JetStream", input: redactedURL(connection.url), status: NATS_ERR)
        }
        self.handle = context
        self.connection = connection
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    deinit { jsCtx_Destroy(handle) }

    /// Creates the stream, or updates it when it exists with other settings.
    public func ensureStream(_ spec: StreamSpec) throws(NATSError) {
        let strings = CStrings()
        var config = jsStreamConfig()
        jsStreamConfig_Init(&config)
        config.Name = strings.make(spec.name)
        config.Subjects = strings.makeArray(spec.subjects)
        config.SubjectsLen = Int32(spec.subjects.count)
        config.Duplicates = spec.duplicateWindowSeconds * 1_000_000_000
        config.MaxAge = spec.maxAgeSeconds * 1_000_000_000
        config.MaxBytes = spec.maxBytes
        config.MaxMsgSize = spec.maxMessageSize
        config.Discard = spec.refuseWhenFull ? js_DiscardNew : js_DiscardOld
        config.Replicas = spec.replicas ?? 1
        config.Storage = spec.memoryStorage ? js_MemoryStorage : js_FileStorage
        config.Retention = spec.workQueue ? js_WorkQueuePolicy : js_LimitsPolicy
        config.AllowRollup = spec.allowRollup
        config.AllowDirect = spec.allowDirect
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var jsCode = jsErrCode(0)
        var status = js_AddStream(&info, handle, &config, nil, &jsCode)
        if status != NATS_OK && jsCode == JSStreamNameExistErr {
            if let info { jsStreamInfo_Destroy(info) }
            info = nil
            if spec.replicas == nil { config.Replicas = try replicas(ofStream: spec.name) }
            jsCode = jsErrCode(0)
            status = js_UpdateStream(&info, handle, &config, nil, &jsCode)
        }
        if let info { jsStreamInfo_Destroy(info) }
        try NATSError.checkJS("js_AddStream", spec.name, status, jsCode)
    }

    /// What the server says of an existing stream now.
    public struct StreamFacts: Sendable, Equatable {
        public var replicas: Int64
        /// The server that leads it in a JetStream cluster (nil on a single server).
        public var leader: String?
        public var messages: UInt64
        public var bytes: UInt64
        /// Its limit (-1: none).
        public var maxBytes: Int64
        public var subjects: [String]
    }

    /// The stream's settings and state; throws when it does not exist (`JSStreamNotFoundErr`).
    public func streamFacts(_ name: String) throws(NATSError) -> StreamFacts {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var jsCode = jsErrCode(0)
        try NATSError.checkJS("js_GetStreamInfo", name, js_GetStreamInfo(&info, handle, name, nil, &jsCode), jsCode)
        defer { jsStreamInfo_Destroy(info) }
        let config = info?.pointee.Config?.pointee
        let subjects = (0..<Int(config?.SubjectsLen ?? 0)).compactMap { index in
            config?.Subjects?[index].map { String(cString: $0) }
        }
        return StreamFacts(
            replicas: config?.Replicas ?? 1, leader: info?.pointee.Cluster?.pointee.Leader.map { String(cString: $0) },
            messages: info?.pointee.State.Msgs ?? 0, bytes: info?.pointee.State.Bytes ?? 0,
            maxBytes: config?.MaxBytes ?? -1, subjects: subjects)
    }

    /// The number of copies the cluster keeps of an existing stream.
    public func replicas(ofStream name: String) throws(NATSError) -> Int64 { try streamFacts(name).replicas }

    /// The server that leads the stream in a JetStream cluster (nil on a single server).
    public func leader(ofStream name: String) throws(NATSError) -> String? { try streamFacts(name).leader }

    /// The names of every stream of the account.
    public func streamNames() throws(NATSError) -> [String] {
        var list: UnsafeMutablePointer<jsStreamNamesList>?
        var jsCode = jsErrCode(0)
        let status = js_StreamNames(&list, handle, nil, &jsCode)
        if status == NATS_NOT_FOUND { return [] }
        try NATSError.checkJS("js_StreamNames", "", status, jsCode)
        defer { jsStreamNamesList_Destroy(list) }
        guard let list = list?.pointee else { return [] }
        return (0..<Int(list.Count)).compactMap { list.List?[$0].map { String(cString: $0) } }
    }

    public func deleteStream(_ name: String) throws(NATSError) {
        var jsCode = jsErrCode(0)
        let status = js_DeleteStream(handle, name, nil, &jsCode)
        if status == NATS_NOT_FOUND || jsCode == JSStreamNotFoundErr { return }
        try NATSError.checkJS("js_DeleteStream", name, status, jsCode)
    }

    /// Creates the durable pull consumer `consumer` on `stream`, filtered to `filter`, or updates
    /// it to match (an admin makes the consumers a login may only read: `scanadmin nats consumers`).
    public func ensureConsumer(stream: String, filter: String, consumer: ConsumerSpec) throws(NATSError) {
        let strings = CStrings()
        var config = jsConsumerConfig()
        jsConsumerConfig_Init(&config)
        config.Durable = strings.make(consumer.durable)
        config.FilterSubject = strings.make(filter)
        config.AckPolicy = js_AckExplicit
        config.AckWait = consumer.ackWaitMilliseconds * 1_000_000
        config.MaxDeliver = consumer.maxDeliver
        config.MaxAckPending = consumer.maxAckPending
        config.DeliverPolicy = js_DeliverAll
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var jsCode = jsErrCode(0)
        var status = js_AddConsumer(&info, handle, stream, &config, nil, &jsCode)
        // 10148: "consumer already exists" from servers newer than this client's list of codes.
        let exists =
            jsCode == JSConsumerNameExistErr || jsCode == JSConsumerExistingActiveErr || jsCode.rawValue == 10148
        if status != NATS_OK && exists {
            if let info { jsConsumerInfo_Destroy(info) }
            info = nil
            jsCode = jsErrCode(0)
            status = js_UpdateConsumer(&info, handle, stream, &config, nil, &jsCode)
        }
        if let info { jsConsumerInfo_Destroy(info) }
        try NATSError.checkJS("js_AddConsumer", "\(stream)/\(consumer.durable) on \(filter)", status, jsCode)
    }

    /// A durable consumer's backlog: messages not yet delivered to it, and delivered but not yet
    /// acknowledged.
    public func consumerBacklog(stream: String, consumer: String) throws(NATSError) -> (
        pending: UInt64, ackPending: Int64
    ) {
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var jsCode = jsErrCode(0)
        try NATSError.checkJS(
            "js_GetConsumerInfo", consumer, js_GetConsumerInfo(&info, handle, stream, consumer, nil, &jsCode), jsCode)
        defer { jsConsumerInfo_Destroy(info) }
        return (info?.pointee.NumPending ?? 0, info?.pointee.NumAckPending ?? 0)
    }

    /// The bytes the stream holds now and its limit (-1: none).
    public func usage(stream: String) throws(NATSError) -> (bytes: UInt64, maxBytes: Int64) {
        let facts = try streamFacts(stream)
        return (facts.bytes, facts.maxBytes)
    }

    /// How many messages the stream holds now.
    public func messageCount(stream: String) throws(NATSError) -> UInt64 { try streamFacts(stream).messages }

    /// Publishes and waits for the stream's acknowledgement. With a message id, a retry of the
    /// same event inside the duplicate window is stored once.
    /// `headers`: NATS headers to send with it (a `traceparent`), names and values checked by the
    /// caller (cnats refuses CR and LF in them).
    public func publish(
        subject: String, bytes: [UInt8], messageID: String? = nil, headers: [(name: String, value: String)] = []
    ) throws(NATSError) -> PublishAck {
        let strings = CStrings()
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        options.MsgId = strings.makeOptional(messageID)
        options.MaxWait = timeoutMilliseconds
        var ack: UnsafeMutablePointer<jsPubAck>?
        var jsCode = jsErrCode(0)
        let mark = connection.reportedErrors
        var status: natsStatus
        if headers.isEmpty {
            status = bytes.withUnsafeBytes { raw in
                js_Publish(&ack, handle, subject, raw.baseAddress, Int32(raw.count), &options, &jsCode)
            }
        } else {
            var message: OpaquePointer?
            status = bytes.withUnsafeBytes { raw in
                natsMsg_Create(
                    &message, subject, nil, raw.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(raw.count))
            }
            defer { natsMsg_Destroy(message) }
            for header in headers where status == NATS_OK {
                status = natsMsgHeader_Set(message, header.name, header.value)
            }
            if status == NATS_OK { status = js_PublishMsg(&ack, handle, message, &options, &jsCode) }
        }
        // A publish the server's permissions refuse only times out here; the server said why.
        if status != NATS_OK, let denied = connection.denial(.publish, subject: subject, since: mark) { throw denied }
        try NATSError.checkJS("js_Publish", subject, status, jsCode)
        guard let ack else { throw NATSError(function: "js_Publish", input: subject, status: NATS_ERR) }
        defer { jsPubAck_Destroy(ack) }
        return PublishAck(
            stream: ack.pointee.Stream.map { String(cString: $0) } ?? "", sequence: ack.pointee.Sequence,
            duplicate: ack.pointee.Duplicate)
    }

    /// A message read back from a stream: its subject, sequence and body.
    public struct StoredMessage: Sendable, Equatable {
        public var subject: String
        public var sequence: UInt64
        public var bytes: [UInt8]
    }

    /// The last message on `subject` of a stream made with `allowDirect` (any replica answers);
    /// nil when there is none.
    public func directGet(stream: String, lastOn subject: String) throws(NATSError) -> StoredMessage? {
        try directGet(stream: stream, sequence: 0, next: nil, last: subject)
    }

    /// The first message at or after `sequence` on `subject` (wildcards allowed); nil when none.
    public func directGet(stream: String, nextOn subject: String, from sequence: UInt64) throws(NATSError)
        -> StoredMessage?
    {
        try directGet(stream: stream, sequence: max(1, sequence), next: subject, last: nil)
    }

    private func directGet(stream: String, sequence: UInt64, next: String?, last: String?) throws(NATSError)
        -> StoredMessage?
    {
        let strings = CStrings()
        var options = jsDirectGetMsgOptions()
        jsDirectGetMsgOptions_Init(&options)
        options.Sequence = sequence
        options.NextBySubject = strings.makeOptional(next)
        options.LastBySubject = strings.makeOptional(last)
        var message: OpaquePointer?
        let status = js_DirectGetMsg(&message, handle, stream, nil, &options)
        if status == NATS_NOT_FOUND { return nil }
        try NATSError.check("js_DirectGetMsg", stream, status)
        guard let message else { return nil }
        let owned = NATSMessage(owning: message)
        return StoredMessage(
            subject: owned.header("Nats-Subject") ?? owned.subject,
            sequence: owned.header("Nats-Sequence").flatMap(UInt64.init) ?? 0, bytes: owned.bytes)
    }

    /// Binds to (creating if needed) a durable pull consumer on `stream` filtered to `subject`.
    public func pullSubscribe(stream: String, subject: String, consumer: ConsumerSpec) throws(NATSError)
        -> PullSubscription
    {
        let strings = CStrings()
        var subOptions = jsSubOptions()
        jsSubOptions_Init(&subOptions)
        subOptions.Stream = strings.make(stream)
        subOptions.Config.Durable = strings.make(consumer.durable)
        subOptions.Config.AckPolicy = js_AckExplicit
        subOptions.Config.AckWait = consumer.ackWaitMilliseconds * 1_000_000
        subOptions.Config.MaxDeliver = consumer.maxDeliver
        subOptions.Config.MaxAckPending = consumer.maxAckPending
        subOptions.Config.DeliverPolicy = js_DeliverAll
        var sub: OpaquePointer?
        var jsCode = jsErrCode(0)
        let status = js_PullSubscribe(&sub, handle, subject, consumer.durable, nil, &subOptions, &jsCode)
        try NATSError.checkJS("js_PullSubscribe", "\(stream)/\(consumer.durable) on \(subject)", status, jsCode)
        guard let sub else { throw NATSError(function: "js_PullSubscribe", input: subject, status: NATS_ERR) }
        return PullSubscription(owning: sub, name: "\(stream)/\(consumer.durable)", context: self)
    }
}

/// Owns one pull subscription (`natsSubscription` bound to a durable consumer).
public final class PullSubscription: @unchecked Sendable {
    // @unchecked: cnats documents fetch on one subscription as safe from one thread at a time;
    // the aggregator gives each subscription to one worker.
    let handle: OpaquePointer
    public let name: String
    private let context: JetStream  // keeps the context and connection alive

    init(owning handle: OpaquePointer, name: String, context: JetStream) {
        self.handle = handle
        self.name = name
        self.context = context
    }

    deinit { natsSubscription_Destroy(handle) }

    /// Up to `batch` messages, waiting at most `timeoutMilliseconds` for the first; empty on timeout.
    public func fetch(batch: Int, timeoutMilliseconds: Int64) throws(NATSError) -> [JetStreamMessage] {
        var list = natsMsgList()
        var jsCode = jsErrCode(0)
        let status = natsSubscription_Fetch(&list, handle, Int32(batch), timeoutMilliseconds, &jsCode)
        defer { natsMsgList_Destroy(&list) }
        // Not Found: the server's "no messages" answer to a `fetchWaiting` of this subscription
        // that came after that call returned.
        if status == NATS_TIMEOUT || (status == NATS_NOT_FOUND && jsCode.rawValue == 0) { return [] }
        try NATSError.checkJS("natsSubscription_Fetch", name, status, jsCode)
        return Self.take(&list)
    }

    /// The most a `fetchWaiting` asks for at once: a batch of no-reads with their pictures would
    /// otherwise overrun what the client holds for a subscription (it drops the rest, which come
    /// again after the ack wait).
    public static let maxFetchBytes: Int64 = 32 << 20

    /// Up to `batch` messages without waiting: what the server delivered for earlier requests of
    /// this subscription and holds here, and a request for more that the server answers at once
    /// and whose messages the next call (or `fetch`) returns. Empty when none are here.
    public func fetchWaiting(batch: Int) throws(NATSError) -> [JetStreamMessage] {
        var list = natsMsgList()
        var request = jsFetchRequest()
        jsFetchRequest_Init(&request)
        request.Batch = Int32(batch)
        request.MaxBytes = Self.maxFetchBytes
        request.NoWait = true
        // No expiry: with one, nats-server waits for it before saying there is nothing.
        let status = natsSubscription_FetchRequest(&list, handle, &request)
        defer { natsMsgList_Destroy(&list) }
        if status == NATS_TIMEOUT || status == NATS_NOT_FOUND { return [] }
        try NATSError.checkJS("natsSubscription_FetchRequest", name, status, jsErrCode(0))
        return Self.take(&list)
    }

    private static func take(_ list: inout natsMsgList) -> [JetStreamMessage] {
        var messages: [JetStreamMessage] = []
        messages.reserveCapacity(Int(list.Count))
        for index in 0..<Int(list.Count) {
            guard let message = list.Msgs[index] else { continue }
            list.Msgs[index] = nil  // ownership moves to the Swift object; natsMsgList_Destroy skips nils
            messages.append(JetStreamMessage(message: NATSMessage(owning: message)))
        }
        return messages
    }
}

/// A message delivered by a JetStream consumer, with its acknowledgement calls.
public struct JetStreamMessage: Sendable {
    public let message: NATSMessage

    public var subject: String { message.subject }
    public var bytes: [UInt8] { message.bytes }

    public struct Metadata: Sendable, Equatable {
        public var streamSequence: UInt64
        public var consumerSequence: UInt64
        /// 1 on first delivery; more when the server redelivers.
        public var deliveries: UInt64
        public var pending: UInt64
        /// Nanoseconds since the epoch, when the stream stored it.
        public var timestampNanoseconds: Int64
    }

    public func metadata() throws(NATSError) -> Metadata {
        var meta: UnsafeMutablePointer<jsMsgMetaData>?
        try NATSError.check("natsMsg_GetMetaData", message.subject, natsMsg_GetMetaData(&meta, message.handle))
        guard let meta else {
            throw NATSError(function: "natsMsg_GetMetaData", input: message.subject, status: NATS_ERR)
        }
        defer { jsMsgMetaData_Destroy(meta) }
        return Metadata(
            streamSequence: meta.pointee.Sequence.Stream, consumerSequence: meta.pointee.Sequence.Consumer,
            deliveries: meta.pointee.NumDelivered, pending: meta.pointee.NumPending,
            timestampNanoseconds: meta.pointee.Timestamp)
    }

    public func ack() throws(NATSError) {
        try NATSError.check("natsMsg_Ack", message.subject, natsMsg_Ack(message.handle, nil))
    }

    /// Acknowledges and waits for the server to confirm: used where a lost ack would cost a redelivery.
    public func ackSync() throws(NATSError) {
        var jsCode = jsErrCode(0)
        try NATSError.checkJS("natsMsg_AckSync", message.subject, natsMsg_AckSync(message.handle, nil, &jsCode), jsCode)
    }

    /// Asks for redelivery now.
    public func nak() throws(NATSError) {
        try NATSError.check("natsMsg_Nak", message.subject, natsMsg_Nak(message.handle, nil))
    }
}
