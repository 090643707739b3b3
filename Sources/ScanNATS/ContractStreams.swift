import ScanCore
import ScanEvents

extension ContractSubjects {
    /// The agents' stream as every program declares it: agents and aggregators both create or
    /// check it at start, with the same settings, so neither undoes the other's. `replicas`:
    /// copies in a JetStream cluster (nil: 1 for a new stream, an existing one keeps its own).
    /// Size limits (docs/security.md, "Limits"): a message at most a no-read with its picture
    /// (`EventValidator.maxNoReadBytes`) plus its headers; 4 GiB in all, and a full stream refuses
    /// new events, which then wait in the agents' spools, rather than dropping unconsumed ones.
    /// `retired`: the senders have streams of their own (`senderStreamSpecs`), and this one takes
    /// nothing new (`retiredAgentStreamSubject`); what it holds is still read.
    public func agentStreamSpec(replicas: Int64? = nil, retired: Bool = false) -> StreamSpec {
        var spec = StreamSpec(name: agentStream, subjects: retired ? [retiredAgentStreamSubject] : agentStreamSubjects)
        spec.duplicateWindowSeconds = ContractSubjects.duplicateWindowSeconds
        spec.replicas = replicas
        spec.maxMessageSize = Int32(EventValidator.maxNoReadBytes + 64 * 1024)
        spec.maxBytes = 4 << 30
        spec.refuseWhenFull = true
        return spec
    }

    /// The default limit of one camera's stream: what it may have sent and the aggregator not yet
    /// read (a day of a busy camera's sightings, or a few hundred no-read pictures).
    public static let cameraStreamBytes: Int64 = 256 << 20
    /// The images bucket's default limit (the aggregator's --images-max-gib).
    public static let imagesStreamBytes: Int64 = 20 << 30
    /// The limit of one lane's stream (decisions and readings, small).
    public static let laneStreamBytes: Int64 = 64 << 20

    /// A stream a sender, for each camera and each lane of the topology (docs/security.md, "One
    /// sender cannot starve the others"): a work queue of its own subjects only, refusing new
    /// messages when full, so a camera or a lane's devices flooding fill their own stream and
    /// nobody else's. `cameraBytes`: each camera stream's limit.
    public func senderStreamSpecs(
        cameras: [(site: String, camera: String)], lanes: [(site: String, lane: String)], replicas: Int64? = nil,
        cameraBytes: Int64 = cameraStreamBytes
    ) throws(SubjectTokenError) -> [StreamSpec] {
        var specs: [StreamSpec] = []
        for sender in cameras {
            var spec = StreamSpec(
                name: try cameraStream(site: sender.site, camera: sender.camera),
                subjects: try cameraStreamSubjects(site: sender.site, camera: sender.camera))
            spec.maxMessageSize = Int32(EventValidator.maxNoReadBytes + 64 * 1024)
            spec.maxBytes = cameraBytes
            specs.append(spec)
        }
        for sender in lanes {
            var spec = StreamSpec(
                name: try laneStream(site: sender.site, lane: sender.lane),
                subjects: try laneStreamSubjects(site: sender.site, lane: sender.lane))
            spec.maxMessageSize = Int32(EventValidator.maxBytes + 4 * 1024)
            spec.maxBytes = Self.laneStreamBytes
            specs.append(spec)
        }
        for index in specs.indices {
            specs[index].duplicateWindowSeconds = ContractSubjects.duplicateWindowSeconds
            specs[index].replicas = replicas
            specs[index].refuseWhenFull = true
            specs[index].workQueue = true
        }
        return specs
    }

    /// Item passes and pack records for the WMS; deduplicated like the agents' stream, since the
    /// aggregator republishes what it is not sure was acknowledged.
    public func resultsStreamSpec(replicas: Int64? = nil) -> StreamSpec {
        var spec = StreamSpec(name: resultsStream, subjects: resultsStreamSubjects)
        spec.duplicateWindowSeconds = ContractSubjects.duplicateWindowSeconds
        spec.replicas = replicas
        spec.maxMessageSize = 1 << 20
        spec.maxBytes = 1 << 30
        spec.refuseWhenFull = true  // the results outbox in PostgreSQL keeps them until there is room
        return spec
    }

    public func deadLetterStreamSpec(replicas: Int64? = nil) -> StreamSpec {
        var spec = StreamSpec(name: deadLetterStream, subjects: deadLetterSubjects)
        spec.replicas = replicas
        spec.maxMessageSize = 64 * 1024
        spec.maxBytes = 256 << 20  // stored in PostgreSQL too: the oldest go first
        return spec
    }

    /// Orders the WMS publishes; deduplicated by message id like the agents' stream. Kept a
    /// week (the aggregator stores them; the stream is the WMS's outbox while it is away).
    public func ordersStreamSpec(replicas: Int64? = nil) -> StreamSpec {
        var spec = StreamSpec(name: ordersStream, subjects: ordersStreamSubjects)
        spec.duplicateWindowSeconds = ContractSubjects.duplicateWindowSeconds
        spec.replicas = replicas
        spec.maxMessageSize = Int32(OrderMessage.maxBytes)
        spec.maxBytes = 1 << 30
        spec.maxAgeSeconds = 7 * 24 * 3600
        return spec
    }

    /// The images bucket (`ImageObject`): NATS's object-store layout, so `nats object` and the
    /// clients' object stores read it. Chunks are deduplicated by message id like events (the
    /// agent's spool may send one twice); full, it refuses new pictures (the agents' spools keep
    /// them) rather than drop pictures already named in stored rows. `maxAgeSeconds` 0: kept
    /// until the byte limit.
    public static func imagesStreamSpec(maxAgeSeconds: Int64, maxBytes: Int64, replicas: Int64? = nil) -> StreamSpec {
        var spec = StreamSpec(
            name: ImageObject.stream, subjects: [ImageObject.chunkPrefix + ".>", ImageObject.metaPrefix + ".>"])
        spec.duplicateWindowSeconds = ContractSubjects.duplicateWindowSeconds
        spec.replicas = replicas
        spec.maxAgeSeconds = maxAgeSeconds
        spec.maxBytes = maxBytes
        spec.maxMessageSize = Int32(ImageObject.chunkSize + 4096)
        spec.allowRollup = true
        spec.allowDirect = true
        return spec
    }
}
