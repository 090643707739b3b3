internal import CNATS

/// One value of a key-value bucket, with the bucket's revision (its stream sequence).
public struct KeyValueEntry: Sendable, Equatable {
    public var key: String
    public var value: [UInt8]
    public var revision: UInt64
    /// True when the key's last operation was a delete or purge.
    public var deleted: Bool
}

/// Owns one `kvStore` (a JetStream key-value bucket).
public final class KeyValueBucket: @unchecked Sendable {
    // @unchecked: a kvStore is safe to share between threads (cnats docs); the rest is immutable.
    let handle: OpaquePointer
    public let name: String
    private let context: JetStream  // keeps the context and connection alive

    init(handle: OpaquePointer, name: String, context: JetStream) {
        self.handle = handle
        self.name = name
        self.context = context
    }

    deinit { kvStore_Destroy(handle) }

    /// The key's latest entry, or nil when it was never written.
    public func get(_ key: String) throws(NATSError) -> KeyValueEntry? {
        var entry: OpaquePointer?
        let status = kvStore_Get(&entry, handle, key)
        if status == NATS_NOT_FOUND { return nil }
        try NATSError.check("kvStore_Get", "\(name)/\(key)", status)
        guard let entry else { return nil }
        defer { kvEntry_Destroy(entry) }
        let count = Int(kvEntry_ValueLen(entry))
        var value: [UInt8] = []
        if count > 0, let data = kvEntry_Value(entry) {
            value = Array(UnsafeRawBufferPointer(start: data, count: count))
        }
        let operation = kvEntry_Operation(entry)
        return KeyValueEntry(
            key: key, value: value, revision: kvEntry_Revision(entry),
            deleted: operation == kvOp_Delete || operation == kvOp_Purge)
    }

    /// Writes the key; returns the new revision.
    @discardableResult
    public func put(_ key: String, _ value: [UInt8]) throws(NATSError) -> UInt64 {
        var revision: UInt64 = 0
        let status = value.withUnsafeBytes { raw in
            kvStore_Put(&revision, handle, key, raw.baseAddress, Int32(raw.count))
        }
        try NATSError.check("kvStore_Put", "\(name)/\(key)", status)
        return revision
    }
}

extension JetStream {
    /// Binds to a key-value bucket, creating it (file storage, `history` revisions per key,
    /// `replicas` copies in a cluster) when it does not exist yet.
    public func keyValue(bucket: String, history: UInt8 = 16, replicas: Int = 1) throws(NATSError) -> KeyValueBucket {
        var store: OpaquePointer?
        var status = js_KeyValue(&store, handle, bucket)
        if status == NATS_NOT_FOUND {
            let strings = CStrings()
            var config = kvConfig()
            kvConfig_Init(&config)
            config.Bucket = strings.make(bucket)
            config.History = history
            config.Replicas = Int32(replicas)
            status = js_CreateKeyValue(&store, handle, &config)
        }
        try NATSError.check("js_KeyValue", bucket, status)
        guard let store else { throw NATSError(function: "js_KeyValue", input: bucket, status: NATS_ERR) }
        return KeyValueBucket(handle: store, name: bucket, context: self)
    }
}
