import Foundation

/// The dashboard served at `GET /` (`text/html; charset=utf-8`): one self-contained page that
/// shows preferences, things and posts live over one multiplexed `EventSource` on `/events`.
///
/// Its source is three files in `Dashboard/Resources` (SwiftPM resources): `index.html` links
/// `dashboard.css` and `dashboard.js` the ordinary way, so the files open and lint as what they
/// are; at start-up the link and the script element are replaced by the files' contents, once,
/// so the served page loads nothing from anywhere (see the route's Content-Security-Policy).
/// Nothing from the server's state or configuration goes into the page: it fetches what it shows.
struct DashboardPage: Sendable {
    /// The complete HTML document, as served.
    let html: String

    /// The element in `index.html` that the stylesheet replaces.
    static let stylesheetLink = #"<link rel="stylesheet" href="dashboard.css">"#
    /// The element in `index.html` that the script replaces.
    static let scriptElement = #"<script src="dashboard.js"></script>"#

    /// Reads the three files from the resource bundle beside the executable and assembles them.
    static func load() throws -> DashboardPage {
        let bundle = try ResourceBundle.locate()
        func read(_ name: String, _ ext: String) throws -> String {
            guard let url = bundle.url(forResource: name, withExtension: ext) else {
                throw StartupError(description: "the dashboard's \(name).\(ext) is missing from \(bundle.bundlePath)")
            }
            do {
                return try String(contentsOf: url, encoding: .utf8)
            } catch {
                throw StartupError(description: "cannot read the dashboard's \(url.path): \(error)")
            }
        }
        return try assemble(html: read("index", "html"), css: read("dashboard", "css"), js: read("dashboard", "js"))
    }

    /// `index.html` with the stylesheet and the script inlined. Each placeholder must occur
    /// exactly once, and the inlined text must not close its element early (`</style`,
    /// `</script`): either would serve a broken page, so it fails start-up instead.
    static func assemble(html: String, css: String, js: String) throws -> DashboardPage {
        var page = html
        try inline(css, replacing: stylesheetLink, tag: "style", in: &page)
        try inline(js, replacing: scriptElement, tag: "script", in: &page)
        return DashboardPage(html: page)
    }

    private static func inline(_ text: String, replacing placeholder: String, tag: String, in page: inout String) throws {
        let ranges = page.ranges(of: placeholder)
        guard ranges.count == 1, let range = ranges.first else {
            throw StartupError(description: "the dashboard's index.html must contain \(placeholder) exactly once (found \(ranges.count))")
        }
        if text.range(of: "</\(tag)", options: .caseInsensitive) != nil {
            throw StartupError(description: "the dashboard's inlined \(tag) must not contain </\(tag)")
        }
        let body = text.hasSuffix("\n") ? text : text + "\n"
        page.replaceSubrange(range, with: "<\(tag)>\n\(body)</\(tag)>")
    }
}
