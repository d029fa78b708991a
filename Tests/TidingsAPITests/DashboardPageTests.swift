import XCTest
@testable import TidingsAPI

/// The dashboard page as the server assembles it at start-up from its three resource files.
final class DashboardPageTests: XCTestCase {
    private let html = """
        <!doctype html>
        <html><head><link rel="stylesheet" href="dashboard.css"></head>
        <body><p>hi</p><script src="dashboard.js"></script></body></html>
        """

    func testTheStylesheetAndTheScriptAreInlinedInPlaceOfTheirElements() throws {
        let page = try DashboardPage.assemble(html: html, css: "p { color: red; }\n", js: "var x = 1;")
        XCTAssertEqual(page.html, """
            <!doctype html>
            <html><head><style>
            p { color: red; }
            </style></head>
            <body><p>hi</p><script>
            var x = 1;
            </script></body></html>
            """)
    }

    func testAMissingOrRepeatedPlaceholderFailsStartUp() {
        XCTAssertThrowsError(try DashboardPage.assemble(html: "<p>no links</p>", css: "", js: "")) {
            XCTAssertEqual("\($0)", "the dashboard's index.html must contain \(DashboardPage.stylesheetLink) exactly once (found 0)")
        }
        let twice = html + DashboardPage.scriptElement
        XCTAssertThrowsError(try DashboardPage.assemble(html: twice, css: "", js: "")) {
            XCTAssertEqual("\($0)", "the dashboard's index.html must contain \(DashboardPage.scriptElement) exactly once (found 2)")
        }
    }

    func testInlinedTextThatWouldCloseItsElementEarlyFailsStartUp() {
        XCTAssertThrowsError(try DashboardPage.assemble(html: html, css: "", js: "s = '</SCRIPT>';")) {
            XCTAssertEqual("\($0)", "the dashboard's inlined script must not contain </script")
        }
        XCTAssertThrowsError(try DashboardPage.assemble(html: html, css: "/* </style> */", js: ""))
    }

    /// The bundle SwiftPM builds is found beside the test executable, as beside the server's,
    /// and its files assemble (the name in ResourceBundle follows the package and target).
    func testTheBuiltBundleLoads() throws {
        let page = try DashboardPage.load()
        // substring: an HTML page's text; the browser tests (Tests/browser) read it as a page.
        XCTAssertTrue(page.html.hasPrefix("<!doctype html>"))
        // substring: the placeholder must be gone from the page's text wherever it was.
        XCTAssertFalse(page.html.contains(DashboardPage.scriptElement))
        // substring: the script was inlined as an element of the page's text.
        XCTAssertTrue(page.html.contains("<script>\n"))
    }
}
