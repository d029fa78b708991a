import Foundation

/// Finds the target's resource bundle (the dashboard's files, the sample feed) next to the
/// running executable.
///
/// SwiftPM's generated `Bundle.module` would do the same but, on Linux, ends the process with
/// `fatalError` when the bundle is missing, and its fallback is the absolute build directory of
/// the machine that compiled it. This looks only beside the executable — where SwiftPM puts the
/// bundle in `.build/debug` and `.build/release`, and where the Dockerfile copies it — and
/// reports a missing bundle as an error the start-up turns into a clear message.
enum ResourceBundle {
    /// SwiftPM's name for this target's bundle: `<package>_<target>`, a `.resources` directory on
    /// Linux and a `.bundle` on Darwin. Renaming the package or the target renames it.
    static let name = "Tidings_TidingsAPI"

    /// The bundle beside the executable (the symlink-resolved one too, if different).
    static func locate() throws -> Bundle {
        let candidates = directories().flatMap { dir in
            ["resources", "bundle"].map { dir.appendingPathComponent("\(name).\($0)", isDirectory: true) }
        }
        for url in candidates where FileManager.default.fileExists(atPath: url.path) {
            if let bundle = Bundle(url: url) { return bundle }
        }
        throw StartupError(description: """
            the resource bundle \(name).resources (the dashboard, the sample feed) is missing: looked in \
            \(directories().map(\.path).joined(separator: ", ")); install it next to the tidings binary
            """)
    }

    /// The executable's directory as Foundation sees it, then after resolving symlinks.
    private static func directories() -> [URL] {
        var dirs = [Bundle.main.bundleURL.standardizedFileURL]
        if let exe = Bundle.main.executableURL?.resolvingSymlinksInPath().deletingLastPathComponent().standardizedFileURL,
           !dirs.contains(exe) {
            dirs.append(exe)
        }
        return dirs
    }
}
