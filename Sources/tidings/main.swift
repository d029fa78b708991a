// The `tidings` executable: flags → configuration, logging, the event loop on the main
// thread (which also runs the main actor), signals, and the listening line.
import EventHTTP
import Foundation
import Logging
import TidingsAPI
import ArgumentParser
import TidingsModel

let command = TidingsCommand.parseOrExit()
let configuration: TidingsConfiguration
do {
    configuration = try command.resolve(environment: ProcessInfo.processInfo.environment)
} catch {
    TidingsCommand.exit(withError: error)
}

let logLevel = Logger.Level(rawValue: configuration.logLevel) ?? .info
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = logLevel
    return handler
}
let logger = Logger(label: "tidings")
// Tokens are never logged, only whether they are set.
logger.debug("configuration", metadata: [
    "host": "\(configuration.host)", "port": "\(configuration.port)", "dataDir": "\(configuration.dataDir)",
    "feedURL": "\(configuration.feedURL ?? "(built-in sample)")", "feedRefresh": "\(configuration.feedRefresh)",
    "feedTimeout": "\(configuration.feedTimeout)", "preferences": "\(configuration.preferencesFile ?? "(built-in)")",
    "textCase": "\(configuration.textCase.rawValue)", "apiTokens": "\(configuration.apiTokens.count)",
    "readToken": "\(configuration.readToken == nil ? "unset" : "set")", "corsOrigins": "\(configuration.corsOrigins)",
    "heartbeat": "\(configuration.heartbeat)", "replayBuffer": "\(configuration.replayBuffer)",
])

func fail(_ message: String) -> Never {
    logger.critical("\(message)")   // the log goes to stderr at every level
    exit(1)
}

do {
    try FileManager.default.createDirectory(atPath: configuration.dataDir, withIntermediateDirectories: true)
} catch {
    fail("cannot create data directory \(configuration.dataDir): \(error.localizedDescription)")
}

let loop: EventLoop
do { loop = try EventLoop() } catch { fail("cannot create the event loop: \(error)") }
// The main actor's queue is drained by the loop, so `@MainActor` code runs between callbacks.
loop.integrateMainQueue()

let app: TidingsApplication
do { app = try TidingsApplication(configuration: configuration, loop: loop, logger: logger) } catch { fail("\(error)") }
let port: Int
do { port = try app.start() } catch { fail("\(error)") }
app.markReady()

for signalNumber in [SIGTERM, SIGINT] {
    loop.onSignal(signalNumber) {
        MainActor.assumeIsolated {
            logger.info("received signal \(signalNumber)")
            app.shutdown { loop.stop() }
        }
    }
}
// openapi.yaml: exit 0 within 10 s whatever happens (at 9 s: a second of slack for a loaded machine,
// where a waking thread and the exit can take hundreds of milliseconds). The deadline runs on its own thread, so a
// loop held by a long callback cannot delay it; every acknowledged write is already durable, and
// status 0 says the process stopped as asked.
do { try ShutdownDeadline.arm(signals: [SIGTERM, SIGINT], after: 9.0, exitStatus: 0) } catch { fail("\(error)") }

// SIGHUP: reload the --tokens file (a bad one keeps the credentials in force, logged).
loop.onSignal(SIGHUP) {
    MainActor.assumeIsolated {
        logger.info("received SIGHUP: reloading credentials and webhooks")
        app.reloadCredentials()
        app.reloadWebhooks()
    }
}

print("tidings listening on \(configuration.baseURL(port: port))")
fflush(nil)  // all streams: the listening line must reach a pipe at once
logger.info("listening", metadata: ["port": "\(port)", "dataDir": "\(configuration.dataDir)"])
loop.run()
exit(0)
