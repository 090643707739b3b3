import Foundation
import ScanCore
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanAdmin

/// What the live pages take from a camera and pass to a page: only a JSON preview with a JPEG in
/// it, written again; only cameras whose site and id are subject tokens.
private struct NoBus: Error {}

@Suite("live view: what a camera sends and a page gets", .timed)
struct LiveViewsTests {
    static let jpegStart: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10]

    static func preview(jpeg: [UInt8], value: String = "<script>alert(1)</script>") -> [UInt8] {
        var mark = JSONWriter()
        mark.field("state", "read")
        mark.field("value", value)
        mark.raw("box", Array("[1,2,3,4]".utf8))
        var writer = JSONWriter()
        writer.field("camera", "cam-01")
        writer.field("frame", 42)
        writer.raw("marks", JSONWriter.array([mark.finished()]))
        writer.field("jpeg", Base64.encode(jpeg))
        return writer.finished()
    }

    @Test("a preview's picture must be a JPEG of at most 2 MiB in a JSON object; anything else is named, not kept")
    func refusals() throws {
        let cases: [([UInt8], String)] = [
            (Array("not json".utf8), "not a JSON object"),
            (Array("[1, 2]".utf8), "not a JSON object"),
            (Array(#"{"frame": 1}"#.utf8), "without a JPEG"),
            (Self.preview(jpeg: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A]), "without a JPEG"),
            (
                Self.preview(jpeg: Self.jpegStart + [UInt8](repeating: 0, count: LiveViews.pictureLimit)),
                "without a JPEG"
            ),
            (Array(#"{"jpeg": "%%%"}"#.utf8), "without a JPEG"),
        ]
        for (bytes, problem) in cases {
            switch LiveViews.picture(bytes) {
            case .success: Issue.record("kept: \(String(decoding: bytes.prefix(60), as: UTF8.self))")
            case .failure(let refused): #expect(refused.text.contains(problem), "\(refused.text)")
            }
        }
    }

    @Test("the page gets the agent's fields written again, the picture's address new each frame, and its state")
    func pageData() throws {
        let camera = try #require(LiveViews.Camera(site: "dc1", id: "cam-01"))
        let picture = try LiveViews.picture(Self.preview(jpeg: Self.jpegStart), received: Date()).get()
        #expect(picture.jpeg == Self.jpegStart && !picture.fields.contains { $0.0 == "jpeg" })
        let live = LiveViews.data(LiveViews.View(picture: picture, problem: nil), camera: camera)
        #expect(live["state"] == .string("live"))
        #expect(live["picture"] == .string("/cameras/dc1/cam-01/live.jpg?frame=42"))
        #expect(live["jpeg"] == nil && live["frame"]?.intValue == 42)
        // Markup from the camera stays a JSON string (the page's script sets it as text).
        guard case .array(let marks)? = live["marks"] else {
            Issue.record("no marks: \(live)")
            return
        }
        #expect(marks.first?["value"] == .string("<script>alert(1)</script>"))
        #expect(
            LiveViews.data(LiveViews.View(picture: nil, problem: nil), camera: camera)["state"] == .string("waiting"))
        let refused = LiveViews.data(LiveViews.View(picture: nil, problem: "no agent answers"), camera: camera)
        #expect(refused["state"] == .string("problem") && refused["problem"] == .string("no agent answers"))
    }

    @Test("a page gets the picture of the frame whose marks it has while it is among the last 10, else none")
    func recentPictures() throws {
        let views = LiveViews(subjects: ContractSubjects(prefix: "st")) { throw NoBus() }
        let camera = try #require(LiveViews.Camera(site: "dc1", id: "cam-01"))
        #expect(views.jpeg(camera, frame: nil) == nil, "nothing of a camera nobody watches")
        _ = views.watch(camera)
        for frame in 1...12 {
            var writer = JSONWriter()
            writer.field("frame", frame)
            writer.field("jpeg", Base64.encode(Self.jpegStart + [UInt8(frame)]))
            views.keep(LiveViews.picture(writer.finished()), for: camera)
        }
        #expect(views.jpeg(camera, frame: nil) == Self.jpegStart + [12], "the newest")
        #expect(views.jpeg(camera, frame: 5) == Self.jpegStart + [5])
        #expect(views.jpeg(camera, frame: 2) == nil, "no longer kept")
        #expect(views.watch(camera)?.picture?.frame == 12)
    }

    @Test(
        "a site or camera that is not a subject token is no camera",
        arguments: ["cam.01", "cam 1", "*", ">", "", "a\nb"])
    func cameraTokens(id: String) {
        #expect(LiveViews.Camera(site: "dc1", id: id) == nil)
        #expect(LiveViews.Camera(site: id, id: "cam-01") == nil)
    }

    @Test("one dashboard watches at most 16 cameras; a camera already watched is still served")
    func cameraLimit() throws {
        // Never reaches NATS: the connection fails, and the page is told so.
        let views = LiveViews(subjects: ContractSubjects(prefix: "st")) { throw NoBus() }
        for index in 0..<LiveViews.cameraLimit {
            #expect(views.watch(try #require(LiveViews.Camera(site: "dc1", id: "cam-\(index)"))) != nil)
        }
        #expect(views.watch(try #require(LiveViews.Camera(site: "dc1", id: "cam-extra"))) == nil)
        #expect(views.watch(try #require(LiveViews.Camera(site: "dc1", id: "cam-0"))) != nil)
        #expect(
            Polling.until(seconds: 10) {
                views.watch(LiveViews.Camera(site: "dc1", id: "cam-0")!)?.problem?.contains("not reachable") == true
            })
    }
}
