import HTTPTypes
import EventHTTP
import Observing
import TidingsModel

private struct ThingBody: Decodable { let thing: String }
private struct ThingsBody: Decodable { let things: [String] }

struct ThingsList: Encodable {
    let things: [String]
    let revision: UInt64
}

struct ThingRecord: Encodable {
    let thing: String
    let revision: UInt64
}

struct ThingLookup: Encodable {
    let thing: String
}

/// The Things resource of openapi.yaml: the acronym list, normalised by the library's rules, read
/// from memory, written through the durable write pipeline.
@MainActor
struct ThingRoutes {
    let state: TidingsState
    let writes: WritePipeline
    /// `?asOf=` (History/AsOfReads).
    var asOf: AsOfReads? = nil
    private let cache = EncodedThings()

    func register(on router: any RouteRegistrar) {
        router.get("/things") { request, responder in
            if let asOf, let point = request.query("asOf") { return try asOf.things(point, responder: responder) }
            // `If-None-Match` → 304 is the caching middleware's, on the list's ETag.
            responder.send(listResponse())
        }
        router.post("/things") { request, responder in
            let body = try request.decode(ThingBody.self)
            writes.submit(.addThing(body.thing), from: request) { result in
                switch result {
                case let .success(.thingAdded(thing, revision)):
                    responder.send(.json(ThingRecord(thing: thing, revision: revision), status: .created, headers: [
                        .location: request.environmentPrefix + "/things/" + percentEncodedPathSegment(thing),
                        .eTag: EntityTag(revision: revision).header,
                    ]))
                case let .failure(failure): responder.send(.problem(Problems.forWrite(failure)))
                case .success: responder.send(listResponse())
                }
            }
        }
        router.put("/things") { request, responder in
            // Named now, with the credentials the access check just used: a SIGHUP while the
            // list is checked off the loop must not change who the write is recorded under.
            let author: WriteAuthor
            do throws(WriteFailure) { author = try WriteAuthor(request, credentials: writes.credentials) } catch {
                throw Problems.forWrite(error)
            }
            // Decoding and normalising up to 10,000 things is work for the pool, not the loop.
            let textCase = state.textCase
            request.process(responder, { () throws(ProblemDetails) -> [String] in
                let body = try request.decode(ThingsBody.self)
                do throws(ThingError) {
                    return try ThingRules.validateList(body.things, textCase: textCase)
                } catch let .duplicate(thing) {
                    throw Problems.invalid("\"\(thing)\" appears more than once after normalisation; nothing was changed.",
                                           errors: [.init(key: thing, detail: "duplicate")])
                } catch {
                    throw Problems.forWrite(.thing(error))
                }
            }) { list in
                writes.submit(.replaceThings(list, normalized: true), author: author) { result in
                    switch result {
                    case let .failure(failure): responder.send(.problem(Problems.forWrite(failure)))
                    case .success: responder.send(listResponse())
                    }
                }
            }
        }
        router.get("/things/{thing}") { request, responder in
            // A segment too long to be a thing names none; it is not normalised (quadratic).
            let raw = request.parameters["thing"] ?? ""
            let thing = (try? ThingRules.normalizeBounded(raw, textCase: state.textCase)) ?? String(raw.unicodeScalars.prefix(64))
            guard state.things.contains(thing) else { throw Problems.notFound("There is no thing \"\(thing)\".") }
            responder.send(.json(ThingLookup(thing: thing)))
        }
        router.delete("/things/{thing}") { request, responder in
            remove(request.parameters["thing"] ?? "", request: request, responder: responder)
        }
    }

    private func remove(_ raw: String, request: Request, responder: Responder) {
        writes.submit(.removeThing(raw), from: request) { result in
            switch result {
            case .success: responder.send(Response(status: .noContent))
            case let .failure(failure): responder.send(.problem(Problems.forWrite(failure)))
            }
        }
    }

    /// The list, encoded once per revision of it: up to 10,000 things take tens of
    /// milliseconds to encode, which every read would otherwise hold the loop for.
    private func listResponse() -> Response {
        let revision = state.thingsRevision
        if let cached = cache.list, cached.revision == revision { return cached.response }
        let response = Response.json(ThingsList(things: state.things.things, revision: revision),
                                     headers: [.eTag: EntityTag(revision: revision).header])
        cache.list = (revision, response)
        return response
    }
}

/// The encoded list answer and the revision it shows.
@MainActor
private final class EncodedThings {
    var list: (revision: UInt64, response: Response)?
}
