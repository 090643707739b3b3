import Foundation
import ScanCore
import ScanServices
import ScanAgentConfig

#if canImport(Glibc)
    import Glibc
#endif

/// One durable event waiting for JetStream's acknowledgement.
public struct SpoolRecord: Sendable, Equatable {
    public var subject: String
    public var eventId: String
    public var payload: [UInt8]
    /// Where the record ends in its store (for the file spool, a segment and an offset):
    /// acknowledging it moves the cursor here.
    public var segment: Int
    public var end: Int64

    public init(subject: String, eventId: String, payload: [UInt8], segment: Int, end: Int64) {
        self.subject = subject
        self.eventId = eventId
        self.payload = payload
        self.segment = segment
        self.end = end
    }
}

public struct SpoolError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "spool \(path): \(reason)" }
}

/// The agent's write-ahead log of durable events (sightings, session events): every one is
/// appended here first, so decoding never waits for the network, and a publisher sends them to
/// JetStream in order, moving a cursor past each one the stream acknowledged.
///
/// On disk: numbered segment files (`0000000001.spool`, …), one record a line,
/// `<subject> <eventId> <json>\n`, and a `cursor` file (`<segment> <offset>`) replaced atomically.
/// Segments wholly behind the cursor are deleted. A restarted agent opens the same folder and sends
/// what is behind the cursor first. A line cut short by a crash mid-write is truncated and counted.
///
/// Bounded by `maxBytes` (unsent data): at the limit `dropOldest` deletes the oldest unsent
/// segment, `dropNewest` refuses the new event; both are counted in `dropped`.
public final class Spool: DurableSink, @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `condition`, which also wakes the publisher.
    public let directory: String
    public let maxBytes: Int
    public let whenFull: SpoolConfig.WhenFull
    let segmentBytes: Int64
    private let condition = NSCondition()
    /// Segment number → its size in bytes, for every segment on disk.
    private var sizes: [Int: Int64] = [:]
    private var cursorSegment = 1
    private var cursorOffset: Int64 = 0
    private var active = 1
    private var activeFD: Int32 = -1
    private var depthCount = 0
    private var droppedCount = 0
    /// Lines cut short by a crash (truncated at open) or unreadable (skipped).
    public private(set) var damaged = 0

    public init(directory: String, maxBytes: Int, whenFull: SpoolConfig.WhenFull = .dropOldest) throws(SpoolError) {
        self.directory = directory
        self.maxBytes = maxBytes
        self.whenFull = whenFull
        self.segmentBytes = Int64(max(64 << 10, min(16 << 20, maxBytes / 8)))
        do {
            // The spool holds the run id and every event not yet sent: this user's alone (0700, its
            // files 0600), also a folder an older version made open.
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw SpoolError(path: directory, reason: "cannot create the folder: \(error.localizedDescription)")
        }
        guard chmod(directory, 0o700) == 0 else {
            throw SpoolError(
                path: directory, reason: "cannot make the folder private: \(String(cString: strerror(errno)))")
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw SpoolError(path: directory, reason: "cannot list the folder: \(error.localizedDescription)")
        }
        for name in names where name.hasSuffix(".spool") {
            guard let number = Int(name.dropLast(6)), number > 0 else { continue }
            chmod(segmentPath(number), 0o600)
            sizes[number] = fileSize(segmentPath(number))
        }
        readCursor()
        // A cursor past the newest segment, or past the end of its own, was not written by this
        // spool (a damaged or planted file): taken at its word it would delete unsent segments.
        // It is refused and sending starts again from the oldest segment (JetStream drops repeats).
        if let newest = sizes.keys.max(),
            cursorSegment > newest || (sizes[cursorSegment].map { cursorOffset > $0 } ?? false)
        {
            damaged += 1
            cursorSegment = sizes.keys.min() ?? newest
            cursorOffset = 0
        }
        // Segments before the cursor were sent; a cursor past every segment (they were deleted) restarts clean.
        for number in sizes.keys where number < cursorSegment { removeSegment(number) }
        if sizes.isEmpty {
            active = max(cursorSegment, 1)
            cursorSegment = active
            cursorOffset = 0
            sizes[active] = 0
        } else {
            active = sizes.keys.max() ?? 1
            if sizes[cursorSegment] == nil {
                cursorSegment = sizes.keys.min() ?? active
                cursorOffset = 0
            }
        }
        try repairTail()
        activeFD = open(segmentPath(active), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard activeFD >= 0 else {
            throw SpoolError(path: segmentPath(active), reason: String(cString: strerror(errno)))
        }
        depthCount = countPending()
    }

    deinit {
        if activeFD >= 0 { close(activeFD) }
    }

    // MARK: what the heartbeat shows

    /// Events not yet acknowledged by JetStream.
    public var depth: Int { condition.withLock { depthCount } }
    /// Events lost to the size limit since this process started.
    public var dropped: Int { condition.withLock { droppedCount } }
    /// Bytes of unsent events on disk.
    public var pendingBytes: Int { condition.withLock { Int(unsentBytes()) } }

    // MARK: writing (the processing thread)

    /// Appends one event; false when the size limit made it the one dropped.
    @discardableResult
    public func append(subject: String, eventId: String, payload: [UInt8]) -> Bool {
        var line = Array(subject.utf8)
        line.append(0x20)
        line += eventId.utf8
        line.append(0x20)
        line += payload.lazy.map { $0 == 0x0A ? 0x20 : $0 }  // one line each; event JSON has no raw newlines
        line.append(0x0A)
        condition.lock()
        defer { condition.unlock() }
        guard makeRoom(for: Int64(line.count)) else {
            droppedCount += 1
            return false
        }
        if sizes[active, default: 0] >= segmentBytes { rotate() }
        let written = line.withUnsafeBytes { raw in write(activeFD, raw.baseAddress, raw.count) }
        guard written == line.count else {
            // A full disk: the event is lost, say so; a partial line is cut off at the next open.
            droppedCount += 1
            return false
        }
        sizes[active, default: 0] += Int64(line.count)
        depthCount += 1
        condition.broadcast()
        return true
    }

    private func unsentBytes() -> Int64 {
        sizes.values.reduce(0, +) - cursorOffset
    }

    /// Frees space for `bytes` more under the limit; false when the new record must be dropped.
    private func makeRoom(for bytes: Int64) -> Bool {
        if bytes > Int64(maxBytes) { return false }
        while unsentBytes() + bytes > Int64(maxBytes) {
            if whenFull == .dropNewest { return false }
            if cursorSegment == active { rotate() }
            let oldest = cursorSegment
            let lost = countLines(segment: oldest, from: cursorOffset)
            droppedCount += lost
            depthCount -= lost
            removeSegment(oldest)
            cursorSegment = sizes.keys.min() ?? active
            cursorOffset = 0
            writeCursor()
        }
        return true
    }

    private func rotate() {
        close(activeFD)
        active += 1
        sizes[active] = 0
        activeFD = open(segmentPath(active), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
    }

    // MARK: reading (the publisher thread)

    /// Up to `limit` records after the cursor, oldest first; empty when all were sent.
    public func next(limit: Int) -> [SpoolRecord] {
        condition.lock()
        defer { condition.unlock() }
        var records: [SpoolRecord] = []
        var segment = cursorSegment
        var offset = cursorOffset
        while records.count < limit, let size = sizes[segment] {
            if offset >= size {
                guard segment < active else { break }
                segment = sizes.keys.filter { $0 > segment }.min() ?? active
                offset = 0
                continue
            }
            let chunk = readLines(segment: segment, offset: offset, size: size)
            if chunk.isEmpty { break }
            guard chunk.contains(0x0A) else {
                // The segment's last bytes are no whole line (a write cut short by a full disk). In
                // an older segment nothing will complete them: they are one unreadable record, stepped
                // over; in the active one, the next append ends them.
                guard segment < active else { break }
                damaged += 1
                records.append(SpoolRecord(subject: "", eventId: "", payload: [], segment: segment, end: size))
                offset = size
                continue
            }
            var start = 0
            for index in chunk.indices where chunk[index] == 0x0A {
                let end = offset + Int64(index + 1)
                if let record = parse(chunk[start..<index], segment: segment, end: end) {
                    records.append(record)
                } else {
                    // Unreadable line: step over it (the cursor moves past it with the next acknowledgement).
                    damaged += 1
                    records.append(SpoolRecord(subject: "", eventId: "", payload: [], segment: segment, end: end))
                }
                start = index + 1
                if records.count == limit { break }
            }
            offset += Int64(start)
            if start == 0 { break }  // no complete line (cannot happen: appends write whole lines)
        }
        return records
    }

    /// Moves the cursor past `record` (JetStream stored it, or it was unreadable).
    public func acknowledge(_ record: SpoolRecord) {
        condition.lock()
        defer { condition.unlock() }
        // A record in a segment dropped meanwhile is behind the cursor already.
        guard record.segment > cursorSegment || (record.segment == cursorSegment && record.end > cursorOffset) else {
            return
        }
        depthCount = max(0, depthCount - 1)
        if record.segment != cursorSegment {
            for number in sizes.keys where number < record.segment { removeSegment(number) }
        }
        cursorSegment = record.segment
        cursorOffset = record.end
        if cursorSegment < active, cursorOffset >= sizes[cursorSegment, default: 0] {
            removeSegment(cursorSegment)
            cursorSegment = sizes.keys.min() ?? active
            cursorOffset = 0
        }
    }

    /// Writes the cursor to disk (after a batch; on shutdown).
    public func saveCursor() {
        condition.withLock { writeCursor() }
    }

    /// Waits until something is pending or `seconds` pass.
    public func waitForRecords(for duration: Duration) {
        condition.lock()
        defer { condition.unlock() }
        if depthCount == 0 { _ = condition.wait(until: Date(timeIntervalSinceNow: duration.seconds)) }
    }

    /// Wakes a publisher waiting in `waitForRecords` (shutdown).
    public func wake() { condition.withLock { condition.broadcast() } }

    // MARK: files

    private func segmentPath(_ number: Int) -> String {
        directory + "/" + String(repeating: "0", count: max(0, 10 - String(number).count)) + String(number) + ".spool"
    }

    private var cursorPath: String { directory + "/cursor" }

    private func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }

    private func removeSegment(_ number: Int) {
        unlink(segmentPath(number))
        sizes[number] = nil
    }

    private func readCursor() {
        guard let data = FileManager.default.contents(atPath: cursorPath),
            let text = String(data: data, encoding: .utf8)
        else { return }
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard parts.count == 2, let segment = Int(parts[0]), let offset = Int64(parts[1]), segment > 0, offset >= 0
        else {
            damaged += 1  // the cursor was damaged: start from the oldest segment (JetStream drops repeats)
            return
        }
        cursorSegment = segment
        cursorOffset = offset
    }

    private func writeCursor() {
        let temporary = cursorPath + ".tmp"
        let text = Array("\(cursorSegment) \(cursorOffset)\n".utf8)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        _ = text.withUnsafeBytes { raw in write(fd, raw.baseAddress, raw.count) }
        close(fd)
        rename(temporary, cursorPath)
    }

    /// Cuts a last line that a crash left without its newline.
    private func repairTail() throws(SpoolError) {
        let path = segmentPath(active)
        let size = sizes[active, default: 0]
        guard size > 0 else { return }
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw SpoolError(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var keep = size
        var byte: UInt8 = 0
        while keep > 0 {
            guard pread(fd, &byte, 1, off_t(keep - 1)) == 1 else { break }
            if byte == 0x0A { break }
            keep -= 1
        }
        if keep < size {
            guard ftruncate(fd, off_t(keep)) == 0 else {
                throw SpoolError(path: path, reason: String(cString: strerror(errno)))
            }
            sizes[active] = keep
            damaged += 1
            if cursorSegment == active && cursorOffset > keep { cursorOffset = keep }
        }
    }

    private func readChunk(segment: Int, offset: Int64, size: Int64, limit: Int64 = 256 << 10) -> [UInt8] {
        let fd = open(segmentPath(segment), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        let count = Int(max(0, min(size - offset, limit)))
        var buffer = [UInt8](repeating: 0, count: count)
        let got = buffer.withUnsafeMutableBytes { raw in pread(fd, raw.baseAddress, count, off_t(offset)) }
        return got > 0 ? Array(buffer.prefix(got)) : []
    }

    /// From `offset`: 256 KiB, or as much more as holds the first whole line (a no-read with its
    /// picture is up to 2 MiB), or the rest of the segment when no line ends in it.
    private func readLines(segment: Int, offset: Int64, size: Int64) -> [UInt8] {
        var want: Int64 = 256 << 10
        while true {
            let chunk = readChunk(segment: segment, offset: offset, size: size, limit: want)
            if chunk.contains(0x0A) || Int64(chunk.count) < want || offset + want >= size { return chunk }
            want *= 2
        }
    }

    private func countLines(segment: Int, from offset: Int64) -> Int {
        guard let size = sizes[segment] else { return 0 }
        var lines = 0
        var position = offset
        while position < size {
            let chunk = readChunk(segment: segment, offset: position, size: size)
            if chunk.isEmpty { break }
            lines += chunk.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            position += Int64(chunk.count)
        }
        return lines
    }

    private func countPending() -> Int {
        sizes.keys.filter { $0 >= cursorSegment }.reduce(0) { total, segment in
            total + countLines(segment: segment, from: segment == cursorSegment ? cursorOffset : 0)
        }
    }

    private func parse(_ line: ArraySlice<UInt8>, segment: Int, end: Int64) -> SpoolRecord? {
        guard let first = line.firstIndex(of: 0x20) else { return nil }
        let rest = line[(first + 1)...]
        guard let second = rest.firstIndex(of: 0x20), first > line.startIndex, second > rest.startIndex else {
            return nil
        }
        let payload = Array(line[(second + 1)...])
        guard !payload.isEmpty else { return nil }
        return SpoolRecord(
            subject: String(decoding: line[..<first], as: UTF8.self),
            eventId: String(decoding: rest[..<second], as: UTF8.self),
            payload: payload, segment: segment, end: end)
    }
}
