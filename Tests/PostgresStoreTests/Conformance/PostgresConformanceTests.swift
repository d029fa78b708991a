import Foundation
import XCTest
@testable import TidingsStore

/// The ``ChangeStoreConformance`` checks against ``PostgresStore``: each database is a fresh
/// database on the class's throwaway cluster, each instance a store of its own on it.
final class PostgresConformanceTests: PostgresTestCase, ChangeStoreMaker {
    func newDatabase() throws -> String { try makeDatabase() }

    func open(_ database: String, limits: ChangeStoreLimits) async throws -> any ChangeStore {
        try await makeStore(database, limits: limits)
    }

    // One line per check (XCTest on Linux does not discover inherited test methods).
    func testCommitsTakeContiguousRevisionsInOrder() async throws { try await ChangeStoreConformance.commitsTakeContiguousRevisionsInOrder(self) }
    func testWritesThatChangeNothingTakeNoRevision() async throws { try await ChangeStoreConformance.writesThatChangeNothingTakeNoRevision(self) }
    func testCanonicallyEquivalentTextIsComparedAsBytes() async throws { try await ChangeStoreConformance.canonicallyEquivalentTextIsComparedAsBytes(self) }
    func testIfMatchIsDecidedAgainstDurableRevisions() async throws { try await ChangeStoreConformance.ifMatchIsDecidedAgainstDurableRevisions(self) }
    func testAFailingOperationUndoesItsWholeWrite() async throws { try await ChangeStoreConformance.aFailingOperationUndoesItsWholeWrite(self) }
    func testConcurrentWritesFailAlone() async throws { try await ChangeStoreConformance.concurrentWritesFailAlone(self) }
    func testChangesAfterPageInOrder() async throws { try await ChangeStoreConformance.changesAfterPageInOrder(self) }
    func testPruningByCountAndBytes() async throws { try await ChangeStoreConformance.pruningByCountAndBytes(self) }
    func testPruningKeepsTheReplayFloor() async throws { try await ChangeStoreConformance.pruningKeepsTheReplayFloor(self) }
    func testRecentChangesAreBoundedByCountAndBytes() async throws { try await ChangeStoreConformance.recentChangesAreBoundedByCountAndBytes(self) }
    func testHistoryRecordsAgree() async throws { try await ChangeStoreConformance.historyRecordsAgree(self) }
    func testHistoryPagesAreBoundedByBytes() async throws { try await ChangeStoreConformance.historyPagesAreBoundedByBytes(self) }
    func testInstancesShareOneHistory() async throws { try await ChangeStoreConformance.instancesShareOneHistory(self) }
    func testTheDoorbellRingsForAnotherInstancesCommit() async throws { try await ChangeStoreConformance.theDoorbellRingsForAnotherInstancesCommit(self) }
    func testAClosedStoreRefusesCommits() async throws { try await ChangeStoreConformance.aClosedStoreRefusesCommits(self) }
    func testALeaseHasOneHolderUntilItExpires() async throws { try await ChangeStoreConformance.aLeaseHasOneHolderUntilItExpires(self) }
    func testALeaseTakeSaysWhetherItTookOverAHolderThatNeverGaveItBack() async throws { try await ChangeStoreConformance.aLeaseTakeSaysWhetherItTookOverAHolderThatNeverGaveItBack(self) }
    func testRevisionsAreContiguousAcrossConcurrentInstances() async throws { try await ChangeStoreConformance.revisionsAreContiguousAcrossConcurrentInstances(self) }
    func testIfMatchOnOneRevisionThroughTwoInstancesSucceedsOnce() async throws { try await ChangeStoreConformance.ifMatchOnOneRevisionThroughTwoInstancesSucceedsOnce(self) }
    func testEnvironmentsKeepTheirOwnStateUnderOneCounter() async throws { try await ChangeStoreConformance.environmentsKeepTheirOwnStateUnderOneCounter(self) }
    func testDeletingAnEnvironmentErasesItsHistory() async throws { try await ChangeStoreConformance.deletingAnEnvironmentErasesItsHistory(self) }
    func testTheSameThingThroughTwoInstancesIsAddedOnce() async throws { try await ChangeStoreConformance.theSameThingThroughTwoInstancesIsAddedOnce(self) }
    func testCloseAnswersEveryCommitInFlight() async throws { try await ChangeStoreConformance.closeAnswersEveryCommitInFlight(self) }
    func testADatabaseKeepsOneIdentity() async throws { try await ChangeStoreConformance.aDatabaseKeepsOneIdentity(self) }
    func testTheStreamTicketSecretIsOnePerDatabase() async throws { try await ChangeStoreConformance.theStreamTicketSecretIsOnePerDatabase(self) }
    func testAChangePageSaysWhichHistoryItIs() async throws { try await ChangeStoreConformance.aChangePageSaysWhichHistoryItIs(self) }
    func testEscapedTextRoundTripsByteForByte() async throws { try await ChangeStoreConformance.escapedTextRoundTripsByteForByte(self) }
    func testUnstorableWritesAreRefusedAlike() async throws { try await ChangeStoreConformance.unstorableWritesAreRefusedAlike(self) }
    func testAScheduleIsAppliedByItsOwnWriteExactlyOnce() async throws { try await ChangeStoreConformance.aScheduleIsAppliedByItsOwnWriteExactlyOnce(self) }
    func testDeletingAnEnvironmentCancelsItsPendingSchedules() async throws { try await ChangeStoreConformance.deletingAnEnvironmentCancelsItsPendingSchedules(self) }
    func testHistoryReadsAcrossEnvironmentsForWebhooks() async throws { try await ChangeStoreConformance.historyReadsAcrossEnvironmentsForWebhooks(self) }
}
