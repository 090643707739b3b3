import ScanCore

/// A picture kept in the JetStream Object Store bucket `SCANTRACK_IMAGES`, in NATS's own
/// object-store layout (stream `OBJ_SCANTRACK_IMAGES`; chunks on `$O.SCANTRACK_IMAGES.C.<nuid>`,
/// the object's description on `$O.SCANTRACK_IMAGES.M.<name in base64url>`), so `nats object
/// get` and nats-py's object store read it. The agent sends the chunks and names the object in
/// its parcel or no-read event; the aggregator, having checked that the object is the sender's,
/// writes the description (docs/integration.md, "Images").
///
/// Names are built from checked tokens only: the nuid is `<site>.<camera>.<id>` (so a camera's
/// permission to publish chunks is `$O.SCANTRACK_IMAGES.C.<site>.<camera>.>`), the name
/// `<site>/<camera>/<kind>/<id>.jpg`.
public struct ImageObject: Sendable, Equatable {
    public static let bucket = "SCANTRACK_IMAGES"
    public static let stream = "OBJ_SCANTRACK_IMAGES"
    /// nats.go's and nats-py's chunk size.
    public static let chunkSize = 128 * 1024
    /// Largest picture kept, in bytes of JPEG.
    public static let maxBytes = 4 << 20
    public static let chunkPrefix = "$O.\(bucket).C"
    public static let metaPrefix = "$O.\(bucket).M"

    /// What the picture shows.
    public enum Kind: String, Sendable, CaseIterable {
        /// A parcel: the frame's crop around its codes where most of them were in view.
        case parcel
        /// A no-read: the label's region from its sharpest frame.
        case noread
    }

    public var kind: Kind
    public var site: String
    public var camera: String
    /// Unique among the camera's pictures (the parcel id or the no-read's track id, made a token).
    public var id: String
    public var size: Int
    /// `SHA-256=` and the digest in base64url (padded), as nats.go and nats-py write it.
    public var digest: String

    public var name: String { Self.name(kind: kind, site: site, camera: camera, id: id) }

    /// The name of the object of `kind` and `id` a camera keeps (`site` and `camera` tokens;
    /// `id` made one as `init` makes it), before it is kept.
    public static func name(kind: Kind, site: String, camera: String, id: String) -> String {
        "\(site)/\(camera)/\(kind.rawValue)/\(token(from: id)).jpg"
    }
    public var nuid: String { "\(site).\(camera).\(id)" }
    public var chunks: Int { (size + Self.chunkSize - 1) / Self.chunkSize }
    public var chunkSubject: String { "\(Self.chunkPrefix).\(nuid)" }
    public var metaSubject: String { Self.metaSubject(name: name) }

    /// `kind`, `site` and `camera` must be tokens; `id` is made one (anything but letters, digits,
    /// `-` and `_` becomes `_`, at most 64 characters).
    public init(kind: Kind, site: String, camera: String, id: String, size: Int, sha256: [UInt8])
        throws(SubjectTokenError)
    {
        self.kind = kind
        self.site = try SubjectToken(site, field: "site").text
        self.camera = try SubjectToken(camera, field: "camera").text
        self.id = try SubjectToken(Self.token(from: id), field: "image id").text
        self.size = size
        self.digest = Self.digest(sha256)
    }

    init(kind: Kind, site: String, camera: String, id: String, size: Int, digest: String) {
        self.kind = kind
        self.site = site
        self.camera = camera
        self.id = id
        self.size = size
        self.digest = digest
    }

    /// An id as a subject token: the same characters `NoReadEvent.imageFileName` keeps, less `.`.
    public static func token(from id: String) -> String {
        let kept = String(id.map { $0.isASCII && ($0.isLetter || $0.isNumber || "-_".contains($0)) ? $0 : "_" })
        return kept.isEmpty ? "_" : String(kept.prefix(SubjectToken.maxLength))
    }

    public static func digest(_ sha256: [UInt8]) -> String { "SHA-256=" + base64URL(sha256) }

