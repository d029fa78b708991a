import Foundation
@testable import TidingsAPI
import XCTest

/// `--tokens` and `--webhooks` files are read through one bounded read (``ConfigFile``): a file
/// over the bound, or a device that never ends, is refused after the bound, naming the flag.
final class ConfigFileTests: XCTestCase {
    func test_a_file_over_the_bound_and_an_endless_device_are_refused_after_the_bound() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(repeating: 0x20, count: 101).write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(try ConfigFile.read(path: path, flag: "--tokens", maxBytes: 101).count, 101)
        do {
            _ = try ConfigFile.read(path: path, flag: "--tokens", maxBytes: 100)
            XCTFail("a file over the bound was read")
        } catch {
            XCTAssertEqual(error.description, "--tokens file \(path) is larger than 100 bytes")
        }
        // A device has no size to check first: only a bounded read stops.
        do {
            _ = try ConfigFile.read(path: "/dev/zero", flag: "--webhooks", maxBytes: 4096)
            XCTFail("/dev/zero was read")
        } catch {
            XCTAssertEqual(error.description, "--webhooks file /dev/zero is larger than 4096 bytes")
        }
        do {
            _ = try ConfigFile.read(path: path + ".missing", flag: "--webhooks", maxBytes: 100)
            XCTFail("a missing file was read")
        } catch {
            // The reason after the path is Foundation's own wording: compared with what it says for that file.
            var foundation = ""
            do { _ = try FileHandle(forReadingFrom: URL(fileURLWithPath: path + ".missing")) } catch { foundation = error.localizedDescription }
            XCTAssertEqual(error.description, "cannot read --webhooks file \(path).missing: \(foundation)")
        }
        // Both flags' loaders go through it.
        do {
            _ = try WebhooksFile.load(path: "/dev/zero", declaredKeys: [])
            XCTFail("/dev/zero was read as --webhooks")
        } catch {
            XCTAssertEqual(error.description, "--webhooks file /dev/zero is larger than \(WebhooksFile.maxBytes) bytes")
        }
        do {
            _ = try TokensFile.load(path: "/dev/zero")
            XCTFail("/dev/zero was read as --tokens")
        } catch {
            XCTAssertEqual(error.description, "--tokens file /dev/zero is larger than \(TokensFile.maxBytes) bytes")
        }
    }
}
