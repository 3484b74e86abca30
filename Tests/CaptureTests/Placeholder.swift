import XCTest

final class CaptureTestsPlaceholder: XCTestCase {
    func testNothing() {}
}
