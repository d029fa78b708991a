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
            XCTAssertTrue("\($0)".contains(DashboardPage.stylesheetLink), "\($0)")
        }
        let twice = html + DashboardPage.scriptElement
        XCTAssertThrowsError(try DashboardPage.assemble(html: twice, css: "", js: "")) {
            XCTAssertTrue("\($0)".contains("found 2"), "\($0)")
        }
    }

    func testInlinedTextThatWouldCloseItsElementEarlyFailsStartUp() {
        XCTAssertThrowsError(try DashboardPage.assemble(html: html, css: "", js: "s = '</SCRIPT>';")) {
            XCTAssertTrue("\($0)".contains("</script"), "\($0)")
        }
        XCTAssertThrowsError(try DashboardPage.assemble(html: html, css: "/* </style> */", js: ""))
    }

    /// The bundle SwiftPM builds is found beside the test executable, as beside the server's,
    /// and its files assemble (the name in ResourceBundle follows the package and target).
    func testTheBuiltBundleLoads() throws {
        let page = try DashboardPage.load()
        XCTAssertTrue(page.html.hasPrefix("<!doctype html>"))
        XCTAssertFalse(page.html.contains(DashboardPage.scriptElement))
        XCTAssertTrue(page.html.contains("<script>\n"))
    }
}
