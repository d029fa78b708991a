@testable import EventHTTP
import HTTPTypes
import XCTest

/// `AppendedFields` hands back the last result when the same array comes in again; any other
/// array — even one of the same length, or one built after the last was released — gets its
/// own fields followed by the tail.
final class AppendedFieldsTests: XCTestCase {
    private let tail = [HTTPField(name: .cacheControl, value: "no-cache"), HTTPField(name: .vary, value: "Accept-Encoding")]

    private func revision(_ value: String) -> [HTTPField] { [HTTPField(name: HTTPField.Name("Tidings-Revision")!, value: value)] }

    func test_each_input_gets_its_own_fields_then_the_tail() {
        let appended = AppendedFields(tail)
        var none: [HTTPField] = []
        appended.append(to: &none)
        XCTAssertEqual(none, tail)

        let first = revision("1")
        for _ in 0..<3 {
            var fields = first
            appended.append(to: &fields)
            XCTAssertEqual(fields, first + tail)
        }
        // Same length, other content, other storage.
        for value in ["2", "3", "2"] {
            var fields = revision(value)
            appended.append(to: &fields)
            XCTAssertEqual(fields, revision(value) + tail)
        }
        // An array changed after it was passed in is another array (copy on write).
        var changed = first
        changed[0] = HTTPField(name: .eTag, value: "\"x\"")
        appended.append(to: &changed)
        XCTAssertEqual(changed.map(\.name), [.eTag, .cacheControl, .vary])
    }

    func test_the_same_storage_comes_back_as_the_same_result() {
        let appended = AppendedFields(tail)
        let input = revision("7")
        var a = input, b = input
        appended.append(to: &a)
        appended.append(to: &b)
        XCTAssertEqual(a, b)
        // The second answer reused the first's array: no new storage per answer.
        XCTAssertEqual(a.withUnsafeBufferPointer { $0.baseAddress }, b.withUnsafeBufferPointer { $0.baseAddress })
    }
}
