import ArgumentParser
import Crypto
import Foundation
import ScanCore
import ScanEvents
import ScanNATS
import ScanPostgres

/// `scanadmin images`: the pictures of parcels and no-reads the agents keep in the images
/// bucket (`images.keep`; docs/integration.md, "Images").
struct ImagesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "images",
        abstract: "Pictures of parcels and no-reads in the images bucket: list them, or get one.",
        discussion: """
            The agents keep pictures per their images.keep setting in the JetStream Object Store bucket \
            SCANTRACK_IMAGES (nats object ls/get SCANTRACK_IMAGES read it too). `list` shows the pictures the \
            stored parcels and no-reads name, newest first, for a shift or range (the options of \
            `scanadmin report`; default today); `get NAME --out FILE.jpg` reads one from the bucket and \
            checks its SHA-256 digest.

            Exit codes: 0 done, 1 database or NATS failure or a picture that does not match its digest, \
            3 no such picture (expired, or never stored), 64 bad usage.
            """,
        subcommands: [List.self, Get.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "Pictures the stored parcels and no-reads name, newest first.")

        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var period: PeriodOptions
        @Option(help: "Only this camera's.") var camera: String?
        @Option(help: "Only parcel or noread pictures.") var kind: String?
        @OptionGroup var output: ListingOptions

        func validate() throws {
            try period.check(connection: connection)
            if let kind, ImageObject.Kind(rawValue: kind) == nil {
                throw ValidationError("--kind: '\(TerminalText.escaped(kind))' is not parcel or noread")
            }
            if let camera, !SubjectToken.isValid(camera) {
                throw ValidationError(SubjectTokenError(field: "--camera", value: camera).description)
            }
        }

        func run() throws {
            let rows = try withDatabase(connection, command: "images") { database in
                try DeadLettersCommand.periods(period, connection: connection, database: database).flatMap {
                    try ImageRows(connection: database).list(
                        start: $0.start, end: $0.end, site: period.site, camera: camera, kind: kind,
                        limit: output.limit)
                }
            }
            var listing = Listing(columns: ["time", "kind", "site", "camera", "lane", "eventId", "object", "detail"])
            listing.nullable = ["lane"]
            for row in rows {
                listing.rows.append([
                    row.time, row.kind, row.site, row.camera, row.lane ?? "", row.eventId, row.object, row.detail,
                ])
            }
            print(listing.render(output.format), terminator: "")
            if output.format == .table { print("\(rows.count) picture(s)") }
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "get", abstract: "One picture from the bucket, its digest checked, written to --out.")

        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The object's name, as `images list` and the events give it (SITE/CAMERA/KIND/ID.jpg).")
        var name: String
        @Option(help: "Where to write the JPEG ('-': standard output).") var out: String

        func validate() throws {
            guard ImageObject.parts(ofName: name) != nil else {
                throw ValidationError(
                    "'\(TerminalText.escaped(name))' is not a picture's name (SITE/CAMERA/parcel|noread/ID.jpg)")
            }
        }

        func run() throws {
            let jetStream: JetStream
            do {
                jetStream = try connection.connectNATS().jetStream()
            } catch {
                printError("scanadmin images: cannot reach NATS at \(redactedURL(connection.natsURL)): \(error)")
                throw ExitCode.failure
            }
            let jpeg: [UInt8]
            do {
                guard let read = try ImagesCommand.read(name, from: jetStream) else {
                    printError(
                        "scanadmin images: no picture '\(name)' in \(ImageObject.bucket) (expired, or never stored)")
                    throw ExitCode(3)
                }
                jpeg = read
            } catch let error as ImageReadError {
                printError("scanadmin images: \(name): \(error)")
                throw ExitCode.failure
            } catch let error as NATSError {
                printError("scanadmin images: \(name): \(error)")
                throw ExitCode.failure
            }
            if out == "-" {
                FileHandle.standardOutput.write(Data(jpeg))
            } else if !FileManager.default.createFile(atPath: out, contents: Data(jpeg)) {
                printError("scanadmin images: cannot write \(out)")
                throw ExitCode.failure
            }
        }
    }

    struct ImageReadError: Error, CustomStringConvertible {
        let description: String
    }

    /// The object's bytes as its description gives them (size, digest); nil when there is none.
    static func read(_ name: String, from jetStream: JetStream) throws -> [UInt8]? {
        guard
            let meta = try jetStream.directGet(stream: ImageObject.stream, lastOn: ImageObject.metaSubject(name: name))
        else { return nil }
        let info = try? JSONValue.parse(meta.bytes)
        if info?["deleted"] == .bool(true) { return nil }
        guard let nuid = info?["nuid"]?.stringValue, SubjectToken.isValidSubject(nuid),
            let size = info?["size"]?.intValue, (0...ImageObject.maxBytes).contains(size),
            let digest = info?["digest"]?.stringValue
        else { throw ImageReadError(description: "its description is not an object's (nuid, size, digest)") }
        let subject = "\(ImageObject.chunkPrefix).\(nuid)"
        var bytes: [UInt8] = []
        var sequence: UInt64 = 1
        while bytes.count < size,
            let chunk = try jetStream.directGet(stream: ImageObject.stream, nextOn: subject, from: sequence)
        {
            bytes += chunk.bytes
            sequence = chunk.sequence + 1
        }
        guard bytes.count == size else {
            throw ImageReadError(description: "\(bytes.count) of its \(size) bytes are in the bucket")
        }
        guard ImageObject.digest(Array(SHA256.hash(data: bytes))) == digest else {
            throw ImageReadError(description: "its bytes do not match its digest \(digest)")
        }
        return bytes
    }
}
