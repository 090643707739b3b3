import Foundation
import Hummingbird
import ScanCore

/// The live page of one camera and what its script polls: `live.json` (the latest preview's
/// marks, frame rate and controls, or why there is none) and `live.jpg` (its picture). Each poll
/// keeps the camera watched (`LiveViews.watch`).
extension LiveViews {
    func add(to router: Router<BasicRequestContext>) {
        router.get("/cameras/:id/:camera/live") { _, context in
            guard let camera = try Self.camera(context) else { return Self.notFound() }
            return Self.page(camera)
        }
        router.get("/cameras/:id/:camera/live.json") { _, context in
            guard let camera = try Self.camera(context) else { return Self.notFound() }
            guard let view = self.watch(camera) else { return Self.tooMany() }
            return Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: Self.data(view, camera: camera).serialized)))
        }
        // `?frame=N`: that frame's picture, the one whose marks the page draws (while it is kept).
        router.get("/cameras/:id/:camera/live.jpg") { request, context in
            guard let camera = try Self.camera(context) else { return Self.notFound() }
            guard self.watch(camera) != nil else { return Self.tooMany() }
            let frame = request.uri.queryParameters.get("frame").flatMap { Int($0) }
            guard let jpeg = self.jpeg(camera, frame: frame) else {
                return DashboardGuard<BasicRequestContext>.text(
                    .notFound,
                    frame == nil ? "No picture from this camera yet.\n" : "Frame \(frame ?? 0) is no longer kept.\n")
            }
            return Response(
                status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(bytes: jpeg)))
        }
    }

    /// The site is the path's `:id` (the camera page `/cameras/:id` holds that place).
    private static func camera(_ context: BasicRequestContext) throws -> Camera? {
        Camera(site: try ServeCommand.parameter(context, "id"), id: try ServeCommand.parameter(context, "camera"))
    }

    private static func notFound() -> Response {
        DashboardGuard<BasicRequestContext>.text(.notFound, "No such camera: a site and a camera are subject tokens.\n")
    }

    private static func tooMany() -> Response {
        DashboardGuard<BasicRequestContext>.text(
            .serviceUnavailable, "\(cameraLimit) cameras are watched already; close a live page and try again.\n")
    }

    static func path(_ camera: Camera) -> String {
        "/cameras/\(HTML.segment(camera.site))/\(HTML.segment(camera.id))/live"
    }

    /// What the page's script reads: `state` (`live`, `waiting` for the first picture, `problem`),
    /// `problem`, `ageSeconds` of the picture, `picture` (its address, new with each frame) and
    /// the agent's own fields but the picture.
    static func data(_ view: View, camera: Camera, now: Date = Date()) -> JSONValue {
        var fields: [(String, JSONValue)] = [("site", .string(camera.site)), ("camera", .string(camera.id))]
        if let problem = view.problem { fields.append(("problem", .string(problem))) }
        guard let picture = view.picture else {
            fields.append(("state", .string(view.problem == nil ? "waiting" : "problem")))
            return .object(fields)
        }
        fields.append(("state", .string("live")))
        fields.append(("ageSeconds", .number((now.timeIntervalSince(picture.received) * 10).rounded() / 10)))
        fields.append(("picture", .string(path(camera) + ".jpg?frame=\(picture.frame ?? 0)")))
        let taken = Set(fields.map(\.0))
        fields += picture.fields.filter { !taken.contains($0.0) }
        return .object(fields)
    }

    private static func page(_ camera: Camera) -> Response {
        let body: HTMLText = """
            <section data-scope="live:\(camera.site)/\(camera.id)" data-live-view="\(path(camera)).json">
            <h2>Camera \(camera.id) · site \(camera.site) · live</h2>
            <p><span data-figure="live-state">connecting</span> <span class="muted" data-figure="live-problem"></span></p>
            <div class="live-view"><img data-figure="live-image" alt="the camera's latest frame">
            <svg data-figure="live-overlay" xmlns="http://www.w3.org/2000/svg"></svg></div>
            <p>Frame <b data-figure="frame">-</b> · <b data-figure="fps">-</b> fps ·
            exposure <b data-figure="exposure">-</b> µs · gain <b data-figure="gain">-</b> dB ·
            picture <b data-figure="age">-</b> s old</p>
            <p class="legend"><span class="mark-read">read</span> <span class="mark-rejected">rejected by a rule</span>
            <span class="mark-unconfirmed">unconfirmed</span> <span class="mark-no-read-candidate">no-read candidate</span>
            <span class="mark-parcel">parcel</span> <span class="mark-region">region of interest</span></p>
            <table><thead><tr><th>state</th><th>track</th><th>symbology</th><th>value</th><th>rule</th></tr></thead>
            <tbody data-figure="marks"></tbody></table>
            <p><a href="/cameras/\(HTML.segment(camera.id))">Heartbeats of camera \(camera.id)</a></p>
            </section>
            """
        let text = HTML.page(title: "Live \(camera.site)/\(camera.id)", body: body)
        return Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text.markup)))
    }

    /// The page's script, appended to the dashboard's: polls `live.json`, loads each new picture
    /// before showing it, and draws every mark's box, track id and value over it (text only
    /// through `textContent`: a value is never markup).
    static let script = """
        const LIVE_VIEW = document.querySelector('[data-live-view]');
        if (LIVE_VIEW) {
          const figure = name => LIVE_VIEW.querySelector('[data-figure="' + name + '"]');
          const svgNS = 'http://www.w3.org/2000/svg';
          let shownFrame = null;
          LIVE_VIEW.dataset.changes = '0';
          function draw(data) {
            const overlay = figure('live-overlay');
            overlay.setAttribute('viewBox', '0 0 ' + data.width + ' ' + data.height);
            overlay.replaceChildren();
            const outline = (box, kind) => {
              const rect = document.createElementNS(svgNS, 'rect');
              rect.setAttribute('x', box[0]); rect.setAttribute('y', box[1]);
              rect.setAttribute('width', Math.max(1, box[2] - box[0]));
              rect.setAttribute('height', Math.max(1, box[3] - box[1]));
              rect.setAttribute('class', kind);
              overlay.appendChild(rect);
              return rect;
            };
            if (data.region) outline(data.region, 'region');
            // A parcel's outline a little outside its codes' boxes, so that both show.
            for (const parcel of data.parcels || []) {
              const [x0, y0, x1, y1] = parcel.box;
              outline([x0 - 8, y0 - 8, x1 + 8, y1 + 8], 'parcel').dataset.parcel = parcel.parcelId;
            }
            const rows = figure('marks');
            rows.replaceChildren();
            for (const mark of data.marks || []) {
              const [x0, y0, x1, y1] = mark.box;
              const group = document.createElementNS(svgNS, 'g');
              group.setAttribute('class', 'mark mark-' + mark.state);
              group.dataset.state = mark.state;
              if (mark.trackId) group.dataset.track = mark.trackId;
              if (mark.value !== undefined) group.dataset.value = mark.value;
              const rect = document.createElementNS(svgNS, 'rect');
              rect.setAttribute('x', x0); rect.setAttribute('y', y0);
              rect.setAttribute('width', Math.max(1, x1 - x0)); rect.setAttribute('height', Math.max(1, y1 - y0));
              group.appendChild(rect);
              const label = document.createElementNS(svgNS, 'text');
              label.setAttribute('x', x0); label.setAttribute('y', Math.max(12, y0 - 4));
              // A track id ends in its number in the run (`cam-01-<run>-7`): the picture shows #7.
              label.textContent = (mark.trackId ? '#' + mark.trackId.split('-').pop() + ' ' : '')
                + (mark.value || mark.state)
                + (mark.ruleId ? ' (' + mark.ruleId + ')' : '');
              group.appendChild(label);
              overlay.appendChild(group);
              const row = document.createElement('tr');
              for (const cell of [mark.state, mark.trackId, mark.symbology, mark.value, mark.ruleId]) {
                const td = document.createElement('td');
                td.textContent = cell === undefined ? '-' : String(cell);
                row.appendChild(td);
              }
              rows.appendChild(row);
            }
            figure('frame').textContent = String(data.frame);
            figure('fps').textContent = data.fps === undefined ? '-' : String(data.fps);
            const controls = data.controls || {};
            // As the camera names them (GenICam's SFNC: µs and dB).
            figure('exposure').textContent = controls.ExposureTime || controls.ExposureTimeAbs || '-';
            figure('gain').textContent = controls.Gain || controls.GainRaw || '-';
            LIVE_VIEW.dataset.frame = String(data.frame);
            LIVE_VIEW.dataset.width = String(data.width);
            LIVE_VIEW.dataset.height = String(data.height);
            LIVE_VIEW.dataset.changes = String(Number(LIVE_VIEW.dataset.changes) + 1);
          }
          async function poll() {
            try {
              const response = await fetch(LIVE_VIEW.dataset.liveView, {cache: 'no-store'});
              const data = await response.json();
              figure('live-state').textContent = data.state;
              figure('live-problem').textContent = data.problem || '';
              LIVE_VIEW.dataset.state = data.state;
              if (data.state === 'live') {
                figure('age').textContent = String(data.ageSeconds);
                if (data.frame !== shownFrame) {
                  const next = new Image();
                  next.onload = () => {
                    // The loaded picture itself is shown (asking for its address again could
                    // bring a newer frame than the marks drawn over it).
                    next.alt = "the camera's latest frame";
                    next.dataset.figure = 'live-image';
                    next.dataset.frame = String(data.frame);
                    figure('live-image').replaceWith(next);
                    draw(data);
                  };
                  // Gone already (newer pictures came): the next poll shows a newer one.
                  next.onerror = () => { shownFrame = null; };
                  next.src = data.picture;
                  shownFrame = data.frame;
                }
              }
            } catch (error) {
              figure('live-state').textContent = 'not updated';
              figure('live-problem').textContent = String(error.message || error);
              LIVE_VIEW.dataset.state = 'offline';
            }
            setTimeout(poll, 250);
          }
          poll();
        }
        """
}
