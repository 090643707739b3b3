import Foundation
import ScanReports

/// An hourly chart drawn as SVG on the server: item passes an hour as bars, the read rate
/// (decoded ÷ decoded + no-read) as a line, shift starts as dashed rules. No script, no fonts
/// or files from elsewhere.
struct TrendChart {
    struct Hour: Equatable {
        /// `YYYY-MM-DD HH:00` in the site's zone, as the report's hourly figures are keyed.
        var label: String
        var passes: Int
        var decoded: Int
        var noReads: Int

        var readRate: Double? { decoded + noReads == 0 ? nil : Double(decoded) / Double(decoded + noReads) }
    }

    var hours: [Hour]
    /// Where each shift starts: the index of its first hour, and its label.
    var shifts: [(index: Int, label: String)]

    typealias Figures = [String: (passes: Int, decoded: Int, noReads: Int)]

    /// Every hour from `start` to `end` in `zone`, each with its figures (zero when none).
    static func hours(from start: Date, to end: Date, zone: TimeZone, figures: Figures) -> [Hour] {
        hours(from: start, to: end, label: hourLabel(zone), figures: figures)
    }

    /// Writes an instant as its hour's label in `zone` (`YYYY-MM-DD HH:00`).
    static func hourLabel(_ zone: TimeZone) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy-MM-dd HH:00"
        return formatter
    }

    private static func hours(from start: Date, to end: Date, label formatter: DateFormatter, figures: Figures)
        -> [Hour]
    {
        var labels: [String] = []
        var instant = start
        while instant < end {
            let label = formatter.string(from: instant)
            if labels.last != label { labels.append(label) }
            instant += 3600
        }
        return labels.map { label in
            let f = figures[label] ?? (0, 0, 0)
            return Hour(label: label, passes: f.passes, decoded: f.decoded, noReads: f.noReads)
        }
    }

    func svg(title: String) -> HTMLText {
        let step = max(12, min(36, 860 / Double(max(hours.count, 1))))
        let left = 44.0
        let right = 44.0
        let top = 18.0
        let plot = 150.0
        let width = left + right + step * Double(max(hours.count, 1))
        let height = top + plot + 34
        let peak = max(1, hours.map(\.passes).max() ?? 1)
        func y(_ fraction: Double) -> Double { top + plot * (1 - fraction) }
        var out: HTMLText = """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(Int(width)) \(Int(height))" width="\(Int(width))" \
            role="img" aria-label="\(title)" data-hours="\(hours.count)">
            <title>\(title)</title>
            <rect x="\(left)" y="\(top)" width="\(width - left - right)" height="\(plot)" fill="#fbfcfe" stroke="#dde"/>

            """
        for fraction in [0.5, 1.0] {
            out +=
                "<line x1=\"\(left)\" x2=\"\(width - right)\" y1=\"\(y(fraction))\" y2=\"\(y(fraction))\" stroke=\"#eef\"/>\n"
        }
        out += text(left - 4, y(1) + 4, "\(peak)", anchor: "end", fill: "#357")
        out += text(left - 4, y(0) + 4, "0", anchor: "end", fill: "#357")
        out += text(width - right + 4, y(1) + 4, "100%", anchor: "start", fill: "#1b7f3b")
        out += text(width - right + 4, y(0.5) + 4, "50%", anchor: "start", fill: "#1b7f3b")
        out += text(left, top - 5, "item passes / h", anchor: "start", fill: "#357")
        out += text(width - right, top - 5, "read rate", anchor: "end", fill: "#1b7f3b")
        for (index, hour) in hours.enumerated() where hour.passes > 0 {
            let barHeight = plot * Double(hour.passes) / Double(peak)
            out += """
                <rect x="\(left + step * Double(index) + 2)" y="\(top + plot - barHeight)" width="\(step - 4)" \
                height="\(barHeight)" fill="#6b9ccf"><title>\(hour.label): \(hour.passes) item passes</title></rect>

                """
        }
        // The read rate, broken where an hour saw nothing.
        var segment: [String] = []  // numbers only
        func flush() {
            if segment.count > 1 {
                out +=
                    "<polyline fill=\"none\" stroke=\"#1b7f3b\" stroke-width=\"2\" points=\"\(segment.joined(separator: " "))\"/>\n"
            }
            segment = []
        }
        for (index, hour) in hours.enumerated() {
            guard let rate = hour.readRate else {
                flush()
                continue
            }
            let x = left + step * (Double(index) + 0.5)
            segment.append("\(x),\(y(rate))")
            out += """
                <circle cx="\(x)" cy="\(y(rate))" r="2.5" fill="#1b7f3b"><title>\(hour.label): read rate \
                \(String(format: "%.1f", rate * 100))% (\(hour.decoded) decoded, \(hour.noReads) no-reads)</title></circle>

                """
        }
        flush()
        for (index, hour) in hours.enumerated() where index % 2 == 0 {
            out += text(left + step * (Double(index) + 0.5), top + plot + 14, String(hour.label.suffix(5).prefix(2)))
        }
        for shift in shifts {
            let x = left + step * Double(shift.index)
            out +=
                "<line x1=\"\(x)\" x2=\"\(x)\" y1=\"\(top)\" y2=\"\(top + plot + 18)\" stroke=\"#889\" stroke-dasharray=\"4 3\"/>\n"
            out += text(x + 3, top + plot + 30, shift.label, anchor: "start", fill: "#556")
        }
        return out + "</svg>"
    }

    private func text(_ x: Double, _ y: Double, _ content: String, anchor: String = "middle", fill: String = "#556")
        -> HTMLText
    {
        "<text x=\"\(x)\" y=\"\(y)\" font-size=\"11\" font-family=\"DejaVu Sans, sans-serif\" text-anchor=\"\(anchor)\" fill=\"\(fill)\">\(content)</text>\n"
    }
}

extension TrendChart {
    /// The chart of `shifts` (consecutive, oldest first) in `zone`: every hour from the first
    /// one's start to the last one's end, and where each shift starts.
    init(shifts: [ShiftPlan.Instance], zone: TimeZone, figures: Figures) {
        let formatter = Self.hourLabel(zone)
        let hours = shifts.first.map { first in
            Self.hours(from: first.start, to: shifts.last?.end ?? first.end, label: formatter, figures: figures)
        }
        self.init(
            hours: hours ?? [],
            shifts: shifts.compactMap { shift in
                let label = formatter.string(from: shift.start)
                return hours?.firstIndex { $0.label == label }.map { ($0, shift.label) }
            })
    }
}
