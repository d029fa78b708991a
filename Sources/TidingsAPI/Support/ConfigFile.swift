import Foundation

/// A configuration file named by a flag (`--tokens FILE`, `--webhooks FILE`), read whole but
/// bounded: at most `maxBytes` are read, so a file that grows meanwhile, or a device or pipe
/// named by mistake (`/dev/zero`), is refused after `maxBytes + 1` bytes instead of filling memory.
enum ConfigFile {
    /// Why the file could not be read; `description` names the flag and the path.
    struct Unreadable: Error, CustomStringConvertible {
        let description: String
    }

    /// The file's bytes. `flag` names it in messages (`--tokens`).
    static func read(path: String, flag: String, maxBytes: Int) throws(Unreadable) -> Data {
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        } catch {
            throw Unreadable(description: "cannot read \(flag) file \(path): \(error.localizedDescription)")
        }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: maxBytes + 1) ?? Data()
        } catch {
            throw Unreadable(description: "cannot read \(flag) file \(path): \(error.localizedDescription)")
        }
        guard data.count <= maxBytes else { throw Unreadable(description: "\(flag) file \(path) is larger than \(maxBytes) bytes") }
        return data
    }
}
