import HTTPTypes
import EventHTTP
import Observing
import TidingsModel

/// The problem answers the resources share, so every route words them the same way.
enum Problems {
    static func notFound(_ detail: String) -> ProblemDetails {
        ProblemDetails(status: .notFound, detail: detail)
    }

    static func unknownPreference(_ key: String) -> ProblemDetails {
        notFound("There is no preference '\(key)'.")
    }

    static func badQuery(_ detail: String) -> ProblemDetails {
        ProblemDetails(status: .badRequest, detail: detail)
    }

    static func invalid(_ detail: String, errors: [ProblemDetails.FieldError]? = nil) -> ProblemDetails {
        ProblemDetails(status: .unprocessableContent, detail: detail, errors: errors)
    }

    /// The answer for a refused or failed write.
    static func forWrite(_ failure: WriteFailure) -> ProblemDetails {
        switch failure {
        case let .invalidPreferences(error):
            let errors = error.issues.map { ProblemDetails.FieldError(key: $0.key, detail: $0.message) }
            let detail = error.issues.count == 1
                ? "Preference '\(error.issues[0].key)': \(error.issues[0].message)."
                : "\(error.issues.count) preferences are invalid; nothing was changed."
            return invalid(detail, errors: errors)
        case let .thing(error):
            switch error {
            case .duplicate:
                return ProblemDetails(status: .conflict, detail: capitalized(error.description) + ".")
            case .notFound:
                return notFound(capitalized(error.description) + ".")
            case .empty, .tooLong, .controlCharacters, .tooManyCombiningMarks, .tooMany:
                return invalid(capitalized(error.description) + ".")
            }
        case let .reservedThing(thing):
            return invalid("\"\(thing)\" is reserved: /things/\(thing) is another resource.")
        case let .preconditionFailed(key, current):
            return ProblemDetails(status: .preconditionFailed,
                                  detail: "Preference '\(key)' is at revision \(current), not the one If-Match names.",
                                  headers: [.eTag: EntityTag(revision: current).header])
        case let .invalidReason(detail):
            return invalid(detail, errors: [.init(key: "Tidings-Reason", detail: detail)])
        case let .unstorable(detail):
            return invalid(detail)
        case let .environment(refusal):
            return environment(refusal)
        case .storeFailed:
            return ProblemDetails(status: .serviceUnavailable,
                                  detail: "The change could not be stored; nothing was changed. Try again.",
                                  headers: [.retryAfter: "1"])
        }
    }

    /// `/environments/{env}/...` names no environment.
    static func unknownEnvironment(_ name: String) -> ProblemDetails {
        notFound("There is no environment \"\(String(name.prefix(64)))\".")
    }

    /// An environment the store refused (Environments/).
    static func environment(_ refusal: EnvironmentRefusal) -> ProblemDetails {
        switch refusal {
        case let .unknown(name):
            return notFound("There is no environment \"\(name)\".")
        case let .exists(name):
            return ProblemDetails(status: .conflict, detail: "The environment \"\(name)\" exists already.")
        case let .tooMany(limit):
            return ProblemDetails(status: .conflict,
                                  detail: "At most \(limit) environments may exist (--max-environments); delete one first.")
        case .isDefault:
            return ProblemDetails(status: .conflict, detail: "The environment \"default\" cannot be deleted.")
        }
    }

    private static func capitalized(_ text: String) -> String {
        text.prefix(1).uppercased() + text.dropFirst()
    }
}
