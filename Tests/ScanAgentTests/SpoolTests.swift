import Foundation
import Logging
import ScanAgentRuntime
import ScanCore
import ScanServices
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanAgent

@Suite("spool: the agent's on-disk write-ahead log", .timed)
struct SpoolTests {
    static func payload(_ n: Int, padding: Int = 0) -> [UInt8] {
        Array(
            "{\"type\":\"sighting\",\"eventId\":\"e\(n)\",\"pad\":\"\(String(repeating: "x", count: padding))\"}".utf8)
    }

    static func append(_ spool: Spool, _ range: Range<Int>, padding: Int = 0) {
        for n in range {
            spool.append(subject: "st.v1.sighting.dc1.cam", eventId: "e\(n)", payload: payload(n, padding: padding))
        }
    }

    /// Sends (acknowledges) everything pending, returning the event ids in order.
    static func drain(_ spool: Spool, limit: Int = 7) -> [String] {
        var ids: [String] = []
        while true {
            let batch = spool.next(limit: limit)
            if batch.isEmpty { break }
            for record in batch {
                ids.append(record.eventId)
                spool.acknowledge(record)
            }
            spool.saveCursor()
        }
        return ids
    }

    @Test("records come back in order, and acknowledged ones never again, across a reopen")
    func orderAndCursor() throws {
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let spool = try Spool(directory: dir, maxBytes: 1 << 20)
            Self.append(spool, 0..<10)
            #expect(spool.depth == 10)
            let first = spool.next(limit: 4)
            #expect(first.map(\.eventId) == ["e0", "e1", "e2", "e3"])
            #expect(first[2].subject == "st.v1.sighting.dc1.cam")
            #expect(first[2].payload == Self.payload(2))
            for record in first { spool.acknowledge(record) }
            spool.saveCursor()
            #expect(spool.depth == 6)
        }
        // A new process: what was acknowledged stays sent, the rest comes first, then new events.
        let reopened = try Spool(directory: dir, maxBytes: 1 << 20)
        #expect(reopened.depth == 6)
        Self.append(reopened, 10..<12)
        #expect(Self.drain(reopened) == (4..<12).map { "e\($0)" })
        #expect(reopened.depth == 0)
    }

    @Test("segments rotate and sent ones are deleted")
    func rotation() throws {
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let spool = try Spool(directory: dir, maxBytes: 1 << 20)  // segments of 128 KiB
        Self.append(spool, 0..<300, padding: 1000)
        let segments = {
            try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".spool") }.count
        }
        #expect(try segments() >= 3)
        #expect(Self.drain(spool, limit: 50) == (0..<300).map { "e\($0)" })
        #expect(try segments() == 1)
        #expect(spool.pendingBytes == 0)
    }

    @Test("a line cut short by a crash is truncated and counted, the lines before it kept")
    func tornTail() throws {
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let spool = try Spool(directory: dir, maxBytes: 1 << 20)
            Self.append(spool, 0..<3)
        }
        let segment = dir + "/0000000001.spool"
        let handle = try #require(FileHandle(forWritingAtPath: segment))
        handle.seekToEndOfFile()
        handle.write(Data("st.v1.sighting.dc1.cam e3 {\"type\":\"sigh".utf8))
        try handle.close()
        let spool = try Spool(directory: dir, maxBytes: 1 << 20)
        #expect(spool.damaged == 1)
        #expect(spool.depth == 3)
        Self.append(spool, 4..<5)
        #expect(Self.drain(spool) == ["e0", "e1", "e2", "e4"])
    }

    @Test("full with dropOldest: the oldest unsent segment goes, counted; the newest events stay")
    func dropOldest() throws {
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let spool = try Spool(directory: dir, maxBytes: 256 << 10, whenFull: .dropOldest)  // 64 KiB segments
        Self.append(spool, 0..<1000, padding: 900)  // ~1 MB offered
        #expect(spool.dropped > 0)
        #expect(spool.pendingBytes <= 256 << 10)
        let sent = Self.drain(spool, limit: 100)
        #expect(sent.count + spool.dropped == 1000)
        #expect(sent.last == "e999")
        // What survives is a contiguous run of the newest events.
        #expect(sent == (1000 - sent.count..<1000).map { "e\($0)" })
    }

    @Test("full with dropNewest: new events are refused, counted; the oldest stay")
    func dropNewest() throws {
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let spool = try Spool(directory: dir, maxBytes: 128 << 10, whenFull: .dropNewest)
        Self.append(spool, 0..<500, padding: 900)
        #expect(spool.dropped > 0)
        let sent = Self.drain(spool, limit: 100)
        #expect(sent.count + spool.dropped == 500)
        #expect(sent == (0..<sent.count).map { "e\($0)" })
    }

    @Test("the spool is its user's alone: the folder 0700 (an older open one too), segments and cursor 0600")
    func privateFiles() throws {
        let parent = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let dir = parent + "/spool"
        func mode(_ path: String) throws -> Int {
            ((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1)
                & 0o777
        }
        do {
            let spool = try Spool(directory: dir, maxBytes: 1 << 20)
            Self.append(spool, 0..<3)
            _ = Self.drain(spool, limit: 1)
        }
        #expect(try mode(dir) == 0o700)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir)
        #expect(names.contains("cursor") && names.contains { $0.hasSuffix(".spool") })
        for name in names { #expect(try mode(dir + "/" + name) == 0o600, "\(name)") }
        // As an older version left it: open to everyone. Opening it again closes it.
        chmod(dir, 0o755)
        for name in names { chmod(dir + "/" + name, 0o644) }
        _ = try Spool(directory: dir, maxBytes: 1 << 20)
        #expect(try mode(dir) == 0o700)
        #expect(try names.filter { $0.hasSuffix(".spool") }.allSatisfy { try mode(dir + "/" + $0) == 0o600 })
    }

    @Test("records over 256 KiB (a no-read with its picture) are read whole, between small ones, across a reopen")
    func longRecords() throws {
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let spool = try Spool(directory: dir, maxBytes: 64 << 20)
        Self.append(spool, 0..<2)
        spool.append(subject: "st.v1.noread.dc1.cam", eventId: "big", payload: Self.payload(2, padding: 1_500_000))
        Self.append(spool, 3..<5)
        let first = spool.next(limit: 10)
        #expect(first.map(\.eventId) == ["e0", "e1", "big", "e3", "e4"])
        #expect(first.first { $0.eventId == "big" }?.payload == Self.payload(2, padding: 1_500_000))
        for record in first.prefix(2) { spool.acknowledge(record) }
        spool.saveCursor()
        let reopened = try Spool(directory: dir, maxBytes: 64 << 20)
        #expect(Self.drain(reopened, limit: 1) == ["big", "e3", "e4"], "the cursor stops before the long record")
    }

    @Test(
        "a cursor past the newest segment or past its segment's end is refused: nothing unsent is deleted, sending starts from the oldest"
    )
    func cursorPastTheEnd() throws {
        for cursor in ["99 0\n", "1 999999\n"] {
            let dir = try ReplayHarness.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            do {
                let spool = try Spool(directory: dir, maxBytes: 1 << 20)
                Self.append(spool, 0..<5)
            }
            try cursor.write(toFile: dir + "/cursor", atomically: true, encoding: .utf8)
            let reopened = try Spool(directory: dir, maxBytes: 1 << 20)
            #expect(reopened.damaged == 1, "\(cursor)")
            #expect(Self.drain(reopened) == (0..<5).map { "e\($0)" }, "\(cursor)")
        }
    }

    @Test(
        "an older segment that ends without a newline (a write cut short) is stepped over, and the next segments sent")
    func cutSegment() throws {
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let spool = try Spool(directory: dir, maxBytes: 1 << 20)  // segments of 128 KiB
            Self.append(spool, 0..<300, padding: 1000)
        }
        let first = dir + "/0000000001.spool"
        let handle = try #require(FileHandle(forWritingAtPath: first))
        handle.seekToEndOfFile()
        handle.write(Data("st.v1.sighting.dc1.cam cut {\"type\":".utf8))
        handle.closeFile()
        let reopened = try Spool(directory: dir, maxBytes: 1 << 20)
        let sent = Self.drain(reopened, limit: 50).filter { !$0.isEmpty }
        #expect(sent == (0..<300).map { "e\($0)" })
        #expect(reopened.damaged == 1)
    }

    @Test("a spool folder that cannot be created is an error naming it")
    func unusableFolder() throws {
        #expect {
            _ = try Spool(directory: "/proc/scantrack-spool", maxBytes: 1 << 20)
        } throws: { error in
            "\(error)".contains("/proc/scantrack-spool")
        }
    }
}

