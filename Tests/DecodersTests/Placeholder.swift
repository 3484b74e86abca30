import XCTest

final class DecodersTestsPlaceholder: XCTestCase {
    func testNothing() {}
}
