public import Observing

/// Namespace of the functions that build the served contract's tree (Contract/OpenAPI*.swift).
/// To change the contract, change those functions and regenerate the repository's copy with
/// `scripts/write-openapi.sh` (an end-to-end test and `make lint` keep the two equal).
enum OpenAPIContract {}

/// The HTTP contract of a running server (`GET /openapi.yaml`), generated at start from its
/// preference declarations: every declared key gets its own paths and exact value schemas.
public enum OpenAPIDocument {
    /// The YAML text for `declarations` (ends with a newline).
    public static func yaml(for declarations: [PreferenceDeclaration]) -> String {
        YAMLEmitter.document(tree(for: declarations))
    }

    /// The document as a tree.
    static func tree(for declarations: [PreferenceDeclaration]) -> YAMLNode {
        typealias C = OpenAPIContract
        let all = PreferencesContract(declarations)
        var paths: [(String, YAMLNode)] = [
            ("/healthz", C.pathHealthz()),
            ("/readyz", C.pathReadyz()),
            ("/metrics", C.pathMetrics()),
            ("/openapi.yaml", C.pathOpenapiYaml()),
            ("/", C.pathDashboard()),
            ("/preferences", C.addingAsOf(to: C.pathPreferences(all))),
            ("/preferences/rollback", C.pathRollback(things: false)),
            ("/preferences/schema", C.pathPreferenceSchema(all)),
            ("/preferences/events", C.pathPreferencesEvents()),
        ]
        for preference in all.preferences {
            paths.append(("/preferences/" + preference.key, C.addingAsOf(to: C.pathPreference(preference))))
            paths.append(("/preferences/" + preference.key + "/events", C.pathPreferenceEvents(preference)))
            paths.append(("/preferences/" + preference.key + "/history", C.pathPreferenceHistory(preference)))
        }
        paths += [
            ("/things", C.addingAsOf(to: C.pathThings())),
            ("/things/{thing}", C.pathThingsThing()),
            ("/things/events", C.pathThingsEvents()),
            ("/things/history", C.pathThingsHistory()),
            ("/things/rollback", C.pathRollback(things: true)),
            ("/history", C.pathHistory()),
            ("/posts", C.pathPosts()),
            ("/posts/{id}", C.pathPostsId()),
            ("/posts/refresh", C.pathPostsRefresh()),
            ("/posts/cancel", C.pathPostsCancel()),
            ("/posts/events", C.pathPostsEvents()),
            ("/events", C.pathEvents()),
            ("/sample/posts", C.pathSamplePosts()),
            ("/stream-tickets", C.pathStreamTickets()),
            ("/ofrep/v1/evaluate/flags/{key}", C.pathOFREPFlag(all)),
            ("/ofrep/v1/evaluate/flags", C.pathOFREPFlags()),
            ("/ofrep/v1/events", C.pathOFREPEvents()),
        ]

        var schemas: [(String, YAMLNode)] = [
            ("Problem", C.schemaProblem()),
            ("Health", C.schemaHealth()),
            ("PreferenceType", C.schemaPreferenceType()),
            ("PreferenceValue", C.schemaPreferenceValue()),
            ("PreferenceRecord", C.schemaPreferenceRecord()),
            ("PreferenceMap", all.mapSchema),
            ("PreferenceWrite", C.schemaPreferenceWrite()),
            ("PreferencesPatch", all.patchSchema),
            ("PreferenceDeclaration", C.schemaPreferenceDeclaration()),
            ("PreferenceDeclarations", all.declarationsSchema),
        ]
        for preference in all.preferences {
            schemas.append((preference.valueName, preference.valueSchema))
            schemas.append((preference.recordName, preference.recordSchema))
            schemas.append((preference.writeName, preference.writeSchema))
            schemas.append((preference.eventName, preference.eventSchema))
            schemas.append((preference.streamEventName, preference.streamEventSchema))
        }
        schemas += [
            ("ThingText", C.schemaThingText()),
            ("ThingName", C.schemaThingName()),
            ("ThingWrite", C.schemaThingWrite()),
            ("ThingListWrite", C.schemaThingListWrite()),
            ("Thing", C.schemaThing()),
            ("ThingList", C.schemaThingList()),
            ("Post", C.schemaPost()),
            ("PostsError", C.schemaPostsError()),
            ("PostsState", C.schemaPostsState()),
            ("CancelResult", C.schemaCancelResult()),
            ("Ticket", C.schemaTicket()),
            ("PreferenceEvent", C.schemaPreferenceEvent()),
            ("ThingsEvent", C.schemaThingsEvent()),
            ("ResetEvent", C.schemaResetEvent()),
            ("StreamEvent", C.schemaStreamEvent()),
        ]
        schemas += C.historySchemas(keys: all.keys)
        schemas += C.ofrepSchemas()

        let securitySchemes = C.securitySchemes().setting("ofrepApiKey", C.ofrepApiKeyScheme())
        var responses = C.responses()
        for (name, response) in C.historyResponseComponents() { responses = responses.setting(name, response) }
        var parameters = C.parameters().setting("StreamKeys", all.streamKeysParameter)
        for (name, parameter) in C.historyParameterComponents() { parameters = parameters.setting(name, parameter) }
        if let generic = responses["EventStream"] {
            for preference in all.preferences {
                responses = responses.setting(preference.streamResponseName, preference.streamResponse(generic))
            }
        }
        return C.applyingCaching(to: .map([
            ("openapi", .string("3.1.0")),
            ("info", C.info()),
            ("servers", C.servers()),
            ("tags", C.tags()),
            ("security", C.security()),
            ("paths", .map(paths)),
            ("components", .map([
                ("securitySchemes", securitySchemes),
                ("headers", C.headers().setting("Link", C.linkHeader())),
                ("parameters", parameters),
                ("responses", responses),
                ("schemas", .map(schemas)),
            ])),
        ]))
    }
}
