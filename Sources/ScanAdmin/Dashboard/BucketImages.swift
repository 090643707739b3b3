import Foundation
import Hummingbird
import ScanCore
import ScanEvents
import ScanNATS
import Synchronization

/// The dashboard's side of the images bucket: `/images/SITE/CAMERA/KIND/ID.jpg` answers the
/// picture a stored parcel or no-read names, read from `SCANTRACK_IMAGES` (digest checked) on a
/// thread of its own, never on the server's event loop. NATS is reached only when the first
/// picture is asked for; a failed connection is tried again at the next.
final class BucketImages: Sendable {
    let connect: @Sendable () throws -> NATSConnection
    private let jetStream = Mutex<JetStream?>(nil)
    private let queue = DispatchQueue(label: "scanadmin.images")

    init(connect: @escaping @Sendable () throws -> NATSConnection) { self.connect = connect }

    /// The picture's bytes; nil when the bucket holds no such picture.
    func jpeg(_ name: String) async throws -> [UInt8]? {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.read(name) })
            }
        }
    }

    private func read(_ name: String) throws -> [UInt8]? {
        let stream = try jetStream.withLock { held -> JetStream in
            if let held { return held }
            let made = try connect().jetStream()
            held = made
            return made
        }
        do {
            return try ImagesCommand.read(name, from: stream)
        } catch let error as NATSError {
            jetStream.withLock { $0 = nil }  // a new connection at the next request
            throw error
        }
    }

    func add(to router: Router<BasicRequestContext>) {
        router.get("/images/:site/:camera/:kind/:file") { _, context in
            let parts = try ["site", "camera", "kind", "file"].map { try ServeCommand.parameter(context, $0) }
            let name = parts.joined(separator: "/")
            // Only a name this project builds (checked tokens) reaches a subject.
            guard ImageObject.parts(ofName: name) != nil else {
                return Self.text(.notFound, "No such picture.")
            }
            do {
                guard let jpeg = try await self.jpeg(name) else {
                    return Self.text(
                        .notFound, "No picture \(name) in \(ImageObject.bucket) (expired, or never stored).")
                }
                return Response(
                    status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "max-age=86400"],
                    body: .init(byteBuffer: ByteBuffer(bytes: jpeg)))
            } catch {
                return Self.text(.serviceUnavailable, "The images bucket cannot be read now.")
            }
        }
    }

    private static func text(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
    }
}
