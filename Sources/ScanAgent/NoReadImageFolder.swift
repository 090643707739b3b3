import Foundation
import ScanAgentRuntime
import ScanCore
import ScanPNG

/// No-read pictures as PNG files in one folder, bounded by count and bytes: when a new file
/// would pass either limit, the oldest files go first. Files already there at start count.
final class NoReadImageFolder: NoReadImages {
    let directory: URL
    let maxImages: Int
    let maxBytes: Int
    /// Files kept, oldest first, with their sizes.
    private var kept: [(name: String, bytes: Int)] = []
    private var totalBytes = 0

    struct FolderError: Error, CustomStringConvertible {
        var description: String
    }

    init(path: String, maxImages: Int, maxBytes: Int) throws {
        directory = URL(fileURLWithPath: path, isDirectory: true)
        self.maxImages = maxImages
        self.maxBytes = maxBytes
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw FolderError(
                description: "no-read image folder \(path): cannot create it (\(error.localizedDescription))")
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        var found: [(name: String, bytes: Int, modified: Date)] = []
        for name in names where name.hasSuffix(".png") {
            let attributes = try? FileManager.default.attributesOfItem(
                atPath: directory.appendingPathComponent(name).path)
            found.append(
                (
                    name, (attributes?[.size] as? NSNumber)?.intValue ?? 0,
                    attributes?[.modificationDate] as? Date ?? .distantPast
                ))
        }
        found.sort { $0.modified != $1.modified ? $0.modified < $1.modified : $0.name < $1.name }
        kept = found.map { ($0.name, $0.bytes) }
        totalBytes = kept.reduce(0) { $0 + $1.bytes }
    }

    /// The folder's file count and bytes now.
    var usage: (files: Int, bytes: Int) { (kept.count, totalBytes) }

    func keep(_ picture: GrayImage, name: String) throws -> (png: [UInt8], file: String?) {
        let png = try PNGImage.encode(picture)
        guard maxImages > 0, png.count <= maxBytes else { return (png, nil) }
        while !kept.isEmpty && (kept.count + 1 > maxImages || totalBytes + png.count > maxBytes) {
            let oldest = kept.removeFirst()
            totalBytes -= oldest.bytes
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(oldest.name))
        }
        let url = directory.appendingPathComponent(name)
        do {
            try Data(png).write(to: url)
        } catch {
            throw FolderError(description: "no-read image \(url.path): cannot write it (\(error.localizedDescription))")
        }
        kept.removeAll { $0.name == name }
        kept.append((name, png.count))
        totalBytes += png.count
        return (png, name)
    }
}
