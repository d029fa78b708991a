import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// Schedules with two instances on one PostgreSQL, end to end: both look for due schedules,
/// each schedule is applied exactly once (one change per schedule in the history) in the
/// environment it was made in, and a schedule made through one instance is seen through the other.
/// An instance that says a schedule is `applied` shows its change, whichever instance applied it.
final class ScheduleInstancesTests: XCTestCase {
    /// The schedule's state comes from the store, where it is as soon as the write commits; the
    /// values come from memory, which the applying instance updates a moment later and the other
    /// one when its change feed next reads the store (SQLite: every 100 ms). An instance must not
    /// say `applied` before it shows the change.
    func test_an_instance_that_says_applied_shows_the_change_whichever_instance_applied_it() throws {
        let directory = try TemporaryDirectory()
        let a = try TidingsProcess(dataDirectory: directory.url)
        addTeardownBlock { a.stop() }
        let b = try TidingsProcess(dataDirectory: directory.url)
        addTeardownBlock { b.stop() }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        // Three schedules a quarter of a second apart, each read through both instances.
        var pending: [(id: String, age: Int, instance: TidingsProcess, name: String)] = []
        for index in 0..<3 {
            let at = formatter.string(from: Date().addingTimeInterval(1.2 + 0.25 * Double(index)))
            let reply = try a.request("POST", "/schedules", json: ["at": at, "preferences": ["age": 40 + index]])
            XCTAssertEqual(reply.status, 201, reply.text)
            let id = try XCTUnwrap(reply.value?["id"]?.stringValue)
            pending += [(id, 40 + index, a, "A"), (id, 40 + index, b, "B")]
        }
        let deadline = Date().addingTimeInterval(10)
        while !pending.isEmpty, Date() < deadline {
            for (index, read) in pending.enumerated().reversed() {
                guard try read.instance.get("/schedules/\(read.id)").value?["state"] == "applied" else { continue }
                // At once, through the same instance: it said applied, so it shows the change.
                let age = try read.instance.get("/preferences/age").value?["value"]?.intValue ?? 0
                XCTAssertGreaterThanOrEqual(age, read.age, "schedule \(read.id) applied, read through \(read.name)")
                pending.remove(at: index)
            }
        }
        XCTAssertEqual(pending.map(\.id), [], "not applied within 10 s")
    }

    func test_two_instances_on_PostgreSQL_apply_each_schedule_once() throws {
        let cluster = try PostgresCluster()
        addTeardownBlock { cluster.destroy() }
        // Debug logs kept: a failure shows what each instance's runner did.
        let a = try TidingsProcess(arguments: ["--database-url", cluster.url, "--log-level", "debug"])
        addTeardownBlock { a.stop() }
        let b = try TidingsProcess(arguments: ["--database-url", cluster.url, "--log-level", "debug"])
        addTeardownBlock { b.stop() }

        // Half of them in another environment, made through either instance.
        XCTAssertEqual(try a.request("PUT", "/environments/staging").status, 201)
        XCTAssertTrue(eventually { (try? b.get("/environments/staging").status) == 200 })
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let at = formatter.string(from: Date().addingTimeInterval(2))
        var ids: [(id: String, prefix: String)] = []
        for index in 0..<6 {
            let through = index.isMultiple(of: 2) ? a : b
            let prefix = index % 3 == 0 ? "/environments/staging" : ""
            let reply = try through.request("POST", prefix + "/schedules", json: ["at": at, "preferences": ["age": 100 + index]])
            XCTAssertEqual(reply.status, 201, reply.text)
            ids.append((try XCTUnwrap(reply.value?["id"]?.stringValue), prefix))
        }
        XCTAssertEqual(try b.get("/schedules/\(ids[1].id)").value?["state"], "pending", "made through B, read through B")
        XCTAssertEqual(try b.get("/environments/staging/schedules/\(ids[0].id)").value?["state"], "pending", "made through A, read through B")
        let allApplied = eventually(within: 10) {
            let applied = ["", "/environments/staging"].map {
                (try? a.get($0 + "/schedules?state=applied").value?["schedules"]?.arrayValue?.count) ?? 0
            }
            return applied == [4, 2]
        }
        guard allApplied else {
            let states = ids.map { "\($0.prefix)/schedules/\($0.id): " + ((try? a.get($0.prefix + "/schedules/" + $0.id).text) ?? "?") }
            let postgresLog = (try? String(contentsOfFile: cluster.logPath, encoding: .utf8)) ?? ""
            return XCTFail("not every schedule was applied within 10 s:\n" + states.joined(separator: "\n")
                           + "\n--- A:\n\(a.log)\n--- B:\n\(b.log)\n--- PostgreSQL:\n\(postgresLog)")
        }
        for prefix in ["", "/environments/staging"] {
            let history = try XCTUnwrap(a.get(prefix + "/history?limit=100").value?["changes"]?.arrayValue)
            let made = ids.filter { $0.prefix == prefix }
            for (id, _) in made {
                XCTAssertEqual(history.filter { $0["reason"]?.stringValue == "scheduled \(id)" }.count, 1, "schedule \(id)")
            }
            XCTAssertEqual(history.count, made.count, prefix)
        }
        // Six schedules' writes and the environment's creation, nothing more.
        XCTAssertTrue(eventually { (try? b.currentRevision()) == UInt64(ids.count + 1) })
    }