    /// The meta subject of an object name (base64url, padded: nats.go's `base64.URLEncoding`).
    public static func metaSubject(name: String) -> String { "\(metaPrefix).\(base64URL(Array(name.utf8)))" }

    static func base64URL(_ bytes: [UInt8]) -> String {
        String(Base64.encode(bytes).map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
    }

    /// An object name this project builds (`<site>/<camera>/<kind>/<id>.jpg`, each part a token),
    /// taken apart; nil for any other (`scanadmin images get` refuses it before it reaches a subject).
    public static func parts(ofName name: String) -> (kind: Kind, site: String, camera: String, id: String)? {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, let kind = Kind(rawValue: parts[2]), parts[3].hasSuffix(".jpg") else { return nil }
        let id = String(parts[3].dropLast(4))
        guard [parts[0], parts[1], id].allSatisfy(SubjectToken.isValid) else { return nil }
        return (kind, parts[0], parts[1], id)
    }

    /// The event's `imageObject` field.
    public var json: [UInt8] {
        var writer = JSONWriter()
        writer.field("bucket", Self.bucket)
        writer.field("name", name)
        writer.field("nuid", nuid)
        writer.field("size", size)
        writer.field("chunks", chunks)
        writer.field("digest", digest)
        return writer.finished()
    }

    /// The object's description as nats.go and nats-py read it from the meta subject.
    public func metaJSON(modified: Timestamp) -> [UInt8] {
        var writer = JSONWriter()
        writer.field("name", name)
        writer.field("description", "\(kind.rawValue) \(id) at \(site)/\(camera), image/jpeg")
        var options = JSONWriter()
        options.field("max_chunk_size", Self.chunkSize)
        writer.raw("options", options.finished())
        writer.field("bucket", Self.bucket)
        writer.field("nuid", nuid)
        writer.field("size", size)
        writer.field("mtime", modified.description)
        writer.field("chunks", chunks)
        writer.field("digest", digest)
        return writer.finished()
    }

    /// The `imageObject` field of an event sent by `site`/`camera` (nil when absent): refused
    /// unless every part is what that camera would have built for a picture of its own.
    static func parse(_ value: JSONValue?, site: String, camera: String, kind: Kind) throws(DeadLetter)
        -> ImageObject?
    {
        guard let value, value != .null else { return nil }
        guard case .object = value else {
            throw DeadLetter(.wrongType, "imageObject is \(value.typeName), not an object")
        }
        let fields = EventFields(value, path: "imageObject.")
        guard try fields.string("bucket", maxLength: 64) == bucket else {
            throw DeadLetter(.badValue, "imageObject.bucket is not \(bucket)")
        }
        let nuid = try fields.string("nuid", maxLength: 200)
        let own = "\(site).\(camera)."
        guard nuid.hasPrefix(own), SubjectToken.isValid(String(nuid.dropFirst(own.count))) else {
            throw DeadLetter(
                .subjectMismatch, "imageObject.nuid '\(TerminalText.escaped(nuid))' is not \(own)<id> of the sender")
        }
        let size = try fields.int("size")
        guard (1...maxBytes).contains(size) else {
            throw DeadLetter(.badValue, "imageObject.size \(size) is not 1 to \(maxBytes) bytes")
        }
        let digest = try fields.string("digest", maxLength: 64)
        let encoded = digest.dropFirst("SHA-256=".count)
        guard digest.hasPrefix("SHA-256="), encoded.count == 44,
            encoded.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_=".contains($0)) })
        else { throw DeadLetter(.badValue, "imageObject.digest is not SHA-256=<base64url of 32 bytes>") }
        let object = ImageObject(
            kind: kind, site: site, camera: camera, id: String(nuid.dropFirst(own.count)), size: size,
            digest: digest)
        guard try fields.string("name", maxLength: 300) == object.name else {
            throw DeadLetter(.badValue, "imageObject.name is not \(object.name)")
        }
        guard try fields.int("chunks") == object.chunks else {
            throw DeadLetter(.badValue, "imageObject.chunks is not \(object.chunks) for \(size) bytes")
        }
        return object
    }
}
