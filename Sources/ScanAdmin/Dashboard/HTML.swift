import ScanCore

/// HTML text for the dashboard: escaping, the page frame, its style sheet and its one script
/// (the project's own; the page loads nothing from elsewhere, so it works on an isolated network).
enum HTML {
    /// `text` safe inside an element or a quoted attribute.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// A path segment for a link (ids may hold any character).
    static func segment(_ text: String) -> String {
        var allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".unicodeScalars)
        allowed.remove("/")
        var out = ""
        for byte in text.utf8 {
            let scalar = Unicode.Scalar(byte)
            if byte < 0x80 && allowed.contains(scalar) {
                out.unicodeScalars.append(scalar)
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }

    /// A whole page: `live` names the fragments the script refreshes (id → URL, seconds). The page
    /// has no inline script or style (the Content-Security-Policy allows none): the style sheet and
    /// the script are served from /assets/, and the fragments to refresh are a data attribute.
    static func page(title: String, body: HTMLText, live: [(id: String, url: String, seconds: Double)] = [])
        -> HTMLText
    {
        let items = live.map { item in
            var writer = JSONWriter()
            writer.field("id", item.id)
            writer.field("url", item.url)
            writer.field("every", Int(item.seconds * 1000))
            return writer.text
        }
        let refresh = "[" + items.joined(separator: ",") + "]"
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title) · ScanTrack</title>
            <link rel="stylesheet" href="/assets/dashboard.css"></head>
            <body data-updates="0" data-live="\(refresh)">
            <header><a class="brand" href="/">ScanTrack</a><span class="title">\(title)</span>
            <span id="updated" class="muted"></span><span id="offline" class="alert" hidden></span></header>
            <main>\(body)</main>
            <script src="/assets/dashboard.js"></script>
            </body></html>

            """
    }

    static let style = """
        :root { --ok: #1b7f3b; --warn: #b26a00; --bad: #b3261e; --muted: #667; --line: #dde; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.4 "DejaVu Sans", system-ui, sans-serif; color: #123; background: #f6f7fa; }
        header { display: flex; gap: 1em; align-items: baseline; padding: .6em 1em; background: #123; color: #fff; }
        header a { color: #fff; text-decoration: none; font-weight: bold; }
        header .muted { color: #bcd; margin-left: auto; }
        main { padding: 1em; max-width: 1400px; }
        section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .8em 1em; margin-bottom: 1em; }
        h2 { margin: .1em 0 .5em; font-size: 1.25em; } h3 { margin: 1em 0 .4em; font-size: 1.05em; }
        .tiles { display: flex; flex-wrap: wrap; gap: .6em; }
        .tile { border: 1px solid var(--line); border-radius: 6px; padding: .4em .8em; min-width: 8.5em; }
        .tile b { display: block; font-size: 1.6em; }
        .tile span { color: var(--muted); font-size: .85em; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: .25em .6em; border-bottom: 1px solid var(--line); }
        td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
        .muted { color: var(--muted); }
        .alert { background: var(--bad); color: #fff; padding: 0 .5em; border-radius: 3px; }
        .state-streaming, .verdict-complete, .rate-good { color: var(--ok); font-weight: bold; }
        .state-paused, .state-starting, .state-reconnecting, .rate-fair, .verdict-over { color: var(--warn); font-weight: bold; }
        .state-silent, .state-never-heard, .verdict-short, .verdict-unexpected, .verdict-unknown-order, .rate-poor { color: var(--bad); font-weight: bold; }
        .state-ended { color: var(--muted); font-weight: bold; }
        .noreads { display: flex; flex-wrap: wrap; gap: .8em; }
        .noreads figure { margin: 0; border: 1px solid var(--line); padding: .4em; background: #fafbfc; }
        .noreads img { display: block; max-width: 320px; max-height: 200px; image-rendering: pixelated; }
        svg { max-width: 100%; height: auto; }
        .notice { background: #e6f4ea; padding: .3em .6em; border-radius: 3px; }
        .desk-bar { display: flex; gap: 1em; align-items: center; }
        form.inline { display: inline; }
        form.desk { display: flex; flex-wrap: wrap; gap: .4em; margin-top: .4em; }
        figure .alert { margin: .3em 0; }
        .live-view { position: relative; display: inline-block; max-width: 100%; background: #000; }
        .live-view img { display: block; max-width: 100%; height: auto; }
        .live-view svg { position: absolute; left: 0; top: 0; width: 100%; height: 100%; }
        .live-view rect { fill: none; stroke-width: 3; vector-effect: non-scaling-stroke; }
        .live-view text { font: bold 22px "DejaVu Sans", sans-serif; paint-order: stroke; stroke: #000; stroke-width: 4px; }
        .mark-read rect { stroke: #00c800; } .mark-read text { fill: #00c800; }
        .mark-rejected rect { stroke: #e60000; } .mark-rejected text { fill: #ff5050; }
        .mark-unconfirmed rect { stroke: #ffb000; } .mark-unconfirmed text { fill: #ffb000; }
        .mark-no-read-candidate rect { stroke: #e600e6; } .mark-no-read-candidate text { fill: #ff50ff; }
        .live-view rect.parcel { stroke: #2878ff; stroke-dasharray: 12 6; }
        .live-view rect.region { stroke: #fff; stroke-dasharray: 4 4; }
        .legend .mark-parcel { border-color: #2878ff; } .legend .mark-region { border-color: #aaa; }
        .legend span { padding: 0 .4em; border-left: 4px solid; }
        .legend .mark-read { border-color: #00c800; } .legend .mark-rejected { border-color: #e60000; }
        .legend .mark-unconfirmed { border-color: #ffb000; } .legend .mark-no-read-candidate { border-color: #e600e6; }
        """

    /// Refreshes each live fragment in place (no reload); counts updates in `data-updates` and
    /// says when the server cannot be reached.
    static let script = """
        const LIVE = JSON.parse(document.body.dataset.live || '[]');
        const pageId = Math.random().toString(36).slice(2);
        document.body.dataset.pageId = pageId;
        function stamp() { document.getElementById('updated').textContent = 'updated ' + new Date().toLocaleTimeString(); }
        async function refresh(id, url) {
          const offline = document.getElementById('offline');
          try {
            const response = await fetch(url, {cache: 'no-store'});
            const text = await response.text();
            if (!response.ok) throw new Error(text || response.statusText);
            document.getElementById(id).innerHTML = text;
            document.body.dataset.updates = String(Number(document.body.dataset.updates) + 1);
            offline.hidden = true;
            stamp();
          } catch (error) {
            offline.textContent = 'not updated: ' + (error.message || error);
            offline.hidden = false;
          }
        }
        stamp();
        for (const {id, url, every} of LIVE) setInterval(() => refresh(id, url), every);
        document.body.dataset.ready = 'true';
        """
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