    /// A schedule whose write failed for a passing reason (here a connection failure, which the
    /// store takes for the database being out of reach) is applied at the runner's next look, not
    /// once its claim ran out a minute later: the outage that failed the write also failed the
    /// release of the claim, and every schedule claimed with it stayed held by nobody applying it
    /// (two instances then applied none of six schedules within 10 s, once in CI). And a due
    /// schedule another instance holds is looked at again a second later, not in a loop.
    func test_what_an_instance_could_not_apply_is_given_back_and_what_another_holds_is_not_polled_in_a_loop() throws {
        let cluster = try PostgresCluster()
        addTeardownBlock { cluster.destroy() }
        let server = try TidingsProcess(arguments: ["--database-url", cluster.url, "--log-level", "debug"])
        addTeardownBlock { server.stop() }
        // The first attempt to mark a schedule applied fails as a connection failure (08006), and
        // with it the write's transaction. (A sequence, because whatever else the failing
        // transaction changed is rolled back.)
        try cluster.psql("""
            CREATE SEQUENCE fault_attempts;
            CREATE FUNCTION fail_first_apply() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF nextval('fault_attempts') = 1 THEN
                    RAISE EXCEPTION 'injected: connection failure' USING ERRCODE = '08006';
                END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER fail_first_apply BEFORE UPDATE ON schedule
                FOR EACH ROW WHEN (NEW.state = 'applied') EXECUTE FUNCTION fail_first_apply();
            """)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let at = formatter.string(from: Date().addingTimeInterval(1))
        var ids: [String] = []
        for age in [20, 21] {
            let reply = try server.request("POST", "/schedules", json: ["at": at, "preferences": ["age": age]])
            XCTAssertEqual(reply.status, 201, reply.text)
            ids.append(try XCTUnwrap(reply.value?["id"]?.stringValue))
        }
        let applied = eventually(within: 10, every: 0.05) {
            ids.allSatisfy { (try? server.get("/schedules/\($0)").value?["state"]?.stringValue) == "applied" }
        }
        let states = ids.map { "\($0): " + ((try? server.get("/schedules/\($0)").text) ?? "?") }.joined(separator: "\n")
        XCTAssertTrue(applied, "not applied within 10 s:\n\(states)\n--- log:\n\(server.log)")
        XCTAssertEqual(try cluster.psql("SELECT last_value FROM fault_attempts").trimmingCharacters(in: .whitespacesAndNewlines), "3",
                       "one failed attempt, then one per schedule")
        let history = try XCTUnwrap(server.get("/history?limit=100").value?["changes"]?.arrayValue)
        XCTAssertEqual(history.compactMap { $0["reason"]?.stringValue }.sorted(), ids.map { "scheduled \($0)" }.sorted(),
                       "each schedule's write once")

        // Due, and held by another instance for a minute: looked at once a second (a claim that
        // takes nothing), not claimed over and over. Counted in PostgreSQL's statement log.
        let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
        try cluster.psql("""
            INSERT INTO schedule (id, environment, at, body, bytes, created_by, created_at, state, holder, claimed_until)
            VALUES ('00000000000000ff', 'default', \(now - 1_000_000), '{"preferences":{"age":30}}', 26, 'api', \(now - 2_000_000),
                    'pending', 'another instance', \(now + 60_000_000))
            """)
        try cluster.psql("ALTER SYSTEM SET log_statement = 'all'")
        try cluster.psql("SELECT pg_reload_conf()")
        Thread.sleep(forTimeInterval: 0.5)
        // Counted in the log's bytes (whatever else it holds, it need not decode as text).
        let claimsLogged = {
            let log = (try? Data(contentsOf: URL(fileURLWithPath: cluster.logPath))) ?? Data()
            return log.ranges(of: Data("WITH due AS MATERIALIZED".utf8)).count
        }
        let before = claimsLogged()
        Thread.sleep(forTimeInterval: 3)
        let claims = claimsLogged() - before
        XCTAssertGreaterThan(claims, 0, "the statement log shows the claims")
        XCTAssertLessThanOrEqual(claims, 6, "claims in 3 s")
        XCTAssertEqual(try server.get("/schedules/00000000000000ff").value?["state"], "pending", "another instance's to apply")
    }
}
