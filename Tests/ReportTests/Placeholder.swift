import XCTest

final class ReportTestsPlaceholder: XCTestCase {
    func testNothing() {}
}