@Suite("frame queue between capture and decoding", .timed)
struct FrameQueueTests {
    static func frame(_ index: Int) -> CapturedFrame {
        CapturedFrame(
            image: GrayImage(width: 2, height: 2, fill: 0), index: index, time: Timestamp(milliseconds: Int64(index)))
    }

    @Test("a camera queue keeps the newest frames and counts the ones it dropped")
    func keepsNewest() {
        let queue = FrameQueue(capacity: 2, blocking: false)
        for n in 0..<5 { queue.put(Self.frame(n)) }
        #expect(queue.dropped == 3)
        #expect(queue.received == 5)
        var taken: [Int] = []
        while case .frame(let frame) = queue.take(timeout: .milliseconds(10)) { taken.append(frame.index) }
        #expect(taken == [3, 4])
        queue.finish()
        if case .ended = queue.take(timeout: .milliseconds(10)) {
        } else {
            Issue.record("a finished, empty queue says ended")
        }
    }

    @Test("a clip queue makes the producer wait instead of dropping")
    func blocks() {
        let queue = FrameQueue(capacity: 1, blocking: true)
        let producer = BackgroundWorker.running("producer") {
            for n in 0..<50 { queue.put(Self.frame(n)) }
            queue.finish()
        }
        var taken: [Int] = []
        loop: while true {
            switch queue.take(timeout: .seconds(5)) {
            case .frame(let frame): taken.append(frame.index)
            case .ended, .timedOut: break loop
            }
        }
        producer.wait()
        #expect(taken == Array(0..<50))
        #expect(queue.dropped == 0)
    }
}

@Suite("clip source", .timed)
struct ClipSourceTests {
    static func clip(frames: Int, fps: Int) throws -> String {
        let path = try ReplayHarness.temporaryDirectory() + "/paced.y4m"
        var bytes = Array("YUV4MPEG2 W16 H16 F\(fps):1 Cmono\n".utf8)
        for n in 0..<frames { bytes += Array("FRAME\n".utf8) + [UInt8](repeating: UInt8(n % 256), count: 256) }
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    static func play(_ source: ClipSource) -> [CapturedFrame] {
        let queue = FrameQueue(capacity: 2, blocking: source.blocking)
        let capture = BackgroundWorker.running("capture") { source.capture(into: queue, stop: StopToken()) }
        var frames: [CapturedFrame] = []
        while case .frame(let frame) = queue.take(timeout: .seconds(5)) { frames.append(frame) }
        capture.wait()
        return frames
    }

    @Test("realtime: paced at the clip's frame rate, times from the start plus the frame offsets")
    func paced() throws {
        let path = try Self.clip(frames: 20, fps: 20)
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let start = try #require(Timestamp(rfc3339: "2026-11-21T08:00:00Z"))
        // The clip waits on a clock of the test's that moves only when the source sleeps, so the
        // pacing is seen exactly, whatever else the machine does.
        let clock = SleepingClock()
        let source = try ClipSource(
            path: path, realtime: true, start: start, resumeFrame: 0, logger: .init(label: "test"),
            pacing: clock.pacing)
        let frames = Self.play(source)
        #expect(frames.map(\.index) == Array(0..<20))
        #expect(frames[19].time == start.adding(milliseconds: 950))
        #expect(frames[7].image.pixels.allSatisfy { $0 == 7 })
        // Each frame is held back to its due time, 50 ms after the one before, counted from the
        // first: every sleep ends exactly on it.
        let wakes = clock.wakes.map { $0 - clock.origin }
        #expect(wakes == (1..<20).map { Duration.milliseconds(50 * $0) }, "\(wakes)")
        #expect(source.state == .ended)
    }

    @Test(
        "source.startAt: a paced clip waits for its start before the first frame; a start already past delivers the frames already due at once"
    )
    func startAt() throws {
        let path = try Self.clip(frames: 10, fps: 10)
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let start = try #require(Timestamp(rfc3339: "2026-11-28T08:00:00Z"))
        for (lead, firstWait) in [(Duration.milliseconds(1_500), 0), (.milliseconds(-350), 4)] {
            let clock = SleepingClock()
            let source = try ClipSource(
                path: path, realtime: true, start: start, resumeFrame: 0, lead: lead, logger: .init(label: "test"),
                pacing: clock.pacing)
            let frames = Self.play(source)
            #expect(frames.map(\.time) == (0..<10).map { start.adding(milliseconds: 100 * Int64($0)) })
            // Frame i is due at lead + 100 ms × i after capture began: the waits end exactly there, and
            // frames due before capture began (a start 350 ms past: frames 0 to 3) are not waited for.
            let wakes = clock.wakes.map { $0 - clock.origin }
            #expect(wakes == (firstWait..<10).map { lead + .milliseconds(100 * $0) }, "\(wakes)")
        }
    }

    /// A clock for `ClipPacing` that moves only to the end of each sleep, which returns at once;
    /// `wakes` are the times the sleeps ended.
    final class SleepingClock: @unchecked Sendable {
        // @unchecked: the mutable fields are read and written under `lock` only.
        let origin = ContinuousClock.now
        private let lock = NSLock()
        private var elapsed = Duration.zero
        private var ended: [ContinuousClock.Instant] = []

        var wakes: [ContinuousClock.Instant] { lock.withLock { ended } }

        var pacing: ClipPacing {
            ClipPacing(
                now: { [self] in lock.withLock { origin + elapsed } },
                sleep: { [self] duration, _ in
                    lock.withLock {
                        elapsed += duration
                        ended.append(origin + elapsed)
                    }
                    return false
                })
        }
    }

    @Test("resumed: frames before the checkpoint are replayed unpaced, with the same times")
    func resumed() throws {
        let path = try Self.clip(frames: 40, fps: 10)
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let start = try #require(Timestamp(rfc3339: "2026-11-21T08:00:00Z"))
        let source = try ClipSource(
            path: path, realtime: true, start: start, resumeFrame: 38, logger: .init(label: "test"))
        let frames = Self.play(source)
        #expect(frames.count == 40)
        #expect(frames[39].time == start.adding(milliseconds: 3900))
    }

    @Test(
        "a clip's chroma planes are skipped, by seeking in a file and by reading in a pipe; a frame cut short in them is truncated"
    )
    func chroma() throws {
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // 4x4 in 4:2:0: 16 bytes of luma and 8 of chroma a frame.
        var bytes = Array("YUV4MPEG2 W4 H4 F25:1 C420jpeg\n".utf8)
        for n in 0..<3 {
            bytes += Array("FRAME\n".utf8) + [UInt8](repeating: UInt8(n), count: 16) + [UInt8](repeating: 200, count: 8)
        }
        let cut = bytes + Array("FRAME\n".utf8) + [UInt8](repeating: 9, count: 16) + [200, 200, 200]
        _ = FileManager.default.createFile(atPath: dir + "/whole.y4m", contents: Data(bytes))
        _ = FileManager.default.createFile(atPath: dir + "/cut.y4m", contents: Data(cut))
        func lumas(_ path: String) throws -> [[UInt8]] {
            let reader = try ClipReader(path: path)
            var image = GrayImage(width: 0, height: 0, pixels: [])
            var frames: [[UInt8]] = []
            while try reader.readFrame(into: &image) { frames.append(image.pixels) }
            return frames
        }
        let expected = (0..<3).map { [UInt8](repeating: UInt8($0), count: 16) }
        #expect(try lumas(dir + "/whole.y4m") == expected)
        #expect {
            _ = try lumas(dir + "/cut.y4m")
        } throws: {
            "\($0)" == "\(dir)/cut.y4m: frame 3: truncated: 19 of 24 bytes"
        }
        // A pipe cannot seek: its chroma is read past.
        let pipe = dir + "/pipe.y4m"
        #expect(mkfifo(pipe, 0o600) == 0)
        let written = Data(bytes)
        let writer = BackgroundWorker.running("writer") {
            guard let handle = FileHandle(forWritingAtPath: pipe) else { return }
            handle.write(written)
            try? handle.close()
        }
        #expect(try lumas(pipe) == expected)
        writer.wait()
    }

    @Test("a damaged clip is an error naming the file")
    func damaged() throws {
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = FileManager.default.createFile(atPath: dir + "/bad.y4m", contents: Data("not a clip\n".utf8))
        #expect {
            _ = try ClipSource(
                path: dir + "/bad.y4m", realtime: true, start: Timestamp(milliseconds: 0), resumeFrame: 0,
                logger: .init(label: "t"))
        } throws: { "\($0)".contains("bad.y4m") }
    }
}
